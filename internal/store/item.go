package store

import "unsafe"

// ItemOverhead is the memory one item costs beyond len(key)+len(value),
// and the amount the accounting charges for it. It is measured, not
// guessed (TestItemOverheadMatchesHeap checks it against the Go heap):
//
//	item struct                      64 B  (62 B of fields, rounded to the 64 B size class)
//	map[string]*item slot          29-57 B (24 B slot + 1 control byte at the Swiss
//	                                        table's load, which moves between 7/8 and
//	                                        7/16 as the table grows; ~40 B on average)
//	key+value allocation rounding   0-8 B  (one allocation per item, rounded up to its
//	                                        size class; more for values over 256 B)
//
// An item with a deadline also takes one pointer in its shard's expiry heap
// (about 10 B with the slice's growth slack). The real cost of an item thus
// ranges over about 100-130 B with the map's growth cycle; the constant is
// the middle, so the accounting is off by at most about ±15% per item.
const ItemOverhead = 112

// item is one stored entry. The key and the value share one allocation,
// data, which is never written after the item is built: a Get hands out
// the value without copying, and a later append, incr or set builds a new
// allocation instead. Keeping both in one block and using a bare pointer
// instead of a string and a slice header halves the allocations per write
// and keeps the struct in the 64-byte size class.
//
// Every field is guarded by the owning shard's mu.
type item struct {
	prev, next *item // LRU links; the shard's head is the most recently used
	data       *byte // key bytes followed by value bytes; nil when both are empty
	cas        uint64
	deadline   int64 // Unix ns; 0 = never
	klen, vlen uint32
	heapIdx    int32 // index in the shard's expiry heap; -1 when deadline == 0
	flags      uint32
	fetched    bool   // read by Get or GetAndTouch since it was stored
	meta       uint8  // metaStale | metaWinSent | metaBinaryKey (meta commands)
	atime      uint32 // last access, Unix seconds (meta "l" and "me la=")
}

// Bits of item.meta. They fill the padding after fetched, so the struct
// stays in the 64-byte size class and ItemOverhead is unchanged.
const (
	metaStale     = 1 << iota // invalidated by md I or ms I: served with X until rewritten
	metaWinSent               // a client has been given the recache win (W); others see Z
	metaBinaryKey             // stored with a base64 (b) key: k returns it encoded
)

// newData copies key, a and b into one fresh allocation and returns its
// first byte (nil when all three are empty).
func newData(key, a, b []byte) *byte {
	n := len(key) + len(a) + len(b)
	if n == 0 {
		return nil
	}
	buf := make([]byte, n)
	i := copy(buf, key)
	i += copy(buf[i:], a)
	copy(buf[i:], b)
	return unsafe.SliceData(buf)
}

// key returns the item's key without copying. The map uses the same
// string as its key, so the key bytes are stored once.
func (it *item) key() string {
	return unsafe.String(it.data, it.klen)
}

// value returns the item's value without copying; the caller must not
// modify it. The capacity is clipped so an append by the caller copies.
func (it *item) value() []byte {
	if it.vlen == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(it.data), it.klen)), it.vlen)
}

// cost is what the item is charged in the memory accounting.
func (it *item) cost() int64 {
	return int64(it.klen) + int64(it.vlen) + ItemOverhead
}

// snapshot returns the exported view of the item.
func (it *item) snapshot() Item {
	return Item{Value: it.value(), Flags: it.flags, CAS: it.cas, Deadline: it.deadline}
}
