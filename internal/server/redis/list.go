package redis

import (
	"math"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The list commands (Redis's t_list.c, without the blocking ones). Each
// single-key command runs as one store.UpdateList or ViewList call;
// LMOVE, RPOPLPUSH and LMPOP hold their keys together in a store.Tx. The
// order of the checks (arguments, then the key's type, or the other way
// round) is each command's own in Redis 7.0, and so are the replies for a
// missing key.

func listCommands() []respCommand {
	wdf, wf, w := []string{"write", "denyoom", "fast"}, []string{"write", "fast"}, []string{"write"}
	wd, r, rf := []string{"write", "denyoom"}, []string{"readonly"}, []string{"readonly", "fast"}
	one := oneKey("list")
	elems := docArg{name: "element", typ: "string", multiple: true}
	pushO := "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."
	popArgs := []docArg{key("key"), opt(integ("count"))}
	side := func(name string) docArg { return oneOf(name, false, token("LEFT"), token("RIGHT")) }
	move := func(name string, arity int, since, summary string, args []docArg, run func(*conn, [][]byte)) respCommand {
		c := one(name, arity, wd, since, "O(1)", summary, args, run)
		c.lastKey = 2
		return c
	}
	return []respCommand{
		one("lpush", -3, wdf, "1.0.0", pushO, "Prepends one or more elements to a list. Creates the key if it doesn't exist.",
			[]docArg{key("key"), elems}, cmdLPush),
		one("rpush", -3, wdf, "1.0.0", pushO, "Appends one or more elements to a list. Creates the key if it doesn't exist.",
			[]docArg{key("key"), elems}, cmdRPush),
		one("lpushx", -3, wdf, "2.2.0", pushO, "Prepends one or more elements to a list only when the list exists.",
			[]docArg{key("key"), elems}, cmdLPushX),
		one("rpushx", -3, wdf, "2.2.0", pushO, "Appends an element to a list only when the list exists.",
			[]docArg{key("key"), elems}, cmdRPushX),
		one("lpop", -2, wf, "1.0.0", "O(N) where N is the number of elements returned",
			"Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", popArgs, cmdLPop),
		one("rpop", -2, wf, "1.0.0", "O(N) where N is the number of elements returned",
			"Returns and removes the last elements of the list. Deletes the list if the last element was popped.", popArgs, cmdRPop),
		one("llen", 2, rf, "1.0.0", "O(1)", "Returns the length of a list.", []docArg{key("key")}, cmdLLen),
		one("lindex", 3, r, "1.0.0",
			"O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).",
			"Returns an element from a list by its index.", []docArg{key("key"), integ("index")}, cmdLIndex),
		one("lset", 4, wd, "1.0.0", "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).",
			"Sets the value of an element in a list by its index.", []docArg{key("key"), integ("index"), str("element")}, cmdLSet),
		one("lrange", 4, r, "1.0.0",
			"O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.",
			"Returns a range of elements from a list.", []docArg{key("key"), integ("start"), integ("stop")}, cmdLRange),
		one("ltrim", 4, w, "1.0.0", "O(N) where N is the number of elements to be removed by the operation.",
			"Removes elements from both ends a list. Deletes the list if all elements were trimmed.",
			[]docArg{key("key"), integ("start"), integ("stop")}, cmdLTrim),
		one("lrem", 4, w, "1.0.0", "O(N+M) where N is the length of the list and M is the number of elements removed.",
			"Removes elements from a list. Deletes the list if the last element was removed.",
			[]docArg{key("key"), integ("count"), str("element")}, cmdLRem),
		one("linsert", 5, wd, "2.2.0",
			"O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).",
			"Inserts an element before or after another element in a list.",
			[]docArg{key("key"), oneOf("where", false, token("BEFORE"), token("AFTER")), str("pivot"), str("element")}, cmdLInsert),
		one("lpos", -3, r, "6.0.6",
			"O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.",
			"Returns the index of matching elements in a list.",
			[]docArg{key("key"), str("element"), opt(tokArg("RANK", "rank", "integer")), opt(tokArg("COUNT", "num-matches", "integer")),
				opt(tokArg("MAXLEN", "len", "integer"))}, cmdLPos),
		move("lmove", 5, "6.2.0", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.",
			[]docArg{key("source"), key("destination"), side("wherefrom"), side("whereto")}, cmdLMove),
		move("rpoplpush", 3, "1.2.0", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.",
			[]docArg{key("source"), key("destination")}, cmdRPopLPush),
		{name: "lmpop", arity: -4, flags: w, keysOf: numKeys(1), group: "list", since: "7.0.0",
			complexity: "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
			summary:    "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.",
			args:       []docArg{integ("numkeys"), keys("key"), side("where"), opt(tokArg("COUNT", "count", "integer"))}, run: cmdLMPop},
	}
}

// Errors of the list commands, as Redis 7.0 words them.
const (
	errNoSuchKey     = "ERR no such key"
	errIndexRange    = "ERR index out of range"
	errMustPositive  = "ERR value is out of range, must be positive"
	errRankZero      = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"
	errCountNegative = "ERR COUNT can't be negative"
	errMaxlenNeg     = "ERR MAXLEN can't be negative"
	errNumKeys       = "ERR numkeys should be greater than 0"
	errCountPositive = "ERR count should be greater than 0"
)

func cmdLPush(rc *conn, argv [][]byte)  { rc.push(argv, true, false) }
func cmdRPush(rc *conn, argv [][]byte)  { rc.push(argv, false, false) }
func cmdLPushX(rc *conn, argv [][]byte) { rc.push(argv, true, true) }
func cmdRPushX(rc *conn, argv [][]byte) { rc.push(argv, false, true) }

// push is LPUSH, RPUSH and, with xx, LPUSHX and RPUSHX (nothing to a
// missing key): the list's new length.
func (rc *conn) push(argv [][]byte, left, xx bool) {
	var l store.List
	n := 0
	err := rc.st.UpdateList(argv[1], &l, func() error {
		if xx && !l.Exists() {
			return nil
		}
		for _, v := range argv[2:] {
			l.Push(left, v)
		}
		n = l.Len()
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if n > 0 {
		rc.notify(server.EventList, pushEvent(left), argv[1])
	}
	rc.w.Int(int64(n))
}

func cmdLPop(rc *conn, argv [][]byte) { rc.pop(argv, true) }
func cmdRPop(rc *conn, argv [][]byte) { rc.pop(argv, false) }

// pop is LPOP and RPOP key [count]: one element (a null for a missing
// key), or an array of up to count (a null array for a missing key).
func (rc *conn) pop(argv [][]byte, left bool) {
	if len(argv) > 3 {
		rc.w.Error("ERR wrong number of arguments for '" + lower(argv[0]) + "' command")
		return
	}
	count := int64(-1)
	if len(argv) == 3 {
		n, ok := resp.ParseInt(argv[2])
		if !ok || n < 0 {
			rc.w.Error(errMustPositive)
			return
		}
		count = n
	}
	var l store.List
	popped, emptied := false, false
	err := rc.st.UpdateList(argv[1], &l, func() error {
		defer func() { emptied = popped && l.Len() == 0 }()
		popped = l.Len() > 0 && count != 0
		switch {
		case !l.Exists() && count < 0:
			rc.w.Null()
		case !l.Exists():
			rc.w.NullArray()
		case count < 0:
			v, _ := l.Pop(left, rc.scratch[:0])
			rc.w.Bulk(v)
			rc.scratch = v
		default:
			k := int(min(count, int64(l.Len())))
			rc.w.Array(k)
			for range k {
				v, _ := l.Pop(left, rc.scratch[:0])
				rc.w.Bulk(v)
				rc.scratch = v
			}
		}
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	rc.notifyPopped(argv[1], left, popped, emptied)
}

// pushEvent and popEvent are a list command's event names by end.
func pushEvent(left bool) string {
	if left {
		return "lpush"
	}
	return "rpush"
}

func popEvent(left bool) string {
	if left {
		return "lpop"
	}
	return "rpop"
}

// notifyPopped reports elements popped from a list's end: "lpop" or
// "rpop", then "del" when that emptied it (Redis's listElementsRemoved).
func (rc *conn) notifyPopped(key []byte, left, popped, emptied bool) {
	if popped {
		rc.notify(server.EventList, popEvent(left), key)
		rc.notifyEmptied(key, emptied)
	}
}

// lower is a command name as Redis quotes it in an arity error.
func lower(name []byte) string {
	b := make([]byte, len(name))
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b)
}

// cmdLLen is LLEN key.
func cmdLLen(rc *conn, argv [][]byte) {
	var l store.List
	rc.storeErrorIf(rc.st.ViewList(argv[1], &l, func() error {
		rc.w.Int(int64(l.Len()))
		return nil
	}))
}

// cmdLIndex is LINDEX key index: the key's type is checked before the
// index is parsed, as Redis does.
func cmdLIndex(rc *conn, argv [][]byte) {
	var l store.List
	rc.storeErrorIf(rc.st.ViewList(argv[1], &l, func() error {
		if !l.Exists() {
			rc.w.Null()
			return nil
		}
		i, ok := rc.parseInt(argv[2])
		if !ok {
			return nil
		}
		if i < math.MinInt32 || i > math.MaxInt32 {
			rc.w.Null() // out of range of any list MiniKV holds
			return nil
		}
		v, ok := l.Index(int(i))
		rc.writeValue(store.Item{Value: v}, ok)
		return nil
	}))
}

// cmdLSet is LSET key index element.
func cmdLSet(rc *conn, argv [][]byte) {
	var l store.List
	rc.storeErrorIf(rc.st.UpdateList(argv[1], &l, func() error {
		if !l.Exists() {
			rc.w.Error(errNoSuchKey)
			return nil
		}
		i, ok := rc.parseInt(argv[2])
		if !ok {
			return nil
		}
		if i < math.MinInt32 || i > math.MaxInt32 || !l.Set(int(i), argv[3]) {
			rc.w.Error(errIndexRange)
			return nil
		}
		rc.notify(server.EventList, "lset", argv[1])
		rc.w.OK()
		return nil
	}))
}

// listRange clamps start and stop as Redis's LRANGE and LTRIM do and
// returns the first index and the number of elements in the range.
func listRange(start, stop int64, n int) (int, int) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if stop < 0 {
		stop += ln
	}
	start = max(start, 0)
	if start > stop || start >= ln {
		return 0, 0
	}
	stop = min(stop, ln-1)
	return int(start), int(stop - start + 1)
}

// cmdLRange is LRANGE key start stop.
func cmdLRange(rc *conn, argv [][]byte) {
	start, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	stop, ok := rc.parseInt(argv[3])
	if !ok {
		return
	}
	var l store.List
	rc.storeErrorIf(rc.st.ViewList(argv[1], &l, func() error {
		from, k := listRange(start, stop, l.Len())
		rc.w.Array(k)
		if k > 0 {
			l.Each(from, false, func(i int, v []byte) bool {
				rc.w.Bulk(v)
				return i < from+k-1
			})
		}
		return nil
	}))
}

// cmdLTrim is LTRIM key start stop: OK, also for a missing key.
func cmdLTrim(rc *conn, argv [][]byte) {
	start, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	stop, ok := rc.parseInt(argv[3])
	if !ok {
		return
	}
	var l store.List
	found, emptied := false, false
	err := rc.st.UpdateList(argv[1], &l, func() error {
		defer func() { emptied = found && l.Len() == 0 }()
		found = l.Exists()
		n := l.Len()
		from, k := listRange(start, stop, n)
		if k == 0 {
			l.Delete(0, n)
			return nil
		}
		l.Delete(from+k, n-from-k)
		l.Delete(0, from)
		l.Touch()
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if found {
		rc.notify(server.EventList, "ltrim", argv[1])
		rc.notifyEmptied(argv[1], emptied)
	}
	rc.w.OK()
}

// cmdLRem is LREM key count element.
func cmdLRem(rc *conn, argv [][]byte) {
	count, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	count = max(min(count, math.MaxInt32), -math.MaxInt32)
	var l store.List
	n, emptied := 0, false
	if err := rc.st.UpdateList(argv[1], &l, func() error {
		n = l.Remove(argv[3], int(count))
		emptied = n > 0 && l.Len() == 0
		return nil
	}); err != nil {
		rc.storeError(err)
		return
	}
	if n > 0 {
		rc.notify(server.EventList, "lrem", argv[1])
		rc.notifyEmptied(argv[1], emptied)
	}
	rc.w.Int(int64(n))
}

// cmdLInsert is LINSERT key BEFORE|AFTER pivot element: the new length,
// -1 without the pivot, 0 for a missing key.
func cmdLInsert(rc *conn, argv [][]byte) {
	after := is(argv[2], "after")
	if !after && !is(argv[2], "before") {
		rc.w.Error(errSyntax)
		return
	}
	var l store.List
	n := 0
	if err := rc.st.UpdateList(argv[1], &l, func() error {
		if !l.Exists() {
			return nil
		}
		i := l.Find(argv[3])
		if i < 0 {
			n = -1
			return nil
		}
		if after {
			i++
		}
		l.InsertAt(i, argv[4])
		n = l.Len()
		return nil
	}); err != nil {
		rc.storeError(err)
		return
	}
	if n > 0 {
		rc.notify(server.EventList, "linsert", argv[1])
	}
	rc.w.Int(int64(n))
}

// cmdLPos is LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN
// len].
func cmdLPos(rc *conn, argv [][]byte) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(argv); j++ {
		more := j < len(argv)-1
		switch {
		case is(argv[j], "rank") && more:
			j++
			r, ok := rc.parseInt(argv[j])
			if !ok {
				return
			}
			if r == math.MinInt64 { // Redis 7.2: getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX)
				rc.w.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
				return
			}
			if r == 0 {
				rc.w.Error(errRankZero)
				return
			}
			rank = r
		case is(argv[j], "count") && more:
			j++
			c, ok := resp.ParseInt(argv[j])
			if !ok || c < 0 {
				rc.w.Error(errCountNegative)
				return
			}
			count = c
		case is(argv[j], "maxlen") && more:
			j++
			m, ok := resp.ParseInt(argv[j])
			if !ok || m < 0 {
				rc.w.Error(errMaxlenNeg)
				return
			}
			maxlen = m
		default:
			rc.w.Error(errSyntax)
			return
		}
	}
	reverse := rank < 0
	if reverse {
		rank = -rank
	}
	var l store.List
	var found []int64
	match := int64(-1)
	err := rc.st.ViewList(argv[1], &l, func() error {
		n := l.Len()
		from := 0
		if reverse {
			from = n - 1
		}
		matches := int64(0)
		l.EachEqual(argv[2], from, reverse, func(i int) bool {
			seen := int64(i) + 1 // elements walked up to this one
			if reverse {
				seen = int64(n - i)
			}
			if maxlen != 0 && seen > maxlen {
				return false
			}
			matches++
			if matches < rank {
				return true
			}
			if count < 0 {
				match = int64(i)
				return false
			}
			found = append(found, int64(i))
			return count == 0 || matches-rank+1 < count
		})
		return nil
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case count >= 0:
		rc.w.Array(len(found))
		for _, i := range found {
			rc.w.Int(i)
		}
	case match < 0:
		rc.w.Null()
	default:
		rc.w.Int(match)
	}
}

// side parses LEFT or RIGHT.
// parseMPop reads the arguments of LMPOP and ZMPOP, numkeys key ... A|B
// [COUNT count], in Redis's order and with its errors (answered here):
// the keys, whether the side is a, and the count (1 when not given).
func (rc *conn) parseMPop(argv [][]byte, a, b string) (keys [][]byte, isA bool, count int64, ok bool) {
	numkeys, ok := resp.ParseInt(argv[1])
	if !ok || numkeys <= 0 {
		rc.w.Error(errNumKeys)
		return nil, false, 0, false
	}
	if numkeys > int64(len(argv)-3) {
		rc.w.Error(errSyntax)
		return nil, false, 0, false
	}
	whereAt := 2 + int(numkeys)
	switch {
	case is(argv[whereAt], a):
		isA = true
	case is(argv[whereAt], b):
	default:
		rc.w.Error(errSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := whereAt + 1; j < len(argv); j++ {
		if count == -1 && is(argv[j], "count") && j < len(argv)-1 {
			j++
			c, ok := resp.ParseInt(argv[j])
			if !ok || c <= 0 {
				rc.w.Error(errCountPositive)
				return nil, false, 0, false
			}
			count = c
			continue
		}
		rc.w.Error(errSyntax)
		return nil, false, 0, false
	}
	return argv[2:whereAt], isA, max(count, 1), true
}

func side(arg []byte) (left, ok bool) {
	switch {
	case is(arg, "left"):
		return true, true
	case is(arg, "right"):
		return false, true
	}
	return false, false
}

// cmdLMove is LMOVE source destination LEFT|RIGHT LEFT|RIGHT.
func cmdLMove(rc *conn, argv [][]byte) {
	from, ok1 := side(argv[3])
	to, ok2 := side(argv[4])
	if !ok1 || !ok2 {
		rc.w.Error(errSyntax)
		return
	}
	rc.move(argv[1], argv[2], from, to)
}

// cmdRPopLPush is RPOPLPUSH source destination.
func cmdRPopLPush(rc *conn, argv [][]byte) { rc.move(argv[1], argv[2], false, true) }

// move pops from the source's end and pushes onto the destination's end,
// both keys held at once; the destination's type is checked only when
// the source has an element to move, as in Redis.
func (rc *conn) move(src, dst []byte, fromLeft, toLeft bool) {
	var s, d store.List
	moved, emptied := false, false
	err := rc.st.Tx([][]byte{src, dst}, func(tx *store.Tx) error {
		if err := tx.List(src, &s, true); err != nil {
			return err
		}
		if s.Len() == 0 {
			return nil
		}
		if string(src) == string(dst) {
			v, _ := s.Pop(fromLeft, rc.scratch[:0])
			s.Push(toLeft, v)
			rc.scratch, moved = v, true
			return nil
		}
		if err := tx.List(dst, &d, true); err != nil {
			return err
		}
		v, _ := s.Pop(fromLeft, rc.scratch[:0])
		d.Push(toLeft, v)
		rc.scratch, moved = v, true
		emptied = s.Len() == 0
		return nil
	})
	if err == nil && moved {
		// Redis's order: the push, then the pop and the source's "del".
		rc.notify(server.EventList, pushEvent(toLeft), dst)
		rc.notifyPopped(src, fromLeft, true, emptied)
	}
	switch {
	case err != nil:
		rc.storeError(err)
	case !moved:
		rc.w.Null()
	default:
		rc.w.Bulk(rc.scratch)
	}
}

// cmdLMPop is LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]: the
// first non-empty list's name and up to count elements popped from it.
func cmdLMPop(rc *conn, argv [][]byte) {
	keys, left, count, ok := rc.parseMPop(argv, "left", "right")
	if !ok {
		return
	}
	popped, emptied := false, false
	var from []byte
	err := rc.st.Tx(keys, func(tx *store.Tx) error {
		var l store.List
		for _, k := range keys {
			if err := tx.List(k, &l, true); err != nil {
				return err
			}
			if l.Len() == 0 {
				tx.DoneList(&l)
				continue
			}
			popped = true
			n := int(min(count, int64(l.Len())))
			rc.w.Array(2)
			rc.w.Bulk(userKey(k))
			rc.w.Array(n)
			for range n {
				v, _ := l.Pop(left, rc.scratch[:0])
				rc.w.Bulk(v)
				rc.scratch = v
			}
			from, emptied = k, l.Len() == 0
			return nil
		}
		return nil
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case !popped:
		rc.w.NullArray()
	default:
		rc.notifyPopped(from, left, true, emptied)
	}
}
