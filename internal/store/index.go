package store

// index maps a key's hash to the ref of its item: open addressing with
// linear probing over one []uint64, no Go pointers, so the collector never
// scans it. A slot holds the upper 32 bits of the key's hash (the tag) and
// the item's ref:
//
//	 63            32 31             0
//	+----------------+----------------+
//	|      tag       |      ref       |
//	+----------------+----------------+
//
// 0 is an empty slot (ref 0 is never used). A key's home slot is tag&mask,
// so the table grows without rehashing keys; a probe compares tags first
// and reads the key from its segment only on a tag match. Deletion shifts
// later entries of the run back (no tombstones), so a miss stops at the
// first empty slot. The table doubles past a load of 4/5.
type index struct {
	slots []uint64
	n     int
}

const minIndex = 16

// home is the slot where a tag's probe starts.
func (ix *index) home(tag uint32) int {
	return int(tag) & (len(ix.slots) - 1)
}

// insert adds ref under tag; the key must not be present.
func (ix *index) insert(tag, ref uint32) {
	if (ix.n+1)*5 > len(ix.slots)*4 {
		ix.grow()
	}
	ix.put(uint64(tag)<<32 | uint64(ref))
	ix.n++
}

func (ix *index) put(v uint64) {
	mask := len(ix.slots) - 1
	for i := ix.home(uint32(v >> 32)); ; i = (i + 1) & mask {
		if ix.slots[i] == 0 {
			ix.slots[i] = v
			return
		}
	}
}

func (ix *index) grow() {
	old := ix.slots
	ix.slots = make([]uint64, max(2*len(old), minIndex))
	for _, v := range old {
		if v != 0 {
			ix.put(v)
		}
	}
}

// remove deletes the slot holding ref, which was inserted under tag.
func (ix *index) remove(tag, ref uint32) {
	mask := len(ix.slots) - 1
	want := uint64(tag)<<32 | uint64(ref)
	i := ix.home(tag)
	for ix.slots[i] != want {
		if ix.slots[i] == 0 {
			panic("store: index lost an item")
		}
		i = (i + 1) & mask
	}
	// Shift back every later entry of the run whose home is not in (i, j].
	for j := (i + 1) & mask; ix.slots[j] != 0; j = (j + 1) & mask {
		k := ix.home(uint32(ix.slots[j] >> 32))
		if (i <= j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
			continue
		}
		ix.slots[i] = ix.slots[j]
		i = j
	}
	ix.slots[i] = 0
	ix.n--
}
