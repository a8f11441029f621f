package store

import (
	"encoding/binary"
	"math/bits"
)

// ItemOverhead is the memory one item is charged beyond
// len(key)+len(value). It is the measured cost of the layout below
// (TestItemOverheadMatchesHeap):
//
//	record header                  11 B  (info, short CAS, access time, two
//	                                      one-byte lengths; +8 with a deadline,
//	                                      +4 with flags, +1 with meta bits,
//	                                      +4 with a long CAS, +1-4 for longer
//	                                      lengths)
//	index slot                   9-12 B  (8 B at a load between 0.58 and 0.875)
//	segment slack                 0-4 B  (the unfilled tail of each shard's
//	                                      open segment, spread over its items)
//
// which comes to 22-26 B for an item without a deadline and 31-34 B with
// one. The charge is the cost of an item with a deadline, rounded up, so
// MemoryLimit bounds the real footprint whichever items are stored; items
// without one are over-charged by about a third. (One constant cannot be
// close to both: the deadline, 8 of the 12 bytes an item's metadata used
// to take in a fixed struct, is now an optional field.)
//
// Dead records (overwritten, deleted or evicted values) stay in their
// segment until compaction or the eviction walk reaches them; that slack is
// proportional to the data, not to the item count, so it is not in the
// constant.
const ItemOverhead = 34

// A record is an item: its metadata, key and value, appended to a segment.
// The header is variable-length, so fields that are zero cost nothing:
//
//	+------+-------+-----------+------------+---------+--------+------+------+-----+-------+
//	| info | CAS   | atime     | [deadline] | [flags] | [meta] | klen | vlen | key | value |
//	| 1 B  | 4/8 B | 4 B LE, s | 8 B LE, ns | 4 B LE  | 1 B    | uvarint     |     |       |
//	+------+-------+-----------+------------+---------+--------+------+------+-----+-------+
//
// The info byte says which optional fields are present and holds the
// per-item bits:
//
//	bit 0    dead: deleted, evicted or moved; the rest of the header is intact,
//	         so a walk over the segment still knows the record's length
//	bit 1    deadline present (the item expires)
//	bit 2    flags present (non-zero memcached flags)
//	bit 3    meta byte present (stale, win-sent or binary-key set)
//	bit 4    fetched: read by a get-type command since it was stored
//	bits 5-6 access count (0-3): raised by every use, lowered each time the
//	         eviction walk passes the record (see evict.go); unused by the
//	         walk in LFU mode, where atime holds an LFU counter (lfu.go)
//	bit 7    short CAS: the CAS is 4 B, the token minus the segment's base
//	         token, instead of the whole 8 B token
//
// The CAS is the one field every record needs that is mostly redundant:
// tokens come from one counter, so the records of a segment, written one
// after the other, carry tokens close to each other. A segment's base
// token is the token of its first record, and a record whose token is at
// most 2^32-1 above it stores only the difference. Records that cannot
// (copied forward with an older token, or given a client's token with
// meta E) store all 8 bytes.
//
// Only the header is ever written after a record is built (info, CAS,
// atime, a deadline that stays present, the meta byte), under the shard
// lock; key and value bytes never change, so a value handed out without
// the lock stays valid. (The one exception is a compact collection's
// value, never handed out: Store.rewriteLocked.) A change that adds or removes an optional field,
// or a CAS that no longer fits the short form, rewrites the record into
// the open segment.

// Bits of the info byte.
const (
	infoDead     = 1 << 0
	infoDeadline = 1 << 1
	infoFlags    = 1 << 2
	infoMeta     = 1 << 3
	infoFetched  = 1 << 4
	freqShift    = 5
	infoFreq     = 3 << freqShift
	maxFreq      = 3
	infoCAS32    = 1 << 7

	// presence is the part of the info byte that fixes the header's layout.
	presence = infoDeadline | infoFlags | infoMeta | infoCAS32
)

// Bits of the meta byte; bits 3-7 say the value's kind and encoding
// (kind.go), all zero for a string.
const (
	metaStale     = 1 << iota // invalidated by md I or ms I: served with X until rewritten
	metaWinSent               // a client has been given the recache win (W); others see Z
	metaBinaryKey             // stored with a base64 (b) key: k returns it encoded
)

// casAt is where the CAS starts; minHdr is the shortest header: info,
// short CAS, atime and two one-byte lengths.
const (
	casAt  = 1
	minHdr = 1 + 4 + 4 + 2
)

// entry is a record's header decoded, plus where the record is. Code under
// the shard lock reads and changes an entry and writes it back with
// commitLocked; an entry is only valid until the lock is released or a
// record is moved (eviction walks and compaction move records).
type entry struct {
	seg, off uint32 // the record: segment number and offset of its header
	body     uint32 // offset of the key in the segment
	tag      uint32 // the key's index tag
	pos      int32  // where findLocked found its slot, a hint for replace and remove; -1 if unknown
	info     uint8
	meta     uint8
	flags    uint32
	atime    uint32 // last access, Unix seconds (meta "l" and "me la="); in LFU mode Redis's LFU word (lfu.go)
	cas      uint64
	deadline int64 // Unix ms; 0 = never
	klen     uint32
	vlen     uint32
}

// cost is what the item is charged in the memory accounting.
func (e *entry) cost() int64 {
	return int64(e.klen) + int64(e.vlen) + ItemOverhead
}

func (e *entry) fetched() bool { return e.info&infoFetched != 0 }
func (e *entry) freq() uint8   { return (e.info & infoFreq) >> freqShift }

// setFreq stores an access count, saturating at maxFreq.
func (e *entry) setFreq(f uint8) {
	e.info = e.info&^infoFreq | min(f, maxFreq)<<freqShift
}

