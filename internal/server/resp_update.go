package server

import (
	"errors"
	"math"
	"math/big"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/store"
)

// Read-modify-write string commands of the RESP port: APPEND, SETRANGE,
// the INCR family and INCRBYFLOAT (plus STRLEN and GETRANGE, their
// readers). Each is a compare-and-swap loop over the store (see update).

// update is the CAS loop of the read-modify-write commands: it reads key,
// asks fn for the new value (fn returns false to write nothing, having
// replied itself), and stores it so that no other write in between is
// lost. New keys get flags 0 and no deadline; existing ones keep theirs.
// It returns the stored length, or -1 when it has already replied.
func (rc *respConn) update(key []byte, fn func(old []byte, found bool) ([]byte, bool)) int {
	st := rc.srv.store
	rc.stats.add(statCmdSet, 1)
	for {
		old, found := st.Peek(key)
		val, write := fn(old.Value, found)
		if !write {
			return -1
		}
		var err error
		if found {
			_, err = st.Store(store.ModeCAS, key, val, old.Flags, old.Deadline, old.CAS)
			if errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrNotFound) {
				continue
			}
		} else {
			_, err = st.Store(store.ModeAdd, key, val, 0, 0, 0)
			if errors.Is(err, store.ErrNotStored) {
				continue
			}
		}
		if err != nil {
			rc.storeError(err)
			return -1
		}
		return len(val)
	}
}

// cmdAppend is APPEND key value; a missing key is created.
func cmdAppend(rc *respConn, argv [][]byte) {
	key, add := argv[1], argv[2]
	maxLen := rc.srv.store.MaxValueLen(len(key))
	n := rc.update(key, func(old []byte, _ bool) ([]byte, bool) {
		if len(old)+len(add) > maxLen {
			rc.stats.add(statStoreTooLarge, 1)
			rc.w.Error(errTooLarge)
			return nil, false
		}
		rc.scratch = append(append(rc.scratch[:0], old...), add...)
		return rc.scratch, true
	})
	if n >= 0 {
		rc.w.Int(int64(n))
	}
}

// cmdStrlen is STRLEN key.
func cmdStrlen(rc *respConn, argv [][]byte) {
	it, _ := rc.srv.store.Peek(argv[1])
	rc.w.Int(int64(len(it.Value)))
}

// cmdGetRange is GETRANGE key start end, with Redis's index rules.
func cmdGetRange(rc *respConn, argv [][]byte) {
	start, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	end, ok := rc.parseInt(argv[3])
	if !ok {
		return
	}
	it, found := rc.srv.store.Get(argv[1])
	rc.countGet(found)
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
// the item size before any memory is sized by it.
func cmdSetRange(rc *respConn, argv [][]byte) {
	key, val := argv[1], argv[3]
	offset, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	if offset < 0 {
		rc.w.Error("ERR offset is out of range")
		return
	}
	maxLen := int64(rc.srv.store.MaxValueLen(len(key)))
	n := rc.update(key, func(old []byte, found bool) ([]byte, bool) {
		if len(val) == 0 {
			rc.w.Int(int64(len(old)))
			return nil, false
		}
		if offset > maxLen || offset+int64(len(val)) > maxLen {
			rc.stats.add(statStoreTooLarge, 1)
			rc.w.Error(errTooLarge)
			return nil, false
		}
		size := max(len(old), int(offset)+len(val))
		rc.scratch = append(rc.scratch[:0], old...)
		for len(rc.scratch) < size {
			rc.scratch = append(rc.scratch, 0)
		}
		copy(rc.scratch[offset:], val)
		return rc.scratch, true
	})
	if n >= 0 {
		rc.w.Int(int64(n))
	}
}

// INCR key, DECR key, INCRBY key n, DECRBY key n.
func cmdIncr(rc *respConn, argv [][]byte) { rc.incrBy(argv[1], 1) }
func cmdDecr(rc *respConn, argv [][]byte) { rc.incrBy(argv[1], -1) }

func cmdIncrBy(rc *respConn, argv [][]byte) {
	if n, ok := rc.parseInt(argv[2]); ok {
		rc.incrBy(argv[1], n)
	}
}

func cmdDecrBy(rc *respConn, argv [][]byte) {
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
func (rc *respConn) incrBy(key []byte, delta int64) {
	st := rc.srv.store
	hits, misses := statIncrHits, statIncrMisses
	if delta < 0 {
		hits, misses = statDecrHits, statDecrMisses
	}
	for {
		old, found := st.Peek(key)
		var v int64
		if found {
			var ok bool
			if v, ok = resp.ParseInt(old.Value); !ok {
				rc.w.Error(errNotInt)
				return
			}
		}
		if delta < 0 && v < 0 && delta < math.MinInt64-v || delta > 0 && v > 0 && delta > math.MaxInt64-v {
			rc.w.Error(errOverflow)
			return
		}
		v += delta
		digits := rc.itoa(v)
		var err error
		if found {
			_, err = st.Store(store.ModeCAS, key, digits, old.Flags, old.Deadline, old.CAS)
			if errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrNotFound) {
				continue
			}
		} else {
			_, err = st.Store(store.ModeAdd, key, digits, 0, 0, 0)
			if errors.Is(err, store.ErrNotStored) {
				continue
			}
		}
		if err != nil {
			rc.storeError(err)
			return
		}
		if found {
			rc.stats.add(hits, 1)
		} else {
			rc.stats.add(misses, 1)
		}
		rc.w.Int(v)
		return
	}
}

// cmdIncrByFloat is INCRBYFLOAT key increment, computed as Redis does in
// x87 long double: see resp_float.go for the emulation. Redis parses the
// stored value before the increment; a failure of either gives the same
// error, so the increment is checked once, outside the CAS loop.
func cmdIncrByFloat(rc *respConn, argv [][]byte) {
	var incr big.Float
	if !parseLongDouble(&incr, argv[2]) {
		rc.w.Error(errNotFloat)
		return
	}
	n := rc.update(argv[1], func(old []byte, found bool) ([]byte, bool) {
		var v big.Float
		if !found {
			v.SetPrec(ldPrec)
		} else if !parseLongDouble(&v, old) {
			rc.w.Error(errNotFloat)
			return nil, false
		}
		if !addLongDouble(&v, &v, &incr) {
			rc.w.Error("ERR increment would produce NaN or Infinity")
			return nil, false
		}
		rc.scratch = appendLongDouble(rc.scratch[:0], &v)
		return rc.scratch, true
	})
	if n >= 0 {
		rc.w.Bulk(rc.scratch[:n])
	}
}

func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
