package store

import (
	"math"
	"slices"
	"strconv"
)

// Streams: a key of kind KindStream holds a stream object (Redis's
// t_stream.c), always big. Its entries live in nodes, each a listpack in
// Redis's own stream layout, kept in a slice sorted by master ID where
// Redis keeps them under a radix tree:
//
//	master entry: | count | deleted | num-fields | field_1 ... field_N | 0 |
//	entry:        | flags | ms-diff | seq-diff | num-fields | f1 | v1 ... | lp-count |
//	same fields:  | flags | ms-diff | seq-diff | v1 ... vN | lp-count |
//
// count and deleted are the node's live and deleted entries; an entry's
// ID is its master ID plus the two deltas; flags say deleted (1) and
// same fields as the master entry (2); lp-count is the number of
// listpack elements before it in the entry, for walking backwards. A
// deleted entry keeps its bytes until its node empties (as in Redis), so
// a node is only ever appended to or flagged in place. Because the nodes
// are Redis's, DUMP and RDB copy them as they are (stream_value.go).
// Every node but the last is kept compressed (stream_pack.go).
//
// The consumer groups (stream_group.go) hang off the object too.

// Stream is a stream value as the function given to Store.UpdateStream
// or ViewStream sees it with the key's shard locked. Slices it hands to
// callbacks alias the store's memory and are valid during the callback.
type Stream struct {
	c    coll
	fv   [][]byte
	nums [][24]byte
}

const (
	streamFlagDeleted    = 1
	streamFlagSameFields = 2

	// streamNodeMaxSize is Redis's STREAM_LISTPACK_MAX_SIZE: a node is
	// never grown past 1 GiB whatever stream-node-max-bytes says.
	streamNodeMaxSize = 1 << 30
)

// stream is a stream's object.
type stream struct {
	nodes        []StreamNode
	length       uint64
	lastID       StreamID
	firstID      StreamID
	maxDeleted   StreamID
	entriesAdded uint64
	groups       []*StreamCG // by name
	lpBytes      int64       // the nodes' listpacks' capacities
	groupBytes   int64       // what the groups hold, estimated
	hint         streamHint  // where the last forward read passed
	view         []byte      // a compressed node decompressed for reading (stream_pack.go)
	viewOf       *byte       // the compressed bytes view holds; nil: none
	pb           *baseRun    // the key's durable base record, for patches (patch.go)
}

// streamHint is a place in a node a forward read passed: the entry at
// off has ID id. Consumers read a stream in order, each read starting
// just after the last one, so a read that starts after id in the same
// node walks on from off instead of from the node's first entry (the
// walk Redis does, and most of an XREADGROUP's cost). Appends and
// in-place flag changes keep every offset; a change of the size of the
// node's counts moves its first entry too, which invalidates the hint.
type streamHint struct {
	master StreamID
	first  int // the node's first entry's offset when the hint was taken
	off    int
	id     StreamID
}

func (o *stream) size() int64 {
	// A durable base's note (pb) is not counted: set by a write's
	// persist, after the write's charge, it is a hundred bytes and a key
	// for a stream of at least patchMinBase.
	return 96 + int64(cap(o.nodes))*streamNodeSize + o.lpBytes + int64(cap(o.view)) + o.groupBytes + int64(cap(o.groups))*8
}

// len is 1 more than the entries: a stream with no entries is a key still.
func (o *stream) len() int { return int(min(o.length, math.MaxInt32)) + 1 }
func (o *stream) reclaim() {}
func (o *stream) free()    {}

// Less reports whether a sorts before b.
func (a StreamID) Less(b StreamID) bool {
	return a.Ms < b.Ms || a.Ms == b.Ms && a.Seq < b.Seq
}

// Compare is -1, 0 or 1 as a is before, equal to or after b.
func (a StreamID) Compare(b StreamID) int {
	switch {
	case a.Less(b):
		return -1
	case a == b:
		return 0
	}
	return 1
}

