package store

import (
	"encoding/binary"
	"slices"
)

// quicklist is a big list's object, as Redis's quicklist.c keeps one: a
// deque of nodes, each a listpack (listpack.go) of at most one node's
// worth of entries (list-max-listpack-size), with the node's count beside
// it so that an index is found by skipping whole nodes without reading
// them. Pushes and pops at either end touch one node; a node that fills
// up is followed by a new one, a node that empties is dropped (and kept
// as the spare for the next new node, so a list that grows and shrinks
// at its ends allocates nothing). The deque is nodes[lo:hi] of a slice
// with room at both ends, recentred or regrown when an end runs out: O(1)
// amortised per node added, never a move of the elements.
//
// One Go pointer per node (its listpack), thousands of elements per
// pointer for small elements; the size charged is the capacity of the
// node slice and of every listpack.
type quicklist struct {
	nodes    []qnode // live nodes are nodes[lo:hi], in list order
	lo, hi   int
	n        int    // elements
	capBytes int64  // the listpacks' capacity, the spare's included
	spare    []byte // an emptied node's listpack, for the next new node
	fill     int64  // list-max-listpack-size when the list became big
}

// qnode is one node: a listpack and its number of entries.
type qnode struct {
	lp []byte
	n  int
}

const (
	qnodeSize          = 32  // unsafe.Sizeof(qnode{})
	quicklistOverhead  = 128 // the struct, its object-table slot
	listSafetyLimit    = 8192
	listMinNodeCap     = 64
	listDefaultPackLen = -2
)

// listExceeds is Redis's quicklistNodeExceedsLimit: whether a listpack
// of sz bytes and cnt entries is too large for one node (or for a small
// list's record) under list-max-listpack-size fill. A negative fill
// bounds the bytes (-1 4 KiB ... -5 64 KiB), a positive one the entries
// (within an 8 KiB safety limit).
func listExceeds(fill int64, sz, cnt int) bool {
	if fill < 0 {
		return sz > listNodeBytes(fill)
	}
	if sz > listSafetyLimit {
		return true
	}
	return int64(cnt) > max(fill, 1)
}

// listNodeBytes is the largest a node's listpack grows under fill.
func listNodeBytes(fill int64) int {
	if fill >= 0 {
		return listSafetyLimit
	}
	off := min(-fill-1, 4)
	return 4096 << off
}

func newQuicklist(fill int64) *quicklist {
	return &quicklist{nodes: make([]qnode, 4), lo: 2, hi: 2, fill: fill}
}

func (q *quicklist) size() int64 {
	return int64(cap(q.nodes))*qnodeSize + q.capBytes + quicklistOverhead
}

func (q *quicklist) len() int { return q.n }

// reclaim and free: a quicklist's slices are all on the heap (its nodes
// hold Go pointers, its listpacks are at most a node's limit).
func (q *quicklist) reclaim() {}
func (q *quicklist) free()    {}

func (q *quicklist) count() int { return q.hi - q.lo }

func (q *quicklist) node(j int) *qnode { return &q.nodes[q.lo+j] }

// room makes a free slot at the front (front) or the back of the deque.
func (q *quicklist) room(front bool) {
	if front && q.lo > 0 || !front && q.hi < len(q.nodes) {
		return
	}
	live := q.count()
	nodes := q.nodes
	if live*2 > len(nodes) {
		nodes = make([]qnode, max(4, live*2))
	}
	lo := (len(nodes) - live) / 2
	if lo == 0 {
		lo = 1 // len(nodes) >= live+2 here
	}
	copy(nodes[lo:], q.nodes[q.lo:q.hi])
	if &nodes[0] == &q.nodes[0] {
		// Recentred in place: clear the slots left behind.
		for i := range nodes {
			if i < lo || i >= lo+live {
				nodes[i] = qnode{}
			}
		}
	}
	q.nodes, q.lo, q.hi = nodes, lo, lo+live
}

// newNode returns an empty listpack with room for need bytes: the spare
// when it is large enough.
func (q *quicklist) newNode(need int) []byte {
	if cap(q.spare) >= need {
		lp := q.spare[:lpHeaderSize+1]
		q.spare = nil
		binary.LittleEndian.PutUint32(lp, lpHeaderSize+1)
		binary.LittleEndian.PutUint16(lp[4:], 0)
		lp[lpHeaderSize] = lpEOF
		return lp
	}
	c := max(need, min(listMinNodeCap*4, listNodeBytes(q.fill)))
	lp := make([]byte, lpHeaderSize+1, c)
	binary.LittleEndian.PutUint32(lp, lpHeaderSize+1)
	lp[lpHeaderSize] = lpEOF
	q.capBytes += int64(c)
	return lp
}

