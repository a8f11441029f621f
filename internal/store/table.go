package store

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"

	"github.com/minikv/minikv/internal/offheap"
)

// table is the structure of a big hash or set: an open-addressing hash
// table over an append-only arena of entries, two slices and no Go pointer
// per element.
//
//	slots  []uint64   0 = empty, else hash32<<32 | (arena offset + 1)
//	arena  []byte     entries: | uvarint len(field) | field | uvarint len(value) | value |
//
// A slot's home is the top bits of its entry's 32-bit hash, and collisions
// go to the following slots (linear probing, deletion by backward shift,
// so no tombstones). An entry rewritten with a value of another length is
// appended again; the bytes left behind are garbage, and the arena is
// rebuilt when garbage is half of it. A set's entries have empty values.
//
// The slots and the arena come from the Store's bigMem: mapped outside
// the Go heap when large (bigmem.go). A slice the table replaces (an
// arena it grew out of, what a resize rebuilt) is retired, not freed: the
// handle's caller may still read it until its function returns, and the
// store frees it then (reclaim).
//
// Because slots are ordered by hash (an entry sits at or after its home,
// before the next empty slot), a scan can walk the table in the order of
// the 32-bit hash and resume from a hash value: that is HSCAN's and
// SSCAN's cursor, which stays meaningful when the table grows or shrinks
// between calls, as Redis's reverse-binary cursor does.
type table struct {
	seed    maphash.Seed
	mem     *bigMem
	slots   []uint64
	arena   []byte
	n       int
	garbage int
	retired [][]byte    // replaced slices, freed by reclaim
	delta   *tableDelta // durable mode: its base, and the fields changed since (delta.go)
}

const (
	minTableSlots = 16
	tableOverhead = 128 // the struct, its wrapper and its object-table slot, charged with the slices
)

func newTable(m *bigMem, seed maphash.Seed, n int) *table {
	size := minTableSlots
	for size*3 < n*4 {
		size *= 2
	}
	return &table{seed: seed, mem: m, slots: m.uint64s(size)}
}

// reclaim frees the slices the table replaced (bigmem.go).
func (t *table) reclaim() {
	for i, b := range t.retired {
		t.mem.free(b)
		t.retired[i] = nil
	}
	t.retired = t.retired[:0]
}

// free frees the table's mapped memory. A use afterwards finds nil
// slices (a panic), not freed memory.
func (t *table) free() {
	t.reclaim()
	t.mem.free(offheap.Bytes(t.slots))
	t.mem.free(t.arena)
	t.slots, t.arena, t.retired = nil, nil, nil
}

// mapped is the bytes of the table's slices that are mapped, and of those
// waiting for reclaim (checks and tests).
func (t *table) mapped() (live, retired int64) {
	live = t.mem.mappedBytes(offheap.Bytes(t.slots)) + t.mem.mappedBytes(t.arena)
	for _, b := range t.retired {
		retired += t.mem.mappedBytes(b)
	}
	return live, retired
}

func (t *table) size() int64 {
	return int64(cap(t.slots))*8 + int64(cap(t.arena)) + tableOverhead
}

func (t *table) hash32(field []byte) uint32 {
	return uint32(maphash.Bytes(t.seed, field) >> 32)
}

func (t *table) shift() uint { return uint(32 - bits.Len(uint(len(t.slots)-1))) }

func (t *table) home(h uint32) int { return int(h >> t.shift()) }

// entryAt decodes the entry at arena offset off.
func (t *table) entryAt(off int) (field, value []byte) {
	fl, n := binary.Uvarint(t.arena[off:])
	off += n
	field = t.arena[off : off+int(fl) : off+int(fl)]
	off += int(fl)
	vl, n := binary.Uvarint(t.arena[off:])
	off += n
	value = t.arena[off : off+int(vl) : off+int(vl)]
	return field, value
}

