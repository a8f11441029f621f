package lsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"unsafe"
)

// memTable is an arena skiplist of internal keys. All nodes, keys and values
// live in one []byte allocated up front, so a 4 MiB memtable is one object to
// the garbage collector instead of a million, and links are 32-bit offsets.
//
// Writers are serialized by the DB's commit pipeline (only the leader of a
// commit group inserts), so an insert needs no CAS: it links a node's tower
// first and then publishes it with atomic stores from the bottom level up.
// Readers run concurrently without locks and see each node either not at all
// or fully built.
//
// Node layout in the arena (4-byte aligned):
//
//	+-----------+-----------+----------+----------------------+-----+-------+
//	| keyLen(4) | valLen(4) | height(4)| next[height] (4 each)| key | value |
//	+-----------+-----------+----------+----------------------+-----+-------+
type memTable struct {
	arena  []byte
	used   atomic.Uint32
	head   uint32
	height atomic.Int32
	rng    *rand.PCG
	logNum uint64   // the WAL that holds this memtable's writes
	wal    *walFile // that WAL, once the memtable is rotated out (closed by the flush)
	count  atomic.Int64
	// maxSeq is the largest sequence number inserted.
	maxSeq atomic.Uint64
}

const (
	maxHeight     = 20
	nodeHeader    = 12
	memAlign      = 4
	pBranchInvert = 4 // each level holds 1/4 of the nodes of the level below
)

var errMemFull = errors.New("lsm: memtable full")

func newMemTable(size int, logNum uint64) *memTable {
	m := &memTable{arena: make([]byte, size), logNum: logNum, rng: rand.NewPCG(uint64(logNum), 0x5bd1e995)}
	m.used.Store(memAlign) // offset 0 means nil
	m.head = m.alloc(maxHeight, 0, 0)
	m.height.Store(1)
	return m
}

// alloc reserves a node; it returns 0 when the arena is full.
func (m *memTable) alloc(height, klen, vlen int) uint32 {
	n := nodeHeader + 4*height + klen + vlen
	n = (n + memAlign - 1) &^ (memAlign - 1)
	off := m.used.Load()
	if int(off)+n > len(m.arena) {
		return 0
	}
	m.used.Store(off + uint32(n))
	binary.LittleEndian.PutUint32(m.arena[off:], uint32(klen))
	binary.LittleEndian.PutUint32(m.arena[off+4:], uint32(vlen))
	binary.LittleEndian.PutUint32(m.arena[off+8:], uint32(height))
	return off
}

func (m *memTable) nextPtr(node uint32, level int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&m.arena[node+nodeHeader+4*uint32(level)]))
}

func (m *memTable) nodeKey(node uint32) []byte {
	klen := binary.LittleEndian.Uint32(m.arena[node:])
	h := binary.LittleEndian.Uint32(m.arena[node+8:])
	s := node + nodeHeader + 4*h
	return m.arena[s : s+klen : s+klen]
}

func (m *memTable) nodeKV(node uint32) (key, val []byte) {
	klen := binary.LittleEndian.Uint32(m.arena[node:])
	vlen := binary.LittleEndian.Uint32(m.arena[node+4:])
	h := binary.LittleEndian.Uint32(m.arena[node+8:])
	s := node + nodeHeader + 4*h
	e := s + klen + vlen
	return m.arena[s : s+klen : s+klen], m.arena[s+klen : e : e]
}

// size reports the arena bytes in use.
func (m *memTable) size() int { return int(m.used.Load()) }

func (m *memTable) empty() bool { return m.count.Load() == 0 }

func (m *memTable) randomHeight() int {
	h := 1
	r := m.rng.Uint64()
	for h < maxHeight && r&(pBranchInvert-1) == 0 {
		h++
		r >>= 2
	}
	return h
}

// add inserts an entry. Only one goroutine may call add at a time.
func (m *memTable) add(ukey []byte, seq uint64, k kind, value []byte) error {
	height := m.randomHeight()
	node := m.alloc(height, len(ukey)+trailerLen, len(value))
	if node == 0 {
		return errMemFull
	}
	kb, vb := m.nodeKV(node)
	copy(kb, ukey)
	binary.LittleEndian.PutUint64(kb[len(ukey):], makeTrailer(seq, k))
	copy(vb, value)

	var prev [maxHeight]uint32
	x := m.head
	for level := int(m.height.Load()) - 1; level >= 0; level-- {
		for {
			nx := m.nextPtr(x, level).Load()
			if nx == 0 || compareInternal(m.nodeKey(nx), kb) >= 0 {
				break
			}
			x = nx
		}
		prev[level] = x
	}
	if cur := int(m.height.Load()); height > cur {
		for level := cur; level < height; level++ {
			prev[level] = m.head
		}
		m.height.Store(int32(height))
	}
	for level := 0; level < height; level++ {
		m.nextPtr(node, level).Store(m.nextPtr(prev[level], level).Load())
		m.nextPtr(prev[level], level).Store(node)
	}
	m.count.Add(1)
	if seq > m.maxSeq.Load() {
		m.maxSeq.Store(seq)
	}
	return nil
}