// IsZero reports whether the ID is 0-0.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Next is the ID after a; ok is false for the last possible ID.
func (a StreamID) Next() (StreamID, bool) {
	switch {
	case a.Seq < math.MaxUint64:
		return StreamID{a.Ms, a.Seq + 1}, true
	case a.Ms < math.MaxUint64:
		return StreamID{a.Ms + 1, 0}, true
	}
	return a, false
}

// Prev is the ID before a; ok is false for 0-0.
func (a StreamID) Prev() (StreamID, bool) {
	switch {
	case a.Seq > 0:
		return StreamID{a.Ms, a.Seq - 1}, true
	case a.Ms > 0:
		return StreamID{a.Ms - 1, math.MaxUint64}, true
	}
	return a, false
}

// AppendTo appends the ID as Redis writes it, "ms-seq".
func (a StreamID) AppendTo(b []byte) []byte {
	b = strconv.AppendUint(b, a.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, a.Seq, 10)
}

// MaxStreamID is the last possible ID.
var MaxStreamID = StreamID{math.MaxUint64, math.MaxUint64}

// UpdateStream runs fn with the stream under key for reading and writing;
// see collection for the rules. A missing key is no stream until Create.
func (s *Store) UpdateStream(key []byte, st *Stream, fn func() error) error {
	return s.collection(key, KindStream, true, &st.c, fn)
}

// ViewStream runs fn with the stream under key for reading only.
func (s *Store) ViewStream(key []byte, st *Stream, fn func() error) error {
	return s.collection(key, KindStream, false, &st.c, fn)
}

// Stream opens the stream under key in the Tx, as UpdateStream (write) or
// ViewStream would.
func (tx *Tx) Stream(key []byte, st *Stream, write bool) error {
	return tx.open(key, KindStream, write, &st.c)
}

// DoneStream settles st now: its key may be opened again.
func (tx *Tx) DoneStream(st *Stream) { tx.done(&st.c) }

// Exists reports whether the key holds a stream (created in this call or
// before).
func (st *Stream) Exists() bool { return st.c.obj != nil }

func (st *Stream) o() *stream { return st.c.obj.(*stream) }

// Create makes an empty stream under the key if it holds none.
func (st *Stream) Create() {
	if st.c.obj == nil {
		st.c.obj = &stream{}
		st.c.enc = encBig
	}
	st.c.dirty = true
}

// Feeding reports whether the call's changes may be propagated: a Feed
// (replication) takes the store's changes. When it does, a call that
// changes the stream may describe each change with Propagate, and the
// Feed gets those commands instead of the whole stream; a call must then
// propagate every change it makes, or none.
func (st *Stream) Feeding() bool { return st.c.feeding }

// Props returns the commands the call has propagated so far (RESP
// arrays, one after another), for the caller to append one more to and
// hand back with Propagate.
func (st *Stream) Props() []byte { return st.c.props }

// Propagate takes props, what Props returned with one more command
// appended (a RESP array), as the call's changes for the Feed (see
// Feeding).
func (st *Stream) Propagate(props []byte) {
	if st.c.feeding {
		st.c.props = props
		st.c.propN++
		st.c.propagated = true
	}
}

// Propagated says the call's changes that a replica needs are all given
// by Propagate, even with none: what else changed (a consumer's seen
// time) is not sent, where the whole stream would be.
func (st *Stream) Propagated() { st.c.propagated = st.c.feeding }

// Touch marks the stream changed (its groups were).
func (st *Stream) Touch() { st.c.dirty = true }

// Quiet makes the call's changes keep the key's CAS token, as Redis does
// not signal a key modified when only its consumer groups changed
// (XREADGROUP, XACK, XCLAIM): a WATCH of the key holds.
func (st *Stream) Quiet() { st.c.keepCAS = true }

