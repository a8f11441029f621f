package lsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"
)

// memTable holds the newest writes: an append-only arena of entries, a
// hash index of user keys for point reads, and a sorted view built when
// an iterator or the flush needs key order. An insert appends its entry
// and updates one index slot, O(1) and one or two cache misses, where a
// skiplist walked about a dozen nodes at random places in the arena (the
// memtable insert was a quarter of a durable server's CPU per SET,
// docs/durability.md "The memtable"). Order is paid for at the flush,
// once per entry, by a sort on integer key prefixes.
//
// All entries, keys and values live in one []byte allocated up front, so a
// 4 MiB memtable is one object to the garbage collector instead of a
// million, and links are 32-bit offsets.
//
// Writers are serialized by the DB's commit pipeline (only the leader of a
// commit group inserts), so an insert needs no CAS. Readers run
// concurrently without locks: an entry is written before it is published
// by an atomic store (its index slot, its newer version's link, filled),
// so a reader sees each entry either not at all or whole.
//
// Entry layout in the arena (4-byte aligned):
//
//	+-----------+-----------+----------+-----------------------+-------+
//	| keyLen(4) | valLen(4) | older(4) | key (user key+trailer)| value |
//	+-----------+-----------+----------+-----------------------+-------+
//
// older is the offset of the next older version of the same user key (0:
// none): each index slot heads a chain of versions, newest first, so a
// read at a sequence number walks down to the first version at or below
// it.
type memTable struct {
	arena []byte
	used  atomic.Uint32 // arena bytes allocated
	// filled is the end of the last entry written whole: the arena below
	// it is a sequence of complete entries, which the sorted view reads.
	filled atomic.Uint32
	logNum uint64   // the WAL that holds this memtable's writes
	wal    *walFile // that WAL, once the memtable is rotated out (closed by the flush)
	count  atomic.Int64
	// maxSeq is the largest sequence number inserted.
	maxSeq atomic.Uint64
	// limit, when not 0, is 1 + the largest sequence number of the
	// memtable that may ever be read or flushed: Resume sets it on a
	// memtable holding writes that failed (seq above it), which were never
	// acknowledged and must never be seen (readLimit).
	limit atomic.Uint64

	index atomic.Pointer[memIndex]
	keys  int // distinct user keys in the index (the writer's)
	// pending is the writer's: the entries insertBatch is prefetching.
	pending [insertAhead]pendingEntry

	viewMu sync.Mutex
	view   atomic.Pointer[memView]
}

// memIndex is an open-addressing hash table of user keys. A slot holds the
// key's 32-bit hash in its high half and the offset of its newest entry in
// its low half; 0 is an empty slot. The writer replaces the whole table
// when it grows past half full, so a reader never sees a slot move.
type memIndex struct {
	slots []atomic.Uint64
	mask  uint32
}

// memView is the memtable's entries below end, in internal-key order.
type memView struct {
	end  uint32
	offs []uint32
}

const (
	nodeHeader = 12
	memAlign   = 4
	// memMinSlots is the smallest index; a memtable's first index has a
	// slot per 128 arena bytes, about two per entry of a 100-byte value.
	memMinSlots = 64
)

var (
	errMemFull = errors.New("lsm: memtable full")
	memSeed    = maphash.MakeSeed()
)

func newMemTable(size int, logNum uint64) *memTable {
	m := &memTable{arena: make([]byte, size), logNum: logNum}
	m.used.Store(memAlign) // offset 0 means nil
	m.filled.Store(memAlign)
	n := memMinSlots
	for n < size/128 {
		n *= 2
	}
	m.index.Store(newMemIndex(n))
	return m
}

func newMemIndex(n int) *memIndex {
	return &memIndex{slots: make([]atomic.Uint64, n), mask: uint32(n - 1)}
}

func memHash(ukey []byte) uint32 { return uint32(maphash.Bytes(memSeed, ukey)) }

// entrySize is the arena bytes of an entry with an internal key of klen
// bytes and a value of vlen.
func entrySize(klen, vlen int) int {
	return (nodeHeader + klen + vlen + memAlign - 1) &^ (memAlign - 1)
}

// alloc reserves an entry; it returns 0 when the arena is full.
func (m *memTable) alloc(klen, vlen int) uint32 {
	n := entrySize(klen, vlen)
	off := m.used.Load()
	if int(off)+n > len(m.arena) {
		return 0
	}
	m.used.Store(off + uint32(n))
	binary.LittleEndian.PutUint32(m.arena[off:], uint32(klen))
	binary.LittleEndian.PutUint32(m.arena[off+4:], uint32(vlen))
	binary.LittleEndian.PutUint32(m.arena[off+8:], 0)
	return off
}

