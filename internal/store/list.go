package store

import "strconv"

// List is a list value, as the function given to Store.UpdateList or
// ViewList sees it with the key's shard locked. Elements are indexed from
// 0 at the head (the left). Slices it returns alias the store's memory or
// the handle's and are valid until the next call on the handle and never
// after the function returns; copy what must last.
//
// A small list is one listpack in the record, as Redis 7.2 keeps it
// ("listpack"); one that would grow past list-max-listpack-size (a
// listpack of 8 KiB by default) becomes a quicklist (quicklist.go), and
// stays one.
type List struct{ c coll }

// UpdateList runs fn with the list under key for reading and writing;
// see collection for the rules (ErrWrongType, empty means absent, the new
// CAS and deadline).
func (s *Store) UpdateList(key []byte, l *List, fn func() error) error {
	return s.collection(key, KindList, true, &l.c, fn)
}

// ViewList runs fn with the list under key for reading only; it records a
// read of the key.
func (s *Store) ViewList(key []byte, l *List, fn func() error) error {
	return s.collection(key, KindList, false, &l.c, fn)
}

// List opens the list under key in the Tx, as UpdateList (write) or
// ViewList would.
func (tx *Tx) List(key []byte, l *List, write bool) error {
	return tx.open(key, KindList, write, &l.c)
}

// DoneList settles l now: its key may be opened again, and l must not be
// used.
func (tx *Tx) DoneList(l *List) { tx.done(&l.c) }

// Exists reports whether the key held a list when the call began.
func (l *List) Exists() bool { return l.c.found }

// Len is the number of elements.
func (l *List) Len() int { return l.c.length() }

// Encoding is the encoding's name in OBJECT ENCODING: listpack or
// quicklist, as Redis 7.2 names them.
func (l *List) Encoding() string {
	if l.c.obj != nil {
		return encNameQuicklist
	}
	return encNameListpack
}

func (l *List) quick() *quicklist {
	if l.c.obj == nil {
		return nil
	}
	return l.c.obj.(*quicklist)
}

func (l *List) mustWrite(op string) {
	if !l.c.write {
		panic("store: List." + op + " in ViewList")
	}
}

// fits reports whether the small list may take grow more bytes and add
// more elements and stay one listpack (Redis's listTypeTryConversion,
// which counts the elements' lengths, not their encoding).
func (l *List) fits(grow, add int) bool {
	size := lpHeaderSize + 1
	if l.c.lp != nil {
		size = len(l.c.lp)
	}
	return !listExceeds(l.c.s.lim.listPackSize.Load(), size+grow, l.Len()+add)
}

// toQuicklist turns the listpack into a quicklist, cut into nodes.
func (l *List) toQuicklist() *quicklist {
	c := &l.c
	q := newQuicklist(c.s.lim.listPackSize.Load(), c.s.lim.listCompressDepth.Load())
	if lp := c.lp; lp != nil {
		start, size, k := lpHeaderSize, 0, 0
		flush := func() {
			if k > 0 {
				nd := q.newNode(lpHeaderSize + 1 + size)
				q.insertNode(q.count(), lpAppendRaw(nd, lp[start:start+size], k), k)
				q.n += k
			}
		}
		for p := lpHeaderSize; lp[p] != lpEOF; {
			es := lpEntrySize(lp, p)
			if k > 0 && listExceeds(q.fill, lpHeaderSize+1+size+es, k+1) {
				flush()
				start, size, k = p, 0, 0
			}
			size += es
			k++
			p += es
		}
		flush()
	}
	q.settleRange(0, q.count()-1)
	c.obj, c.enc, c.lp, c.dirty, c.unrecorded = q, encBig, nil, true, true
	return q
}

// quickW is quick for a change: a big list first follows a
// list-compress-depth that CONFIG SET changed since it last changed.
func (l *List) quickW() *quicklist {
	q := l.quick()
	if q != nil {
		if d := l.c.s.lim.listCompressDepth.Load(); int64(q.depth) != d {
			q.setDepth(d)
		}
	}
	return q
}

// own makes the listpack the handle's to change, or marks the quicklist
// changed.
func (l *List) own() {
	if l.c.obj != nil {
		l.c.dirty, l.c.unrecorded = true, true
		return
	}
	l.c.own()
}

