package rdb

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/minikv/minikv/internal/store"
)

// Streams in Redis's format (rdb.c, rdbSaveObject and rdbLoadObject).
// The entries are the listpack nodes of Redis's radix tree, each keyed by
// its master ID written as a 16-byte string (ms, seq, big-endian); then
// the counters, then the consumer groups:
//
//	nodes     len, { master ID (string of 16) | listpack (string) }...
//	counters  length, last ID (ms, seq)                       all lengths
//	          [first ID, max deleted ID, entries added]       type 19 and 21
//	groups    len, { name (string) | last ID (ms, seq)
//	                 [entries read (a length; -1 as 2^64-1)]  type 19 and 21
//	                 PEL: len, { ID (16 raw, BE) | delivery time (8, LE ms)
//	                             | delivery count (length) }...
//	                 consumers: len, { name (string) | seen time (8, LE ms)
//	                                   [active time (8, LE ms)]  type 21
//	                                   PEL: len, { ID (16 raw, BE) }... }... }...
//
// Type 15 (RDB_TYPE_STREAM_LISTPACKS, Redis 5 and 6) lacks the bracketed
// fields, which Redis 7 fills in on load as decodeStream does here; 19
// (_2) is what Redis 7.0 writes (a consumer's active time is then its
// seen time, as Redis 7.2 loads it); 21 (_3) is Redis 7.2's, with the
// consumers' active times. appendStreamOf writes 19 or 21; DUMP and RDB
// files write streamType: 21, as Redis 7.2 does at RDB version 11 (which
// Redis 7.0 refuses, as it refuses type 21).

// appendStreamID appends an ID as a node key or PEL entry holds it: 16
// raw bytes, big-endian (streamEncodeID).
func appendStreamID(b []byte, id store.StreamID) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(b, id.Ms), id.Seq)
}

func decodeStreamID(b []byte) store.StreamID {
	return store.StreamID{Ms: binary.BigEndian.Uint64(b), Seq: binary.BigEndian.Uint64(b[8:])}
}

// appendLenID appends an ID as two lengths (ms, seq).
func appendLenID(b []byte, id store.StreamID) []byte {
	return AppendLen(AppendLen(b, id.Ms), id.Seq)
}

// appendMs appends a time as rdbSaveMillisecondTime does: 8 bytes LE.
func appendMs(b []byte, ms int64) []byte {
	return binary.LittleEndian.AppendUint64(b, uint64(ms))
}

// streamType is the stream type DUMP and RDB files write: Redis 7.2's
// RDB_TYPE_STREAM_LISTPACKS_3 from RDB version 11 (Version), 7.0's _2
// before.
const streamType = typeStreamLP2 + (typeStreamLP3-typeStreamLP2)*(Version/11)

// appendStream appends a stream's object as Redis 7.0 writes
// RDB_TYPE_STREAM_LISTPACKS_2 (after the type byte, and the key in a
// file): what older payloads hold, which the tests make.
func appendStream(b []byte, v *store.StreamValue) []byte {
	return appendStreamOf(b, v, typeStreamLP2)
}

// appendStreamOf appends a stream's object as Redis writes type typ,
// typeStreamLP2 (7.0) or typeStreamLP3 (7.2: each consumer's active time
// after its seen time, -1 as 2^64-1 as rdbSaveMillisecondTime writes it).
func appendStreamOf(b []byte, v *store.StreamValue, typ byte) []byte {
	b = AppendLen(b, uint64(len(v.Nodes)))
	var key [16]byte
	for _, nd := range v.Nodes {
		b = AppendString(b, appendStreamID(key[:0], nd.Master))
		b = AppendString(b, nd.LP)
	}
	b = AppendLen(b, v.Length)
	b = appendLenID(b, v.LastID)
	b = appendLenID(b, v.FirstID)
	b = appendLenID(b, v.MaxDeletedID)
	b = AppendLen(b, v.EntriesAdded)
	b = AppendLen(b, uint64(len(v.Groups)))
	for _, g := range v.Groups {
		b = AppendString(b, g.Name)
		b = appendLenID(b, g.LastID)
		b = AppendLen(b, uint64(g.EntriesRead)) // -1 as 2^64-1, as rdbSaveLen writes it
		b = AppendLen(b, uint64(len(g.PEL)))
		for _, nk := range g.PEL {
			b = appendStreamID(b, nk.ID)
			b = appendMs(b, nk.DeliveryTime)
			b = AppendLen(b, nk.DeliveryCount)
		}
		b = AppendLen(b, uint64(len(g.Consumers)))
		for _, c := range g.Consumers {
			b = AppendString(b, c.Name)
			b = appendMs(b, c.SeenTime)
			if typ == typeStreamLP3 {
				b = appendMs(b, c.ActiveTime)
			}
			b = AppendLen(b, uint64(len(c.PEL)))
			for _, id := range c.PEL {
				b = appendStreamID(b, id)
			}
		}
	}
	return b
}

