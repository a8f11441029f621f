package store

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
)

// Durable big collections written as patches. A stream's, a big list's
// and a big sorted set's flat encodings (what durable mode writes) are a
// head, nodes and a tail (a stream's groups; nothing for the others; a
// sorted set's nodes are its chunks), and most changes leave all but a
// node or two as they were: an XADD changes the last node (and, when it
// closes one, the one before), a trim drops the first nodes or flags
// entries of node 0, an XDEL flags an entry of one node; a push or pop
// changes an end node, LSET or LINSERT one node; a ZADD or ZPOPMIN one
// chunk (or two, when it shares entries with a neighbour). So after writing
// the collection whole (its base record), the store writes the next
// changes as patches (PatchDisk): the new head, the nodes before the
// unchanged run, the base's bytes that hold the run, then the nodes after
// it and the tail. An XADD to a stream of 100 000 entries then writes a
// few kilobytes, not the stream.
//
// The collection keeps what its base holds (baseRun): the key it was
// written under, its header, length and deadline, and the run of nodes
// it holds unchanged, nodes[lo:hi], with where their bytes are in it.
// Every change of a node narrows the run before the node changes
// (touch, remove, insert; a stream's nodes change in unpack, packNode and
// dropNode, a list's and a sorted set's in their node and chunk
// operations). Changes scattered through the middle (a ZADD of random
// scores) break the run within a change or two, and such a collection is
// written whole about as often as before. A patch grows with the
// nodes outside the run; once those pass patchGrowth of the base (the
// first node and the last one aside: a trim, a push or a pop changes them
// on every call), the collection is written whole again, a new base.

// patchable is a big collection durable mode may write as patches.
type patchable interface {
	object
	// baseOf returns where the collection's base is kept (nil: none).
	baseOf() **baseRun
	appendFlatHead(b []byte) []byte
	nodeCount() int
	// appendNode appends node j's flat encoding, nodeLen(j) bytes.
	appendNode(b []byte, j int) []byte
	nodeLen(j int) int
	appendFlatTail(b []byte) []byte
}

// baseRun is what the key's last whole durable record (a patch's base)
// holds of a collection.
type baseRun struct {
	key      []byte // the key it was written under
	head     [diskHeader]byte
	size     int   // its length
	deadline int64 // its deadline
	lo, hi   int   // nodes[lo:hi] are as the base holds them
	off      int   // where node lo's flat bytes are in the base
	keep     int   // the flat bytes of nodes[lo:hi]
	cmds     int   // patches written since the base
	commits  int   // of them, those that did not replace one of the same commit
}

// growthLimit is patchGrowth of the base, larger when patches are
// written more often than committed: the Disk writes a key's patch once
// per commit (PatchDisk), and a copy per command costs about a sixteenth
// of that (delta.go weighs the two the same way). One command a commit,
// the limit is patchGrowth; many, up to √17 times it.
func (r *baseRun) growthLimit() int {
	k, j := float64(r.cmds+1), float64(r.commits+1)
	return int(float64(patchGrowth(r.size)) * math.Sqrt(17*k/(k+16*j)))
}

// patchMinBase is the smallest record written as a base: a smaller one is
// written whole on each change, as before patches.
var patchMinBase = 64 << 10 // a variable for tests

// patchGrowth is how many bytes of nodes changed or added since the base
// a patch may carry before the collection is written whole again: the
// square root of 8 times the base's size, at least 4 KiB. Writing patches
// that grow by g bytes a change until they reach L, then a base of S
// bytes, costs about L/2 + S·g/L bytes a change, least at L = √(2·S·g);
// with g under 4 bytes for small entries, √(8·S) is near it (2 KiB a
// change for a base of 480 KiB), and for larger entries it writes bases
// less often.
func patchGrowth(base int) int {
	return max(4<<10, int(math.Sqrt(8*float64(base))))
}

// dropFront takes nodes off the run's front up to (not including) j.
func (r *baseRun) dropFront(j int, nodeLen func(int) int) {
	for ; r.lo < j; r.lo++ {
		n := nodeLen(r.lo)
		r.off += n
		r.keep -= n
	}
}

// dropBack takes nodes off the run's back down to j.
func (r *baseRun) dropBack(j int, nodeLen func(int) int) {
	for r.hi > j {
		r.hi--
		r.keep -= nodeLen(r.hi)
	}
}

// touch notes that node j is about to change: the run keeps its longer
// side of j.
func (r *baseRun) touch(j int, nodeLen func(int) int) {
	if r == nil || j < r.lo || j >= r.hi {
		return
	}
	if j-r.lo >= r.hi-j-1 {
		r.dropBack(j, nodeLen)
	} else {
		r.dropFront(j+1, nodeLen)
	}
}