// Touch marks the list changed without changing it: it is stored under a
// new CAS token (Redis's LTRIM signals the key even when it keeps every
// element).
func (l *List) Touch() {
	l.mustWrite("Touch")
	if l.Len() > 0 {
		u := l.c.unrecorded // no element changes: what was recorded stands
		l.quickW()
		l.own()
		l.c.unrecorded = u
	}
}

// Push adds v at the head (left) or the tail.
func (l *List) Push(left bool, v []byte) {
	u := l.c.unrecorded
	l.push(left, v)
	if l.c.exact() {
		l.c.unrecorded = u
		l.c.record(sideCmd(left, "LPUSH", "RPUSH"), v)
	}
}

func (l *List) push(left bool, v []byte) {
	l.mustWrite("Push")
	c := &l.c
	q := l.quickW()
	if q == nil && !l.fits(len(v), 1) {
		q = l.toQuicklist()
	}
	if q != nil {
		q.push(left, v)
		c.dirty, c.unrecorded = true, true
		return
	}
	c.own()
	if left {
		c.lp = lpInsert(c.lp, lpHeaderSize, v)
	} else {
		c.lp = lpAppend(c.lp, v)
	}
	c.keep()
}

// Pop removes the head (left) or tail element and returns dst with the
// element's bytes appended; false when the list is empty.
func (l *List) Pop(left bool, dst []byte) ([]byte, bool) {
	u := l.c.unrecorded
	dst, ok := l.pop(left, dst)
	if ok && l.c.exact() {
		l.c.unrecorded = u
		l.c.record(sideCmd(left, "LPOP", "RPOP"))
	}
	return dst, ok
}

func (l *List) pop(left bool, dst []byte) ([]byte, bool) {
	l.mustWrite("Pop")
	c := &l.c
	if l.Len() == 0 {
		return dst, false
	}
	if q := l.quickW(); q != nil {
		c.dirty, c.unrecorded = true, true
		return q.pop(left, dst), true
	}
	p := lpFirst(c.lp)
	if !left {
		p = lpLast(c.lp)
	}
	dst = lpGet(c.lp, p).appendTo(dst)
	c.own() // a copy at the same offsets
	c.lp = lpDelete(c.lp, p)
	return dst, true
}

// Index returns element i; a negative i counts from the tail (-1 is the
// last), as LINDEX's does.
func (l *List) Index(i int) ([]byte, bool) {
	n := l.Len()
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return nil, false
	}
	if q := l.quick(); q != nil {
		lp, p := q.at(i)
		return l.c.element(lpGet(lp, p)), true
	}
	return l.c.element(lpGet(l.c.lp, lpSeekIndex(l.c.lp, i, n))), true
}

// Set replaces element i (negative from the tail) with v and reports
// whether i was in range.
func (l *List) Set(i int, v []byte) bool {
	u := l.c.unrecorded
	if i < 0 {
		i += l.Len()
	}
	if i < 0 || !l.set(i, v) { // i from the tail: counted once, here
		return false
	}
	if l.c.exact() {
		var num [20]byte
		l.c.unrecorded = u
		l.c.record("LSET", strconv.AppendInt(num[:0], int64(i), 10), v)
	}
	return true
}

func (l *List) set(i int, v []byte) bool {
	l.mustWrite("Set")
	n := l.Len()
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return false
	}
	q := l.quickW()
	if q == nil && !l.fits(len(v), 0) {
		q = l.toQuicklist()
	}
	if q != nil {
		q.set(i, v)
		l.c.dirty, l.c.unrecorded = true, true
		return true
	}
	c := &l.c
	c.own()
	c.lp = lpReplace(c.lp, lpSeekIndex(c.lp, i, n), v)
	c.keep()
	return true
}

// InsertAt puts v before element i, 0 <= i <= Len (i == Len: at the
// tail).
func (l *List) InsertAt(i int, v []byte) {
	u, n := l.c.unrecorded, l.Len()
	l.insertAt(i, v)
	if (i == 0 || i == n) && l.c.exact() { // an insert in the middle sends the whole list
		l.c.unrecorded = u
		l.c.record(sideCmd(i == 0, "LPUSH", "RPUSH"), v)
	}
}

func (l *List) insertAt(i int, v []byte) {
	l.mustWrite("InsertAt")
	n := l.Len()
	if i < 0 || i > n {
		panic("store: List.InsertAt out of range")
	}
	q := l.quickW()
	if q == nil && !l.fits(len(v), 1) {
		q = l.toQuicklist()
	}
	if q != nil {
		q.insert(i, v)
		l.c.dirty, l.c.unrecorded = true, true
		return
	}
	c := &l.c
	c.own()
	c.lp = lpInsert(c.lp, lpSeekIndex(c.lp, i, n), v)
	c.keep()
}

