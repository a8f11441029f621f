package store

// index maps a key's hash to where its record is: open addressing over one
// []uint64 with Robin Hood linear probing, no Go pointers, so the
// collector never scans it. A slot holds the key's tag and the record's
// location:
//
//	 63          36 35          16 15           0
//	+--------------+--------------+--------------+
//	|  tag (28 b)  | segment (20) | offset (16)  |
//	+--------------+--------------+--------------+
//
// 0 is an empty slot (a tag is never 0). The tag is the top 28 bits of the
// key's 64-bit hash; the shard came from the low bits. A tag's home slot is
// tag*len>>28 ("fastrange"), which needs no power-of-two size and depends
// on the tag alone, so the table is rebuilt at any size from its slots
// without reading a key. That lets it grow by half instead of doubling and
// keeps the load between 0.58 and 0.875; at a load near 0.5, a doubling
// table would cost 16 B per item, half the whole per-item budget.
//
// Robin Hood insertion keeps every run ordered by distance from home, so a
// miss stops as soon as it meets an entry closer to its home than the key
// would be (probe lengths stay short at high load, and misses are as cheap
// as hits); deletion shifts the rest of the run back, so there are no
// tombstones. A probe compares tags and reads a record only on a tag
// match: a lookup is one slot (or a few on one cache line) and then the
// record, which holds the key and all the metadata.
type index struct {
	slots []uint64
	n     int
}

const (
	offBits  = 16 // maxSegment is 1<<offBits
	segBits  = 20 // segments per shard: 64 GiB of full segments
	tagBits  = 64 - segBits - offBits
	tagShift = segBits + offBits
	maxSegs  = 1 << segBits

	minIndex = 16
	// The table grows by half once it is more than maxLoadNum/maxLoadDen full.
	maxLoadNum, maxLoadDen = 7, 8
)

// tagOf is the index tag of a key's hash; never 0.
func tagOf(h uint64) uint32 {
	return uint32(h>>tagShift) | 1
}

// loc packs a record's location.
func loc(seg, off uint32) uint64 { return uint64(seg)<<offBits | uint64(off) }

func slotOf(tag uint32, l uint64) uint64 { return uint64(tag)<<tagShift | l }

func slotTag(v uint64) uint32 { return uint32(v >> tagShift) }

func slotSeg(v uint64) uint32 { return uint32(v>>offBits) & (maxSegs - 1) }

func slotOff(v uint64) uint32 { return uint32(v) & (1<<offBits - 1) }

// home is the slot where a tag's probe starts.
func (ix *index) home(tag uint32) int {
	return int(uint64(tag) * uint64(len(ix.slots)) >> tagBits)
}

// dist is how far slot i is from the home of the entry v in it.
func (ix *index) dist(i int, v uint64) int {
	d := i - ix.home(slotTag(v))
	if d < 0 {
		d += len(ix.slots)
	}
	return d
}

func (ix *index) next(i int) int {
	if i++; i == len(ix.slots) {
		return 0
	}
	return i
}

// insert adds a slot; its location must not be in the index.
func (ix *index) insert(v uint64) {
	if (ix.n+1)*maxLoadDen > len(ix.slots)*maxLoadNum {
		ix.grow()
	}
	ix.put(v)
	ix.n++
}

// put places v, displacing entries that are closer to their homes.
func (ix *index) put(v uint64) {
	i, d := ix.home(slotTag(v)), 0
	for {
		cur := ix.slots[i]
		if cur == 0 {
			ix.slots[i] = v
			return
		}
		if cd := ix.dist(i, cur); cd < d {
			ix.slots[i], v, d = v, cur, cd
		}
		i, d = ix.next(i), d+1
	}
}

func (ix *index) grow() {
	old := ix.slots
	ix.slots = make([]uint64, max(len(old)+len(old)/2, minIndex))
	for _, v := range old {
		if v != 0 {
			ix.put(v)
		}
	}
}

// where returns the position of slot v, which must be in the index. hint
// is where a lookup found it (or -1): right unless the table has changed
// since, which a write that evicted may have done.
func (ix *index) where(v uint64, hint int32) int {
	if hint >= 0 && int(hint) < len(ix.slots) && ix.slots[hint] == v {
		return int(hint)
	}
	for i := ix.home(slotTag(v)); ; i = ix.next(i) {
		switch ix.slots[i] {
		case v:
			return i
		case 0:
			panic("store: index lost a record")
		}
	}
}

// replace points the slot of a moved record at its new location.
func (ix *index) replace(tag uint32, from, to uint64, hint int32) {
	ix.slots[ix.where(slotOf(tag, from), hint)] = slotOf(tag, to)
}

// remove deletes slot v and shifts the rest of its run back.
func (ix *index) remove(v uint64, hint int32) {
	i := ix.where(v, hint)
	for j := ix.next(i); ; j = ix.next(j) {
		w := ix.slots[j]
		if w == 0 || ix.dist(j, w) == 0 {
			break
		}
		ix.slots[i] = w
		i = j
	}
	ix.slots[i] = 0
	ix.n--
}