// used records a use: the access count goes up by one.
func (e *entry) used() { e.setFreq(e.freq() + 1) }

// layout is the presence bits the entry's fields need in a segment whose
// base token is base.
func (e *entry) layout(base uint64) uint8 {
	var p uint8
	if fitsCAS32(e.cas, base) {
		p |= infoCAS32
	}
	if e.deadline != 0 {
		p |= infoDeadline
	}
	if e.flags != 0 {
		p |= infoFlags
	}
	if e.meta != 0 {
		p |= infoMeta
	}
	return p
}

// fitsCAS32 reports whether cas can be stored as a difference from base.
func fitsCAS32(cas, base uint64) bool {
	return cas >= base && cas-base <= 1<<32-1
}

// size is the length of the whole record.
func (e *entry) size() uint32 {
	return e.body - e.off + e.klen + e.vlen
}

// hdrSize is the header length of a record with this layout and lengths.
func hdrSize(layout uint8, klen, vlen int) int {
	n := minHdr - 2 + uvarintLen(uint64(klen)) + uvarintLen(uint64(vlen))
	if layout&infoCAS32 == 0 {
		n += 4
	}
	if layout&infoDeadline != 0 {
		n += 8
	}
	if layout&infoFlags != 0 {
		n += 4
	}
	if layout&infoMeta != 0 {
		n++
	}
	return n
}

func uvarintLen(v uint64) int {
	return (bits.Len64(v|1) + 6) / 7
}

// encodeHeader writes e's header with the given layout to the start of b,
// for a segment whose base token is base, and returns its length. e.klen
// and e.vlen must be set; e.info takes the layout.
func encodeHeader(b []byte, e *entry, layout uint8, base uint64) int {
	e.info = e.info&^presence | layout
	b[0] = e.info
	p := putCAS(b, e, base)
	binary.LittleEndian.PutUint32(b[p:], e.atime)
	p += 4
	if e.info&infoDeadline != 0 {
		binary.LittleEndian.PutUint64(b[p:], uint64(e.deadline))
		p += 8
	}
	if e.info&infoFlags != 0 {
		binary.LittleEndian.PutUint32(b[p:], e.flags)
		p += 4
	}
	if e.info&infoMeta != 0 {
		b[p] = e.meta
		p++
	}
	p += binary.PutUvarint(b[p:], uint64(e.klen))
	p += binary.PutUvarint(b[p:], uint64(e.vlen))
	return p
}

// putCAS writes e's token in the form e.info says and returns where the
// access time goes.
func putCAS(b []byte, e *entry, base uint64) int {
	if e.info&infoCAS32 != 0 {
		binary.LittleEndian.PutUint32(b[casAt:], uint32(e.cas-base))
		return casAt + 4
	}
	binary.LittleEndian.PutUint64(b[casAt:], e.cas)
	return casAt + 8
}

// decodeHeader reads the header of the record at sg.buf[off:] into e (all
// fields but seg and tag). It trusts the bytes: segments are written only
// by this package.
func decodeHeader(sg *segment, off uint32, e *entry) {
	b := sg.buf[off:]
	info := b[0]
	e.off, e.pos = off, -1
	e.info = info
	var p int
	if info&infoCAS32 != 0 {
		e.cas = sg.baseCAS + uint64(binary.LittleEndian.Uint32(b[casAt:]))
		p = casAt + 4
	} else {
		e.cas = binary.LittleEndian.Uint64(b[casAt:])
		p = casAt + 8
	}
	e.atime = binary.LittleEndian.Uint32(b[p:])
	p += 4
	e.deadline, e.flags, e.meta = 0, 0, 0
	if info&(infoDeadline|infoFlags|infoMeta) != 0 {
		if info&infoDeadline != 0 {
			e.deadline = int64(binary.LittleEndian.Uint64(b[p:]))
			p += 8
		}
		if info&infoFlags != 0 {
			e.flags = binary.LittleEndian.Uint32(b[p:])
			p += 4
		}
		if info&infoMeta != 0 {
			e.meta = b[p]
			p++
		}
	}
	var n int
	e.klen, n = uvarint32(b[p:])
	p += n
	e.vlen, n = uvarint32(b[p:])
	p += n
	e.body = off + uint32(p)
}

// uvarint32 decodes a length from the start of b, with a fast path for the
// one-byte lengths of nearly every key and small value.
func uvarint32(b []byte) (uint32, int) {
	if c := b[0]; c < 0x80 {
		return uint32(c), 1
	}
	v, n := binary.Uvarint(b)
	return uint32(v), n
}

// fitsInPlace reports whether e's fields can be written over its record
// without changing the record's layout: the same optional fields, and a
// token that still fits the record's CAS form.
func fitsInPlace(sg *segment, e *entry) bool {
	want := e.layout(sg.baseCAS)
	have := e.info & presence
	if have&infoCAS32 == 0 {
		want &^= infoCAS32 // a long CAS holds any token
	}
	return want == have
}

// writeInPlace writes e's header over the record at sg.buf[e.off:] in the
// record's own layout: the fields that may change without moving the
// record (info, CAS, atime, a deadline already present, the meta byte
// already present) take their new values, the rest are written unchanged.
// fitsInPlace must hold.
func writeInPlace(sg *segment, e *entry) {
	encodeHeader(sg.buf[e.off:], e, e.info&presence, sg.baseCAS)
}

// atimeAt is where the access time of a record with this info byte is.
func atimeAt(info uint8) int {
	if info&infoCAS32 != 0 {
		return casAt + 4
	}
	return casAt + 8
}