// Len is the number of entries.
func (st *Stream) Len() uint64 {
	if st.c.obj == nil {
		return 0
	}
	return st.o().length
}

// LastID is the last ID ever added (or set by XSETID).
func (st *Stream) LastID() StreamID { return st.o().lastID }

// FirstID is the recorded first entry's ID (Redis's first_id).
func (st *Stream) FirstID() StreamID { return st.o().firstID }

// MaxDeletedID is the largest ID ever deleted.
func (st *Stream) MaxDeletedID() StreamID { return st.o().maxDeleted }

// EntriesAdded is the number of entries ever added.
func (st *Stream) EntriesAdded() uint64 { return st.o().entriesAdded }

// Nodes is the number of listpack nodes (XINFO's radix-tree-keys).
func (st *Stream) Nodes() int { return len(st.o().nodes) }

// Masters appends the nodes' master IDs, in order, to dst.
func (st *Stream) Masters(dst []StreamID) []StreamID {
	for i := range st.o().nodes {
		dst = append(dst, st.o().nodes[i].Master)
	}
	return dst
}

// SetID sets the last ID and, when given, the counters (XSETID).
func (st *Stream) SetID(last StreamID, entriesAdded *uint64, maxDeleted *StreamID) {
	o := st.o()
	o.lastID = last
	if entriesAdded != nil {
		o.entriesAdded = *entriesAdded
	}
	if maxDeleted != nil {
		o.maxDeleted = *maxDeleted
	}
	st.c.dirty = true
}

// lpInt appends integer v as a listpack entry.
func lpAppendIntEntry(lp []byte, v int64) []byte {
	start := len(lp) - 1 // the end byte
	lp = lp[:start]
	lp = lpAppendInt(lp, v)
	lp = lpAppendBacklen(lp, uint64(len(lp)-start))
	lp = append(lp, lpEOF)
	lpSetTotal(lp)
	lpBumpCount(lp, 1)
	return lp
}

func lpSetTotal(lp []byte) {
	lp[0], lp[1], lp[2], lp[3] = byte(len(lp)), byte(len(lp)>>8), byte(len(lp)>>16), byte(len(lp)>>24)
}

func lpBumpCount(lp []byte, n int) {
	if c := int(lp[4]) | int(lp[5])<<8; c != lpCountUnknown {
		lpSetCount(lp, c+n)
	}
}

// lpGetInt reads the integer at p (a stream's counters and deltas are
// always integer entries; a string one reads as its number).
func lpGetInt(lp []byte, p int) int64 {
	en := lpGet(lp, p)
	if en.Str == nil {
		return en.Int
	}
	v, _ := lpStringToInt64(en.Str)
	return v
}

// lpSetInt replaces the integer at p with v, returning the listpack.
func lpSetInt(lp []byte, p int, v int64) []byte {
	var buf [16]byte
	enc := lpAppendInt(buf[:0], v)
	old := lpEntrySize(lp, p)
	n := len(enc) + lpBacklenSize(uint64(len(enc)))
	if n == old {
		lpAppendBacklen(append(lp[p:p], enc...), uint64(len(enc)))
		return lp
	}
	return lpReplace(lp, p, strconv.AppendInt(buf[:0], v, 10))
}