func entryLen(field, value []byte) int {
	return uvarintLen(uint64(len(field))) + len(field) + uvarintLen(uint64(len(value))) + len(value)
}

// find returns the slot index of field, or -1.
func (t *table) find(field []byte, h uint32) int {
	mask := len(t.slots) - 1
	for i := t.home(h); ; i = (i + 1) & mask {
		v := t.slots[i]
		if v == 0 {
			return -1
		}
		if uint32(v>>32) == h {
			if f, _ := t.entryAt(int(uint32(v)) - 1); string(f) == string(field) {
				return i
			}
		}
	}
}

// get returns field's value.
func (t *table) get(field []byte) ([]byte, bool) {
	i := t.find(field, t.hash32(field))
	if i < 0 {
		return nil, false
	}
	_, v := t.entryAt(int(uint32(t.slots[i])) - 1)
	return v, true
}

// appendEntry writes an entry at the arena's end and returns its offset.
// field and value may be in the arena: a replaced arena is kept until the
// call ends.
func (t *table) appendEntry(field, value []byte) int {
	off := len(t.arena)
	t.arena = t.mem.grow(t.arena, off+entryLen(field, value), &t.retired)
	t.arena = binary.AppendUvarint(t.arena, uint64(len(field)))
	t.arena = append(t.arena, field...)
	t.arena = binary.AppendUvarint(t.arena, uint64(len(value)))
	t.arena = append(t.arena, value...)
	return off
}

// set stores field's value and reports whether the field is new.
func (t *table) set(field, value []byte) bool {
	if t.delta != nil {
		t.delta.note(field)
	}
	h := t.hash32(field)
	if i := t.find(field, h); i >= 0 {
		off := int(uint32(t.slots[i])) - 1
		f, v := t.entryAt(off)
		if len(v) == len(value) {
			copy(t.arena[off+entryLen(f, v)-len(v):], value)
			return false
		}
		t.garbage += entryLen(f, v)
		t.slots[i] = uint64(h)<<32 | uint64(t.appendEntry(field, value)+1)
		t.maybeCompact()
		return false
	}
	if (t.n+1)*4 > len(t.slots)*3 {
		t.resize(len(t.slots) * 2)
	}
	t.place(uint64(h)<<32 | uint64(t.appendEntry(field, value)+1))
	t.n++
	return true
}

// place puts slot value v at the first free slot from its home.
func (t *table) place(v uint64) {
	mask := len(t.slots) - 1
	i := t.home(uint32(v >> 32))
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = v
}

// del removes field and reports whether it was there.
func (t *table) del(field []byte) bool {
	i := t.find(field, t.hash32(field))
	if i < 0 {
		return false
	}
	f, v := t.entryAt(int(uint32(t.slots[i])) - 1)
	if t.delta != nil {
		t.delta.note(f)
	}
	t.garbage += entryLen(f, v)
	t.removeSlot(i)
	t.n--
	if len(t.slots) > minTableSlots && t.n*8 < len(t.slots) {
		t.resize(len(t.slots) / 2)
	} else {
		t.maybeCompact()
	}
	return true
}

// removeSlot empties slot i and shifts back the entries of its run that
// may move closer to their homes.
func (t *table) removeSlot(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		v := t.slots[j]
		if v == 0 {
			break
		}
		// v may move to i if its home is not in (i, j].
		if home := t.home(uint32(v >> 32)); (j-home)&mask >= (j-i)&mask {
			t.slots[i] = v
			i = j
		}
	}
	t.slots[i] = 0
}

