package redis

import (
	"math"
	"math/big"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Read-modify-write string commands of the RESP port: APPEND, SETRANGE,
// the INCR family and INCRBYFLOAT (plus STRLEN and GETRANGE, their
// readers). Each reads and writes in one store.Update, under the key's
// shard lock. The Update functions only decide and record what to answer;
// replies are written after Update returns, never under the lock (a full
// reply buffer flushes to the network), and a function may run twice when
// its write had to wait for memory (store.Update), so each one starts by
// resetting what it records.

// cmdAppend is APPEND key value; a missing key is created.
func cmdAppend(rc *conn, argv [][]byte) {
	key, add := argv[1], argv[2]
	maxLen := rc.maxString(len(key))
	rc.Count(server.StatCmdSet)
	n, tooLarge := 0, false
	_, err := rc.updateString(key, func(old store.Item, _ bool) store.Change {
		n = len(old.Value) + len(add)
		if tooLarge = int64(n) > maxLen; tooLarge {
			return store.Change{}
		}
		return store.Change{Op: store.Put, Value: old.Value, Suffix: add, Flags: old.Flags, Deadline: old.Deadline}
	})
	if !tooLarge && err == nil {
		rc.notify(server.EventString, "append", key)
	}
	rc.lengthReply(n, tooLarge, err)
}

// lengthReply answers APPEND and SETRANGE: the new length, or why not.
func (rc *conn) lengthReply(n int, tooLarge bool, err error) {
	switch {
	case tooLarge:
		rc.Count(server.StatStoreTooLarge)
		rc.w.Error(errTooLarge)
	case err != nil:
		rc.storeError(err)
	default:
		rc.w.Int(int64(n))
	}
}

// cmdStrlen is STRLEN key.
func cmdStrlen(rc *conn, argv [][]byte) {
	// Get, not Peek: a use, as Redis's lookupKeyRead (OBJECT FREQ and
	// IDLETIME see it); a miss publishes its own keymiss.
	it, _ := rc.st.Get(argv[1])
	if it.Kind != store.KindString {
		rc.w.Error(errWrongType)
		return
	}
	rc.w.Int(int64(len(it.Value)))
}

// cmdGetRange is GETRANGE key start end, with Redis's index rules.
func cmdGetRange(rc *conn, argv [][]byte) {
	start, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	end, ok := rc.parseInt(argv[3])
	if !ok {
		return
	}
	it, found := rc.st.Get(argv[1])
	rc.countGet(found)
	if it.Kind != store.KindString {
		rc.w.Error(errWrongType)
		return
	}
	n := int64(len(it.Value))
	if start < 0 && end < 0 && start > end {
		rc.w.BulkString("")
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		rc.w.BulkString("")
		return
	}
	rc.w.Bulk(it.Value[start : end+1])
}

// cmdSetRange is SETRANGE key offset value. The offset is checked against
// proto-max-bulk-len (maxString) before any memory is sized by it.
func cmdSetRange(rc *conn, argv [][]byte) {
	key, val := argv[1], argv[3]
	offset, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	if offset < 0 {
		rc.w.Error("ERR offset is out of range")
		return
	}
	maxLen := rc.maxString(len(key))
	rc.Count(server.StatCmdSet)
	n, tooLarge, put := 0, false, false
	_, err := rc.updateString(key, func(old store.Item, _ bool) store.Change {
		n, tooLarge, put = len(old.Value), false, false
		if len(val) == 0 {
			return store.Change{} // Redis answers the length and writes nothing
		}
		if offset > maxLen || offset+int64(len(val)) > maxLen {
			tooLarge = true
			return store.Change{}
		}
		n = max(n, int(offset)+len(val))
		rc.scratch = append(rc.scratch[:0], old.Value...)
		for len(rc.scratch) < n {
			rc.scratch = append(rc.scratch, 0)
		}
		copy(rc.scratch[offset:], val)
		put = true
		return store.Change{Op: store.Put, Value: rc.scratch, Flags: old.Flags, Deadline: old.Deadline}
	})
	if put && err == nil {
		rc.notify(server.EventString, "setrange", key)
	}
	rc.lengthReply(n, tooLarge, err)
}

// INCR key, DECR key, INCRBY key n, DECRBY key n.
func cmdIncr(rc *conn, argv [][]byte) { rc.incrBy(argv[1], 1) }
func cmdDecr(rc *conn, argv [][]byte) { rc.incrBy(argv[1], -1) }

func cmdIncrBy(rc *conn, argv [][]byte) {
	if n, ok := rc.parseInt(argv[2]); ok {
		rc.incrBy(argv[1], n)
	}
}

func cmdDecrBy(rc *conn, argv [][]byte) {
	n, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	if n == math.MinInt64 {
		rc.w.Error("ERR decrement would overflow")
		return
	}
	rc.incrBy(argv[1], -n)
}

// incrBy adds delta to the signed 64-bit integer stored under key (0 when
// missing) with Redis's rules: the value must parse as string2ll does, and
// overflow is an error, never a wrap.
func (rc *conn) incrBy(key []byte, delta int64) {
	hits, misses := server.StatIncrHits, server.StatIncrMisses
	if delta < 0 {
		hits, misses = server.StatDecrHits, server.StatDecrMisses
	}
	var v int64
	var found bool
	var errMsg string
	_, err := rc.updateString(key, func(old store.Item, ok bool) store.Change {
		v, found, errMsg = 0, ok, ""
		if ok {
			var parsed bool
			if v, parsed = resp.ParseInt(old.Value); !parsed {
				errMsg = errNotInt
				return store.Change{}
			}
		}
		if delta < 0 && v < 0 && delta < math.MinInt64-v || delta > 0 && v > 0 && delta > math.MaxInt64-v {
			errMsg = errOverflow
			return store.Change{}
		}
		v += delta
		return store.Change{Op: store.Put, Value: rc.itoa(v), Flags: old.Flags, Deadline: old.Deadline}
	})
	switch {
	case errMsg != "":
		rc.w.Error(errMsg)
	case err != nil:
		rc.storeError(err)
	default:
		if found {
			rc.Count(hits)
		} else {
			rc.Count(misses)
		}
		rc.notify(server.EventString, "incrby", key) // INCR, DECR, DECRBY too, as in Redis
		rc.w.Int(v)
	}
}

// cmdIncrByFloat is INCRBYFLOAT key increment, computed as Redis does in
// x87 long double: see float.go for the emulation. Redis parses the
// stored value before the increment; a failure of either gives the same
// error, so the increment is checked once, before the Update.
func cmdIncrByFloat(rc *conn, argv [][]byte) {
	var incr big.Float
	if !parseLongDouble(&incr, argv[2]) {
		// Redis looks the key's type up before it parses the increment.
		if it, ok := rc.st.Peek(argv[1]); ok && it.Kind != store.KindString {
			rc.w.Error(errWrongType)
		} else {
			rc.w.Error(errNotFloat)
		}
		return
	}
	rc.Count(server.StatCmdSet)
	var errMsg string
	_, err := rc.updateString(argv[1], func(old store.Item, found bool) store.Change {
		errMsg = ""
		var v big.Float
		if !found {
			v.SetPrec(ldPrec)
		} else if !parseLongDouble(&v, old.Value) {
			errMsg = errNotFloat
			return store.Change{}
		}
		if !addLongDouble(&v, &v, &incr) {
			errMsg = "ERR increment would produce NaN or Infinity"
			return store.Change{}
		}
		rc.scratch = appendLongDouble(rc.scratch[:0], &v)
		return store.Change{Op: store.Put, Value: rc.scratch, Flags: old.Flags, Deadline: old.Deadline}
	})
	switch {
	case errMsg != "":
		rc.w.Error(errMsg)
	case err != nil:
		rc.storeError(err)
	default:
		rc.notify(server.EventString, "incrbyfloat", argv[1])
		rc.w.Bulk(rc.scratch)
	}
}

func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