// Append adds an entry with ID id, which the caller checked is after
// LastID, and the field, value, ... pairs fv; maxBytes and maxEntries are
// stream-node-max-bytes and -entries (0 no limit). It creates the stream.
func (st *Stream) Append(id StreamID, fv [][]byte, maxBytes, maxEntries int64) {
	st.Create()
	o := st.o()
	nf := len(fv) / 2
	var total int64
	for _, b := range fv {
		total += int64(len(b))
	}
	if maxBytes <= 0 || maxBytes > streamNodeMaxSize {
		maxBytes = streamNodeMaxSize
	}
	var nd *StreamNode
	var spare []byte // the closed node's plain listpack, for the new one
	if n := len(o.nodes); n > 0 {
		lp := o.nodeLP(n - 1) // the last node: plain (dropNode)
		p := lpFirst(lp)
		count := lpGetInt(lp, p) + lpGetInt(lp, lpNext(lp, p))
		if int64(len(lp))+total < maxBytes && (maxEntries <= 0 || count < maxEntries) {
			nd = o.unpack(n - 1)
		} else {
			o.touch(n - 1)
			spare = o.packNode(&o.nodes[n-1]) // closed: compressed, or shrunk to fit
		}
	}
	flags := int64(0)
	if nd == nil {
		// A new node is made as large as the last one ended (the
		// stream's entries tend to look alike), so it fills without
		// regrowing: the garbage of doubling a node to its size, and
		// of the copy that fits it when it closes, is mostly gone.
		lp := lpNew()
		if n := len(o.nodes); n > 0 {
			last := o.nodes[n-1].rawLen()
			want := min(last+last/16, int(maxBytes)+64)
			if cap(spare) >= want {
				lp = append(spare[:0], lp...)
			} else if want > cap(lp) {
				lp = append(make([]byte, 0, want), lp...)
			}
		}
		lp = lpAppendIntEntry(lp, 1)
		lp = lpAppendIntEntry(lp, 0)
		lp = lpAppendIntEntry(lp, int64(nf))
		for i := 0; i < nf; i++ {
			lp = lpAppend(lp, fv[2*i])
		}
		lp = lpAppendIntEntry(lp, 0)
		o.nodes = append(o.nodes, StreamNode{Master: id, LP: lp})
		nd = &o.nodes[len(o.nodes)-1]
		flags = streamFlagSameFields
	} else {
		lp := nd.LP
		o.lpBytes -= int64(cap(lp))
		p := lpFirst(lp)
		lp = lpSetInt(lp, p, lpGetInt(lp, p)+1)
		p = lpNext(lp, p)
		p = lpNext(lp, p)
		if mf := lpGetInt(lp, p); int(mf) == nf {
			same := true
			for i := 0; i < nf; i++ {
				p = lpNext(lp, p)
				if !lpGet(lp, p).equal(fv[2*i]) {
					same = false
					break
				}
			}
			if same {
				flags = streamFlagSameFields
			}
		}
		nd.LP = lp
	}
	// nd.LP is not counted in lpBytes here (a new node's never was, an
	// old one's was taken off): the final listpack is counted below.
	lp := nd.LP
	lp = lpAppendIntEntry(lp, flags)
	lp = lpAppendIntEntry(lp, int64(id.Ms-nd.Master.Ms))
	lp = lpAppendIntEntry(lp, int64(id.Seq-nd.Master.Seq))
	if flags == 0 {
		lp = lpAppendIntEntry(lp, int64(nf))
	}
	for i := 0; i < nf; i++ {
		if flags == 0 {
			lp = lpAppend(lp, fv[2*i])
		}
		lp = lpAppend(lp, fv[2*i+1])
	}
	lpCount := int64(nf) + 3
	if flags == 0 {
		lpCount += int64(nf) + 1
	}
	lp = lpAppendIntEntry(lp, lpCount)
	nd.LP = lp
	o.lpBytes += int64(cap(lp))
	o.length++
	o.entriesAdded++
	o.lastID = id
	if o.length == 1 {
		o.firstID = id
	}
	st.c.dirty = true
}

// nodeIter walks the entries of one node.
type nodeIter struct {
	lp      []byte
	master  StreamID
	mfields int // the master entry's field count
	mstart  int // its first field's offset
	first   int // the first entry's offset (-1: none)
}

// iter returns an iterator over node i (valid until the next one or a
// change of the stream: a compressed node is read from the view).
func (o *stream) iter(i int) nodeIter { return newNodeIter(o.nodes[i].Master, o.nodeLP(i)) }