// resize rebuilds the slots at size (a power of two) and the arena without
// garbage.
func (t *table) resize(size int) {
	old, oldArena := t.slots, t.arena
	t.slots = t.mem.uint64s(size)
	live := len(t.arena) - t.garbage
	arena := t.mem.bytes(live, live*arenaRoom)
	for _, v := range old {
		if v == 0 {
			continue
		}
		f, val := t.entryAt(int(uint32(v)) - 1)
		off := len(arena)
		arena = binary.AppendUvarint(arena, uint64(len(f)))
		arena = append(arena, f...)
		arena = binary.AppendUvarint(arena, uint64(len(val)))
		arena = append(arena, val...)
		t.place(v&^(1<<32-1) | uint64(off+1))
	}
	t.arena, t.garbage = arena, 0
	t.mem.retire(offheap.Bytes(old), &t.retired)
	t.mem.retire(oldArena, &t.retired)
}

func (t *table) maybeCompact() {
	if t.garbage > 1024 && t.garbage*2 > len(t.arena) {
		t.resize(len(t.slots))
	}
}

// each calls fn for every entry, in slot order, until fn returns false.
// fn must not change the table.
func (t *table) each(fn func(field, value []byte) bool) {
	for _, v := range t.slots {
		if v != 0 {
			if f, val := t.entryAt(int(uint32(v)) - 1); !fn(f, val) {
				return
			}
		}
	}
}

// at returns the entry in slot i, if there is one (random picks).
func (t *table) at(i int) (field, value []byte, ok bool) {
	v := t.slots[i]
	if v == 0 {
		return nil, nil, false
	}
	field, value = t.entryAt(int(uint32(v)) - 1)
	return field, value, true
}

// scan calls fn for the entries whose 32-bit hash is at least cursor, home
// by home in hash order, until it has given about count of them, and
// returns the hash to resume from (0 when it went past the last home).
// Entries in the table for the whole scan are given at least once.
func (t *table) scan(cursor uint64, count int, fn func(field, value []byte)) uint64 {
	if cursor > 1<<32-1 {
		return 0
	}
	shift := t.shift()
	mask := len(t.slots) - 1
	for b := int(uint32(cursor) >> shift); b < len(t.slots); b++ {
		for i := b; ; i = (i + 1) & mask {
			v := t.slots[i]
			if v == 0 {
				break
			}
			if h := uint32(v >> 32); t.home(h) == b && uint64(h) >= cursor {
				f, val := t.entryAt(int(uint32(v)) - 1)
				fn(f, val)
				count--
			}
		}
		if count <= 0 {
			next := uint64(b+1) << shift
			if next > 1<<32-1 {
				return 0
			}
			return next
		}
	}
	return 0
}

// appendFlat appends | uvarint count | entries |, the entries as in the
// arena, without its garbage.
func (t *table) appendFlat(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(t.n))
	t.each(func(f, v []byte) bool {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
		return true
	})
	return b
}

// tableFromFlat rebuilds a table from appendFlat's bytes, which it checks.
// Its mapped memory is freed when the bytes are refused.
func tableFromFlat(m *bigMem, seed maphash.Seed, b []byte) (*table, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errFlat
	}
	b = b[k:]
	t := newTable(m, seed, int(n))
	t.arena = m.bytes(len(b), len(b)*arenaRoom)
	if !t.setFlat(b, n) {
		t.free()
		return nil, errFlat
	}
	return t, nil
}

// setFlat adds the n entries b holds, reporting false for bytes that are
// not exactly that or name a field twice.
func (t *table) setFlat(b []byte, n uint64) bool {
	for i := uint64(0); i < n; i++ {
		f, rest, ok := cutFlat(b)
		if !ok {
			return false
		}
		v, rest, ok := cutFlat(rest)
		if !ok {
			return false
		}
		b = rest
		if !t.set(f, v) {
			return false // a field twice
		}
	}
	return len(b) == 0
}

// cutFlat splits a uvarint-prefixed string off the front of b.
func cutFlat(b []byte) (s, rest []byte, ok bool) {
	l, k := binary.Uvarint(b)
	if k <= 0 || l > uint64(len(b)-k) {
		return nil, nil, false
	}
	return b[k : k+int(l) : k+int(l)], b[k+int(l):], true
}
