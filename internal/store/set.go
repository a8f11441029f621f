package store

import (
	"math/rand/v2"
	"strconv"
)

// Set is a set value, as the function given to Store.UpdateSet or
// ViewSet sees it with the key's shard locked. Slices it returns alias
// the store's memory or the handle's and are valid until the next call on
// the handle and never after the function returns; copy what must last.
//
// A set is kept as Redis 7.2 keeps it: an intset (intset.go) while every
// member is an integer and there are at most SetIntsetEntries of them; a
// listpack of members in insertion order while there are at most
// SetListpackEntries members of at most SetListpackValue bytes; else a
// table (table.go) with empty values. A set never goes back to a smaller
// encoding.
type Set struct{ c coll }

// bigSet is a big set's object.
type bigSet struct{ t *table }

func (b *bigSet) size() int64                { return b.t.size() }
func (b *bigSet) len() int                   { return b.t.n }
func (b *bigSet) appendFlat(d []byte) []byte { return b.t.appendFlat(d) }
func (b *bigSet) reclaim()                   { b.t.reclaim() }
func (b *bigSet) free()                      { b.t.free() }

// setFromFlat rebuilds a big set from its flat encoding: a table's, every
// value empty.
func setFromFlat(t *table) (object, error) {
	ok := true
	t.each(func(_, v []byte) bool { ok = len(v) == 0; return ok })
	if !ok {
		t.free()
		return nil, errFlat
	}
	return &bigSet{t: t}, nil
}

// emptySetListpack is a listpack with no entry, copied before any change.
var emptySetListpack = []byte{lpHeaderSize + 1, 0, 0, 0, 0, 0, lpEOF}

// UpdateSet runs fn with the set under key for reading and writing; see
// collection for the rules (ErrWrongType, empty means absent, the new CAS
// and deadline).
func (s *Store) UpdateSet(key []byte, st *Set, fn func() error) error {
	return s.collection(key, KindSet, true, &st.c, fn)
}

// ViewSet runs fn with the set under key for reading only; it records a
// read of the key.
func (s *Store) ViewSet(key []byte, st *Set, fn func() error) error {
	return s.collection(key, KindSet, false, &st.c, fn)
}

// Set opens the set under key in the Tx, as UpdateSet (write) or ViewSet
// would.
func (tx *Tx) Set(key []byte, st *Set, write bool) error {
	return tx.open(key, KindSet, write, &st.c)
}

// DoneSet settles st now: its key may be opened again, and st must not be
// used.
func (tx *Tx) DoneSet(st *Set) { tx.done(&st.c) }

// Exists reports whether the key held a set when the call began.
func (st *Set) Exists() bool { return st.c.found }

// Len is the number of members.
func (st *Set) Len() int { return st.c.length() }

func (st *Set) table() *table {
	if st.c.obj == nil {
		return nil
	}
	return st.c.obj.(*bigSet).t
}

func (st *Set) isIntset() bool { return st.c.enc == encIntset && st.c.lp != nil }

// lpFindMember returns the offset of m's entry in a set's listpack, or -1.
// m is parsed once: a listpack the store builds keeps every canonical
// integer as one, but one restored from a payload may hold it as a
// string, which is compared too (as Redis's lpFind does).
func lpFindMember(lp []byte, m []byte) int {
	if lp == nil {
		return -1
	}
	v, isInt := lpStringToInt64(m)
	for p := lpFirst(lp); p >= 0; p = lpNext(lp, p) {
		if en := lpGet(lp, p); en.isInt() {
			if isInt && en.Int == v {
				return p
			}
		} else if string(en.Str) == string(m) {
			return p
		}
	}
	return -1
}

// Has reports whether m is a member.
func (st *Set) Has(m []byte) bool {
	if t := st.table(); t != nil {
		return t.find(m, t.hash32(m)) >= 0
	}
	if st.isIntset() {
		v, ok := lpStringToInt64(m)
		if !ok {
			return false
		}
		_, found := isSearch(st.c.lp, v)
		return found
	}
	return lpFindMember(st.c.lp, m) >= 0
}

