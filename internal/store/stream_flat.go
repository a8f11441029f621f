package store

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/klauspost/compress/s2"
)

// A stream's flat encoding, what durable mode writes and COPY rebuilds
// from: uvarints (a varint for signed counters) and length-prefixed bytes.
//
//	length last first maxDeleted entriesAdded
//	nodes  { master listpack | master 0 rawLength s2block }...
//	groups { name lastID entriesRead
//	         nacks { id deliveryTime deliveryCount consumerIndex }...
//	         consumers { name seenTime activeTime }... }...
//
// An ID is two uvarints; a consumer's PEL is rebuilt from the NACKs. A
// compressed node (stream_pack.go) is written as it is kept: an empty
// listpack, which no plain node is (records written before nodes were
// compressed have none), then its listpack's length and the S2 block.

func appendID(b []byte, id StreamID) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(b, id.Ms), id.Seq)
}

func appendBytes(b, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func (o *stream) appendFlat(b []byte) []byte {
	b = o.appendFlatHead(b)
	for i := range o.nodes {
		b = appendFlatNode(b, &o.nodes[i])
	}
	return o.appendFlatGroups(b)
}

// appendFlatHead appends what the flat encoding has before the nodes.
func (o *stream) appendFlatHead(b []byte) []byte {
	b = binary.AppendUvarint(b, o.length)
	b = appendID(b, o.lastID)
	b = appendID(b, o.firstID)
	b = appendID(b, o.maxDeleted)
	b = binary.AppendUvarint(b, o.entriesAdded)
	return binary.AppendUvarint(b, uint64(len(o.nodes)))
}

// appendFlatNode appends node nd's flat encoding, flatNodeLen bytes.
func appendFlatNode(b []byte, nd *StreamNode) []byte {
	b = appendID(b, nd.Master)
	if nd.raw > 0 {
		b = append(b, 0)
		b = binary.AppendUvarint(b, uint64(nd.raw))
	}
	return appendBytes(b, nd.LP)
}

// flatNodeLen is the length of node nd's flat encoding.
func flatNodeLen(nd *StreamNode) int {
	n := uvarintLen(nd.Master.Ms) + uvarintLen(nd.Master.Seq)
	if nd.raw > 0 {
		n += 1 + uvarintLen(uint64(nd.raw))
	}
	return n + uvarintLen(uint64(len(nd.LP))) + len(nd.LP)
}

// appendFlatGroups appends what the flat encoding has after the nodes.
func (o *stream) appendFlatGroups(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(o.groups)))
	for _, g := range o.groups {
		b = appendBytes(b, g.name)
		b = appendID(b, g.lastID)
		b = binary.AppendVarint(b, g.entriesRead)
		b = binary.AppendUvarint(b, uint64(g.pel.Len()))
		g.pel.Ascend(func(e pendingEntry) bool {
			b = appendID(b, e.id)
			b = binary.AppendVarint(b, e.deliveryTime)
			b = binary.AppendUvarint(b, e.deliveryCount)
			ci, _ := consIndex(g.consumers, e.consumer.name)
			b = binary.AppendUvarint(b, uint64(ci))
			return true
		})
		b = binary.AppendUvarint(b, uint64(len(g.consumers)))
		for _, c := range g.consumers {
			b = appendBytes(b, c.name)
			b = binary.AppendVarint(b, c.seenTime)
			b = binary.AppendVarint(b, c.activeTime)
		}
	}
	return b
}

// flatReader reads a flat encoding; a short or bad read sets bad.
type flatReader struct {
	b   []byte
	bad bool
}

func (r *flatReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	r.skip(n)
	return v
}

func (r *flatReader) varint() int64 {
	v, n := binary.Varint(r.b)
	r.skip(n)
	return v
}

// skip consumes n bytes, or marks the read bad when n is not a length
// the bytes left allow (a varint's n <= 0 is a bad one).
func (r *flatReader) skip(n int) {
	if n <= 0 || n > len(r.b) {
		r.bad = true
		r.b = nil
		return
	}
	r.b = r.b[n:]
}

func (r *flatReader) id() StreamID { return StreamID{r.uvarint(), r.uvarint()} }

func (r *flatReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.skip(-1)
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

// count reads a count of items of at least min bytes each.
func (r *flatReader) count(min int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)/min) {
		r.bad = true
		return 0
	}
	return int(n)
}

// unpackFlatNode decompresses a compressed node's S2 block z, which must
// hold a listpack of raw bytes: nil when it does not.
func unpackFlatNode(z []byte, raw uint64) []byte {
	if raw == 0 || raw > flatNodeMax {
		return nil
	}
	if n, err := s2.DecodedLen(z); err != nil || uint64(n) != raw {
		return nil
	}
	lp := make([]byte, raw)
	if out, err := s2.Decode(lp, z); err != nil || len(out) != len(lp) {
		return nil
	}
	return lp
}