// olderPtr is the link from node to the next older version of its key.
func (m *memTable) olderPtr(node uint32) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&m.arena[node+8]))
}

func (m *memTable) nodeKey(node uint32) []byte {
	klen := binary.LittleEndian.Uint32(m.arena[node:])
	s := node + nodeHeader
	return m.arena[s : s+klen : s+klen]
}

func (m *memTable) nodeKV(node uint32) (key, val []byte) {
	klen := binary.LittleEndian.Uint32(m.arena[node:])
	vlen := binary.LittleEndian.Uint32(m.arena[node+4:])
	s := node + nodeHeader
	e := s + klen + vlen
	return m.arena[s : s+klen : s+klen], m.arena[s+klen : e : e]
}

// nodeEnd is the offset just past node's entry.
func (m *memTable) nodeEnd(node uint32) uint32 {
	klen := binary.LittleEndian.Uint32(m.arena[node:])
	vlen := binary.LittleEndian.Uint32(m.arena[node+4:])
	return node + uint32(entrySize(int(klen), int(vlen)))
}

// size reports the arena bytes in use.
func (m *memTable) size() int { return int(m.used.Load()) }

func (m *memTable) empty() bool { return m.count.Load() == 0 }

// readLimit returns the largest sequence number of m that may be read:
// every entry above it is a write that failed (setReadLimit).
func (m *memTable) readLimit() uint64 {
	if l := m.limit.Load(); l != 0 {
		return l - 1
	}
	return math.MaxUint64
}

// setReadLimit hides the entries of m above seq from every reader and
// flush, for good: they are writes that were never acknowledged.
func (m *memTable) setReadLimit(seq uint64) { m.limit.Store(seq + 1) }

// add inserts an entry. Only one goroutine may call add at a time.
func (m *memTable) add(ukey []byte, seq uint64, k kind, value []byte) error {
	return m.addHashed(memHash(ukey), ukey, seq, k, value)
}

// prefetch computes the hash of every entry of es (into its h) and starts
// loading the index slot each one goes to, then the newest entry of each
// slot already taken by a key of the same hash: what addHashed will read.
// It changes nothing; only the writer calls it.
func (m *memTable) prefetch(es []pendingEntry) {
	idx := m.index.Load()
	for i := range es {
		h := memHash(es[i].key)
		es[i].h = h
		prefetch(unsafe.Pointer(&idx.slots[h&idx.mask]))
	}
	for i := range es {
		h := es[i].h
		if s := idx.slots[h&idx.mask].Load(); s != 0 && uint32(s>>32) == h {
			prefetch(unsafe.Pointer(&m.arena[uint32(s)]))
		}
	}
}

// addHashed is add of a key whose memHash is h.
func (m *memTable) addHashed(h uint32, ukey []byte, seq uint64, k kind, value []byte) error {
	node := m.alloc(len(ukey)+trailerLen, len(value))
	if node == 0 {
		return errMemFull
	}
	kb, vb := m.nodeKV(node)
	copy(kb, ukey)
	binary.LittleEndian.PutUint64(kb[len(ukey):], makeTrailer(seq, k))
	copy(vb, value)

	idx := m.index.Load()
	for i := h & idx.mask; ; i = (i + 1) & idx.mask {
		s := idx.slots[i].Load()
		if s == 0 {
			idx.slots[i].Store(uint64(h)<<32 | uint64(node))
			m.keys++
			if m.keys*2 > len(idx.slots) {
				m.grow(idx)
			}
			break
		}
		head := uint32(s)
		if uint32(s>>32) != h || !bytes.Equal(userKey(m.nodeKey(head)), ukey) {
			continue
		}
		if seq >= seqOf(trailer(m.nodeKey(head))) {
			// The usual case: the new version is the newest.
			m.olderPtr(node).Store(head)
			idx.slots[i].Store(uint64(h)<<32 | uint64(node))
			break
		}
		// Keep the chain newest first whatever the insert order.
		x := head
		for {
			o := m.olderPtr(x).Load()
			if o == 0 || seqOf(trailer(m.nodeKey(o))) <= seq {
				m.olderPtr(node).Store(o)
				m.olderPtr(x).Store(node)
				break
			}
			x = o
		}
		break
	}
	m.filled.Store(m.nodeEnd(node))
	m.count.Add(1)
	if seq > m.maxSeq.Load() {
		m.maxSeq.Store(seq)
	}
	return nil
}