func newNodeIter(master StreamID, lp []byte) nodeIter {
	it := nodeIter{lp: lp, master: master}
	p := lpFirst(lp)
	p = lpNext(lp, p)
	p = lpNext(lp, p)
	it.mfields = int(lpGetInt(lp, p))
	p = lpNext(lp, p)
	it.mstart = p
	for i := 0; i < it.mfields; i++ {
		p = lpNext(lp, p)
	}
	// p is the master terminator.
	it.first = lpNext(lp, p)
	return it
}

// entry decodes the entry at p: its flags, ID, field count, the offset of
// its first field or value, and the offset after its lp-count (-1: the end).
func (it *nodeIter) entry(p int) (flags int64, id StreamID, nf int, fp int, next int) {
	lp := it.lp
	flags = lpGetInt(lp, p)
	p = lpNext(lp, p)
	id.Ms = it.master.Ms + uint64(lpGetInt(lp, p))
	p = lpNext(lp, p)
	id.Seq = it.master.Seq + uint64(lpGetInt(lp, p))
	p = lpNext(lp, p)
	if flags&streamFlagSameFields != 0 {
		nf = it.mfields
		fp = p
		for i := 0; i < nf; i++ {
			p = lpNext(lp, p)
		}
	} else {
		nf = int(lpGetInt(lp, p))
		p = lpNext(lp, p)
		fp = p
		for i := 0; i < 2*nf; i++ {
			p = lpNext(lp, p)
		}
	}
	return flags, id, nf, fp, lpNext(lp, p)
}

// fields fills st.fv with the entry's field, value, ... pairs.
func (st *Stream) fields(it *nodeIter, flags int64, nf, fp int) [][]byte {
	lp := it.lp
	if cap(st.fv) < 2*nf {
		st.fv = make([][]byte, 2*nf)
		st.nums = make([][24]byte, 2*nf)
	}
	fv := st.fv[:2*nf]
	get := func(i, p int) {
		en := lpGet(lp, p)
		if en.Str != nil {
			fv[i] = en.Str
		} else {
			fv[i] = en.appendTo(st.nums[i][:0])
		}
	}
	if flags&streamFlagSameFields != 0 {
		mp := it.mstart
		for i := 0; i < nf; i++ {
			get(2*i, mp)
			mp = lpNext(lp, mp)
			get(2*i+1, fp)
			fp = lpNext(lp, fp)
		}
	} else {
		for i := 0; i < 2*nf; i++ {
			get(i, fp)
			fp = lpNext(lp, fp)
		}
	}
	return fv
}

// seekNode is the index of the last node whose master ID is at most id,
// or 0.
func (o *stream) seekNode(id StreamID) int {
	i, found := slices.BinarySearchFunc(o.nodes, id, func(n StreamNode, id StreamID) int { return n.Master.Compare(id) })
	if found || i == 0 {
		return i
	}
	return i - 1
}

// Range calls fn for the live entries with IDs from start to end
// inclusive, in ID order or, with rev, in reverse, until fn returns false.
// fv is valid during the call only.
func (st *Stream) Range(start, end StreamID, rev bool, fn func(id StreamID, fv [][]byte) bool) {
	if st.c.obj == nil || end.Less(start) {
		return
	}
	o := st.o()
	if !rev {
		for i := o.seekNode(start); i < len(o.nodes); i++ {
			it := o.iter(i)
			p := it.first
			if h := &o.hint; h.master == it.master && h.first == it.first && !start.Less(h.id) && h.off > 0 && h.off < len(it.lp)-1 {
				p = h.off
			}
			for p >= 0 {
				q := p
				flags, id, nf, fp, next := it.entry(p)
				p = next
				if id.Less(start) || flags&streamFlagDeleted != 0 {
					continue
				}
				if end.Less(id) {
					return
				}
				o.hint = streamHint{master: it.master, first: it.first, off: q, id: id}
				if !fn(id, st.fields(&it, flags, nf, fp)) {
					return
				}
			}
		}
		return
	}
	for i := o.seekNode(end); i >= 0 && i < len(o.nodes); i-- {
		it := o.iter(i)
		// Backwards as Redis walks: each entry ends with the count of
		// its other elements, so the last element leads to the entry's
		// flags; the master entry's terminator (0) ends the node.
		lp := it.lp
		for p := lpLast(lp); p >= 0; {
			n := lpGetInt(lp, p)
			if n <= 0 {
				break
			}
			q := p
			for k := int64(0); k < n && q >= 0; k++ {
				q = lpPrev(lp, q)
			}
			if q < 0 {
				break
			}
			p = lpPrev(lp, q)
			flags, id, nf, fp, _ := it.entry(q)
			if end.Less(id) || flags&streamFlagDeleted != 0 {
				continue
			}
			if id.Less(start) {
				return
			}
			if !fn(id, st.fields(&it, flags, nf, fp)) {
				return
			}
		}
	}
}