// remove notes that nodes [j, k) are about to go: those of the run at its
// front leave it there, a removal inside it keeps its longer side, and the
// nodes after k move down.
func (r *baseRun) remove(j, k int, nodeLen func(int) int) {
	if r == nil || j >= k {
		return
	}
	if j < r.hi && k > r.lo {
		if j <= r.lo || j-r.lo < r.hi-k {
			r.dropFront(min(k, r.hi), nodeLen)
		} else {
			r.dropBack(j, nodeLen)
		}
	}
	if r.lo >= k {
		r.lo -= k - j
		r.hi -= k - j
	}
}

// insert notes that a node is about to be inserted at j: inside the run,
// it keeps its longer side, and the nodes from j on move up.
func (r *baseRun) insert(j int, nodeLen func(int) int) {
	if r == nil {
		return
	}
	if j > r.lo && j < r.hi {
		if j-r.lo >= r.hi-j {
			r.dropBack(j, nodeLen)
		} else {
			r.dropFront(j, nodeLen)
		}
	}
	if j <= r.lo {
		r.lo++
		r.hi++
	}
}

// persistPatchable queues o (e's object) for the Disk: a patch of its
// base when it can, else whole (and, when feed, for the Feed: it gets
// the whole record).
func (s *Store) persistPatchable(sh *shard, e *entry, o patchable, feed bool) {
	key := sh.key(e)
	pd, bases := s.disk.(PatchDisk)
	if bases && !(feed && s.feeder() != nil) {
		b, h, ok := appendPatch(o, recordHead(sh, e), key, e.deadline)
		if ok {
			pb := *o.baseOf()
			pb.cmds++
			if !pd.WritePatch(key, &Patch{
				Head: b[:h], Tail: b[h:],
				KeepOff: pb.off, KeepLen: pb.keep,
				BaseLen: pb.size, BaseHead: pb.head[:],
			}, e.deadline) {
				pb.commits++
			}
			s.diskWrites.Add(1)
		}
		if cap(b) <= maxDiskRecBuf {
			sh.diskRec = b[:0]
		}
		if ok {
			return
		}
		// Changes away from the ends: a delta of the members, for a
		// collection that keeps one (a sorted set: delta.go).
		if t := deltaTableOf(o); t != nil && s.writeDelta(pd, sh, e, key, t) {
			return
		}
	}
	b, off, keep := appendWhole(o, recordHead(sh, e))
	s.queueRecordTo(sh, key, b, e, feed)
	if bases {
		setBase(o, key, b, e.deadline, off, keep)
	} else {
		*o.baseOf() = nil
	}
	if t := deltaTableOf(o); t != nil {
		t.rebaseDelta(bases, key, b, e.deadline)
	}
}

// deltaTableOf returns the table whose delta a patchable collection
// writes when a run patch would carry too much, or nil.
func deltaTableOf(o patchable) *table {
	if z, ok := o.(*bigZSet); ok {
		return z.t
	}
	return nil
}

// appendPatch appends to hd (the record's header) the patch's head, then
// its tail, and returns them with the head's end; ok is false when the
// collection is to be written whole: no base for key at deadline, or a
// patch would carry too much.
func appendPatch(o patchable, hd, key []byte, deadline int64) (b []byte, h int, ok bool) {
	pb := *o.baseOf()
	if pb == nil || pb.lo >= pb.hi || pb.deadline != deadline || !bytes.Equal(pb.key, key) {
		return hd, 0, false
	}
	n := o.nodeCount()
	// What the patch would carry, by the nodes' lengths (nodeLen is what
	// appendNode writes; the first and last nodes aside): a run broken by
	// changes scattered through the middle would have it carry most of
	// the collection, which is not worth encoding to find out.
	outside := 0
	for j := 1; j < pb.lo; j++ {
		outside += o.nodeLen(j)
	}
	for j := pb.hi; j < n-1; j++ {
		outside += o.nodeLen(j)
	}
	if outside > pb.growthLimit() {
		return hd, 0, false
	}
	b = o.appendFlatHead(hd)
	for j := range pb.lo {
		b = o.appendNode(b, j)
	}
	h = len(b)
	for j := pb.hi; j < n-1; j++ {
		b = o.appendNode(b, j)
	}
	if n > pb.hi {
		b = o.appendNode(b, n-1)
	}
	b = o.appendFlatTail(b)
	return b, h, len(b) < pb.keep
}

