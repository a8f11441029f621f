package store

import (
	"bytes"
	"math"
)

// Durable streams written as patches. A stream's flat encoding (what
// durable mode writes) is its head, its nodes and its groups, and most
// changes leave all but a node or two as they were: an XADD changes the
// last node (and, when it closes one, the one before), a trim drops the
// first nodes or flags entries of node 0, an XDEL flags an entry of one
// node. So after writing a stream whole (its base record), the store
// writes the next changes as patches (PatchDisk): the new head, the nodes
// before the unchanged range, the base's bytes that hold the unchanged
// range, then the nodes after it and the groups. An XADD to a stream of
// 100 000 entries then writes a few kilobytes, not the stream.
//
// The stream keeps what the base holds (streamBase): the key it was
// written under, its header, length and deadline, and the run of nodes
// it holds unchanged, nodes[lo:hi], with where their bytes are in it.
// Every change of a node goes through unpack, packNode (closing the last
// node) or dropNode, which narrow the run (touch, dropBase) before the
// node changes. A patch grows with the nodes outside the run; once those
// pass patchGrowth of the base (the first node and the last one aside:
// a trim and an append change them on every call), the stream is written
// whole again, a new base.

// streamBase is what the key's last full durable record holds of the
// stream (the patches' base).
type streamBase struct {
	key      []byte // the key it was written under; nil: no base
	head     [diskHeader]byte
	size     int   // its length
	deadline int64 // its deadline
	lo, hi   int   // nodes[lo:hi] are as the base holds them
	off      int   // where node lo's flat bytes are in the base
	keep     int   // the flat bytes of nodes[lo:hi]
}

// patchMinBase is the smallest record written as a base: a smaller one is
// written whole on each change, as before patches.
var patchMinBase = 64 << 10 // a variable for tests

// patchGrowth is how many bytes of nodes changed or added since the base
// a patch may carry before the stream is written whole again: the square
// root of 8 times the base's size, at least 4 KiB. Writing patches that
// grow by g bytes a change until they reach L, then a base of S bytes,
// costs about L/2 + S·g/L bytes a change, least at L = √(2·S·g); with g
// under 4 bytes for small entries, √(8·S) is near it (2 KiB a change for
// a base of 480 KiB), and for larger entries it writes bases less often.
func patchGrowth(base int) int {
	return max(4<<10, int(math.Sqrt(8*float64(base))))
}

// touch notes that node i is about to change: the unchanged run keeps
// its longer side of i.
func (o *stream) touch(i int) {
	pb := o.pb
	if pb == nil || i < pb.lo || i >= pb.hi {
		return
	}
	if i-pb.lo >= pb.hi-i-1 {
		for pb.hi > i {
			pb.hi--
			pb.keep -= flatNodeLen(&o.nodes[pb.hi])
		}
		return
	}
	for pb.lo <= i {
		n := flatNodeLen(&o.nodes[pb.lo])
		pb.off += n
		pb.keep -= n
		pb.lo++
	}
}

// dropBase notes that node i is about to go: the run's first node leaves
// it by its front, another node of it splits it (touch), and the run
// moves down when i is before it.
func (o *stream) dropBase(i int) {
	pb := o.pb
	if pb == nil || i >= pb.hi {
		return
	}
	if i == pb.lo {
		n := flatNodeLen(&o.nodes[i])
		pb.off += n
		pb.keep -= n
		pb.hi--
		return
	}
	if i > pb.lo {
		if o.touch(i); i >= pb.hi {
			return
		}
	}
	pb.lo--
	pb.hi--
}

// persistStream queues stream o (e's object) for the Disk: a patch of its
// base when it can, else whole (and, when feed, for the Feed: it gets
// the whole record).
func (s *Store) persistStream(sh *shard, e *entry, o *stream, feed bool) {
	key := sh.key(e)
	pd, bases := s.disk.(PatchDisk)
	if bases && !(feed && s.feeder() != nil) {
		b, h, ok := o.appendPatch(recordHead(sh, e), key, e.deadline)
		if ok {
			pb := o.pb
			pd.WritePatch(key, &Patch{
				Head: b[:h], Tail: b[h:],
				KeepOff: pb.off, KeepLen: pb.keep,
				BaseLen: pb.size, BaseHead: pb.head[:],
			}, e.deadline)
			s.diskWrites.Add(1)
		}
		if cap(b) <= maxDiskRecBuf {
			sh.diskRec = b[:0]
		}
		if ok {
			return
		}
	}
	b, off, keep := o.appendWhole(recordHead(sh, e))
	s.queueRecordTo(sh, key, b, e, feed)
	if bases {
		o.setBase(key, b, e.deadline, off, keep)
	} else {
		o.pb = nil
	}
}

// appendPatch appends to hd (the record's header) the patch's head, then
// its tail, and returns them with the head's end; ok is false when the
// stream is to be written whole: no base for key at deadline, or a patch
// would carry too much.
func (o *stream) appendPatch(hd, key []byte, deadline int64) (b []byte, h int, ok bool) {
	pb := o.pb
	if pb == nil || pb.lo >= pb.hi || pb.deadline != deadline || !bytes.Equal(pb.key, key) {
		return hd, 0, false
	}
	b = o.appendFlatHead(hd)
	grown := 0
	for i := range pb.lo {
		n := len(b)
		b = appendFlatNode(b, &o.nodes[i])
		if i > 0 {
			grown += len(b) - n
		}
	}
	h = len(b)
	for i := pb.hi; i < len(o.nodes)-1; i++ {
		b = appendFlatNode(b, &o.nodes[i])
	}
	if grown+len(b)-h > patchGrowth(pb.size) {
		return b, h, false
	}
	if n := len(o.nodes); n > pb.hi {
		b = appendFlatNode(b, &o.nodes[n-1])
	}
	b = o.appendFlatGroups(b)
	return b, h, len(b) < pb.keep
}

// appendWhole appends the flat encoding to hd (the record's header),
// with where the nodes' bytes begin and how many they are.
func (o *stream) appendWhole(hd []byte) (b []byte, off, keep int) {
	b = hd
	if want := int(min(o.size(), math.MaxInt32)); cap(b) < want {
		b = append(make([]byte, 0, want), b...) // sized once, not grown by doubling
	}
	b = o.appendFlatHead(b)
	off = len(b)
	for i := range o.nodes {
		b = appendFlatNode(b, &o.nodes[i])
	}
	keep = len(b) - off
	return o.appendFlatGroups(b), off, keep
}

// setBase notes rec, just written whole for key by appendWhole (its nodes
// at off, keep bytes), as the base of the next patches, if it is large
// enough to be one.
func (o *stream) setBase(key, rec []byte, deadline int64, off, keep int) {
	if len(rec) < patchMinBase {
		o.pb = nil
		return
	}
	pb := o.pb
	if pb == nil {
		pb = &streamBase{}
		o.pb = pb
	}
	pb.key = append(pb.key[:0], key...)
	copy(pb.head[:], rec)
	pb.size, pb.deadline = len(rec), deadline
	pb.lo, pb.hi, pb.off, pb.keep = 0, len(o.nodes), off, keep
}
