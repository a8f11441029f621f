package lsm

import (
	"bytes"
	"errors"
	"sort"
	"time"
)

// internalIterator walks internal keys in order, in either direction.
// After a move that returns false the iterator is invalid; it is then only
// repositioned (first, last, a seek), never moved with next or prev. The
// merging iterator and the Iterator above it keep to that rule, which
// saves every layer from remembering which end it fell off.
type internalIterator interface {
	first() bool
	last() bool
	seekGE(ikey []byte) bool
	seekLT(ikey []byte) bool
	next() bool
	prev() bool
	valid() bool
	key() []byte
	value() []byte
	error() error
	close() error
}

// levelIter concatenates the tables of one sorted level, opening an iterator
// on a table only when the walk reaches it.
type levelIter struct {
	files     []*fileMeta
	i         int
	cur       *tableIter
	fillCache bool
	err       error
}

func (it *levelIter) open(i int) {
	it.i = i
	it.cur = nil
	if i >= 0 && i < len(it.files) {
		it.cur = newTableIter(it.files[i].t, it.fillCache)
	}
}

func (it *levelIter) skipExhausted(ok bool) bool {
	for !ok {
		if it.cur == nil {
			return false
		}
		if err := it.cur.error(); err != nil {
			it.err = err
			return false
		}
		it.open(it.i + 1)
		if it.cur == nil {
			return false
		}
		ok = it.cur.first()
	}
	return true
}

// skipBack is skipExhausted for reverse iteration.
func (it *levelIter) skipBack(ok bool) bool {
	for !ok {
		if it.cur == nil {
			return false
		}
		if err := it.cur.error(); err != nil {
			it.err = err
			return false
		}
		it.open(it.i - 1)
		if it.cur == nil {
			return false
		}
		ok = it.cur.last()
	}
	return true
}

func (it *levelIter) first() bool {
	it.open(0)
	if it.cur == nil {
		return false
	}
	return it.skipExhausted(it.cur.first())
}

func (it *levelIter) last() bool {
	it.open(len(it.files) - 1)
	if it.cur == nil {
		return false
	}
	return it.skipBack(it.cur.last())
}

func (it *levelIter) seekGE(ikey []byte) bool {
	i := sort.Search(len(it.files), func(i int) bool {
		return compareInternal(it.files[i].largest, ikey) >= 0
	})
	it.open(i)
	if it.cur == nil {
		return false
	}
	return it.skipExhausted(it.cur.seekGE(ikey))
}

func (it *levelIter) seekLT(ikey []byte) bool {
	// The last table whose smallest key is < ikey.
	i := sort.Search(len(it.files), func(i int) bool {
		return compareInternal(it.files[i].smallest, ikey) >= 0
	})
	it.open(i - 1)
	if it.cur == nil {
		return false
	}
	return it.skipBack(it.cur.seekLT(ikey))
}

func (it *levelIter) next() bool {
	if it.cur == nil {
		return false
	}
	return it.skipExhausted(it.cur.next())
}

func (it *levelIter) prev() bool {
	if it.cur == nil {
		return false
	}
	return it.skipBack(it.cur.prev())
}

func (it *levelIter) valid() bool   { return it.err == nil && it.cur != nil && it.cur.valid() }
func (it *levelIter) key() []byte   { return it.cur.key() }
func (it *levelIter) value() []byte { return it.cur.value() }
func (it *levelIter) error() error  { return it.err }
func (it *levelIter) close() error  { return nil }

// mergingIter merges several internal iterators with a heap: a min-heap
// moving forward, a max-heap moving backward. Children earlier in the list
// hold newer data, but the order does not matter for correctness: equal
// user keys are ordered by sequence number.
//
// Only the children in the heap are positioned consistently with the
// direction (every one at or after the current key moving forward, at or
// before it moving backward); a change of direction therefore repositions
// every child around the current key, as LevelDB's and Pebble's merging
// iterators do.
type mergingIter struct {
	children []internalIterator
	h        iterHeap
	err      error
	turn     []byte // the current key, copied when the direction changes
}

// iterHeap is a binary heap of children ordered by their current keys:
// the smallest on top moving forward, the largest moving backward. It is
// written out instead of using container/heap, whose Less and Swap are
// interface calls: a merge compares keys at every step of a scan.
type iterHeap struct {
	items   []internalIterator
	reverse bool // a max-heap, for moving backward
}