// Has reports whether a live entry has the ID id.
func (st *Stream) Has(id StreamID) bool {
	found := false
	st.Range(id, id, false, func(StreamID, [][]byte) bool { found = true; return false })
	return found
}

// Edge returns the first (or last) live entry's ID; ok is false when the
// stream has none.
func (st *Stream) Edge(last bool) (id StreamID, ok bool) {
	st.Range(StreamID{}, MaxStreamID, last, func(i StreamID, _ [][]byte) bool { id, ok = i, true; return false })
	return id, ok
}

// deleteAt flags the entry at p in node i deleted and updates the counts;
// a node left with no live entry goes. It reports whether node i went.
func (o *stream) deleteAt(i int, p int) bool {
	nd := &o.nodes[i]
	if live := lpGetInt(o.nodeLP(i), lpFirst(o.nodeLP(i))); live == 1 {
		o.length--
		o.dropNode(i)
		return true
	}
	nd = o.unpack(i)
	lp := nd.LP
	o.lpBytes -= int64(cap(lp))
	lp = lpSetInt(lp, p, lpGetInt(lp, p)|streamFlagDeleted)
	q := lpFirst(lp)
	live := lpGetInt(lp, q)
	o.length--
	lp = lpSetInt(lp, q, live-1)
	q = lpNext(lp, q)
	lp = lpSetInt(lp, q, lpGetInt(lp, q)+1)
	nd.LP = lp
	o.lpBytes += int64(cap(lp))
	o.settle(i)
	return false
}

// dropNode removes node i. The last node is always plain: the one before
// a last node that goes is decompressed.
func (o *stream) dropNode(i int) {
	o.dropBase(i)
	nd := &o.nodes[i]
	o.forget(nd)
	o.lpBytes -= int64(cap(nd.LP))
	o.nodes = slices.Delete(o.nodes, i, i+1)
	if n := len(o.nodes); n > 0 && i == n {
		o.unpack(n - 1)
	}
}

// Delete deletes the entry with ID id and reports whether it was there.
// (XDEL's bookkeeping of the first and largest deleted IDs is DeleteIDs'.)
func (st *Stream) Delete(id StreamID) bool {
	if st.c.obj == nil {
		return false
	}
	o := st.o()
	if len(o.nodes) == 0 {
		return false
	}
	i := o.seekNode(id)
	it := o.iter(i)
	for p := it.first; p >= 0; {
		flags, eid, _, _, next := it.entry(p)
		if eid == id {
			if flags&streamFlagDeleted != 0 {
				return false
			}
			o.deleteAt(i, p)
			st.c.dirty = true
			return true
		}
		if id.Less(eid) {
			return false
		}
		p = next
	}
	return false
}

