package store

import (
	"encoding/binary"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
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
//
// Compression (list-compress-depth, Redis's quicklist compression): the
// nodes more than depth nodes from either end are kept compressed (S2,
// github.com/klauspost/compress/s2) when that saves at least
// qpackMinSaving bytes; the depth nodes at each end are always plain, so
// pushes and pops never touch compressed bytes. A node is compressed once
// it is more than depth+1 nodes from an end (new nodes were started
// beyond it; the one at depth from each end may be either, settleEnds),
// and decompressed when it becomes an end node again (the end nodes
// before it emptied) or is changed in the middle (LSET, LINSERT, LREM,
// LTRIM), then compressed again once the change is done. A read in the middle
// (LINDEX, LRANGE, LPOS, ...) decompresses a node into buf, a buffer
// taken from a pool for the call and given back by reclaim, never
// charged (at most one node's bytes per list being read). What is charged
// is the capacity of each node's bytes, compressed or not. The depth is
// the store's list-compress-depth when the list became big; a write
// after CONFIG SET changed it applies the new one to the whole list
// first (setDepth), a read never changes the list.
type quicklist struct {
	nodes    []qnode // live nodes are nodes[lo:hi], in list order
	lo, hi   int
	n        int    // elements
	capBytes int64  // the listpacks' capacity, the spare's included
	spare    []byte // an emptied node's listpack, for the next new node
	fill     int64  // list-max-listpack-size when the list became big
	depth    int    // list-compress-depth the nodes follow (0: none compressed)

	buf   *[]byte // a node decompressed for reading (or scratch for compressing), from unpackPool
	bufOf *byte   // the compressed bytes buf holds the listpack of; nil: none

	pb *baseRun // the key's durable base record, for patches (patch.go)
}

// qnode is one node: a listpack and its number of entries. When raw > 0
// lp is the listpack compressed (an S2 block) and raw the listpack's
// length; raw == qnodeTried marks a plain node compressing did not pay
// for, not tried again until it changes.
type qnode struct {
	lp  []byte
	n   int
	raw int
}

const (
	qnodeTried = -1
	// qpackMinBytes and qpackMinSaving are Redis's MIN_COMPRESS_BYTES and
	// MIN_COMPRESS_IMPROVE: a node smaller than 48 bytes is not
	// compressed, nor one that would shrink by less than 8 bytes.
	qpackMinBytes  = 48
	qpackMinSaving = 8
	// qbufKeep: a buffer larger than this is not kept in the pool; the
	// largest node (64 KiB, list-max-listpack-size -5) needs 76 KiB to
	// be compressed into.
	qbufKeep = 128 << 10
)

// unpackPool holds the buffers quicklists decompress nodes into for a
// read and compress them through; a *[]byte each.
var unpackPool = sync.Pool{New: func() any { return new([]byte) }}

const (
	qnodeSize          = 40  // unsafe.Sizeof(qnode{})
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

func newQuicklist(fill, depth int64) *quicklist {
	return &quicklist{nodes: make([]qnode, 4), lo: 2, hi: 2, fill: fill, depth: clampDepth(depth)}
}

// clampDepth is list-compress-depth as a node count: 0 to a C int's
// largest, as Redis bounds it.
func clampDepth(d int64) int { return int(min(max(d, 0), 1<<31-1)) }

func (q *quicklist) size() int64 {
	return int64(cap(q.nodes))*qnodeSize + q.capBytes + quicklistOverhead
}

func (q *quicklist) len() int { return q.n }

// reclaim and free: a quicklist's slices are all on the heap (its nodes
// hold Go pointers, its listpacks are at most a node's limit); the read
// buffer goes back to the pool once the handle's function has returned.
func (q *quicklist) reclaim() {
	if q.buf == nil {
		return
	}
	if cap(*q.buf) <= qbufKeep {
		unpackPool.Put(q.buf)
	}
	q.buf, q.bufOf = nil, nil
}

func (q *quicklist) free() { q.reclaim() }

func (q *quicklist) count() int { return q.hi - q.lo }

func (q *quicklist) node(j int) *qnode { return &q.nodes[q.lo+j] }

// rawLen is the length of the node's listpack, compressed or not.
func (nd *qnode) rawLen() int {
	if nd.raw > 0 {
		return nd.raw
	}
	return len(nd.lp)
}

// scratch returns buf with room for n bytes, holding no node now.
func (q *quicklist) scratch(n int) []byte {
	if q.buf == nil {
		q.buf = unpackPool.Get().(*[]byte)
	}
	q.bufOf = nil
	if cap(*q.buf) < n {
		*q.buf = make([]byte, n)
	}
	return (*q.buf)[:n]
}

// decode decompresses node nd into dst, which has its listpack's length.
func decodeNode(dst []byte, nd *qnode) {
	out, err := s2.Decode(dst, nd.lp)
	if err != nil || len(out) != nd.raw || &out[0] != &dst[0] {
		panic("store: a compressed list node does not decompress")
	}
}

// view returns node j's listpack for reading: its own bytes, or for a
// compressed node its decompression in buf, valid until the next view
// or change of the list.
func (q *quicklist) view(j int) []byte {
	nd := q.node(j)
	if nd.raw <= 0 {
		return nd.lp
	}
	if q.bufOf == &nd.lp[0] {
		return (*q.buf)[:nd.raw]
	}
	b := q.scratch(nd.raw)
	decodeNode(b, nd)
	q.bufOf = &nd.lp[0]
	return b
}

// unpack makes node j plain, to be changed in place, and forgets that
// compressing it did not pay: the change may make it pay.
func (q *quicklist) unpack(j int) *qnode {
	nd := q.node(j)
	if nd.raw > 0 {
		var lp []byte
		if cap(q.spare) >= nd.raw {
			lp, q.spare = q.spare[:nd.raw], nil // charged already
		} else {
			lp = slices.Grow([]byte(nil), nd.raw)[:nd.raw] // capacity: the size class
			q.capBytes += int64(cap(lp))
		}
		decodeNode(lp, nd)
		q.capBytes -= int64(cap(nd.lp))
		nd.lp = lp
		q.bufOf = nil
	}
	nd.raw = 0
	return nd
}

// pack compresses node j if it lies more than depth nodes from both ends,
// is plain, not too large to decompress for a read (an element larger
// than a node alone in its node) and compressing saves enough.
func (q *quicklist) pack(j int) {
	if q.depth == 0 || j < q.depth || j >= q.count()-q.depth {
		return
	}
	nd := q.node(j)
	if nd.raw != 0 {
		return
	}
	if len(nd.lp) < qpackMinBytes || len(nd.lp) > listNodeBytes(q.fill) {
		nd.raw = qnodeTried
		return
	}
	out := s2.Encode(q.scratch(s2.MaxEncodedLen(len(nd.lp))), nd.lp)
	if len(out)+qpackMinSaving > len(nd.lp) {
		nd.raw = qnodeTried
		return
	}
	c := append([]byte(nil), out...) // capacity: the allocation's size class
	q.capBytes += int64(cap(c))
	raw := len(nd.lp)
	q.drop(nd.lp)
	nd.lp, nd.raw = c, raw
}

// settleEnds restores what compression keeps after the nodes at the ends
// changed (a node started or dropped there): the depth nodes at each end
// plain, the ones past the next one compressed. The next one, at index
// depth from each end, is left as it is: a node that stops being an end
// node is compressed one node later, when it is depth+1 from the end,
// and one that comes back to depth from the end stays compressed, so that
// pushing and popping across a node's boundary at one end (LPUSH, LPOP,
// LPUSH, ...) does not compress and decompress a node each time.
func (q *quicklist) settleEnds() {
	if q.depth == 0 {
		return
	}
	c := q.count()
	for j := range min(q.depth, c) {
		if q.node(j).raw > 0 {
			q.unpack(j)
		}
		if k := c - 1 - j; q.node(k).raw > 0 {
			q.unpack(k)
		}
	}
	q.pack(q.depth + 1)
	q.pack(c - 2 - q.depth)
}

// settleRange compresses what a change in the middle left plain among
// nodes j0..j1 and restores the ends.
func (q *quicklist) settleRange(j0, j1 int) {
	if q.depth == 0 {
		return
	}
	for j := max(j0, q.depth); j <= j1 && j < q.count()-q.depth; j++ {
		q.pack(j)
	}
	q.settleEnds()
}

// setDepth applies list-compress-depth d to every node.
func (q *quicklist) setDepth(d int64) {
	q.depth = clampDepth(d)
	for j := range q.count() {
		if q.depth == 0 || j < q.depth || j >= q.count()-q.depth {
			if q.node(j).raw > 0 {
				q.unpack(j)
			}
			continue
		}
		q.pack(j)
	}
}

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
	q.pb.insert(j, q.nodeLen)
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
	q.pb.remove(j, j+k, q.nodeLen)
	for i := j; i < j+k; i++ {
		if nd := q.node(i); nd.raw > 0 {
			q.capBytes -= int64(cap(nd.lp)) // compressed: no use as the spare
		} else {
			q.drop(nd.lp)
		}
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
		q.settleEnds() // the node that was the end may be compressed now
	}
	q.touch(j)
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
	q.touch(j) // before reuseForEnd takes its bytes
	nd := q.node(j)
	p := lpFirst(nd.lp)
	if !front {
		p = lpLast(nd.lp)
	}
	dst = lpGet(nd.lp, p).appendTo(dst)
	q.n--
	if nd.n == 1 {
		q.reuseForEnd(j, front)
		q.removeNodes(j, 1)
		q.settleEnds() // the new end node is decompressed
		return dst
	}
	nd.lp = lpDelete(nd.lp, p)
	nd.n--
	return dst
}

// reuseForEnd: node j, at the front or the back, is about to go, and the
// node depth nodes further in will be an end node then, decompressed: if
// it is compressed, it is decompressed now into node j's bytes, which
// go with it instead of to the spare (taken already, by a new node at the
// other end; LPUSH+RPOP then allocates nothing but compressed nodes).
func (q *quicklist) reuseForEnd(j int, front bool) {
	k := j + q.depth
	if !front {
		k = j - q.depth
	}
	if q.depth == 0 || k < 0 || k >= q.count() {
		return
	}
	nd, nb := q.node(j), q.node(k)
	if nb.raw <= 0 || cap(nd.lp) < nb.raw {
		return
	}
	lp := nd.lp[:nb.raw]
	decodeNode(lp, nb)
	q.capBytes -= int64(cap(nb.lp))
	nb.lp, nb.raw = lp, 0
	nd.lp = nil // its bytes are nb's now: nothing for removeNodes to drop
	q.bufOf = nil
}

// at returns the listpack holding element i and the entry's offset.
func (q *quicklist) at(i int) (lp []byte, p int) {
	j, k := q.locate(i)
	lp = q.view(j)
	return lp, lpSeekIndex(lp, k, q.node(j).n)
}

// set replaces element i with s.
func (q *quicklist) set(i int, s []byte) {
	j, k := q.locate(i)
	q.touch(j)
	nd := q.unpack(j)
	q.grow(nd, len(nd.lp)+lpEncodedSize(s))
	nd.lp = lpReplace(nd.lp, lpSeekIndex(nd.lp, k, nd.n), s)
	c := q.count()
	q.split(j)
	q.settleSplit(j, c)
}

// settleSplit settles what a split of node j of a list of c nodes moved:
// the new nodes, and the plain end nodes they pushed more than depth
// nodes from the front or the back.
func (q *quicklist) settleSplit(j, c int) {
	q.settleRange(min(j, c-1-q.depth), max(j, q.depth)+q.count()-c)
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
	q.touch(j)
	nd := q.unpack(j)
	q.grow(nd, len(nd.lp)+lpEncodedSize(s))
	nd.lp = lpInsert(nd.lp, lpSeekIndex(nd.lp, k, nd.n), s)
	nd.n++
	q.n++
	c := q.count()
	q.split(j)
	q.settleSplit(j, c)
}

// split cuts node j (plain) in halves, and them again, while it is over
// a node's limit and has more than one entry.
func (q *quicklist) split(j int) {
	nd := q.node(j)
	if nd.n < 2 || !listExceeds(q.fill, len(nd.lp), nd.n) {
		return
	}
	q.touch(j)
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
	j0 := j
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
		q.touch(j)
		nd = q.unpack(j)
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
	// Cut in part: the first node and the one after the whole ones.
	q.settleRange(j0, j0+1)
}

// removeEqual removes the elements equal to s, skipping the first skip
// of them and removing at most limit (-1: all), and returns how many.
func (q *quicklist) removeEqual(s []byte, skip, limit int) int {
	removed := 0
	for j := 0; j < q.count() && removed != limit; {
		q.touch(j) // it may change
		nd := q.node(j)
		var r int
		if nd.raw > 0 {
			// Filtered in the read buffer; the node becomes what is
			// left, plain, if anything went.
			var lp []byte
			lp, r, skip = lpKeepUnequal(q.view(j), s, skip, limit-removed, limit < 0)
			q.bufOf = nil
			if r > 0 {
				q.capBytes -= int64(cap(nd.lp))
				nd.lp = append([]byte(nil), lp...)
				nd.raw = 0
				q.capBytes += int64(cap(nd.lp))
			}
		} else {
			nd.lp, r, skip = lpKeepUnequal(nd.lp, s, skip, limit-removed, limit < 0)
			if r > 0 {
				nd.raw = 0
			}
		}
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
		q.settleRange(0, q.count()-1)
	}
	return removed
}

// merge joins neighbouring nodes whose entries fit in one node, after
// removals left them small.
func (q *quicklist) merge() {
	for j := 0; j+1 < q.count(); {
		a, b := q.node(j), q.node(j+1)
		sz := a.rawLen() + b.rawLen() - lpHeaderSize - 1
		if listExceeds(q.fill, sz, a.n+b.n) {
			j++
			continue
		}
		q.touch(j)
		a = q.unpack(j)
		blp, bn := q.view(j+1), b.n
		q.grow(a, sz)
		a.lp = lpAppendRaw(a.lp, blp[lpHeaderSize:len(blp)-1], bn)
		a.n += bn
		q.removeNodes(j+1, 1)
	}
}

// each calls fn with the listpack and offset of every element from index
// from on, forwards or backwards, until fn returns false. A compressed
// node's listpack is read in buf: valid until fn returns for its last
// element.
func (q *quicklist) each(from int, reverse bool, fn func(i int, lp []byte, p int) bool) {
	if from < 0 || from >= q.n {
		return
	}
	j, k := q.locate(from)
	i := from
	lp := q.view(j)
	p := lpSeekIndex(lp, k, q.node(j).n)
	for {
		if !fn(i, lp, p) {
			return
		}
		if reverse {
			i--
			if p = lpPrev(lp, p); p < 0 {
				if j--; j < 0 {
					return
				}
				lp = q.view(j)
				p = lpLast(lp)
			}
		} else {
			i++
			if p = lpNext(lp, p); p < 0 {
				if j++; j >= q.count() {
					return
				}
				lp = q.view(j)
				p = lpFirst(lp)
			}
		}
	}
}

// appendFlat appends the flat encoding persistence writes:
//
//	| varint fill | uvarint nodes | per node: uvarint len | listpack |
//
// Compressed nodes are written decompressed: the encoding does not depend
// on list-compress-depth, and what reads it back checks plain listpacks.
func (q *quicklist) appendFlat(b []byte) []byte {
	b = q.appendFlatHead(b)
	for j := range q.count() {
		b = q.appendNode(b, j)
	}
	return b
}

// quicklistFromFlat rebuilds a quicklist from appendFlat's bytes, checking
// every listpack as one from outside (lpValidate); its nodes are plain
// until setDepth (Store.decodeFlat).
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
	q := newQuicklist(fill, 0)
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