// flatNodeMax is the largest listpack a compressed node may claim: a
// node's limit (the fuzz target lowers it, so that a mutated length does
// not allocate a gigabyte per input).
var flatNodeMax uint64 = streamNodeMaxSize

// streamFromFlat rebuilds a stream from appendFlat's bytes, checking them.
func streamFromFlat(b []byte) (object, error) {
	r := &flatReader{b: b}
	v := &StreamValue{}
	v.Length = r.uvarint()
	v.LastID = r.id()
	v.FirstID = r.id()
	v.MaxDeletedID = r.id()
	v.EntriesAdded = r.uvarint()
	n := r.count(3)
	for range n {
		m := r.id()
		lp := r.bytes()
		if len(lp) == 0 && !r.bad {
			raw := r.uvarint()
			if lp = unpackFlatNode(r.bytes(), raw); lp == nil {
				return nil, errFlat
			}
		} else {
			lp = bytes.Clone(lp)
		}
		v.Nodes = append(v.Nodes, StreamNode{Master: m, LP: lp})
	}
	ng := r.count(4)
	for range ng {
		g := StreamGroup{Name: bytes.Clone(r.bytes()), LastID: r.id(), EntriesRead: r.varint()}
		np := r.count(5)
		idx := make([]int, 0, np)
		for range np {
			g.PEL = append(g.PEL, StreamNACK{ID: r.id(), DeliveryTime: r.varint(), DeliveryCount: r.uvarint()})
			idx = append(idx, int(r.uvarint()))
		}
		nc := r.count(3)
		for range nc {
			g.Consumers = append(g.Consumers, StreamConsumer{Name: bytes.Clone(r.bytes()), SeenTime: r.varint(), ActiveTime: r.varint()})
		}
		for i, ci := range idx {
			if ci >= len(g.Consumers) {
				return nil, errFlat
			}
			g.Consumers[ci].PEL = append(g.Consumers[ci].PEL, g.PEL[i].ID)
		}
		v.Groups = append(v.Groups, g)
	}
	if r.bad || len(r.b) != 0 {
		return nil, errFlat
	}
	o, err := streamFromValue(v)
	if err != nil {
		return nil, errFlat
	}
	return o, nil
}

// streamFromValue builds a stream object from v, checking that it is
// consistent: nodes well formed and in order, counts that add up, PELs
// whose entries each belong to exactly one consumer.
func streamFromValue(v *StreamValue) (*stream, error) {
	o := &stream{length: v.Length, lastID: v.LastID, firstID: v.FirstID, maxDeleted: v.MaxDeletedID, entriesAdded: v.EntriesAdded}
	var live uint64
	var prev StreamID
	for i, nd := range v.Nodes {
		if i > 0 && !prev.Less(nd.Master) {
			return nil, ErrBadEncoding
		}
		n, last, err := checkStreamNode(nd.LP, nd.Master)
		if err != nil {
			return nil, err
		}
		if n == 0 || v.LastID.Less(last) {
			return nil, ErrBadEncoding
		}
		live += uint64(n)
		prev = last
		lp := slices.Clip(bytes.Clone(nd.LP))
		o.nodes = append(o.nodes, StreamNode{Master: nd.Master, LP: lp})
		o.lpBytes += int64(cap(lp))
	}
	if live != v.Length {
		return nil, ErrBadEncoding
	}
	o.packAll()
	for i, gv := range v.Groups {
		if i > 0 && bytes.Compare(v.Groups[i-1].Name, gv.Name) >= 0 {
			return nil, ErrBadEncoding
		}
		g := newCG(gv.Name, gv.LastID, gv.EntriesRead)
		o.groupBytes += cgBytes + int64(len(g.name))
		for j, nk := range gv.PEL {
			if j > 0 && !gv.PEL[j-1].ID.Less(nk.ID) {
				return nil, ErrBadEncoding
			}
			g.pel.ReplaceOrInsert(pendingEntry{id: nk.ID, deliveryTime: nk.DeliveryTime, deliveryCount: nk.DeliveryCount})
			o.groupBytes += nackBytes
		}
		owned := 0
		for j, cv := range gv.Consumers {
			if j > 0 && bytes.Compare(gv.Consumers[j-1].Name, cv.Name) >= 0 {
				return nil, ErrBadEncoding
			}
			c := newConsumer(cv.Name, cv.SeenTime, cv.ActiveTime)
			o.groupBytes += consumerBytes + int64(len(c.name))
			for k, id := range cv.PEL {
				if k > 0 && !cv.PEL[k-1].Less(id) {
					return nil, ErrBadEncoding
				}
				e, ok := g.nack(id)
				if !ok || e.consumer != nil {
					return nil, ErrBadEncoding
				}
				e.consumer = c
				g.pel.ReplaceOrInsert(e)
				c.pel.ReplaceOrInsert(id)
				owned++
			}
			g.consumers = append(g.consumers, c)
		}
		if owned != g.pel.Len() {
			return nil, ErrBadEncoding
		}
		o.groups = append(o.groups, g)
	}
	return o, nil
}

