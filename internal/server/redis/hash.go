package redis

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The hash commands (Redis's t_hash.c). Each runs as one store.UpdateHash
// or ViewHash call, so it is atomic against every other command on the
// key; replies that need the hash's contents are written inside the call.

func hashCommands() []respCommand {
	wf, r, rf := []string{"write", "denyoom", "fast"}, []string{"readonly"}, []string{"readonly", "fast"}
	fv := docArg{name: "data", typ: "block", multiple: true, sub: []docArg{str("field"), str("value")}}
	one := oneKey("hash")
	fields := docArg{name: "field", typ: "string", multiple: true}
	return []respCommand{
		one("hset", -4, wf, "2.0.0", "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.",
			"Creates or modifies the value of a field in a hash.", []docArg{key("key"), fv}, cmdHSet),
		one("hmset", -4, wf, "2.0.0", "O(N) where N is the number of fields being set.",
			"Sets the values of multiple fields.", []docArg{key("key"), fv}, cmdHMSet),
		one("hsetnx", 4, wf, "2.0.0", "O(1)",
			"Sets the value of a field in a hash only when the field doesn't exist.", []docArg{key("key"), str("field"), str("value")}, cmdHSetNX),
		one("hget", 3, rf, "2.0.0", "O(1)", "Returns the value of a field in a hash.", []docArg{key("key"), str("field")}, cmdHGet),
		one("hmget", -3, rf, "2.0.0", "O(N) where N is the number of fields being requested.",
			"Returns the values of all fields in a hash.", []docArg{key("key"), fields}, cmdHMGet),
		one("hdel", -3, []string{"write", "fast"}, "2.0.0", "O(N) where N is the number of fields to be removed.",
			"Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", []docArg{key("key"), fields}, cmdHDel),
		one("hexists", 3, rf, "2.0.0", "O(1)", "Determines whether a field exists in a hash.", []docArg{key("key"), str("field")}, cmdHExists),
		one("hlen", 2, rf, "2.0.0", "O(1)", "Returns the number of fields in a hash.", []docArg{key("key")}, cmdHLen),
		one("hstrlen", 3, rf, "3.2.0", "O(1)", "Returns the length of the value of a field.", []docArg{key("key"), str("field")}, cmdHStrlen),
		one("hkeys", 2, r, "2.0.0", "O(N) where N is the size of the hash.", "Returns all fields in a hash.", []docArg{key("key")}, cmdHKeys),
		one("hvals", 2, r, "2.0.0", "O(N) where N is the size of the hash.", "Returns all values in a hash.", []docArg{key("key")}, cmdHVals),
		one("hgetall", 2, r, "2.0.0", "O(N) where N is the size of the hash.", "Returns all fields and values in a hash.", []docArg{key("key")}, cmdHGetAll),
		one("hincrby", 4, wf, "2.0.0", "O(1)", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.",
			[]docArg{key("key"), str("field"), integ("increment")}, cmdHIncrBy),
		one("hincrbyfloat", 4, wf, "2.6.0", "O(1)", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.",
			[]docArg{key("key"), str("field"), {name: "increment", typ: "double"}}, cmdHIncrByFloat),
		one("hrandfield", -2, r, "6.2.0", "O(N) where N is the number of fields returned",
			"Returns one or more random fields from a hash.",
			[]docArg{key("key"), {name: "options", typ: "block", optional: true, sub: []docArg{integ("count"), opt(token("WITHVALUES"))}}}, cmdHRandField),
		one("hscan", -3, r, "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
			"Iterates over fields and values of a hash.",
			[]docArg{key("key"), integ("cursor"), opt(tokArg("MATCH", "pattern", "pattern")), opt(tokArg("COUNT", "count", "integer"))}, cmdHScan),
	}
}

// cmdHSet is HSET key field value [field value ...]: the number of new
// fields.
func cmdHSet(rc *conn, argv [][]byte) {
	if len(argv)%2 != 0 {
		rc.w.Error("ERR wrong number of arguments for 'hset' command")
		return
	}
	rc.hset(argv, false)
}

// cmdHMSet is HMSET key field value [field value ...]: OK.
func cmdHMSet(rc *conn, argv [][]byte) {
	if len(argv)%2 != 0 {
		rc.w.Error("ERR wrong number of arguments for 'hmset' command")
		return
	}
	rc.hset(argv, true)
}

func (rc *conn) hset(argv [][]byte, ok bool) {
	var h store.Hash
	added := 0
	err := rc.st.UpdateHash(argv[1], &h, func() error {
		for i := 2; i < len(argv); i += 2 {
			if h.Set(argv[i], argv[i+1]) {
				added++
			}
		}
		return nil
	})
	if err == nil {
		rc.notify(server.EventHash, "hset", argv[1])
	}
	switch {
	case err != nil:
		rc.storeError(err)
	case ok:
		rc.w.OK()
	default:
		rc.w.Int(int64(added))
	}
}

// cmdHSetNX is HSETNX key field value.
func cmdHSetNX(rc *conn, argv [][]byte) {
	var h store.Hash
	set := false
	err := rc.st.UpdateHash(argv[1], &h, func() error {
		if _, ok := h.Get(argv[2]); !ok {
			set = h.Set(argv[2], argv[3])
		}
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if set {
		rc.notify(server.EventHash, "hset", argv[1])
	}
	rc.w.Int(int64(b2i(set)))
}

// cmdHGet is HGET key field.
func cmdHGet(rc *conn, argv [][]byte) {
	var h store.Hash
	rc.storeErrorIf(rc.st.ViewHash(argv[1], &h, func() error {
		v, ok := h.Value(argv[2], rc.numBuf())
		rc.writeValue(store.Item{Value: v}, ok)
		return nil
	}))
}

// cmdHMGet is HMGET key field [field ...].
func cmdHMGet(rc *conn, argv [][]byte) {
	var h store.Hash
	rc.storeErrorIf(rc.st.ViewHash(argv[1], &h, func() error {
		rc.w.Array(len(argv) - 2)
		for _, f := range argv[2:] {
			v, ok := h.Value(f, rc.numBuf())
			rc.writeValue(store.Item{Value: v}, ok)
		}
		return nil
	}))
}

// cmdHDel is HDEL key field [field ...].
func cmdHDel(rc *conn, argv [][]byte) {
	var h store.Hash
	n, emptied := 0, false
	err := rc.st.UpdateHash(argv[1], &h, func() error {
		for _, f := range argv[2:] {
			if h.Delete(f) {
				n++
			}
		}
		emptied = n > 0 && h.Len() == 0
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if n > 0 {
		rc.notify(server.EventHash, "hdel", argv[1])
		rc.notifyEmptied(argv[1], emptied)
	}
	rc.w.Int(int64(n))
}

// cmdHExists is HEXISTS key field.
func cmdHExists(rc *conn, argv [][]byte) {
	var h store.Hash
	rc.storeErrorIf(rc.st.ViewHash(argv[1], &h, func() error {
		_, ok := h.Get(argv[2])
		rc.w.Int(int64(b2i(ok)))
		return nil
	}))
}

// cmdHLen is HLEN key.
func cmdHLen(rc *conn, argv [][]byte) {
	var h store.Hash
	rc.storeErrorIf(rc.st.ViewHash(argv[1], &h, func() error {
		rc.w.Int(int64(h.Len()))
		return nil
	}))
}

// cmdHStrlen is HSTRLEN key field.
func cmdHStrlen(rc *conn, argv [][]byte) {
	var h store.Hash
	rc.storeErrorIf(rc.st.ViewHash(argv[1], &h, func() error {
		v, _ := h.Get(argv[2])
		rc.w.Int(int64(len(v)))
		return nil
	}))
}

// Parts of a hash that HKEYS, HVALS and HGETALL reply with.
const (
	hashFields = 1 << iota
	hashValues
)

func cmdHKeys(rc *conn, argv [][]byte)   { rc.hashAll(argv[1], hashFields) }
func cmdHVals(rc *conn, argv [][]byte)   { rc.hashAll(argv[1], hashValues) }
func cmdHGetAll(rc *conn, argv [][]byte) { rc.hashAll(argv[1], hashFields|hashValues) }

func (rc *conn) hashAll(key []byte, parts int) {
	var h store.Hash
	rc.storeErrorIf(rc.st.ViewHash(key, &h, func() error {
		if parts == hashFields|hashValues {
			rc.w.Map(h.Len())
		} else {
			rc.w.Array(h.Len())
		}
		h.Each(func(f, v []byte) bool {
			if parts&hashFields != 0 {
				rc.w.Bulk(f)
			}
			if parts&hashValues != 0 {
				rc.w.Bulk(v)
			}
			return true
		})
		return nil
	}))
}

// cmdHIncrBy is HINCRBY key field increment.
func cmdHIncrBy(rc *conn, argv [][]byte) {
	delta, ok := rc.parseInt(argv[3])
	if !ok {
		return
	}
	var h store.Hash
	var v int64
	msg := ""
	err := rc.st.UpdateHash(argv[1], &h, func() error {
		if old, ok := h.Get(argv[2]); ok {
			var parsed bool
			if v, parsed = resp.ParseInt(old); !parsed {
				msg = "ERR hash value is not an integer"
				return nil
			}
		}
		if delta < 0 && v < 0 && delta < math.MinInt64-v || delta > 0 && v > 0 && delta > math.MaxInt64-v {
			msg = errOverflow
			return nil
		}
		v += delta
		h.Set(argv[2], strconv.AppendInt(rc.scratch[:0], v, 10))
		return nil
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case msg != "":
		rc.w.Error(msg)
	default:
		rc.notify(server.EventHash, "hincrby", argv[1])
		rc.w.Int(v)
	}
}

// cmdHIncrByFloat is HINCRBYFLOAT key field increment, in Redis's long
// double arithmetic (float.go).
func cmdHIncrByFloat(rc *conn, argv [][]byte) {
	var incr big.Float
	if !parseLongDouble(&incr, argv[3]) {
		rc.w.Error(errNotFloat)
		return
	}
	if incr.IsInf() {
		rc.w.Error("ERR value is NaN or Infinity") // checked first, as t_hash.c does
		return
	}
	var h store.Hash
	msg := ""
	err := rc.st.UpdateHash(argv[1], &h, func() error {
		var v big.Float
		if old, ok := h.Get(argv[2]); !ok {
			v.SetPrec(ldPrec)
		} else if !parseLongDouble(&v, old) {
			msg = "ERR hash value is not a float"
			return nil
		}
		if !addLongDouble(&v, &v, &incr) {
			msg = "ERR increment would produce NaN or Infinity"
			return nil
		}
		rc.scratch = appendLongDouble(rc.scratch[:0], &v)
		h.Set(argv[2], rc.scratch)
		return nil
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case msg != "":
		rc.w.Error(msg)
	default:
		rc.notify(server.EventHash, "hincrbyfloat", argv[1])
		rc.w.Bulk(rc.scratch)
	}
}

// cmdHRandField is HRANDFIELD key [count [WITHVALUES]], with Redis's
// rules: a positive count gives distinct fields (at most the hash's
// size), a negative one |count| fields that may repeat.
func cmdHRandField(rc *conn, argv [][]byte) {
	var h store.Hash
	if len(argv) == 2 {
		rc.storeErrorIf(rc.st.ViewHash(argv[1], &h, func() error {
			if h.Len() == 0 {
				rc.w.Null()
				return nil
			}
			f, _ := h.Random()
			rc.w.Bulk(f)
			return nil
		}))
		return
	}
	count, withValues, ok := rc.parseRandCount(argv, "withvalues")
	if !ok {
		return
	}
	if rc.refuseHeldPicks(count) {
		return
	}
	var copied [][2][]byte // a big reply with repetition: written after the view (randreply.go)
	k := 0
	pair := func(f, v []byte) {
		if withValues && rc.w.RESP3() {
			rc.w.Array(2)
		}
		rc.w.Bulk(f)
		if withValues {
			rc.w.Bulk(v)
		}
	}
	header := func(k int) {
		if withValues && !rc.w.RESP3() {
			k *= 2
		}
		rc.w.Array(k)
	}
	rc.storeErrorIf(rc.st.ViewHash(argv[1], &h, func() error {
		n := h.Len()
		switch {
		case n == 0 || count == 0:
			rc.w.Array(0)
		case count < 0:
			var big bool
			if k, big = randPicks(count, n); big {
				copied = make([][2][]byte, 0, n)
				h.Each(func(f, v []byte) bool {
					copied = append(copied, [2][]byte{append([]byte(nil), f...), append([]byte(nil), v...)})
					return true
				})
				return nil
			}
			header(k)
			for range k {
				pair(h.Random())
			}
		case count >= int64(n):
			header(n)
			h.Each(func(f, v []byte) bool { pair(f, v); return true })
		default:
			// k distinct fields: a random sample of the positions.
			k := int(count)
			header(k)
			picked := sampleIndexes(n, k)
			i := 0
			h.Each(func(f, v []byte) bool {
				if picked[i] {
					pair(f, v)
				}
				i++
				return true
			})
		}
		return nil
	}))
	if copied != nil {
		header(k)
		rc.writeRandPicks(k, len(copied), func(i int) { pair(copied[i][0], copied[i][1]) })
	}
}

// parseRandCount reads HRANDFIELD's and ZRANDMEMBER's count [with] in
// Redis's order (t_hash.c, t_zset.c): the count first, then the other
// arguments, then the count's range with the option; it answers the
// error when they are wrong.
func (rc *conn) parseRandCount(argv [][]byte, with string) (count int64, withOpt, ok bool) {
	if count, ok = rc.parseInt(argv[2]); !ok {
		return 0, false, false
	}
	if count == math.MinInt64 {
		rc.w.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return 0, false, false
	}
	if len(argv) > 4 || len(argv) == 4 && !is(argv[3], with) {
		rc.w.Error(errSyntax)
		return 0, false, false
	}
	withOpt = len(argv) == 4
	if withOpt && (count < -math.MaxInt64/2 || count > math.MaxInt64/2) {
		rc.w.Error("ERR value is out of range")
		return 0, false, false
	}
	return count, withOpt, true
}

// sampleIndexes marks k of the positions 0..n-1, chosen uniformly (Floyd's
// algorithm).
func sampleIndexes(n, k int) []bool {
	picked := make([]bool, n)
	for j := n - k; j < n; j++ {
		t := rand.IntN(j + 1)
		if picked[t] {
			t = j
		}
		picked[t] = true
	}
	return picked
}

// cmdHScan is HSCAN key cursor [MATCH pattern] [COUNT count]. As in
// Redis, the cursor is checked first, then the key (missing: an empty
// scan, whatever the options say; another type: WRONGTYPE), then the
// options.
func cmdHScan(rc *conn, argv [][]byte) {
	if _, ok := parseCursor(argv[2]); !ok {
		rc.w.Error("ERR invalid cursor")
		return
	}
	var h store.Hash
	var out keyList
	var next uint64
	bad := false
	err := rc.st.ViewHash(argv[1], &h, func() error {
		if !h.Exists() {
			return nil
		}
		cursor, g, count, ok := rc.parseScanArgs(argv, 2)
		if bad = !ok; bad {
			return nil
		}
		next = h.Scan(cursor, count, func(f, v []byte) {
			if g == nil || g.match(f) {
				out.add(f)
				out.add(v)
			}
		})
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if bad {
		return // parseScanArgs answered
	}
	rc.w.Array(2)
	rc.w.Bulk(strconv.AppendUint(rc.scratch[:0], next, 10))
	out.write(rc)
}

// parseScanArgs reads the cursor and the MATCH and COUNT options of the
// *SCAN commands on one key, answering the error when they are wrong.
func (rc *conn) parseScanArgs(argv [][]byte, from int) (cursor uint64, g *glob, count int, ok bool) {
	cursor, ok = parseCursor(argv[from])
	if !ok {
		rc.w.Error("ERR invalid cursor")
		return 0, nil, 0, false
	}
	count = 10
	for i := from + 1; i < len(argv); i += 2 {
		more := len(argv) - i
		switch {
		case is(argv[i], "count") && more >= 2:
			n, ok := rc.parseInt(argv[i+1])
			if !ok {
				return 0, nil, 0, false
			}
			if n < 1 {
				rc.w.Error(errSyntax)
				return 0, nil, 0, false
			}
			count = int(min(n, math.MaxInt32))
		case is(argv[i], "match") && more >= 2:
			if p := argv[i+1]; !(len(p) == 1 && p[0] == '*') {
				g = compileGlob(p)
			}
		default:
			rc.w.Error(errSyntax)
			return 0, nil, 0, false
		}
	}
	return cursor, g, count, true
}