// rawID reads an ID of 16 raw bytes.
func (r *reader) rawID() store.StreamID {
	b := r.take(16)
	if b == nil {
		return store.StreamID{}
	}
	return decodeStreamID(b)
}

// lenID reads an ID as two lengths.
func (r *reader) lenID() store.StreamID {
	return store.StreamID{Ms: r.plainLength(), Seq: r.plainLength()}
}

// ms reads a time of 8 bytes LE (rdbLoadMillisecondTime).
func (r *reader) ms() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// stream reads a stream object of type typ (15, 19 or 21) as Redis 7
// loads it, then checks it whole (store.ValidateStream: every node as
// sanitize-dump-payload yes checks it, and the counters, orders and PELs
// consistent). Redis keeps nodes, groups, consumers and PELs in radix
// trees, which order them whatever order the payload has and refuse a
// repeated key: they are sorted here likewise, and a repeat is refused.
func (r *reader) stream(typ byte) *store.StreamValue {
	v := &store.StreamValue{}
	n := r.count(17 + 1) // a master ID, then a listpack of at least a byte
	for range n {
		key := r.str()
		lp := r.str()
		if r.err != nil {
			return nil
		}
		if len(key) != 16 {
			r.fail()
			return nil
		}
		v.Nodes = append(v.Nodes, store.StreamNode{Master: decodeStreamID(key), LP: lp})
	}
	if !slices.IsSortedFunc(v.Nodes, func(a, b store.StreamNode) int { return a.Master.Compare(b.Master) }) {
		slices.SortStableFunc(v.Nodes, func(a, b store.StreamNode) int { return a.Master.Compare(b.Master) })
	}
	v.Length = r.plainLength()
	v.LastID = r.lenID()
	if typ == typeStreamLP {
		// rdb.c: no tombstones counted, every entry ever added still
		// there, and the first live entry's ID (the last possible one
		// when there is none).
		v.EntriesAdded = v.Length
		v.FirstID = store.MaxStreamID
		if len(v.Nodes) > 0 {
			info, err := store.ValidateStreamNode(v.Nodes[0].LP, v.Nodes[0].Master)
			if err != nil {
				r.fail()
				return nil
			}
			v.FirstID = info.FirstLive
		}
	} else {
		v.FirstID = r.lenID()
		v.MaxDeletedID = r.lenID()
		v.EntriesAdded = r.plainLength()
	}
	ng := r.count(5)
	for range ng {
		g := store.StreamGroup{Name: r.str(), LastID: r.lenID()}
		if typ == typeStreamLP {
			g.EntriesRead = v.EstimateEntriesRead(g.LastID)
		} else {
			g.EntriesRead = int64(r.plainLength())
		}
		np := r.count(16 + 8 + 1)
		for range np {
			g.PEL = append(g.PEL, store.StreamNACK{ID: r.rawID(), DeliveryTime: r.ms(), DeliveryCount: r.plainLength()})
		}
		nc := r.count(1 + 8 + 1)
		for range nc {
			c := store.StreamConsumer{Name: r.str(), SeenTime: r.ms()}
			if typ == typeStreamLP3 {
				c.ActiveTime = r.ms()
			} else {
				c.ActiveTime = c.SeenTime // Redis 7.2: "the best estimate we got"
			}
			nids := r.count(16)
			for range nids {
				c.PEL = append(c.PEL, r.rawID())
			}
			sortIDs(c.PEL)
			g.Consumers = append(g.Consumers, c)
		}
		if r.err != nil {
			return nil
		}
		if !slices.IsSortedFunc(g.PEL, func(a, b store.StreamNACK) int { return a.ID.Compare(b.ID) }) {
			slices.SortStableFunc(g.PEL, func(a, b store.StreamNACK) int { return a.ID.Compare(b.ID) })
		}
		if !slices.IsSortedFunc(g.Consumers, func(a, b store.StreamConsumer) int { return bytes.Compare(a.Name, b.Name) }) {
			slices.SortStableFunc(g.Consumers, func(a, b store.StreamConsumer) int { return bytes.Compare(a.Name, b.Name) })
		}
		v.Groups = append(v.Groups, g)
	}
	if r.err != nil {
		return nil
	}
	if !slices.IsSortedFunc(v.Groups, func(a, b store.StreamGroup) int { return bytes.Compare(a.Name, b.Name) }) {
		slices.SortStableFunc(v.Groups, func(a, b store.StreamGroup) int { return bytes.Compare(a.Name, b.Name) })
	}
	if store.ValidateStream(v) != nil {
		r.fail()
		return nil
	}
	return v
}

func sortIDs(ids []store.StreamID) {
	if !slices.IsSortedFunc(ids, store.StreamID.Compare) {
		slices.SortFunc(ids, store.StreamID.Compare)
	}
}