// Prepare sizes a set about to be created for n members, the first of
// which is first, as Redis's setTypeCreate does for SADD: an intset when
// first is an integer and n fits SetIntsetEntries, a listpack when n and
// first fit the listpack limits, else a table. It does nothing to a set
// that exists.
func (st *Set) Prepare(first []byte, n int) {
	c := &st.c
	if c.lp != nil || c.obj != nil {
		return
	}
	lim := &c.s.lim
	_, isInt := lpStringToInt64(first)
	switch {
	case isInt && int64(n) <= lim.setIntsetEntries.Load():
		c.enc, c.lp = encIntset, emptyIntset
	case int64(n) <= lim.setListpackEntries.Load() && int64(len(first)) <= lim.setListpackValue.Load():
		c.enc, c.lp = encCompact, emptySetListpack
	default:
		st.toTable(n)
	}
}

// PrepareLoad sizes a set about to be loaded (RESTORE, an RDB file) with
// n members, the first of which is first, as Redis 7.2's rdbLoadObject
// does: a table when n exceeds SetIntsetEntries, or when the members came
// as a listpack that the store could not hold as it is (more than
// SetListpackEntries of them, or one longer than SetListpackValue);
// else as Prepare. It does nothing to a set that exists.
func (st *Set) PrepareLoad(first []byte, n int, fromListpack bool) {
	c := &st.c
	if c.lp != nil || c.obj != nil {
		return
	}
	if fromListpack || int64(n) > c.s.lim.setIntsetEntries.Load() {
		st.toTable(n)
		return
	}
	st.Prepare(first, n)
}

// Add adds m and reports whether it is new.
func (st *Set) Add(m []byte) bool {
	u := st.c.unrecorded
	if !st.add(m) {
		return false
	}
	st.c.unrecorded = u
	st.c.record("SADD", m)
	return true
}

func (st *Set) add(m []byte) bool {
	c := &st.c
	if !c.write {
		panic("store: Set.Add in ViewSet")
	}
	if c.lp == nil && c.obj == nil {
		st.Prepare(m, 1)
	}
	if t := st.table(); t != nil {
		if t.set(m, nil) {
			c.dirty, c.unrecorded = true, true
			return true
		}
		return false
	}
	lim := &c.s.lim
	if st.isIntset() {
		if v, ok := lpStringToInt64(m); ok {
			i, found := isSearch(c.lp, v)
			if found {
				return false
			}
			if int64(isLen(c.lp)+1) > lim.setIntsetEntries.Load() {
				st.toTable(isLen(c.lp)+1).set(m, nil)
				return true
			}
			c.own()
			c.lp = isInsert(c.lp, i, v)
			c.keep()
			return true
		}
		// A string joins integers: a listpack if it and the integers
		// fit, as Redis 7.2 decides (by the widest integer).
		n := isLen(c.lp)
		vmax := lim.setListpackValue.Load()
		widest := 0
		if n > 0 {
			widest = max(len(strconv.AppendInt(c.num[:0], isGet(c.lp, 0), 10)),
				len(strconv.AppendInt(c.num[:0], isGet(c.lp, n-1), 10)))
		}
		if int64(n) < lim.setListpackEntries.Load() && int64(len(m)) <= vmax && int64(widest) <= vmax {
			st.toListpack()
		} else {
			st.toTable(n+1).set(m, nil)
			return true
		}
	}
	if lpFindMember(c.lp, m) >= 0 {
		return false
	}
	if int64(lpCount(c.lp)) >= lim.setListpackEntries.Load() || int64(len(m)) > lim.setListpackValue.Load() {
		st.toTable(lpCount(c.lp)+1).set(m, nil)
		return true
	}
	c.own()
	c.lp = lpAppend(c.lp, m)
	c.keep()
	return true
}

// toListpack turns the intset into a listpack of the same members.
func (st *Set) toListpack() {
	c := &st.c
	n := isLen(c.lp)
	lp := append(make([]byte, 0, lpHeaderSize+1+n*10), emptySetListpack...)
	for i := range n {
		lp = lpAppend(lp, strconv.AppendInt(c.num[:0], isGet(c.lp, i), 10))
	}
	if c.owned {
		c.lp = append(c.lp[:0], lp...)
		c.keep()
	} else {
		c.lp, c.owned = lp, true
	}
	c.enc, c.dirty, c.unrecorded = encCompact, true, true
}