// appendWhole appends o's flat encoding to hd (the record's header), with
// where the nodes' bytes begin and how many they are.
func appendWhole(o patchable, hd []byte) (b []byte, off, keep int) {
	// Sized by the nodes' flat lengths: a list's compressed nodes take
	// less in memory (o.size) than decompressed in the record, and a
	// buffer grown by doubling copies the record over and over.
	n := o.nodeCount()
	size := len(hd) + 64
	for j := range n {
		size += o.nodeLen(j)
	}
	b = o.appendFlatHead(withRoom(hd, max(int64(size), o.size())))
	off = len(b)
	for j := range n {
		b = o.appendNode(b, j)
	}
	keep = len(b) - off
	return o.appendFlatTail(b), off, keep
}

// withRoom returns b with room for about size bytes more, so that a
// whole record is sized once, not grown by doubling.
func withRoom(b []byte, size int64) []byte {
	if want := int(min(size, math.MaxInt32)); cap(b) < want {
		b = append(make([]byte, 0, want), b...)
	}
	return b
}

// setBase notes rec, just written whole for key by appendWhole (its nodes
// at off, keep bytes), as the base of the next patches, if it is large
// enough to be one.
func setBase(o patchable, key, rec []byte, deadline int64, off, keep int) {
	p := o.baseOf()
	if len(rec) < patchMinBase {
		*p = nil
		return
	}
	pb := *p
	if pb == nil {
		pb = &baseRun{}
		*p = pb
	}
	pb.key = append(pb.key[:0], key...)
	copy(pb.head[:], rec)
	pb.size, pb.deadline = len(rec), deadline
	pb.lo, pb.hi, pb.off, pb.keep = 0, o.nodeCount(), off, keep
	pb.cmds, pb.commits = 0, 0
}

// The stream's side (stream_flat.go has the encoding).

func (o *stream) baseOf() **baseRun                 { return &o.pb }
func (o *stream) nodeCount() int                    { return len(o.nodes) }
func (o *stream) appendNode(b []byte, j int) []byte { return appendFlatNode(b, &o.nodes[j]) }
func (o *stream) nodeLen(j int) int                 { return flatNodeLen(&o.nodes[j]) }
func (o *stream) appendFlatTail(b []byte) []byte    { return o.appendFlatGroups(b) }

// touch notes that node i is about to change.
func (o *stream) touch(i int) { o.pb.touch(i, o.nodeLen) }

// dropBase notes that node i is about to go.
func (o *stream) dropBase(i int) { o.pb.remove(i, i+1, o.nodeLen) }

// The list's side (quicklist.go has the encoding).

func (q *quicklist) baseOf() **baseRun { return &q.pb }
func (q *quicklist) nodeCount() int    { return q.count() }

func (q *quicklist) appendFlatHead(b []byte) []byte {
	b = binary.AppendVarint(b, q.fill)
	return binary.AppendUvarint(b, uint64(q.count()))
}

// appendNode appends node j's flat encoding: its listpack's length, then
// the listpack, decompressed.
func (q *quicklist) appendNode(b []byte, j int) []byte {
	nd := q.node(j)
	b = binary.AppendUvarint(b, uint64(nd.rawLen()))
	if nd.raw > 0 {
		b = slices.Grow(b, nd.raw)
		decodeNode(b[len(b):len(b)+nd.raw], nd)
		return b[:len(b)+nd.raw]
	}
	return append(b, nd.lp...)
}

func (q *quicklist) nodeLen(j int) int {
	n := q.node(j).rawLen()
	return uvarintLen(uint64(n)) + n
}

func (q *quicklist) appendFlatTail(b []byte) []byte { return b }

// touch notes that node j is about to change.
func (q *quicklist) touch(j int) { q.pb.touch(j, q.nodeLen) }

// The sorted set's side (zset.go has the encoding): a node is a chunk,
// whose entries' flat encoding (member, then score) is as long as the
// chunk's own (score, then member).

func (b *bigZSet) baseOf() **baseRun              { return &b.pb }
func (b *bigZSet) nodeCount() int                 { return len(b.chunks) }
func (b *bigZSet) nodeLen(j int) int              { return len(b.chunks[j].data) }
func (b *bigZSet) appendFlatTail(d []byte) []byte { return d }

func (b *bigZSet) appendFlatHead(d []byte) []byte {
	return binary.AppendUvarint(d, uint64(b.t.n))
}

func (b *bigZSet) appendNode(d []byte, j int) []byte {
	ch := b.chunks[j].data
	for off := 0; off < len(ch); {
		s, m, e := zentry(ch, off)
		d = binary.AppendUvarint(d, uint64(len(m)))
		d = append(d, m...)
		d = binary.LittleEndian.AppendUint64(d, math.Float64bits(s))
		off = e
	}
	return d
}