// grow replaces the index with one twice its size.
func (m *memTable) grow(old *memIndex) {
	n := newMemIndex(2 * len(old.slots))
	for i := range old.slots {
		s := old.slots[i].Load()
		if s == 0 {
			continue
		}
		for j := uint32(s>>32) & n.mask; ; j = (j + 1) & n.mask {
			if n.slots[j].Load() == 0 {
				n.slots[j].Store(s)
				break
			}
		}
	}
	m.index.Store(n)
}

// get finds the newest entry for ukey with sequence number <= seq.
//
// A reader may hold an index the writer has since replaced, or a chain
// whose head is newer than it looks: whatever it misses was inserted after
// the reader's sequence number was published, so it is above seq.
func (m *memTable) get(ukey []byte, seq uint64) (kind, []byte, bool) {
	h := memHash(ukey)
	idx := m.index.Load()
	for i := h & idx.mask; ; i = (i + 1) & idx.mask {
		s := idx.slots[i].Load()
		if s == 0 {
			return 0, nil, false
		}
		node := uint32(s)
		if uint32(s>>32) != h || !bytes.Equal(userKey(m.nodeKey(node)), ukey) {
			continue
		}
		for node != 0 {
			k, v := m.nodeKV(node)
			if t := trailer(k); seqOf(t) <= seq {
				return kindOf(t), v, true
			}
			node = m.olderPtr(node).Load()
		}
		return 0, nil, false
	}
}

// sorted returns the offsets of the memtable's entries in internal-key
// order: at least every entry written whole before the call. It sorts
// only the entries added since the last view and merges them into it, so
// iterators over a memtable still taking writes cost a sort of the new
// entries and a pass over the old ones; the flush of a full memtable sorts
// it once.
func (m *memTable) sorted() []uint32 {
	end := m.filled.Load()
	if v := m.view.Load(); v != nil && v.end >= end {
		return v.offs
	}
	m.viewMu.Lock()
	defer m.viewMu.Unlock()
	start, prev := uint32(memAlign), []uint32(nil)
	if v := m.view.Load(); v != nil {
		if v.end >= end {
			return v.offs
		}
		start, prev = v.end, v.offs
	}
	fresh := m.sortRange(start, end)
	offs := fresh
	if len(prev) > 0 {
		offs = make([]uint32, 0, len(prev)+len(fresh))
		i, j := 0, 0
		for i < len(prev) && j < len(fresh) {
			if compareInternal(m.nodeKey(fresh[j]), m.nodeKey(prev[i])) < 0 {
				offs = append(offs, fresh[j])
				j++
			} else {
				offs = append(offs, prev[i])
				i++
			}
		}
		offs = append(append(offs, prev[i:]...), fresh[j:]...)
	}
	m.view.Store(&memView{end: end, offs: offs})
	return offs
}

// sortRange returns the offsets of the entries in arena[start:end] in
// internal-key order.
func (m *memTable) sortRange(start, end uint32) []uint32 {
	var offs []uint32
	for off := start; off < end; off = m.nodeEnd(off) {
		offs = append(offs, off)
	}
	m.sortOffsets(offs)
	return offs
}

// heads returns the newest entry of every user key in the memtable, in key
// order: what a flush with no snapshot open writes, each entry's older
// versions a step down its chain. It sorts the distinct keys only, where
// the whole view would hold every version of each (a memtable under
// random overwrites holds about 1.6 entries per key). Only for a memtable
// that takes no more writes.
func (m *memTable) heads() []uint32 {
	idx := m.index.Load()
	es := make([]sortEntry, 0, m.keys)
	for i := range idx.slots {
		if s := idx.slots[i].Load(); s != 0 {
			es = append(es, sortEntry{abbr: uint64(uint32(s))})
		}
	}
	// The slots are in hash order; put the heads in arena order first, so
	// that reading their keys for the sort walks the arena forwards.
	es = radixSort(es, make([]sortEntry, len(es)))
	offs := make([]uint32, len(es))
	for i := range es {
		offs[i] = uint32(es[i].abbr)
	}
	m.sortOffsets(offs)
	return offs
}

// flushEntries returns, in internal-key order, the entries a flush writes
// while the snapshots at seqs (ascending) are open: of each user key's
// versions, the newest in each snapshot stripe (with no snapshot, the
// newest only), found newest first down the key's chain from its head.
func (m *memTable) flushEntries(seqs []uint64) []uint32 {
	heads := m.heads()
	limit := m.readLimit()
	if len(seqs) == 0 && limit >= m.maxSeq.Load() {
		return heads
	}
	out := make([]uint32, 0, len(heads))
	for _, node := range heads {
		// Versions above the read limit failed: the table gets the newest
		// version below it, or nothing of the key.
		for node != 0 && seqOf(trailer(m.nodeKey(node))) > limit {
			node = m.olderPtr(node).Load()
		}
		last := -1
		for ; node != 0; node = m.olderPtr(node).Load() {
			s := stripe(seqs, seqOf(trailer(m.nodeKey(node))))
			if s == last {
				continue
			}
			last = s
			out = append(out, node)
			if s == 0 {
				break // nothing older is in another stripe
			}
		}
	}
	return out
}

