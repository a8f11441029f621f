package redis

import (
	"bytes"
	"math"
	"slices"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// SORT and SORT_RO (Redis 7.0's sort.c) on lists, sets and sorted sets:
// BY pattern (a pattern without '*' means no sorting), LIMIT, GET
// patterns (# is the element itself, key->field a hash field), ASC|DESC,
// ALPHA and, for SORT, STORE into a list.
//
// Atomicity: a SORT that reads only its key (no BY with '*', no GET but
// #, no STORE) reads it in one view of the key. One that reads other
// keys, which it learns only from the elements, or writes its STORE
// destination, runs whole with every shard held (store.Atomic, as EXEC
// does), so it is one step for every other client as in Redis's single
// thread; inside EXEC it runs in the transaction's hold.
//
// ALPHA compares bytes (Redis uses strcoll, which is the same in the C
// locale redis-server runs in unless LC_COLLATE is set).

func sortCommands() []respCommand {
	args := func(store bool) []docArg {
		a := []docArg{key("key"), opt(tokArg("BY", "pattern", "pattern")),
			opt(docArg{name: "limit", typ: "block", token: "LIMIT", sub: []docArg{integ("offset"), integ("count")}}),
			{name: "pattern", typ: "pattern", token: "GET", optional: true, multiple: true},
			oneOf("order", true, token("ASC"), token("DESC")), opt(token("ALPHA"))}
		if store {
			a = append(a, opt(tokArg("STORE", "destination", "key")))
		}
		return a
	}
	return []respCommand{
		{name: "sort", arity: -2, flags: []string{"write", "denyoom", "movablekeys"}, firstKey: 1, lastKey: 1, step: 1, group: "generic",
			since: "1.0.0", complexity: "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).",
			summary: "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.", args: args(true),
			keysOf: sortKeys, run: cmdSort},
		{name: "sort_ro", arity: -2, flags: []string{"readonly", "movablekeys"}, firstKey: 1, lastKey: 1, step: 1, group: "generic",
			since: "7.0.0", complexity: "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).",
			summary: "Returns the sorted elements of a list, a set, or a sorted set.", args: args(false), run: cmdSortRO},
	}
}

// sortKeys is Redis's sortGetKeys: the key and the last STORE's
// destination, skipping the arguments of LIMIT, GET and BY.
func sortKeys(argv [][]byte, dst [][]byte) ([][]byte, bool) {
	dst = append(dst, argv[1])
	var store []byte
	for i := 2; i < len(argv); i++ {
		switch {
		case is(argv[i], "limit"):
			i += 2
		case is(argv[i], "get"), is(argv[i], "by"):
			i++
		case is(argv[i], "store") && i+1 < len(argv):
			store = argv[i+1]
		}
	}
	if store != nil {
		dst = append(dst, store)
	}
	return dst, true
}

func cmdSort(rc *conn, argv [][]byte)   { rc.sort(argv, false) }
func cmdSortRO(rc *conn, argv [][]byte) { rc.sort(argv, true) }

// sortOpts are a SORT's parsed options.
type sortOpts struct {
	db                    int // the selected database: where BY and GET look keys up
	desc, alpha, dontsort bool
	start, count          int64
	by                    []byte
	gets                  [][]byte
	store                 []byte
}

// sortItem is one element being sorted, with its key for the order.
type sortItem struct {
	elem  []byte
	score float64
	cmp   []byte // ALPHA BY: the BY value; nil when the key is missing
}

func (rc *conn) sort(argv [][]byte, readonly bool) {
	o := sortOpts{count: -1, db: rc.db}
	for j := 2; j < len(argv); j++ {
		left := len(argv) - j - 1
		a := argv[j]
		switch {
		case is(a, "asc"):
			o.desc = false
		case is(a, "desc"):
			o.desc = true
		case is(a, "alpha"):
			o.alpha = true
		case is(a, "limit") && left >= 2:
			start, ok1 := resp.ParseInt(argv[j+1])
			count, ok2 := resp.ParseInt(argv[j+2])
			if !ok1 || !ok2 {
				rc.w.Error(errNotInt)
				return
			}
			o.start, o.count = start, count
			j += 2
		case !readonly && is(a, "store") && left >= 1:
			o.store = argv[j+1]
			j++
		case is(a, "by") && left >= 1:
			o.by = argv[j+1]
			o.dontsort = bytes.IndexByte(o.by, '*') < 0
			if !o.dontsort && rc.p.cluster != nil {
				rc.w.Error("ERR BY option of SORT denied in Cluster mode.")
				return
			}
			j++
		case is(a, "get") && left >= 1:
			if rc.p.cluster != nil {
				rc.w.Error("ERR GET option of SORT denied in Cluster mode.")
				return
			}
			o.gets = append(o.gets, argv[j+1])
			j++
		default:
			rc.w.Error(errSyntax)
			return
		}
	}
	key := argv[1]
	simple := o.store == nil && (o.by == nil || o.dontsort)
	for _, g := range o.gets {
		simple = simple && string(g) == "#"
	}
	run := func(st *store.Store) error {
		items, start, end, err := sortLoad(st, key, &o)
		if err != nil {
			return err
		}
		if !o.dontsort && !sortScores(st, items, &o) {
			rc.w.Error("ERR One or more scores can't be converted into double")
			return nil
		}
		if !o.dontsort {
			sortItems(items, &o)
		}
		items = items[start:end]
		if o.store != nil {
			return rc.sortStore(st, items, &o)
		}
		n := len(items)
		if len(o.gets) > 0 {
			n *= len(o.gets)
		}
		rc.w.Array(n)
		for _, it := range items {
			if len(o.gets) == 0 {
				rc.w.Bulk(it.elem)
			}
			for _, g := range o.gets {
				v, ok := sortLookup(st, rc.db, g, it.elem)
				if ok {
					rc.w.Bulk(v)
				} else {
					rc.w.Null()
				}
			}
		}
		return nil
	}
	var err error
	if simple {
		err = run(rc.st)
	} else {
		err = rc.st.Atomic(run)
	}
	if err != nil {
		rc.storeError(err)
	}
}

// sortLoad reads the elements of the list, set or sorted set under key
// (none when it is missing) and works out the range of the result, as
// sortCommandGeneric does: a list or sorted set that is not sorted is
// read only in the LIMIT range, in its own order, reversed by DESC.
func sortLoad(st *store.Store, key []byte, o *sortOpts) (items []sortItem, start, end int, err error) {
	it, ok := st.Peek(key)
	kind := store.KindList
	if ok {
		kind = it.Kind
	}
	switch kind {
	case store.KindList, store.KindSet, store.KindZSet:
	default:
		return nil, 0, 0, store.ErrWrongType
	}
	// A set that is not sorted is given in its own order, which a
	// STORE must not depend on: Redis sorts it by ALPHA then.
	if o.dontsort && kind == store.KindSet && o.store != nil {
		o.dontsort, o.alpha, o.by = false, true, nil
	}
	add := func(e []byte) { items = append(items, sortItem{elem: bytes.Clone(e)}) }
	n := 0
	rangeOf := func() (int, int) {
		s := int(min(max(o.start, 0), int64(n)))
		c := min(max(o.count, -1), int64(n))
		e := n
		if c >= 0 {
			e = int(min(int64(s)+c, int64(n)))
		}
		return s, e
	}
	switch kind {
	case store.KindList:
		var l store.List
		err = st.ViewList(key, &l, func() error {
			n = l.Len()
			start, end = rangeOf()
			from, k, rev := 0, n, false
			if o.dontsort { // the LIMIT range only, from the tail with DESC
				from, k, rev = start, end-start, o.desc
				if rev {
					from = n - 1 - start
				}
			}
			if k > 0 {
				l.Each(from, rev, func(_ int, v []byte) bool {
					add(v)
					k--
					return k > 0
				})
			}
			return nil
		})
		if o.dontsort {
			end -= start
			start = 0
		}
	case store.KindSet:
		var s store.Set
		err = st.ViewSet(key, &s, func() error {
			n = s.Len()
			start, end = rangeOf()
			s.Each(func(m []byte) bool { add(m); return true })
			return nil
		})
	case store.KindZSet:
		var z store.ZSet
		err = st.ViewZSet(key, &z, func() error {
			n = z.Len()
			start, end = rangeOf()
			switch {
			case !o.dontsort:
				if n > 0 {
					z.Range(0, n-1, false, func(m []byte, _ float64) bool { add(m); return true })
				}
			case start < end && o.desc:
				z.Range(n-end, n-1-start, true, func(m []byte, _ float64) bool { add(m); return true })
			case start < end:
				z.Range(start, end-1, false, func(m []byte, _ float64) bool { add(m); return true })
			}
			return nil
		})
		if o.dontsort {
			end -= start
			start = 0
		}
	}
	if err != nil {
		return nil, 0, 0, err
	}
	end = min(end, len(items))
	start = min(start, end)
	return items, start, end, nil
}

// sortScores loads what each element sorts by: its BY value (a missing
// key sorts as 0, or, with ALPHA, before everything) or itself; without
// ALPHA, as a double by strtod over the whole value. It reports false
// when one does not convert.
func sortScores(st *store.Store, items []sortItem, o *sortOpts) bool {
	ok := true
	for i := range items {
		it := &items[i]
		v := it.elem
		if o.by != nil {
			bv, found := sortLookup(st, o.db, o.by, it.elem)
			if !found {
				continue
			}
			v = bv
		}
		if o.alpha {
			if o.by != nil {
				it.cmp = bytes.Clone(v)
				if it.cmp == nil {
					it.cmp = []byte{}
				}
			}
			continue
		}
		f, good := sortStrtod(v)
		it.score = f
		ok = ok && good
	}
	return ok
}

// sortStrtod is strtod as SORT checks it: leading space allowed, the rest
// all one number, no overflow, no NaN; an empty value is 0.
func sortStrtod(v []byte) (float64, bool) {
	if len(v) == 0 {
		return 0, true
	}
	i := 0
	for i < len(v) && isCSpace(v[i]) {
		i++
	}
	if i == len(v) {
		return 0, false
	}
	f, ok := strtod(v[i:], false)
	return f, ok && !math.IsNaN(f)
}

// sortItems orders items as sortCompare does: by score, ties by the
// element's bytes; with ALPHA by the BY value (missing first) or the
// element; DESC reverses.
func sortItems(items []sortItem, o *sortOpts) {
	cmp := func(a, b *sortItem) int {
		var c int
		switch {
		case !o.alpha:
			switch {
			case a.score > b.score:
				c = 1
			case a.score < b.score:
				c = -1
			default:
				c = bytes.Compare(a.elem, b.elem)
			}
		case o.by != nil:
			switch {
			case a.cmp == nil || b.cmp == nil:
				c = b2i(a.cmp != nil) - b2i(b.cmp != nil)
			default:
				c = bytes.Compare(a.cmp, b.cmp)
			}
		default:
			c = bytes.Compare(a.elem, b.elem)
		}
		if o.desc {
			return -c
		}
		return c
	}
	slices.SortStableFunc(items, func(a, b sortItem) int { return cmp(&a, &b) })
}

// sortLookup is lookupKeyByPattern: "#" is the element itself; else the
// first '*' of the pattern is replaced by the element, and the key's
// string value is read, or, when "->field" follows the '*', the field of
// the hash under the key. A pattern without '*' reads nothing.
func sortLookup(st *store.Store, db int, pattern, elem []byte) ([]byte, bool) {
	if string(pattern) == "#" {
		return elem, true
	}
	star := bytes.IndexByte(pattern, '*')
	if star < 0 {
		return nil, false
	}
	var field []byte
	post := pattern[star+1:]
	if f := bytes.Index(post, []byte("->")); f >= 0 && f+2 < len(post) {
		field = post[f+2:]
		post = post[:f]
	}
	key := make([]byte, 0, len(pattern)+len(elem))
	key = append(append(append(key, pattern[:star]...), elem...), post...)
	if store.DBKeyNeeded(db, key) {
		key = store.DBKey(nil, db, key) // the selected database's key (db.go)
	}
	if field == nil {
		it, ok := st.Get(key) // a read, as Redis's lookupKeyRead (a miss is a "keymiss")
		if !ok || it.Kind != store.KindString {
			return nil, false
		}
		return it.Value, true
	}
	var h store.Hash
	var v []byte
	var found bool
	err := st.ViewHash(key, &h, func() error {
		if fv, ok := h.Get(field); ok {
			v, found = bytes.Clone(fv), true
		}
		return nil
	})
	if err != nil {
		return nil, false // not a hash
	}
	return v, found
}

// sortStore replaces the destination with a list of the result (GET
// values, a missing one as ""), or deletes it when the result is empty,
// and replies with the list's length.
func (rc *conn) sortStore(st *store.Store, items []sortItem, o *sortOpts) error {
	var vals [][]byte
	for _, it := range items {
		if len(o.gets) == 0 {
			vals = append(vals, it.elem)
		}
		for _, g := range o.gets {
			v, _ := sortLookup(st, rc.db, g, it.elem)
			vals = append(vals, v)
		}
	}
	cleared := false
	err := st.Tx([][]byte{o.store}, func(tx *store.Tx) error {
		cleared = tx.Clear(o.store)
		if len(vals) == 0 {
			return nil
		}
		var l store.List
		if err := tx.List(o.store, &l, true); err != nil {
			return err
		}
		for _, v := range vals {
			if v == nil {
				v = []byte{}
			}
			l.Push(false, v)
		}
		return nil
	})
	if err != nil {
		return err
	}
	rc.notifyStored(server.EventList, "sortstore", o.store, len(vals) > 0, cleared)
	rc.w.Int(int64(len(vals)))
	return nil
}