// toTable turns the intset or listpack into a table sized for n members.
func (st *Set) toTable(n int) *table {
	c := &st.c
	t := newTable(&c.s.mem, c.sh.seed, n)
	// The members are copied here rather than through Each, whose fn is
	// opaque to escape analysis: through it every handle (SADD's) would
	// move to the heap.
	switch {
	case c.lp == nil:
	case st.isIntset():
		var num [20]byte
		for i := range isLen(c.lp) {
			t.set(strconv.AppendInt(num[:0], isGet(c.lp, i), 10), nil)
		}
	default:
		for p := lpFirst(c.lp); p >= 0; p = lpNext(c.lp, p) {
			t.set(c.element(lpGet(c.lp, p)), nil)
		}
	}
	c.obj, c.enc, c.lp, c.dirty, c.unrecorded = &bigSet{t: t}, encBig, nil, true, true
	return t
}

// Remove removes m and reports whether it was a member.
func (st *Set) Remove(m []byte) bool {
	u := st.c.unrecorded
	if !st.remove(m) {
		return false
	}
	st.c.unrecorded = u
	st.c.record("SREM", m)
	return true
}

func (st *Set) remove(m []byte) bool {
	c := &st.c
	if !c.write {
		panic("store: Set.Remove in ViewSet")
	}
	if t := st.table(); t != nil {
		if t.del(m) {
			c.dirty, c.unrecorded = true, true
			return true
		}
		return false
	}
	if st.isIntset() {
		v, ok := lpStringToInt64(m)
		if !ok {
			return false
		}
		i, found := isSearch(c.lp, v)
		if !found {
			return false
		}
		c.own() // a copy at the same offsets
		c.lp = isDelete(c.lp, i)
		return true
	}
	p := lpFindMember(c.lp, m)
	if p < 0 {
		return false
	}
	c.own()
	c.lp = lpDelete(c.lp, p)
	return true
}

// Clear removes every member: the key goes when the function returns,
// unless members are added again.
func (st *Set) Clear() {
	c := &st.c
	if !c.write {
		panic("store: Set.Clear in ViewSet")
	}
	if c.obj != nil && !c.storedObj(c.obj) {
		c.dropped = append(c.dropped, c.obj) // fn may still read it
	}
	c.obj, c.lp, c.owned, c.dirty, c.unrecorded = nil, nil, false, true, true
}

// Each calls fn for every member until fn returns false: in ascending
// order for an intset, insertion order for a listpack, table order for a
// table. fn must not change the set.
func (st *Set) Each(fn func(m []byte) bool) {
	c := &st.c
	if t := st.table(); t != nil {
		t.each(func(f, _ []byte) bool { return fn(f) })
		return
	}
	if c.lp == nil {
		return
	}
	if st.isIntset() {
		for i := range isLen(c.lp) {
			if !fn(strconv.AppendInt(c.num[:0], isGet(c.lp, i), 10)) {
				return
			}
		}
		return
	}
	for p := lpFirst(c.lp); p >= 0; p = lpNext(c.lp, p) {
		if !fn(c.element(lpGet(c.lp, p))) {
			return
		}
	}
}

// Scan calls fn for a batch of about count members from cursor on and
// returns the cursor of the next batch, 0 at the end (SSCAN). A small
// set is given whole in one batch, as Redis does.
func (st *Set) Scan(cursor uint64, count int, fn func(m []byte)) uint64 {
	if t := st.table(); t != nil {
		return t.scan(cursor, count, func(f, _ []byte) { fn(f) })
	}
	st.Each(func(m []byte) bool { fn(m); return true })
	return 0
}

// Random returns a member chosen uniformly at random; the set must not be
// empty.
func (st *Set) Random() []byte {
	c := &st.c
	if t := st.table(); t != nil {
		for {
			if f, _, ok := t.at(rand.IntN(len(t.slots))); ok {
				return f
			}
		}
	}
	i := rand.IntN(st.Len())
	if st.isIntset() {
		return strconv.AppendInt(c.num[:0], isGet(c.lp, i), 10)
	}
	p := lpFirst(c.lp)
	for ; i > 0; i-- {
		p = lpNext(c.lp, p)
	}
	return c.element(lpGet(c.lp, p))
}

// Pop removes a member chosen uniformly at random and appends it to dst;
// the set must not be empty.
func (st *Set) Pop(dst []byte) []byte {
	n := len(dst)
	dst = append(dst, st.Random()...)
	st.Remove(dst[n:])
	return dst
}

// Encoding is the encoding's name in OBJECT ENCODING: intset, listpack or
// hashtable, as Redis names them.
func (st *Set) Encoding() string {
	switch {
	case st.c.obj != nil:
		return "hashtable"
	case st.isIntset():
		return "intset"
	default:
		return "listpack"
	}
}