// sortOffsets puts the entries at offs in internal-key order. It sorts on
// an 8-byte prefix of each user key taken after the prefix all of them
// share (so keys like "user:000123" compare as integers), with a radix
// sort that skips the bytes no two prefixes differ in, and then compares
// whole keys only among equal prefixes.
func (m *memTable) sortOffsets(offs []uint32) {
	es := make([]sortEntry, len(offs))
	var first []byte
	cpl := 0
	for i, off := range offs {
		uk := userKey(m.nodeKey(off))
		if i == 0 {
			first, cpl = uk, len(uk)
		} else if cpl > 0 {
			n := min(cpl, len(uk))
			j := 0
			for j < n && uk[j] == first[j] {
				j++
			}
			cpl = j
		}
		es[i].off = off
	}
	for i := range es {
		uk := userKey(m.nodeKey(es[i].off))
		var b [8]byte
		if cpl < len(uk) {
			copy(b[:], uk[cpl:])
		}
		es[i].abbr = binary.BigEndian.Uint64(b[:])
	}
	es = radixSort(es, make([]sortEntry, len(es)))
	for i := 0; i < len(es); {
		j := i + 1
		for j < len(es) && es[j].abbr == es[i].abbr {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(es[i:j], func(a, b sortEntry) int {
				return compareInternal(m.nodeKey(a.off), m.nodeKey(b.off))
			})
		}
		i = j
	}
	for i := range es {
		offs[i] = es[i].off
	}
}

// sortEntry is an entry being sorted: its key's prefix and its offset.
type sortEntry struct {
	abbr uint64
	off  uint32
}

// radixSort sorts es by abbr, least significant byte first (stable), using
// tmp (as long as es) as the other buffer; it returns whichever holds the
// result. Bytes in which every abbr is the same take no pass.
func radixSort(es, tmp []sortEntry) []sortEntry {
	or, and := uint64(0), ^uint64(0)
	for i := range es {
		or |= es[i].abbr
		and &= es[i].abbr
	}
	differ := or ^ and
	src, dst := es, tmp
	for shift := uint(0); shift < 64; shift += 8 {
		if byte(differ>>shift) == 0 {
			continue
		}
		var count [256]int
		for i := range src {
			count[byte(src[i].abbr>>shift)]++
		}
		sum := 0
		for b, c := range count {
			count[b] = sum
			sum += c
		}
		for i := range src {
			b := byte(src[i].abbr >> shift)
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	return src
}

// memIter iterates over a memtable's sorted view, taken when the iterator
// is first positioned: it holds every entry visible at the sequence
// number of the iterator over it, and entries newer than that, which that
// iterator skips.
type memIter struct {
	m      *memTable
	offs   []uint32
	loaded bool
	i      int
}

func (it *memIter) load() {
	if !it.loaded {
		it.offs, it.loaded = it.m.sorted(), true
	}
}

// search returns the index of the first entry whose key is >= ikey.
func (it *memIter) search(ikey []byte) int {
	it.load()
	return sort.Search(len(it.offs), func(i int) bool {
		return compareInternal(it.m.nodeKey(it.offs[i]), ikey) >= 0
	})
}

func (it *memIter) first() bool {
	it.load()
	it.i = 0
	return it.valid()
}

func (it *memIter) seekGE(ikey []byte) bool {
	it.i = it.search(ikey)
	return it.valid()
}

func (it *memIter) next() bool {
	if it.valid() {
		it.i++
	}
	return it.valid()
}

func (it *memIter) last() bool {
	it.load()
	it.i = len(it.offs) - 1
	return it.valid()
}

// seekLT positions at the last entry whose key is < ikey.
func (it *memIter) seekLT(ikey []byte) bool {
	it.i = it.search(ikey) - 1
	return it.valid()
}

func (it *memIter) prev() bool {
	if it.valid() {
		it.i--
	}
	return it.valid()
}

func (it *memIter) valid() bool   { return it.i >= 0 && it.i < len(it.offs) }
func (it *memIter) key() []byte   { return it.m.nodeKey(it.offs[it.i]) }
func (it *memIter) value() []byte { _, v := it.m.nodeKV(it.offs[it.i]); return v }
func (it *memIter) error() error  { return nil }
func (it *memIter) close() error  { return nil }