// drop gives a node's listpack up: kept as the spare if none is kept.
func (q *quicklist) drop(lp []byte) {
	if q.spare == nil && cap(lp) <= listNodeBytes(q.fill) {
		q.spare = lp
		return
	}
	q.capBytes -= int64(cap(lp))
}

// grow makes the listpack of node nd able to take need bytes without a
// move, doubling its capacity up to a node's limit (or to need).
func (q *quicklist) grow(nd *qnode, need int) {
	if cap(nd.lp) >= need {
		return
	}
	c := max(need, min(2*cap(nd.lp), listNodeBytes(q.fill)))
	lp := make([]byte, len(nd.lp), c)
	copy(lp, nd.lp)
	q.capBytes += int64(c - cap(nd.lp))
	nd.lp = lp
}

// insertNode puts a node with lp (n entries) at position j.
func (q *quicklist) insertNode(j int, lp []byte, n int) {
	switch {
	case j == 0:
		q.room(true)
		q.lo--
	case j == q.count():
		q.room(false)
		q.hi++
	default:
		q.room(false)
		copy(q.nodes[q.lo+j+1:q.hi+1], q.nodes[q.lo+j:q.hi])
		q.hi++
	}
	*q.node(j) = qnode{lp: lp, n: n}
}

// removeNodes removes k nodes from position j; their elements are the
// caller's to uncount.
func (q *quicklist) removeNodes(j, k int) {
	for i := j; i < j+k; i++ {
		q.drop(q.node(i).lp)
	}
	switch {
	case j == 0:
		clear(q.nodes[q.lo : q.lo+k])
		q.lo += k
	default:
		copy(q.nodes[q.lo+j:], q.nodes[q.lo+j+k:q.hi])
		clear(q.nodes[q.hi-k : q.hi])
		q.hi -= k
	}
	if q.lo == q.hi {
		q.lo, q.hi = len(q.nodes)/2, len(q.nodes)/2
	}
}

// locate returns the node holding element i (0 <= i < n) and i's index
// within it, walking the counts from the nearer end.
func (q *quicklist) locate(i int) (j, k int) {
	if i < q.n/2 {
		for j = 0; ; j++ {
			if c := q.node(j).n; i < c {
				return j, i
			} else {
				i -= c
			}
		}
	}
	back := q.n - 1 - i // elements after i
	for j = q.count() - 1; ; j-- {
		if c := q.node(j).n; back < c {
			return j, c - 1 - back
		} else {
			back -= c
		}
	}
}

// push adds the element s at the front or the back.
func (q *quicklist) push(front bool, s []byte) {
	size := lpEncodedSize(s)
	j := 0
	if !front {
		j = q.count() - 1
	}
	if q.count() == 0 || listExceeds(q.fill, len(q.node(j).lp)+size, q.node(j).n+1) {
		need := lpHeaderSize + 1 + size
		if q.count() >= 2 {
			// An end of a list of several nodes that filled its node will
			// likely fill the next one too: make it as large as the full
			// one at once, instead of doubling it up to there and leaving
			// each smaller copy to the collector.
			need = max(need, len(q.node(j).lp))
		}
		lp := q.newNode(need)
		if front {
			q.insertNode(0, lp, 0)
		} else {
			q.insertNode(q.count(), lp, 0)
			j = q.count() - 1
		}
	}
	nd := q.node(j)
	q.grow(nd, len(nd.lp)+size)
	if front {
		nd.lp = lpInsert(nd.lp, lpHeaderSize, s)
	} else {
		nd.lp = lpAppend(nd.lp, s)
	}
	nd.n++
	q.n++
}

// pop removes the front or back element, appending its string form to
// dst.
func (q *quicklist) pop(front bool, dst []byte) []byte {
	j := 0
	if !front {
		j = q.count() - 1
	}
	nd := q.node(j)
	p := lpFirst(nd.lp)
	if !front {
		p = lpLast(nd.lp)
	}
	dst = lpGet(nd.lp, p).appendTo(dst)
	q.n--
	if nd.n == 1 {
		q.removeNodes(j, 1)
		return dst
	}
	nd.lp = lpDelete(nd.lp, p)
	nd.n--
	return dst
}