func (h *iterHeap) less(i, j int) bool {
	c := compareInternal(h.items[i].key(), h.items[j].key())
	if h.reverse {
		return c > 0
	}
	return c < 0
}

func (h *iterHeap) init() {
	n := len(h.items)
	for i := n/2 - 1; i >= 0; i-- {
		h.down(i, n)
	}
}

// fixTop restores the order after the top child moved.
func (h *iterHeap) fixTop() { h.down(0, len(h.items)) }

// popTop removes the top child.
func (h *iterHeap) popTop() {
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	h.down(0, n)
}

func (h *iterHeap) down(i, n int) {
	for {
		j := 2*i + 1
		if j >= n {
			return
		}
		if j2 := j + 1; j2 < n && h.less(j2, j) {
			j = j2
		}
		if !h.less(j, i) {
			return
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		i = j
	}
}

// reset empties the heap for a positioning in the given direction. (The
// stale entries past the new length are children, which m.children keeps
// alive anyway.)
func (m *mergingIter) reset(reverse bool) {
	m.h.items = m.h.items[:0]
	m.h.reverse = reverse
}

func (m *mergingIter) build() bool {
	for _, c := range m.children {
		if err := c.error(); err != nil {
			m.err = err
			return false
		}
	}
	m.h.init()
	return len(m.h.items) > 0
}

func (m *mergingIter) first() bool {
	m.reset(false)
	for _, c := range m.children {
		if c.first() {
			m.h.items = append(m.h.items, c)
		}
	}
	return m.build()
}

func (m *mergingIter) last() bool {
	m.reset(true)
	for _, c := range m.children {
		if c.last() {
			m.h.items = append(m.h.items, c)
		}
	}
	return m.build()
}

func (m *mergingIter) seekGE(ikey []byte) bool {
	m.reset(false)
	for _, c := range m.children {
		if c.seekGE(ikey) {
			m.h.items = append(m.h.items, c)
		}
	}
	return m.build()
}

func (m *mergingIter) seekLT(ikey []byte) bool {
	m.reset(true)
	for _, c := range m.children {
		if c.seekLT(ikey) {
			m.h.items = append(m.h.items, c)
		}
	}
	return m.build()
}

func (m *mergingIter) next() bool {
	if len(m.h.items) == 0 || m.err != nil {
		return false
	}
	if m.h.reverse {
		// Every child moves to its first key after the current one.
		// Internal keys are unique, so a child at the current key is the
		// one that holds it.
		m.turn = append(m.turn[:0], m.key()...)
		m.reset(false)
		for _, c := range m.children {
			ok := c.seekGE(m.turn)
			if ok && compareInternal(c.key(), m.turn) == 0 {
				ok = c.next()
			}
			if ok {
				m.h.items = append(m.h.items, c)
			}
		}
		return m.build()
	}
	top := m.h.items[0]
	if top.next() {
		m.h.fixTop()
	} else {
		if err := top.error(); err != nil {
			m.err = err
			return false
		}
		m.h.popTop()
	}
	return len(m.h.items) > 0
}

func (m *mergingIter) prev() bool {
	if len(m.h.items) == 0 || m.err != nil {
		return false
	}
	if !m.h.reverse {
		// Every child moves to its last key before the current one.
		m.turn = append(m.turn[:0], m.key()...)
		return m.seekLT(m.turn)
	}
	top := m.h.items[0]
	if top.prev() {
		m.h.fixTop()
	} else {
		if err := top.error(); err != nil {
			m.err = err
			return false
		}
		m.h.popTop()
	}
	return len(m.h.items) > 0
}

func (m *mergingIter) valid() bool   { return m.err == nil && len(m.h.items) > 0 }
func (m *mergingIter) key() []byte   { return m.h.items[0].key() }
func (m *mergingIter) value() []byte { return m.h.items[0].value() }
func (m *mergingIter) error() error  { return m.err }
func (m *mergingIter) close() error {
	var err error
	for _, c := range m.children {
		err = errors.Join(err, c.close())
	}
	return err
}

// IterOptions bounds an Iterator to [LowerBound, UpperBound); nil means
// unbounded.
type IterOptions struct {
	LowerBound []byte
	UpperBound []byte
}

// iterPos says where an Iterator stands, and so what the merged iterator
// under it points at.
type iterPos uint8

const (
	// posNone: not positioned yet, or stopped by an error or Close.
	posNone iterPos = iota
	// posForward: at a key, reached moving forward; the merged iterator
	// is at the newest visible version of the key.
	posForward
	// posReverse: at a key, reached moving backward; the merged iterator
	// is before every version of the key (at an entry of a smaller key,
	// not yet looked at, or exhausted).
	posReverse
	// posAfterLast: moved past the last key; Prev goes to the last key.
	posAfterLast
	// posBeforeFirst: moved before the first key; Next goes to the first.
	posBeforeFirst
)

// Iterator walks the live keys of a DB, in either direction, as of the
// moment it was created (later writes are not visible) or as of the
// Snapshot it was created from. It skips deleted and expired keys and
// every version of a key but the newest one it may see.
//
// Next and Prev may be mixed freely, as in Pebble: Next after Prev
// returns the key after the current one, and a move that runs off one end
// leaves the iterator invalid there, from where the move the other way
// returns the key at that end (Next after the first key's Prev returns the
// first key again).
//
// An Iterator is not safe for concurrent use; Close releases the tables it
// pins.
type Iterator struct {
	rs     *readState
	iter   mergingIter
	seq    uint64
	now    int64
	lower  []byte
	upper  []byte
	key    []byte
	val    []byte
	exp    int64
	valid  bool
	pos    iterPos
	err    error
	closed bool
	seek   []byte
}

// NewIter returns an iterator over a consistent snapshot of the DB. It is
// safe for concurrent use (the returned Iterator is not).
func (d *DB) NewIter(o *IterOptions) (*Iterator, error) {
	rs, err := d.acquireReadState()
	if err != nil {
		return nil, err
	}
	// The sequence number is read after the read state is pinned: a
	// compaction finished before that may already have dropped versions
	// older than the newest one of a key, so a seq read earlier could
	// fall below every version the pinned tables still hold.
	return newIterator(rs, d.visibleSeq.Load(), o), nil
}

// newIterator returns an iterator over rs at seq; it takes over the
// caller's reference to rs.
func newIterator(rs *readState, seq uint64, o *IterOptions) *Iterator {
	it := &Iterator{rs: rs, seq: rs.capSeq(seq), now: time.Now().UnixNano()}
	if o != nil {
		it.lower = append([]byte(nil), o.LowerBound...)
		if o.UpperBound != nil {
			it.upper = append([]byte(nil), o.UpperBound...)
		}
	}
	for _, m := range rs.mems {
		it.iter.children = append(it.iter.children, &memIter{m: m})
	}
	for _, f := range rs.v.levels[0] {
		it.iter.children = append(it.iter.children, newTableIter(f.t, true))
	}
	for level := 1; level < numLevels; level++ {
		if files := rs.v.levels[level]; len(files) > 0 {
			it.iter.children = append(it.iter.children, &levelIter{files: files, fillCache: true})
		}
	}
	return it
}

// First moves to the first key at or above the lower bound.
func (it *Iterator) First() bool {
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	if it.closed {
		return false
	}
	return it.findNext(it.iter.first())
}

// Last moves to the last key below the upper bound.
func (it *Iterator) Last() bool {
	if it.upper != nil {
		return it.SeekLT(it.upper)
	}
	if it.closed {
		return false
	}
	return it.findPrev(it.iter.last())
}

// SeekGE moves to the first key >= key (and >= the lower bound).
func (it *Iterator) SeekGE(key []byte) bool {
	if it.closed {
		return false
	}
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.seek = appendInternalKey(it.seek[:0], key, maxSeq, kindMax)
	return it.findNext(it.iter.seekGE(it.seek))
}

// SeekLT moves to the last key < key (and < the upper bound).
func (it *Iterator) SeekLT(key []byte) bool {
	if it.closed {
		return false
	}
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	// (key, maxSeq, kindMax) sorts before every version of key, so the
	// entries before it are those of smaller keys.
	it.seek = appendInternalKey(it.seek[:0], key, maxSeq, kindMax)
	return it.findPrev(it.iter.seekLT(it.seek))
}

// Next moves to the next key. After the iterator moved before the first
// key, Next moves to the first key.
func (it *Iterator) Next() bool {
	switch it.pos {
	case posForward:
		// Skip the remaining (older) versions of the current key.
		ok := it.iter.next()
		for ok && bytes.Equal(userKey(it.iter.key()), it.key) {
			ok = it.iter.next()
		}
		return it.findNext(ok)
	case posReverse:
		// The merged iterator is before the current key: seek past
		// every version of it ((key, 0, delete) sorts after them all).
		it.seek = appendInternalKey(it.seek[:0], it.key, 0, kindDelete)
		ok := it.iter.seekGE(it.seek)
		for ok && bytes.Equal(userKey(it.iter.key()), it.key) {
			ok = it.iter.next()
		}
		return it.findNext(ok)
	case posBeforeFirst:
		return it.First()
	}
	return false
}

// Prev moves to the previous key. After the iterator moved past the last
// key, Prev moves to the last key.
func (it *Iterator) Prev() bool {
	switch it.pos {
	case posReverse:
		return it.findPrev(it.iter.valid())
	case posForward:
		it.seek = appendInternalKey(it.seek[:0], it.key, maxSeq, kindMax)
		return it.findPrev(it.iter.seekLT(it.seek))
	case posAfterLast:
		return it.Last()
	}
	return false
}

// findNext settles on the newest visible, live version of the first user
// key at or after the merged iterator's position.
func (it *Iterator) findNext(ok bool) bool {
	it.valid = false
	it.pos = posAfterLast
	for ok {
		ik := it.iter.key()
		uk := userKey(ik)
		if it.upper != nil && bytes.Compare(uk, it.upper) >= 0 {
			break
		}
		t := trailer(ik)
		if seqOf(t) > it.seq {
			ok = it.iter.next()
			continue
		}
		k, v := kindOf(t), it.iter.value()
		if k == kindDelete || expired(k, v, it.now) {
			// Skip every version of this key.
			it.key = append(it.key[:0], uk...)
			ok = it.iter.next()
			for ok && bytes.Equal(userKey(it.iter.key()), it.key) {
				ok = it.iter.next()
			}
			continue
		}
		it.key = append(it.key[:0], uk...)
		it.setValue(k, v)
		it.valid = true
		it.pos = posForward
		return true
	}
	if err := it.iter.error(); err != nil {
		it.err = err
		it.pos = posNone
	}
	return false
}

// findPrev settles on the last user key at or before the merged
// iterator's position whose newest visible version is live. Moving
// backward, a key's versions come oldest first, so the newest visible one
// is known only when the walk reaches a smaller key; the walk stops there,
// with the merged iterator at that smaller key's entry (LevelDB's
// DBIter::FindPrevUserEntry).
func (it *Iterator) findPrev(ok bool) bool {
	it.valid = false
	it.pos = posBeforeFirst
	live := false
	var k kind
	var v []byte
	for ok {
		ik := it.iter.key()
		uk := userKey(ik)
		if it.lower != nil && bytes.Compare(uk, it.lower) < 0 {
			break
		}
		if t := trailer(ik); seqOf(t) <= it.seq {
			if live && !bytes.Equal(uk, it.key) {
				break // it.key is complete, and live
			}
			k, v = kindOf(t), it.iter.value()
			live = k != kindDelete && !expired(k, v, it.now)
			if live {
				it.key = append(it.key[:0], uk...)
			}
		}
		ok = it.iter.prev()
	}
	if err := it.iter.error(); err != nil {
		it.err = err
		it.pos = posNone
		return false
	}
	if !live {
		return false
	}
	// v aliases a memtable's arena or a cached block, which are never
	// rewritten, so it survives the moves past it.
	it.setValue(k, v)
	it.valid = true
	it.pos = posReverse
	return true
}

// setValue sets the current value from an entry of kind k (set or
// expiring).
func (it *Iterator) setValue(k kind, v []byte) {
	it.exp = 0
	if k == kindSetExpiring {
		it.exp = int64(leUint64(v))
		v = v[8:]
	}
	it.val = v
}

// Valid reports whether the iterator is at a key.
func (it *Iterator) Valid() bool { return it.valid }

// Key returns the current key; valid until the next move.
func (it *Iterator) Key() []byte { return it.key }

// Value returns the current value; valid until the next move.
func (it *Iterator) Value() []byte { return it.val }

// Expiry returns the current key's expiry, or the zero time if none.
func (it *Iterator) Expiry() time.Time {
	if it.exp == 0 {
		return time.Time{}
	}
	return decodeExpiry(it.exp)
}

// Error returns the first error the iterator met (ErrCorrupt on damage).
func (it *Iterator) Error() error { return it.err }

// Close releases the iterator's snapshot.
func (it *Iterator) Close() error {
	if it.closed {
		return nil
	}
	it.closed = true
	it.valid = false
	it.pos = posNone
	err := it.iter.close()
	it.rs.release()
	if err == nil {
		err = it.err
	}
	return err
}