// seekUser returns the first node whose user key is >= ukey with sequence
// number <= seq (0 if none).
//
// It returns the very node the level-0 walk compared and stopped at, never
// a fresh load of x's successor: the leader may link a new node right after
// x between that compare and a reload, and that node sorts before the
// target (a smaller user key new to this memtable, or ukey itself with a
// sequence number above seq that is not yet visible). Returning it made Get
// miss the key in this memtable and fall through to an older value in an
// older memtable or table, or to nothing at all.
func (m *memTable) seekUser(ukey []byte, seq uint64) uint32 {
	target := makeTrailer(seq, kindMax)
	x := m.head
	var nx uint32
	for level := int(m.height.Load()) - 1; level >= 0; level-- {
		for {
			nx = m.nextPtr(x, level).Load()
			if nx == 0 {
				break
			}
			k := m.nodeKey(nx)
			c := bytes.Compare(userKey(k), ukey)
			if c > 0 || (c == 0 && trailer(k) <= target) {
				break
			}
			x = nx
		}
	}
	return nx
}

// get finds the newest entry for ukey with sequence number <= seq.
func (m *memTable) get(ukey []byte, seq uint64) (kind, []byte, bool) {
	n := m.seekUser(ukey, seq)
	if n == 0 {
		return 0, nil, false
	}
	k, v := m.nodeKV(n)
	if !bytes.Equal(userKey(k), ukey) {
		return 0, nil, false
	}
	return kindOf(trailer(k)), v, true
}

// memIter iterates over a memtable.
type memIter struct {
	m    *memTable
	node uint32
}

func (it *memIter) first() bool {
	it.node = it.m.nextPtr(it.m.head, 0).Load()
	return it.node != 0
}

func (it *memIter) seekGE(ikey []byte) bool {
	// As in seekUser, keep the node the level-0 walk compared: a reload of
	// x's successor could be a node linked since, which sorts below ikey.
	x := it.m.head
	var nx uint32
	for level := int(it.m.height.Load()) - 1; level >= 0; level-- {
		for {
			nx = it.m.nextPtr(x, level).Load()
			if nx == 0 || compareInternal(it.m.nodeKey(nx), ikey) >= 0 {
				break
			}
			x = nx
		}
	}
	it.node = nx
	return it.node != 0
}

func (it *memIter) next() bool {
	if it.node != 0 {
		it.node = it.m.nextPtr(it.node, 0).Load()
	}
	return it.node != 0
}

// last positions at the last node. Nodes have no back pointers (an insert
// links only forward, without CAS), so the reverse moves are searches from
// the head: O(log n) each, as in LevelDB's skiplist.
func (it *memIter) last() bool {
	x := it.m.head
	for level := int(it.m.height.Load()) - 1; level >= 0; level-- {
		for {
			nx := it.m.nextPtr(x, level).Load()
			if nx == 0 {
				break
			}
			x = nx
		}
	}
	it.node = x
	if x == it.m.head {
		it.node = 0
	}
	return it.node != 0
}

// seekLT positions at the last node whose key is < ikey. A node linked
// while the search runs may be missed; its sequence number is above any
// reader's (a write becomes visible only after its insert returns), so no
// reader loses a key it may see.
func (it *memIter) seekLT(ikey []byte) bool {
	x := it.m.head
	for level := int(it.m.height.Load()) - 1; level >= 0; level-- {
		for {
			nx := it.m.nextPtr(x, level).Load()
			if nx == 0 || compareInternal(it.m.nodeKey(nx), ikey) >= 0 {
				break
			}
			x = nx
		}
	}
	it.node = x
	if x == it.m.head {
		it.node = 0
	}
	return it.node != 0
}

func (it *memIter) prev() bool {
	if it.node == 0 {
		return false
	}
	return it.seekLT(it.m.nodeKey(it.node))
}

func (it *memIter) valid() bool   { return it.node != 0 }
func (it *memIter) key() []byte   { return it.m.nodeKey(it.node) }
func (it *memIter) value() []byte { _, v := it.m.nodeKV(it.node); return v }
func (it *memIter) error() error  { return nil }
func (it *memIter) close() error  { return nil }