// DeleteIDs is XDEL: it deletes the entries with the given IDs, keeps the
// first and the largest deleted IDs as Redis does, and returns how many
// it deleted.
func (st *Stream) DeleteIDs(ids []StreamID) int {
	o := st.o()
	deleted, first := 0, false
	for _, id := range ids {
		if st.Delete(id) {
			if id == o.firstID {
				first = true
			}
			if o.maxDeleted.Less(id) {
				o.maxDeleted = id
			}
			deleted++
		}
	}
	if deleted > 0 {
		if o.length == 0 {
			o.firstID = StreamID{}
		} else if first {
			o.firstID = st.firstEdge()
		}
	}
	return deleted
}

// firstEdge is Redis's streamGetEdgeID(first): the first live ID, or the
// last possible ID when there is none.
func (st *Stream) firstEdge() StreamID {
	if id, ok := st.Edge(false); ok {
		return id
	}
	return MaxStreamID
}

// StreamTrim says how XADD and XTRIM trim.
type StreamTrim struct {
	MinID  bool     // by MINID, else by MAXLEN
	MaxLen uint64   // MAXLEN's count
	ID     StreamID // MINID's ID
	Approx bool     // ~: whole nodes only
	Limit  int64    // at most this many entries; 0 no limit
}

// trimsFirst reports whether trimming by t flags a live entry of node 0,
// which it reads without changing it.
func (o *stream) trimsFirst(t StreamTrim) bool {
	if !t.MinID {
		return o.length > t.MaxLen
	}
	it := o.iter(0)
	for p := it.first; p >= 0; {
		flags, id, _, _, next := it.entry(p)
		if !id.Less(t.ID) {
			return false
		}
		if flags&streamFlagDeleted == 0 {
			return true
		}
		p = next
	}
	return false
}

// Trim removes entries from the head as t says (Redis's streamTrim) and
// returns how many.
func (st *Stream) Trim(t StreamTrim) int64 {
	if st.c.obj == nil {
		return 0
	}
	o := st.o()
	var deleted int64
	for len(o.nodes) > 0 {
		if !t.MinID && o.length <= t.MaxLen {
			break
		}
		lp := o.nodeLP(0)
		q := lpFirst(lp)
		entries := lpGetInt(lp, q)
		if t.Limit > 0 && deleted+entries > t.Limit {
			break
		}
		var remove bool
		if !t.MinID {
			remove = o.length-uint64(entries) >= t.MaxLen
		} else {
			it := o.iter(0)
			var last StreamID
			for p := it.first; p >= 0; {
				_, id, _, _, next := it.entry(p)
				last, p = id, next
			}
			remove = last.Less(t.ID)
		}
		if remove {
			o.dropNode(0)
			o.length -= uint64(entries)
			deleted += entries
			continue
		}
		if t.Approx || !o.trimsFirst(t) {
			break // nothing to flag: node 0 stays as it is, compressed or not
		}
		nd := o.unpack(0)
		lp = nd.LP
		it := newNodeIter(nd.Master, lp)
		var fromNode int64
		o.lpBytes -= int64(cap(lp))
		for p := it.first; p >= 0; {
			flags, id, _, _, next := it.entry(p)
			if !t.MinID && o.length <= t.MaxLen || t.MinID && !id.Less(t.ID) {
				break
			}
			if flags&streamFlagDeleted == 0 {
				// Flags 0/2 become 1/3: the same size, in place.
				lp = lpSetInt(lp, p, flags|streamFlagDeleted)
				fromNode++
				o.length--
			}
			p = next
		}
		q = lpFirst(lp)
		lp = lpSetInt(lp, q, entries-fromNode)
		q = lpNext(lp, q)
		lp = lpSetInt(lp, q, lpGetInt(lp, q)+fromNode)
		nd.LP = lp
		o.lpBytes += int64(cap(lp))
		o.settle(0)
		deleted += fromNode
		break
	}
	if deleted > 0 {
		if o.length == 0 {
			o.firstID = StreamID{}
		} else {
			o.firstID = st.firstEdge()
		}
		st.c.dirty = true
	}
	return deleted
}
