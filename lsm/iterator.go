package lsm

import (
	"bytes"
	"container/heap"
	"errors"
	"sort"
	"time"
)

// internalIterator walks internal keys in order.
type internalIterator interface {
	first() bool
	seekGE(ikey []byte) bool
	next() bool
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
	if i < len(it.files) {
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

func (it *levelIter) first() bool {
	it.open(0)
	if it.cur == nil {
		return false
	}
	return it.skipExhausted(it.cur.first())
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

func (it *levelIter) next() bool {
	if it.cur == nil {
		return false
	}
	return it.skipExhausted(it.cur.next())
}

func (it *levelIter) valid() bool   { return it.err == nil && it.cur != nil && it.cur.valid() }
func (it *levelIter) key() []byte   { return it.cur.key() }
func (it *levelIter) value() []byte { return it.cur.value() }
func (it *levelIter) error() error  { return it.err }
func (it *levelIter) close() error  { return nil }

// mergingIter merges several internal iterators with a min-heap. Children
// earlier in the list hold newer data, but the order does not matter for
// correctness: equal user keys are ordered by sequence number.
type mergingIter struct {
	children []internalIterator
	h        iterHeap
	err      error
}

type iterHeap []internalIterator

func (h iterHeap) Len() int           { return len(h) }
func (h iterHeap) Less(i, j int) bool { return compareInternal(h[i].key(), h[j].key()) < 0 }
func (h iterHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *iterHeap) Push(x any)        { *h = append(*h, x.(internalIterator)) }
func (h *iterHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (m *mergingIter) build() bool {
	for _, c := range m.children {
		if err := c.error(); err != nil {
			m.err = err
			return false
		}
	}
	heap.Init(&m.h)
	return len(m.h) > 0
}

func (m *mergingIter) first() bool {
	m.h = m.h[:0]
	for _, c := range m.children {
		if c.first() {
			m.h = append(m.h, c)
		}
	}
	return m.build()
}

func (m *mergingIter) seekGE(ikey []byte) bool {
	m.h = m.h[:0]
	for _, c := range m.children {
		if c.seekGE(ikey) {
			m.h = append(m.h, c)
		}
	}
	return m.build()
}

func (m *mergingIter) next() bool {
	if len(m.h) == 0 || m.err != nil {
		return false
	}
	top := m.h[0]
	if top.next() {
		heap.Fix(&m.h, 0)
	} else {
		if err := top.error(); err != nil {
			m.err = err
			return false
		}
		heap.Pop(&m.h)
	}
	return len(m.h) > 0
}

func (m *mergingIter) valid() bool   { return m.err == nil && len(m.h) > 0 }
func (m *mergingIter) key() []byte   { return m.h[0].key() }
func (m *mergingIter) value() []byte { return m.h[0].value() }
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

// Iterator walks the live keys of a DB in ascending order, as of the moment
// it was created (later writes are not visible). It is not safe for
// concurrent use; Close releases the tables it pins.
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
	err    error
	closed bool
	seek   []byte
}

// NewIter returns an iterator over a consistent snapshot of the DB.
func (d *DB) NewIter(o *IterOptions) (*Iterator, error) {
	rs, err := d.acquireReadState()
	if err != nil {
		return nil, err
	}
	// The sequence number is read after the read state is pinned: a
	// compaction finished before that may already have dropped versions
	// older than the newest one of a key, so a seq read earlier could
	// fall below every version the pinned tables still hold.
	seq := d.visibleSeq.Load()
	it := &Iterator{rs: rs, seq: seq, now: time.Now().UnixNano()}
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
	return it, nil
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

// Next moves to the next key.
func (it *Iterator) Next() bool {
	if !it.valid {
		return false
	}
	// Skip the remaining (older) versions of the current key.
	ok := it.iter.next()
	for ok && bytes.Equal(userKey(it.iter.key()), it.key) {
		ok = it.iter.next()
	}
	return it.findNext(ok)
}

// findNext settles on the newest visible, live version of the first user
// key at or after the merged iterator's position.
func (it *Iterator) findNext(ok bool) bool {
	it.valid = false
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
		it.exp = 0
		if k == kindSetExpiring {
			it.exp = int64(leUint64(v))
			v = v[8:]
		}
		it.val = v
		it.valid = true
		return true
	}
	if err := it.iter.error(); err != nil {
		it.err = err
	}
	return false
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
	return time.Unix(0, it.exp)
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
	err := it.iter.close()
	it.rs.release()
	if err == nil {
		err = it.err
	}
	return err
}
