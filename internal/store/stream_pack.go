package store

import (
	"slices"
	"unsafe"

	"github.com/klauspost/compress/s2"
)

// Compression of a stream's cold nodes. Redis keeps every node of a
// stream as a plain listpack; MiniKV compresses each node but the last
// (S2, as list-compress-depth does a list's middle nodes) once a new node
// is started after it, when that saves at least qpackMinSaving bytes. An
// application's stream is appended at its end and read near its end, so
// only the last node changes often; the others change when an entry of
// theirs is deleted or trimmed, which decompresses the node for good
// (settle): a node holding a deleted entry stays plain, as Redis keeps it, so that a queue whose
// consumers XDEL what they processed, in any order, pays one
// decompression per node and then flags entries in place (compressing
// again after each deletion made a random XDEL cost 2.7 times as much).
//
// A read of a compressed node decompresses it into the stream's view
// buffer and keeps it there, so a consumer walking a cold node entry by
// entry (XREADGROUP COUNT 1 on a backlog) decompresses it once. The view
// holds one node; it is charged with the stream (size) and dropped with
// it. A node's raw is its listpack's length when LP is compressed, 0 when
// LP is the listpack, qnodeTried when it is to stay plain: compressing it
// did not pay, or it holds a deleted entry.

// streamNodeSize is what a node costs in the stream's node slice.
const streamNodeSize = int64(unsafe.Sizeof(StreamNode{}))

// rawLen is the length of node i's listpack, compressed or not.
func (nd *StreamNode) rawLen() int {
	if nd.raw > 0 {
		return nd.raw
	}
	return len(nd.LP)
}

// nodeLP returns node i's listpack for reading: its own bytes, or a
// compressed node's decompression in the view buffer, valid until the
// next nodeLP or change of the stream.
func (o *stream) nodeLP(i int) []byte {
	nd := &o.nodes[i]
	if nd.raw <= 0 {
		return nd.LP
	}
	if o.viewOf == &nd.LP[0] {
		return o.view[:nd.raw]
	}
	if cap(o.view) < nd.raw {
		o.view = make([]byte, nd.raw)
	}
	decodeStreamNode(o.view[:nd.raw], nd)
	o.viewOf = &nd.LP[0]
	return o.view[:nd.raw]
}

// decodeStreamNode decompresses nd into dst, which has its listpack's
// length. The store compressed the bytes itself: failing is a bug.
func decodeStreamNode(dst []byte, nd *StreamNode) {
	out, err := s2.Decode(dst, nd.LP)
	if err != nil || len(out) != nd.raw || &out[0] != &dst[0] {
		panic("store: a compressed stream node does not decompress")
	}
}

// unpack makes node i plain, to be changed in place, and forgets that
// compressing it did not pay: the change may make it pay.
func (o *stream) unpack(i int) *StreamNode {
	o.touch(i)
	nd := &o.nodes[i]
	if nd.raw > 0 {
		lp := slices.Grow([]byte(nil), nd.raw)[:nd.raw] // capacity: the size class
		decodeStreamNode(lp, nd)
		o.forget(nd)
		o.lpBytes += int64(cap(lp)) - int64(cap(nd.LP))
		nd.LP = lp
	}
	nd.raw = 0
	return nd
}

// forget drops the view if it holds node nd's bytes, which are changing.
func (o *stream) forget(nd *StreamNode) {
	if len(nd.LP) > 0 && o.viewOf == &nd.LP[0] {
		o.viewOf = nil
	}
}

// nodeHasDeleted reports whether the node's master entry counts deleted
// entries: such a node stays plain (settle), in a stream built from a
// record too, so that a record read back is the stream that wrote it.
func nodeHasDeleted(lp []byte) bool {
	p := lpFirst(lp)
	return lpGetInt(lp, lpNext(lp, p)) > 0
}

// settle marks node i, plain after a change, to stay plain unless it is
// the last one (which is compressed when it closes).
func (o *stream) settle(i int) {
	if i < len(o.nodes)-1 {
		o.nodes[i].raw = qnodeTried
	}
}

// pack compresses node i, which must not be the last (packNode).
func (o *stream) pack(i int) {
	if i < len(o.nodes)-1 {
		o.touch(i)
		o.packNode(&o.nodes[i])
	}
}

// packNode compresses node nd when it is plain, not tried already and
// compressing saves enough; a node left plain is shrunk to fit (as Redis
// does when it closes a node). It returns the plain listpack the node no
// longer holds, if any, for the caller to reuse: a stream appended to
// closes a node every stream-node-max-entries, and reusing its bytes for
// the next node leaves the collector nothing to collect.
func (o *stream) packNode(nd *StreamNode) (spare []byte) {
	if nd.raw != 0 {
		return nil
	}
	lp := nd.LP
	if len(lp) >= qpackMinBytes && !nodeHasDeleted(lp) {
		buf := unpackPool.Get().(*[]byte)
		if n := s2.MaxEncodedLen(len(lp)); cap(*buf) < n {
			*buf = make([]byte, n)
		}
		out := s2.Encode((*buf)[:cap(*buf)], lp)
		if len(out)+qpackMinSaving <= len(lp) {
			c := slices.Clip(append([]byte(nil), out...))
			o.lpBytes += int64(cap(c)) - int64(cap(lp))
			nd.LP, nd.raw, spare = c, len(lp), lp
		}
		if cap(*buf) <= qbufKeep {
			unpackPool.Put(buf)
		}
		if spare != nil {
			return spare
		}
	}
	nd.raw = qnodeTried
	if cap(lp) > len(lp)+len(lp)/8 {
		c := slices.Clip(append([]byte(nil), lp...))
		o.lpBytes += int64(cap(c)) - int64(cap(lp))
		nd.LP, spare = c, lp
	}
	return spare
}

// packAll compresses every node but the last (a stream built whole: a
// RESTORE, a file, a durable record).
func (o *stream) packAll() {
	for i := 0; i+1 < len(o.nodes); i++ {
		o.pack(i)
	}
}

// plainNodes returns the nodes as the exchange type has them, every
// listpack plain: the nodes themselves when none was packed or tried,
// else a copy whose compressed ones are decompressed into new slices.
func (o *stream) plainNodes() []StreamNode {
	i := slices.IndexFunc(o.nodes, func(nd StreamNode) bool { return nd.raw != 0 })
	if i < 0 {
		return o.nodes
	}
	out := make([]StreamNode, len(o.nodes))
	for j := range o.nodes {
		nd := &o.nodes[j]
		out[j] = StreamNode{Master: nd.Master, LP: nd.LP}
		if nd.raw > 0 {
			lp := make([]byte, nd.raw)
			decodeStreamNode(lp, nd)
			out[j].LP = lp
		}
	}
	return out
}