// Export returns the whole stream in Redis's terms (DUMP, RDB). The nodes'
// listpacks alias the store's memory: valid while the function runs.
func (st *Stream) Export() *StreamValue {
	o := st.o()
	v := &StreamValue{Nodes: o.plainNodes(), Length: o.length, LastID: o.lastID, FirstID: o.firstID,
		MaxDeletedID: o.maxDeleted, EntriesAdded: o.entriesAdded}
	for _, g := range o.groups {
		gv := StreamGroup{Name: g.name, LastID: g.lastID, EntriesRead: g.entriesRead}
		g.pel.Ascend(func(e pendingEntry) bool {
			gv.PEL = append(gv.PEL, StreamNACK{ID: e.id, DeliveryTime: e.deliveryTime, DeliveryCount: e.deliveryCount})
			return true
		})
		for _, c := range g.consumers {
			gv.Consumers = append(gv.Consumers, StreamConsumer{Name: c.name, SeenTime: c.seenTime, ActiveTime: c.activeTime, PEL: c.Pending()})
		}
		v.Groups = append(v.Groups, gv)
	}
	return v
}

// RestoreStream stores the stream v under key, which holds nothing, in
// the Tx (RESTORE, a file's keys), checking it deeply: it may come from a
// client.
func (tx *Tx) RestoreStream(key []byte, v *StreamValue) error {
	o, err := streamFromValue(v)
	if err != nil {
		return err
	}
	var st Stream
	if err := tx.Stream(key, &st, true); err != nil {
		return err
	}
	st.c.obj, st.c.enc, st.c.dirty = o, encBig, true
	tx.DoneStream(&st)
	return nil
}

// checkStreamNode checks a node's listpack deeply as Redis's
// streamValidateListpackIntegrity does: the master entry, every entry's
// flags, ID (after the master's and the previous entry's), fields and
// lp-count, and the live and deleted counts. It returns the live entries
// and the last entry's ID.
func checkStreamNode(lp []byte, master StreamID) (live int, last StreamID, err error) {
	if lpValidate(lp) != nil {
		return 0, last, ErrBadEncoding
	}
	p := lpFirst(lp)
	next := func() bool {
		if p < 0 {
			return false
		}
		p = lpNext(lp, p)
		return p >= 0
	}
	intAt := func() (int64, bool) {
		if p < 0 {
			return 0, false
		}
		en := lpGet(lp, p)
		if en.Str != nil {
			return 0, false
		}
		return en.Int, true
	}
	count, ok1 := intAt()
	next()
	deleted, ok2 := intAt()
	next()
	mf, ok3 := intAt()
	if !ok1 || !ok2 || !ok3 || count < 0 || deleted < 0 || mf < 0 || mf > int64(len(lp)) {
		return 0, last, ErrBadEncoding
	}
	for range mf {
		if !next() {
			return 0, last, ErrBadEncoding
		}
	}
	next()
	if z, ok := intAt(); !ok || z != 0 {
		return 0, last, ErrBadEncoding
	}
	var nLive, nDeleted int64
	prev, first := master, true
	for next() {
		flags, ok := intAt()
		if !ok || flags < 0 || flags > 3 || !next() {
			return 0, last, ErrBadEncoding
		}
		msd, ok := intAt()
		if !ok || !next() {
			return 0, last, ErrBadEncoding
		}
		seqd, ok := intAt()
		if !ok {
			return 0, last, ErrBadEncoding
		}
		id := StreamID{master.Ms + uint64(msd), master.Seq + uint64(seqd)}
		if id.Less(master) || !first && !prev.Less(id) {
			return 0, last, ErrBadEncoding
		}
		prev, first = id, false
		var want int64
		if flags&streamFlagSameFields != 0 {
			for range mf {
				if !next() {
					return 0, last, ErrBadEncoding
				}
			}
			want = mf + 3
		} else {
			if !next() {
				return 0, last, ErrBadEncoding
			}
			nf, ok := intAt()
			if !ok || nf < 0 || nf > int64(len(lp)) {
				return 0, last, ErrBadEncoding
			}
			for range 2 * nf {
				if !next() {
					return 0, last, ErrBadEncoding
				}
			}
			want = 2*nf + 4
		}
		if !next() {
			return 0, last, ErrBadEncoding
		}
		if c, ok := intAt(); !ok || c != want {
			return 0, last, ErrBadEncoding
		}
		if flags&streamFlagDeleted != 0 {
			nDeleted++
		} else {
			nLive++
		}
	}
	if first || nLive != count || nDeleted != deleted {
		return 0, last, ErrBadEncoding
	}
	return int(count), prev, nil
}