// Find returns the index of the first element equal to v, or -1.
func (l *List) Find(v []byte) int {
	at := -1
	l.each(0, false, func(i int, e lpEntry) bool {
		if e.equal(v) {
			at = i
			return false
		}
		return true
	})
	return at
}

// Each calls fn with every element from index from (0 <= from < Len) on,
// towards the tail or, with reverse, the head, until fn returns false.
// fn must not change the list.
func (l *List) Each(from int, reverse bool, fn func(i int, v []byte) bool) {
	l.each(from, reverse, func(i int, e lpEntry) bool { return fn(i, l.c.element(e)) })
}

// EachEqual calls fn with the index of every element equal to v from
// index from on, as Each walks, until fn returns false (LPOS).
func (l *List) EachEqual(v []byte, from int, reverse bool, fn func(i int) bool) {
	l.each(from, reverse, func(i int, e lpEntry) bool { return !e.equal(v) || fn(i) })
}

func (l *List) each(from int, reverse bool, fn func(i int, e lpEntry) bool) {
	n := l.Len()
	if from < 0 || from >= n {
		return
	}
	if q := l.quick(); q != nil {
		q.each(from, reverse, func(i int, lp []byte, p int) bool { return fn(i, lpGet(lp, p)) })
		return
	}
	lp := l.c.lp
	i := from
	for p := lpSeekIndex(lp, from, n); p >= 0; {
		if !fn(i, lpGet(lp, p)) {
			return
		}
		if reverse {
			p = lpPrev(lp, p)
			i--
		} else {
			p = lpNext(lp, p)
			i++
		}
	}
}

// Delete removes k elements from index i on (0 <= i, i+k <= Len).
func (l *List) Delete(i, k int) {
	u, n := l.c.unrecorded, l.Len()
	l.delete(i, k)
	if k == 0 || !l.c.exact() || i != 0 && i+k != n { // a cut in the middle sends the whole list
		return
	}
	var a, b [20]byte
	start, stop := strconv.AppendInt(a[:0], int64(k), 10), []byte("-1") // the head's k
	if i != 0 {
		start, stop = []byte("0"), strconv.AppendInt(b[:0], int64(n-k-1), 10) // the tail's
	}
	l.c.unrecorded = u
	l.c.record("LTRIM", start, stop)
}

func (l *List) delete(i, k int) {
	l.mustWrite("Delete")
	n := l.Len()
	if i < 0 || k < 0 || i+k > n {
		panic("store: List.Delete out of range")
	}
	if k == 0 {
		return
	}
	if q := l.quickW(); q != nil {
		q.deleteRange(i, k)
		l.c.dirty, l.c.unrecorded = true, true
		return
	}
	c := &l.c
	c.own()
	p := lpSeekIndex(c.lp, i, n)
	end := p
	for range k {
		end += lpEntrySize(c.lp, end)
	}
	c.lp = lpCutRange(c.lp, p, end-p, k)
}

// Remove removes elements equal to v, as LREM does: the first count of
// them from the head for a positive count, the last -count from the tail
// for a negative one, all for 0. It returns how many it removed.
func (l *List) Remove(v []byte, count int) int {
	u := l.c.unrecorded
	removed := l.remove(v, count)
	if removed > 0 && l.c.exact() {
		var num [20]byte
		l.c.unrecorded = u
		l.c.record("LREM", strconv.AppendInt(num[:0], int64(count), 10), v)
	}
	return removed
}

func (l *List) remove(v []byte, count int) int {
	l.mustWrite("Remove")
	matches := 0
	l.each(0, false, func(_ int, e lpEntry) bool {
		if e.equal(v) {
			matches++
		}
		return count <= 0 || matches < count
	})
	if matches == 0 {
		return 0
	}
	skip, limit := 0, -1
	switch {
	case count > 0:
		limit = count
	case count < 0 && matches > -count:
		skip = matches + count
	}
	if q := l.quickW(); q != nil {
		l.c.dirty, l.c.unrecorded = true, true
		return q.removeEqual(v, skip, limit)
	}
	c := &l.c
	c.own()
	var removed int
	c.lp, removed, _ = lpKeepUnequal(c.lp, v, skip, limit, limit < 0)
	return removed
}