// at returns the listpack holding element i and the entry's offset.
func (q *quicklist) at(i int) (lp []byte, p int) {
	j, k := q.locate(i)
	nd := q.node(j)
	return nd.lp, lpSeekIndex(nd.lp, k, nd.n)
}

// set replaces element i with s.
func (q *quicklist) set(i int, s []byte) {
	j, k := q.locate(i)
	nd := q.node(j)
	q.grow(nd, len(nd.lp)+lpEncodedSize(s))
	nd.lp = lpReplace(nd.lp, lpSeekIndex(nd.lp, k, nd.n), s)
	q.split(j)
}

// insert puts s before element i (i == n: at the back).
func (q *quicklist) insert(i int, s []byte) {
	switch i {
	case 0:
		q.push(true, s)
		return
	case q.n:
		q.push(false, s)
		return
	}
	j, k := q.locate(i)
	nd := q.node(j)
	q.grow(nd, len(nd.lp)+lpEncodedSize(s))
	nd.lp = lpInsert(nd.lp, lpSeekIndex(nd.lp, k, nd.n), s)
	nd.n++
	q.n++
	q.split(j)
}

// split cuts node j in halves, and them again, while it is over a node's
// limit and has more than one entry.
func (q *quicklist) split(j int) {
	nd := q.node(j)
	if nd.n < 2 || !listExceeds(q.fill, len(nd.lp), nd.n) {
		return
	}
	half := nd.n / 2
	p := lpSeekIndex(nd.lp, half, nd.n)
	tail := nd.lp[p : len(nd.lp)-1]
	rest := q.newNode(lpHeaderSize + 1 + len(tail))
	rest = lpAppendRaw(rest, tail, nd.n-half)
	nd = q.node(j)
	nd.lp = lpCutRange(nd.lp, p, len(nd.lp)-1-p, nd.n-half)
	nd.n = half
	q.insertNode(j+1, rest, lpCount(rest))
	q.split(j + 1)
	q.split(j)
}

// deleteRange removes k elements from index i on.
func (q *quicklist) deleteRange(i, k int) {
	j, o := q.locate(i)
	q.n -= k
	for k > 0 {
		nd := q.node(j)
		if o == 0 && nd.n <= k {
			// Whole nodes: count them and remove them at once.
			w, m := 1, nd.n
			for j+w < q.count() && m+q.node(j+w).n <= k {
				m += q.node(j + w).n
				w++
			}
			q.removeNodes(j, w)
			k -= m
			continue
		}
		d := min(k, nd.n-o)
		p := lpSeekIndex(nd.lp, o, nd.n)
		end := p
		for range d {
			end += lpEntrySize(nd.lp, end)
		}
		nd.lp = lpCutRange(nd.lp, p, end-p, d)
		nd.n -= d
		k -= d
		j, o = j+1, 0
	}
}

// removeEqual removes the elements equal to s, skipping the first skip
// of them and removing at most limit (-1: all), and returns how many.
func (q *quicklist) removeEqual(s []byte, skip, limit int) int {
	removed := 0
	for j := 0; j < q.count() && removed != limit; {
		nd := q.node(j)
		var r int
		nd.lp, r, skip = lpKeepUnequal(nd.lp, s, skip, limit-removed, limit < 0)
		nd.n -= r
		removed += r
		if nd.n == 0 {
			q.removeNodes(j, 1)
			continue
		}
		j++
	}
	q.n -= removed
	if removed > 0 {
		q.merge()
	}
	return removed
}

// merge joins neighbouring nodes whose entries fit in one node, after
// removals left them small.
func (q *quicklist) merge() {
	for j := 0; j+1 < q.count(); {
		a, b := q.node(j), q.node(j+1)
		sz := len(a.lp) + len(b.lp) - lpHeaderSize - 1
		if listExceeds(q.fill, sz, a.n+b.n) {
			j++
			continue
		}
		q.grow(a, sz)
		a.lp = lpAppendRaw(a.lp, b.lp[lpHeaderSize:len(b.lp)-1], b.n)
		a.n += b.n
		q.removeNodes(j+1, 1)
	}
}

