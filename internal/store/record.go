package store

import (
	"encoding/binary"
	"math/bits"
)

// ItemOverhead is the memory one item is charged beyond
// len(key)+len(value). It is the measured cost of the layout below
// (TestItemOverheadMatchesHeap checks charge >= measured >= 70% of charge):
//
//	record header                  15 B  (info, CAS, access time, two one-byte
//	                                      lengths; +8 with a deadline, +4 with
//	                                      flags, +1 with meta bits, +1-4 for
//	                                      longer lengths)
//	index slot                   9-12 B  (8 B at a load between 0.58 and 0.875)
//	segment slack                 0-4 B  (the unfilled tail of each shard's
//	                                      open segment, spread over its items)
//
// which comes to 26-32 B for an item without a deadline and 34-40 B with
// one. The charge covers the case with a deadline, so MemoryLimit bounds the
// real footprint whichever items are stored.
//
// Dead records (overwritten, deleted or evicted values) stay in their
// segment until compaction or the eviction walk reaches them; that slack is
// proportional to the data, not to the item count, so it is not in the
// constant.
const ItemOverhead = 38

// A record is an item: its metadata, key and value, appended to a segment.
// The header is variable-length, so fields that are zero cost nothing:
//
//	+------+---------+-----------+------------+---------+--------+------+------+-----+-------+
//	| info | CAS     | atime     | [deadline] | [flags] | [meta] | klen | vlen | key | value |
//	| 1 B  | 8 B LE  | 4 B LE, s | 8 B LE, ns | 4 B LE  | 1 B    | uvarint     |     |       |
//	+------+---------+-----------+------------+---------+--------+------+------+-----+-------+
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
//	         eviction walk passes the record (see evict.go)
//
// Only the header is ever written after a record is built (info, CAS,
// atime, a deadline that stays present), under the shard lock; key and
// value bytes never change, so a value handed out without the lock stays
// valid. A change that adds or removes an optional field rewrites the
// record into the open segment.

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

	// presence is the part of the info byte that fixes the header's layout.
	presence = infoDeadline | infoFlags | infoMeta
)

// Bits of the meta byte.
const (
	metaStale     = 1 << iota // invalidated by md I or ms I: served with X until rewritten
	metaWinSent               // a client has been given the recache win (W); others see Z
	metaBinaryKey             // stored with a base64 (b) key: k returns it encoded
)

// Fixed offsets in the header.
const (
	casAt   = 1
	atimeAt = 9
	optAt   = 13 // the first optional field
	minHdr  = optAt + 2
)

// entry is a record's header decoded, plus where the record is. Code under
// the shard lock reads and changes an entry and writes it back with
// commitLocked; an entry is only valid until the lock is released or a
// record is moved (eviction walks and compaction move records).
type entry struct {
	seg, off uint32 // the record: segment number and offset of its header
	body     uint32 // offset of the key in the segment
	tag      uint32 // the key's index tag
	info     uint8
	meta     uint8
	flags    uint32
	atime    uint32 // last access, Unix seconds (meta "l" and "me la=")
	cas      uint64
	deadline int64 // Unix ns; 0 = never
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

// layout is the presence bits the entry's fields need.
func (e *entry) layout() uint8 {
	var p uint8
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

// size is the length of the whole record.
func (e *entry) size() uint32 {
	return e.body - e.off + e.klen + e.vlen
}

// hdrSize is the header length of a record with this layout and lengths.
func hdrSize(layout uint8, klen, vlen int) int {
	n := minHdr - 2 + uvarintLen(uint64(klen)) + uvarintLen(uint64(vlen))
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

// encodeHeader writes e's header, with the layout e's fields need, to the
// start of b and returns its length. e.klen and e.vlen must be set.
func encodeHeader(b []byte, e *entry) int {
	e.info = e.info&^presence | e.layout()
	b[0] = e.info
	binary.LittleEndian.PutUint64(b[casAt:], e.cas)
	binary.LittleEndian.PutUint32(b[atimeAt:], e.atime)
	p := optAt
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

// decodeHeader reads the header of the record at buf[off:] into e (all
// fields but tag). It trusts the bytes: segments are written only by this
// package.
func decodeHeader(buf []byte, off uint32, e *entry) {
	b := buf[off:]
	info := b[0]
	e.off = off
	e.info = info
	e.cas = binary.LittleEndian.Uint64(b[casAt:])
	e.atime = binary.LittleEndian.Uint32(b[atimeAt:])
	p := optAt
	e.deadline, e.flags, e.meta = 0, 0, 0
	if info&presence != 0 {
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
	if c := b[p]; c < 0x80 {
		e.klen = uint32(c)
		p++
	} else {
		v, n := binary.Uvarint(b[p:])
		e.klen = uint32(v)
		p += n
	}
	if c := b[p]; c < 0x80 {
		e.vlen = uint32(c)
		p++
	} else {
		v, n := binary.Uvarint(b[p:])
		e.vlen = uint32(v)
		p += n
	}
	e.body = off + uint32(p)
}

// writeInPlace writes the header fields that may change without moving
// the record (info, CAS, atime, a deadline already present, the meta byte
// already present) to the record at buf[e.off:]. The layout must be the
// one the record was built with.
func writeInPlace(buf []byte, e *entry) {
	b := buf[e.off:]
	b[0] = e.info
	binary.LittleEndian.PutUint64(b[casAt:], e.cas)
	binary.LittleEndian.PutUint32(b[atimeAt:], e.atime)
	p := optAt
	if e.info&infoDeadline != 0 {
		binary.LittleEndian.PutUint64(b[p:], uint64(e.deadline))
		p += 8
	}
	if e.info&infoFlags != 0 {
		p += 4
	}
	if e.info&infoMeta != 0 {
		b[p] = e.meta
	}
}
