package redis

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The set commands (Redis's t_set.c, 7.0 semantics). A one-key command
// runs as one store.UpdateSet or ViewSet call; one over several keys
// (SMOVE, SINTER, SUNION, SDIFF and their STORE forms, SINTERCARD) runs
// in a store.Tx holding every key's shard, so it is one atomic step as
// in Redis.
//
// Orders: Redis replies with a set's members in its iteration order, which
// is numeric for an intset and unspecified otherwise; MiniKV's intsets
// iterate numerically too, and the results SUNION and SDIFF build are
// given in numeric order when Redis would have built an intset for them.

func setCommands() []respCommand {
	wf, w, r, rf := []string{"write", "denyoom", "fast"}, []string{"write", "denyoom"}, []string{"readonly"}, []string{"readonly", "fast"}
	one := oneKey("set")
	many := func(name string, arity, first int, flags []string, since, complexity, summary string, args []docArg, run func(*conn, [][]byte)) respCommand {
		return respCommand{name: name, arity: arity, flags: flags, firstKey: first, lastKey: -1, step: 1, group: "set",
			since: since, complexity: complexity, summary: summary, args: args, run: run}
	}
	members := docArg{name: "member", typ: "string", multiple: true}
	keys := docArg{name: "key", typ: "key", multiple: true}
	return []respCommand{
		one("sadd", -3, wf, "1.0.0", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
			"Adds one or more members to a set. Creates the key if it doesn't exist.", []docArg{key("key"), members}, cmdSAdd),
		one("srem", -3, []string{"write", "fast"}, "1.0.0", "O(N) where N is the number of members to be removed.",
			"Removes one or more members from a set. Deletes the set if the last member was removed.", []docArg{key("key"), members}, cmdSRem),
		one("sismember", 3, rf, "1.0.0", "O(1)", "Determines whether a member belongs to a set.", []docArg{key("key"), str("member")}, cmdSIsMember),
		one("smismember", -3, rf, "6.2.0", "O(N) where N is the number of elements being checked for membership",
			"Determines whether multiple members belong to a set.", []docArg{key("key"), members}, cmdSMIsMember),
		one("smembers", 2, r, "1.0.0", "O(N) where N is the set cardinality.", "Returns all members of a set.", []docArg{key("key")}, cmdSMembers),
		one("scard", 2, rf, "1.0.0", "O(1)", "Returns the number of members in a set.", []docArg{key("key")}, cmdSCard),
		one("spop", -2, []string{"write", "fast"}, "1.0.0", "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.",
			"Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.",
			[]docArg{key("key"), opt(integ("count"))}, cmdSPop),
		one("srandmember", -2, r, "1.0.0", "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.",
			"Get one or multiple random members from a set", []docArg{key("key"), opt(integ("count"))}, cmdSRandMember),
		{name: "smove", arity: 4, flags: []string{"write", "fast"}, firstKey: 1, lastKey: 2, step: 1, group: "set", since: "1.0.0", complexity: "O(1)",
			summary: "Moves a member from one set to another.", args: []docArg{key("source"), key("destination"), str("member")}, run: cmdSMove},
		many("sinter", -2, 1, r, "1.0.0", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
			"Returns the intersect of multiple sets.", []docArg{keys}, cmdSInter),
		{name: "sintercard", arity: -3, flags: []string{"readonly", "movablekeys"}, group: "set", since: "7.0.0",
			complexity: "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
			summary:    "Returns the number of members of the intersect of multiple sets.",
			args:       []docArg{integ("numkeys"), keys, opt(tokArg("LIMIT", "limit", "integer"))}, run: cmdSInterCard,
			keysOf: numKeys(1)},
		many("sinterstore", -3, 1, w, "1.0.0", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
			"Stores the intersect of multiple sets in a key.", []docArg{key("destination"), keys}, cmdSInterStore),
		many("sunion", -2, 1, r, "1.0.0", "O(N) where N is the total number of elements in all given sets.",
			"Returns the union of multiple sets.", []docArg{keys}, cmdSUnion),
		many("sunionstore", -3, 1, w, "1.0.0", "O(N) where N is the total number of elements in all given sets.",
			"Stores the union of multiple sets in a key.", []docArg{key("destination"), keys}, cmdSUnionStore),
		many("sdiff", -2, 1, r, "1.0.0", "O(N) where N is the total number of elements in all given sets.",
			"Returns the difference of multiple sets.", []docArg{keys}, cmdSDiff),
		many("sdiffstore", -3, 1, w, "1.0.0", "O(N) where N is the total number of elements in all given sets.",
			"Stores the difference of multiple sets in a key.", []docArg{key("destination"), keys}, cmdSDiffStore),
		one("sscan", -3, r, "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
			"Iterates over members of a set.",
			[]docArg{key("key"), integ("cursor"), opt(tokArg("MATCH", "pattern", "pattern")), opt(tokArg("COUNT", "count", "integer"))}, cmdSScan),
	}
}

// cmdSAdd is SADD key member [member ...]: the number of new members.
func cmdSAdd(rc *conn, argv [][]byte) {
	var st store.Set
	added := 0
	err := rc.st.UpdateSet(argv[1], &st, func() error {
		st.Prepare(argv[2], len(argv)-2)
		for _, m := range argv[2:] {
			if st.Add(m) {
				added++
			}
		}
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if added > 0 {
		rc.notify(server.EventSet, "sadd", argv[1])
	}
	rc.w.Int(int64(added))
}

// cmdSRem is SREM key member [member ...]: the number removed.
func cmdSRem(rc *conn, argv [][]byte) {
	var st store.Set
	n, emptied := 0, false
	err := rc.st.UpdateSet(argv[1], &st, func() error {
		for _, m := range argv[2:] {
			if st.Len() == 0 {
				break
			}
			if st.Remove(m) {
				n++
			}
		}
		emptied = n > 0 && st.Len() == 0
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if n > 0 {
		rc.notify(server.EventSet, "srem", argv[1])
		rc.notifyEmptied(argv[1], emptied)
	}
	rc.w.Int(int64(n))
}

// cmdSIsMember is SISMEMBER key member.
func cmdSIsMember(rc *conn, argv [][]byte) {
	var st store.Set
	rc.storeErrorIf(rc.st.ViewSet(argv[1], &st, func() error {
		rc.w.Int(int64(b2i(st.Has(argv[2]))))
		return nil
	}))
}

// cmdSMIsMember is SMISMEMBER key member [member ...].
func cmdSMIsMember(rc *conn, argv [][]byte) {
	var st store.Set
	rc.storeErrorIf(rc.st.ViewSet(argv[1], &st, func() error {
		rc.w.Array(len(argv) - 2)
		for _, m := range argv[2:] {
			rc.w.Int(int64(b2i(st.Has(m))))
		}
		return nil
	}))
}

// cmdSMembers is SMEMBERS key: a set reply (RESP3 ~).
func cmdSMembers(rc *conn, argv [][]byte) {
	var st store.Set
	rc.storeErrorIf(rc.st.ViewSet(argv[1], &st, func() error {
		rc.w.Set(st.Len())
		st.Each(func(m []byte) bool { rc.w.Bulk(m); return true })
		return nil
	}))
}

// cmdSCard is SCARD key.
func cmdSCard(rc *conn, argv [][]byte) {
	var st store.Set
	rc.storeErrorIf(rc.st.ViewSet(argv[1], &st, func() error {
		rc.w.Int(int64(st.Len()))
		return nil
	}))
}

// cmdSPop is SPOP key [count]. With a count the reply is a set of at most
// count distinct members; all of them when count reaches the size, in
// the set's order, and the key is gone.
func cmdSPop(rc *conn, argv [][]byte) {
	var st store.Set
	popped, emptied := false, false
	defer func() {
		if popped {
			rc.notify(server.EventSet, "spop", argv[1])
			rc.notifyEmptied(argv[1], emptied)
		}
	}()
	if len(argv) == 2 {
		rc.storeErrorIf(rc.st.UpdateSet(argv[1], &st, func() error {
			if st.Len() == 0 {
				rc.w.Null()
				return nil
			}
			rc.scratch = st.Pop(rc.scratch[:0])
			rc.w.Bulk(rc.scratch)
			popped, emptied = true, st.Len() == 0
			return nil
		}))
		return
	}
	if len(argv) > 3 {
		rc.w.Error(errSyntax)
		return
	}
	count, ok := resp.ParseInt(argv[2])
	if !ok || count < 0 {
		rc.w.Error("ERR value is out of range, must be positive")
		return
	}
	popped, emptied = spopCount(rc, argv[1], count)
}

// spopCount is SPOP key count. Its Set handle is its own: Each leaks the
// handle it is called on, and sharing one with SPOP key would move that
// one to the heap too (an allocation per SPOP).
func spopCount(rc *conn, key []byte, count int64) (popped, emptied bool) {
	var st store.Set
	rc.storeErrorIf(rc.st.UpdateSet(key, &st, func() error {
		n := st.Len()
		popped = n > 0 && count > 0
		defer func() { emptied = popped && st.Len() == 0 }()
		switch {
		case n == 0 || count == 0:
			rc.w.Set(0)
		case count >= int64(n):
			rc.w.Set(n)
			st.Each(func(m []byte) bool { rc.w.Bulk(m); return true })
			st.Clear()
		case count*5 > int64(n):
			// Many: one walk over the set for a sample of positions.
			k := int(count)
			picked := sampleIndexes(n, k)
			var out keyList
			i := 0
			st.Each(func(m []byte) bool {
				if picked[i] {
					out.add(m)
				}
				i++
				return true
			})
			rc.w.Set(k)
			keyListEach(&out, func(m []byte) {
				rc.w.Bulk(m)
				st.Remove(m)
			})
		default:
			rc.w.Set(int(count))
			for range count {
				rc.scratch = st.Pop(rc.scratch[:0])
				rc.w.Bulk(rc.scratch)
			}
		}
		return nil
	}))
	return popped, emptied
}

// cmdSRandMember is SRANDMEMBER key [count], with Redis's rules: a
// positive count gives distinct members (at most the set's size), a
// negative one |count| members that may repeat.
func cmdSRandMember(rc *conn, argv [][]byte) {
	var st store.Set
	if len(argv) == 2 {
		rc.storeErrorIf(rc.st.ViewSet(argv[1], &st, func() error {
			if st.Len() == 0 {
				rc.w.Null()
				return nil
			}
			rc.w.Bulk(st.Random())
			return nil
		}))
		return
	}
	if len(argv) > 3 {
		rc.w.Error(errSyntax)
		return
	}
	count, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	if count == math.MinInt64 {
		rc.w.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	if rc.refuseHeldPicks(count) {
		return
	}
	var copied [][]byte // a big reply with repetition: written after the view (randreply.go)
	k := 0
	rc.storeErrorIf(rc.st.ViewSet(argv[1], &st, func() error {
		n := st.Len()
		switch {
		case n == 0 || count == 0:
			rc.w.Array(0)
		case count < 0:
			var big bool
			if k, big = randPicks(count, n); big {
				copied = make([][]byte, 0, n)
				st.Each(func(m []byte) bool { copied = append(copied, append([]byte(nil), m...)); return true })
				return nil
			}
			rc.w.Array(k)
			for range k {
				rc.w.Bulk(st.Random())
			}
		case count >= int64(n):
			rc.w.Array(n)
			st.Each(func(m []byte) bool { rc.w.Bulk(m); return true })
		case count*3 > int64(n):
			k := int(count)
			rc.w.Array(k)
			picked := sampleIndexes(n, k)
			i := 0
			st.Each(func(m []byte) bool {
				if picked[i] {
					rc.w.Bulk(m)
				}
				i++
				return true
			})
		default:
			// Few of many: random picks, each taken once.
			k := int(count)
			rc.w.Array(k)
			seen := make(map[string]struct{}, k)
			for len(seen) < k {
				m := st.Random()
				if _, dup := seen[string(m)]; !dup {
					seen[string(m)] = struct{}{}
					rc.w.Bulk(m)
				}
			}
		}
		return nil
	}))
	if copied != nil {
		rc.w.Array(k)
		rc.writeRandPicks(k, len(copied), func(i int) { rc.w.Bulk(copied[i]) })
	}
}

// cmdSMove is SMOVE source destination member.
func cmdSMove(rc *conn, argv [][]byte) {
	src, dst, m := argv[1], argv[2], argv[3]
	moved, added := false, false
	err := rc.st.Tx([][]byte{src, dst}, func(tx *store.Tx) error {
		k, found := tx.Kind(src)
		if !found {
			return nil // 0, whatever dst holds, as Redis answers
		}
		if dk, ok := tx.Kind(dst); k != store.KindSet || ok && dk != store.KindSet {
			return store.ErrWrongType
		}
		var from, to store.Set
		if err := tx.Set(src, &from, true); err != nil {
			return err
		}
		if bytes.Equal(src, dst) {
			moved = from.Has(m)
			return nil
		}
		if moved = from.Remove(m); !moved {
			return nil
		}
		// Published here, before the Tx settles and creates dst (its
		// "new"), in Redis's order.
		rc.notify(server.EventSet, "srem", src)
		rc.notifyEmptied(src, from.Len() == 0)
		if err := tx.Set(dst, &to, true); err != nil {
			return err
		}
		added = to.Add(m)
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if added {
		rc.notify(server.EventSet, "sadd", dst)
	}
	rc.w.Int(int64(b2i(moved)))
}

// Set operations of SINTER, SUNION, SDIFF and their variants.
const (
	setInter = iota
	setUnion
	setDiff
)

// setOp computes op over the sets under keys (a missing key is an empty
// set) into out, in the Tx; ErrWrongType if a key holds another kind.
// limit > 0 stops an intersection at that many members. The result's
// members are in Redis's order where that is defined.
func (rc *conn) setOp(tx *store.Tx, op int, keys [][]byte, limit int, out *keyList) error {
	// Each distinct key is opened once, the sets in the order of keys.
	sets := make([]*store.Set, len(keys))
	var opened []*store.Set
	for i, k := range keys {
		if j := slices.IndexFunc(keys[:i], func(o []byte) bool { return bytes.Equal(o, k) }); j >= 0 {
			sets[i] = sets[j]
			continue
		}
		st := new(store.Set)
		if err := tx.Set(k, st, false); err != nil {
			return err
		}
		sets[i] = st
		opened = append(opened, st)
	}
	defer func() {
		for _, st := range opened {
			tx.DoneSet(st)
		}
	}()
	switch op {
	case setInter:
		for _, st := range sets {
			if st.Len() == 0 {
				return nil
			}
		}
		// Walk the smallest set, as Redis does.
		order := slices.Clone(sets)
		slices.SortStableFunc(order, func(a, b *store.Set) int { return a.Len() - b.Len() })
		order[0].Each(func(m []byte) bool {
			for _, o := range order[1:] {
				if o != order[0] && !o.Has(m) {
					return true
				}
			}
			out.add(m)
			return limit == 0 || len(out.offs) < limit
		})
	case setUnion:
		seen := map[string]struct{}{}
		for _, st := range sets {
			st.Each(func(m []byte) bool {
				if _, dup := seen[string(m)]; !dup {
					seen[string(m)] = struct{}{}
					out.add(m)
				}
				return true
			})
		}
		rc.intsetOrder(out)
	case setDiff:
		sets[0].Each(func(m []byte) bool {
			for _, o := range sets[1:] {
				if o == sets[0] || o.Has(m) {
					return true
				}
			}
			out.add(m)
			return true
		})
		rc.intsetOrder(out)
	}
	return nil
}

// intsetOrder sorts a result Redis would have built as an intset (every
// member an integer, no more than set-max-intset-entries) in numeric
// order, which is the order Redis gives it in.
func (rc *conn) intsetOrder(out *keyList) {
	n := len(out.offs)
	if n < 2 || int64(n) > rc.st.Limits().SetIntsetEntries {
		return
	}
	vals := make([]int64, 0, n)
	ok := true
	keyListEach(out, func(m []byte) {
		v, isInt := parseSetInt(m)
		ok = ok && isInt
		vals = append(vals, v)
	})
	if !ok {
		return
	}
	slices.Sort(vals)
	*out = keyList{}
	var buf [24]byte
	for _, v := range vals {
		out.add(strconv.AppendInt(buf[:0], v, 10))
	}
}

// parseSetInt is Redis's string2ll: whether m is the canonical decimal
// form of an int64, as an intset would hold it.
func parseSetInt(m []byte) (int64, bool) {
	v, err := strconv.ParseInt(string(m), 10, 64)
	if err != nil || len(m) == 0 || m[0] == '+' || string(m) != strconv.FormatInt(v, 10) {
		return 0, false
	}
	return v, true
}

// setRead answers SINTER, SUNION and SDIFF with a set reply.
func (rc *conn) setRead(op int, keys [][]byte) {
	var out keyList
	err := rc.st.Tx(keys, func(tx *store.Tx) error { return rc.setOp(tx, op, keys, 0, &out) })
	if err != nil {
		rc.storeError(err)
		return
	}
	rc.w.Set(len(out.offs))
	keyListEach(&out, func(m []byte) { rc.w.Bulk(m) })
}

// setStore answers the STORE forms: the result replaces whatever dst
// held (without its deadline), or deletes dst when empty.
func (rc *conn) setStore(op int, dst []byte, keys [][]byte) {
	var out keyList
	cleared := false
	err := rc.st.Tx(append([][]byte{dst}, keys...), func(tx *store.Tx) error {
		if err := rc.setOp(tx, op, keys, 0, &out); err != nil {
			return err
		}
		cleared = tx.Clear(dst)
		if len(out.offs) == 0 {
			return nil
		}
		var st store.Set
		if err := tx.Set(dst, &st, true); err != nil {
			return err
		}
		keyListEach(&out, func(m []byte) { st.Add(m) })
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	rc.notifyStored(server.EventSet, setStoreEvents[op], dst, len(out.offs) > 0, cleared)
	rc.w.Int(int64(len(out.offs)))
}

var setStoreEvents = [...]string{setInter: "sinterstore", setUnion: "sunionstore", setDiff: "sdiffstore"}

func cmdSInter(rc *conn, argv [][]byte)      { rc.setRead(setInter, argv[1:]) }
func cmdSUnion(rc *conn, argv [][]byte)      { rc.setRead(setUnion, argv[1:]) }
func cmdSDiff(rc *conn, argv [][]byte)       { rc.setRead(setDiff, argv[1:]) }
func cmdSInterStore(rc *conn, argv [][]byte) { rc.setStore(setInter, argv[1], argv[2:]) }
func cmdSUnionStore(rc *conn, argv [][]byte) { rc.setStore(setUnion, argv[1], argv[2:]) }
func cmdSDiffStore(rc *conn, argv [][]byte)  { rc.setStore(setDiff, argv[1], argv[2:]) }

// cmdSInterCard is SINTERCARD numkeys key [key ...] [LIMIT limit].
func cmdSInterCard(rc *conn, argv [][]byte) {
	numkeys, ok := resp.ParseInt(argv[1])
	if !ok || numkeys < 1 {
		rc.w.Error("ERR numkeys should be greater than 0")
		return
	}
	if numkeys > int64(len(argv)-2) {
		rc.w.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	keys := argv[2 : 2+numkeys]
	limit := int64(0)
	for i := 2 + int(numkeys); i < len(argv); i++ {
		if !is(argv[i], "limit") || i+1 >= len(argv) {
			rc.w.Error(errSyntax)
			return
		}
		i++
		if limit, ok = resp.ParseInt(argv[i]); !ok || limit < 0 {
			rc.w.Error("ERR LIMIT can't be negative")
			return
		}
	}
	// The keys sit between numkeys and the options, where the table's
	// fixed key positions cannot say: cluster mode routes them here.
	if rc.p.cluster != nil && !rc.routed(&respCommand{firstKey: 2, lastKey: 1 + int(numkeys), step: 1}, argv) {
		rc.rejected()
		return
	}
	var out keyList
	err := rc.st.Tx(keys, func(tx *store.Tx) error {
		return rc.setOp(tx, setInter, keys, int(min(limit, math.MaxInt32)), &out)
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	rc.w.Int(int64(len(out.offs)))
}

// cmdSScan is SSCAN key cursor [MATCH pattern] [COUNT count]. As in
// Redis, a missing key answers an empty scan before the options are
// looked at.
func cmdSScan(rc *conn, argv [][]byte) {
	if _, ok := parseCursor(argv[2]); !ok {
		rc.w.Error("ERR invalid cursor")
		return
	}
	var st store.Set
	rc.storeErrorIf(rc.st.ViewSet(argv[1], &st, func() error {
		if !st.Exists() {
			rc.w.Array(2)
			rc.w.BulkString("0")
			rc.w.Array(0)
			return nil
		}
		cursor, g, count, ok := rc.parseScanArgs(argv, 2)
		if !ok {
			return nil
		}
		var out keyList
		next := st.Scan(cursor, count, func(m []byte) {
			if g == nil || g.match(m) {
				out.add(m)
			}
		})
		rc.w.Array(2)
		rc.w.Bulk(strconv.AppendUint(rc.scratch[:0], next, 10))
		out.write(rc)
		return nil
	}))
}

// keyListEach calls fn for every key of l, in order.
func keyListEach(l *keyList, fn func(k []byte)) {
	start := 0
	for _, end := range l.offs {
		fn(l.buf[start:end])
		start = end
	}
}