// each calls fn with the listpack and offset of every element from index
// from on, forwards or backwards, until fn returns false.
func (q *quicklist) each(from int, reverse bool, fn func(i int, lp []byte, p int) bool) {
	if from < 0 || from >= q.n {
		return
	}
	j, k := q.locate(from)
	i := from
	nd := q.node(j)
	p := lpSeekIndex(nd.lp, k, nd.n)
	for {
		if !fn(i, nd.lp, p) {
			return
		}
		if reverse {
			i--
			if p = lpPrev(nd.lp, p); p < 0 {
				if j--; j < 0 {
					return
				}
				nd = q.node(j)
				p = lpLast(nd.lp)
			}
		} else {
			i++
			if p = lpNext(nd.lp, p); p < 0 {
				if j++; j >= q.count() {
					return
				}
				nd = q.node(j)
				p = lpFirst(nd.lp)
			}
		}
	}
}

// appendFlat appends the flat encoding persistence writes:
//
//	| varint fill | uvarint nodes | per node: uvarint len | listpack |
func (q *quicklist) appendFlat(b []byte) []byte {
	b = binary.AppendVarint(b, q.fill)
	b = binary.AppendUvarint(b, uint64(q.count()))
	for j := range q.count() {
		lp := q.node(j).lp
		b = binary.AppendUvarint(b, uint64(len(lp)))
		b = append(b, lp...)
	}
	return b
}

// quicklistFromFlat rebuilds a quicklist from appendFlat's bytes, checking
// every listpack as one from outside (lpValidate).
func quicklistFromFlat(b []byte) (*quicklist, error) {
	fill, k := binary.Varint(b)
	if k <= 0 {
		return nil, errFlat
	}
	b = b[k:]
	nodes, k := binary.Uvarint(b)
	if k <= 0 || nodes == 0 || nodes > uint64(len(b)) {
		return nil, errFlat
	}
	b = b[k:]
	q := newQuicklist(fill)
	for range nodes {
		raw, rest, ok := cutFlat(b)
		if !ok || lpValidate(raw) != nil {
			return nil, errFlat
		}
		b = rest
		lp := slices.Clip(slices.Clone(raw))
		n := lpCount(lp)
		if n == 0 {
			return nil, errFlat
		}
		q.capBytes += int64(cap(lp))
		q.insertNode(q.count(), lp, n)
		q.n += n
	}
	if len(b) != 0 {
		return nil, errFlat
	}
	return q, nil
}

// lpSeekIndex returns the offset of entry i of a listpack of n entries,
// walking from the nearer end; i == n is the end byte's offset.
func lpSeekIndex(lp []byte, i, n int) int {
	if i >= n {
		return len(lp) - 1
	}
	if i <= n/2 {
		p := lpHeaderSize
		for range i {
			p += lpEntrySize(lp, p)
		}
		return p
	}
	p := len(lp) - 1
	for range n - i {
		p = lpPrev(lp, p)
	}
	return p
}

// lpCutRange removes the k entries in lp[p:p+size], in place.
func lpCutRange(lp []byte, p, size, k int) []byte {
	copy(lp[p:], lp[p+size:])
	lp = lp[:len(lp)-size]
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	if c := binary.LittleEndian.Uint16(lp[4:]); c != lpCountUnknown {
		lpSetCount(lp, int(c)-k)
	} else {
		lpSetCount(lp, lpCount(lp))
	}
	return lp
}

// lpAppendRaw appends k whole entries, as their bytes (entries do not
// depend on where they sit), to lp.
func lpAppendRaw(lp, entries []byte, k int) []byte {
	n := lpCount(lp)
	lp = append(lp[:len(lp)-1], entries...)
	lp = append(lp, lpEOF)
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	lpSetCount(lp, n+k)
	return lp
}

// lpKeepUnequal removes, in place, the entries equal to s, except the
// first skip of them, removing at most limit unless all is set. It
// returns the listpack, the number removed and what is left of skip.
func lpKeepUnequal(lp, s []byte, skip, limit int, all bool) ([]byte, int, int) {
	w, removed := lpHeaderSize, 0
	for p := lpHeaderSize; lp[p] != lpEOF; {
		size := lpEntrySize(lp, p)
		if (all || removed < limit) && lpGet(lp, p).equal(s) {
			if skip == 0 {
				removed++
				p += size
				continue
			}
			skip--
		}
		copy(lp[w:], lp[p:p+size])
		w += size
		p += size
	}
	if removed == 0 {
		return lp, 0, skip
	}
	lp[w] = lpEOF
	lp = lp[:w+1]
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	if c := binary.LittleEndian.Uint16(lp[4:]); c != lpCountUnknown {
		lpSetCount(lp, int(c)-removed)
	} else {
		lpSetCount(lp, lpCount(lp))
	}
	return lp, removed, skip
}
