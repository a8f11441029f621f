package lsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// Block format (data and index blocks):
//
//	+---------+---------+-----+-------------------------+----------+
//	| entry 0 | entry 1 | ... | restart offsets (4 B ×n) | n (4 B)  |
//	+---------+---------+-----+-------------------------+----------+
//
//	entry: shared (uvarint) | unshared (uvarint) | value length (uvarint) |
//	       key[shared:] | value
//
// All three lengths come first, so one pass decodes an entry. Keys are
// prefix-compressed against the previous key, except at restart points (every
// restartInterval entries), which store the whole key; a seek binary-searches
// the restart points and then scans at most restartInterval entries. On disk
// every block is followed by the CRC-32C of its bytes (masked).

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt reports data that failed a checksum or could not be decoded.
// The engine returns it (wrapped with the file and offset) rather than ever
// returning wrong data.
var ErrCorrupt = errors.New("lsm: corrupt data")

const blockTrailerLen = 4

// crcMask rotates and offsets a CRC so a CRC over data that embeds CRCs does
// not degenerate (the trick from LevelDB).
func crcMask(c uint32) uint32 { return (c>>15 | c<<17) + 0xa282ead8 }

func blockChecksum(b []byte) uint32 { return crcMask(crc32.Checksum(b, crcTable)) }

type blockBuilder struct {
	buf      []byte
	restarts []uint32
	interval int
	counter  int
	lastKey  []byte
	entries  int
}

func (w *blockBuilder) reset() {
	w.buf = w.buf[:0]
	w.restarts = w.restarts[:0]
	w.counter = 0
	w.lastKey = w.lastKey[:0]
	w.entries = 0
}

func (w *blockBuilder) add(key, value []byte) {
	shared := 0
	if w.counter == 0 {
		w.restarts = append(w.restarts, uint32(len(w.buf)))
	} else {
		n := min(len(key), len(w.lastKey))
		for shared < n && key[shared] == w.lastKey[shared] {
			shared++
		}
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(shared))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(key)-shared))
	w.buf = binary.AppendUvarint(w.buf, uint64(len(value)))
	w.buf = append(w.buf, key[shared:]...)
	w.buf = append(w.buf, value...)
	w.lastKey = append(w.lastKey[:0], key...)
	w.counter++
	if w.counter == w.interval {
		w.counter = 0
	}
	w.entries++
}

func (w *blockBuilder) estimatedSize() int { return len(w.buf) + 4*len(w.restarts) + 4 }

// finish appends the restart array and returns the block contents.
func (w *blockBuilder) finish() []byte {
	for _, r := range w.restarts {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, r)
	}
	return binary.LittleEndian.AppendUint32(w.buf, uint32(len(w.restarts)))
}

// blockIter walks one decoded block. The zero value is invalid; init it.
type blockIter struct {
	data     []byte // entries only, without the restart array
	restarts []byte
	nrestart int
	off      int // offset of the current entry
	next     int // offset of the next entry
	key      []byte
	val      []byte
	valid    bool
	err      error
}

func (it *blockIter) init(b []byte) error {
	it.valid = false
	it.err = nil
	if len(b) < 4 {
		return ErrCorrupt
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-4:]))
	if n == 0 || 4*n+4 > len(b) {
		return ErrCorrupt
	}
	end := len(b) - 4 - 4*n
	it.data = b[:end]
	it.restarts = b[end : len(b)-4]
	it.nrestart = n
	it.key = it.key[:0]
	return nil
}

func (it *blockIter) restart(i int) int {
	return int(binary.LittleEndian.Uint32(it.restarts[4*i:]))
}

// decodeAt decodes the entry at off, extending it.key from its current
// contents (which must be the previous key).
func (it *blockIter) decodeAt(off int) bool {
	if off >= len(it.data) {
		it.valid = false
		return false
	}
	p := it.data[off:]
	var shared, unshared, vlen uint64
	var h int
	if len(p) >= 3 && p[0]|p[1]|p[2] < 0x80 {
		// Fast path: all three lengths fit in one byte each (any key up to
		// 127 bytes with a value up to 127 bytes, and every index entry).
		shared, unshared, vlen, h = uint64(p[0]), uint64(p[1]), uint64(p[2]), 3
	} else {
		var n1, n2, n3 int
		shared, n1 = binary.Uvarint(p)
		if n1 <= 0 {
			return it.corrupt()
		}
		unshared, n2 = binary.Uvarint(p[n1:])
		if n2 <= 0 {
			return it.corrupt()
		}
		vlen, n3 = binary.Uvarint(p[n1+n2:])
		if n3 <= 0 {
			return it.corrupt()
		}
		h = n1 + n2 + n3
	}
	if shared > uint64(len(it.key)) || unshared > uint64(len(p)-h) || vlen > uint64(len(p)-h)-unshared ||
		shared+unshared < trailerLen {
		// Every key in a block is an internal key; a shorter one would
		// make the comparisons of a seek slice out of range.
		return it.corrupt()
	}
	it.key = append(it.key[:shared], p[h:h+int(unshared)]...)
	vs := h + int(unshared)
	it.val = p[vs : vs+int(vlen) : vs+int(vlen)]
	it.off = off
	it.next = off + vs + int(vlen)
	it.valid = true
	return true
}

func (it *blockIter) corrupt() bool {
	it.valid = false
	it.err = ErrCorrupt
	return false
}

// seekRestart decodes the entry at restart point i. A restart offset outside
// the entries is corruption, not the end of the block.
func (it *blockIter) seekRestart(i int) bool {
	it.key = it.key[:0]
	off := it.restart(i)
	if off >= len(it.data) {
		return it.corrupt()
	}
	return it.decodeAt(off)
}

func (it *blockIter) first() bool {
	it.key = it.key[:0]
	return it.decodeAt(0)
}

func (it *blockIter) nextEntry() bool {
	if !it.valid {
		return false
	}
	return it.decodeAt(it.next)
}

// seekGE positions at the first entry whose key is >= target under cmp.
func (it *blockIter) seekGE(target []byte, cmp func(a, b []byte) int) bool {
	// Binary search for the last restart point whose key is < target.
	lo, hi := 0, it.nrestart-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if !it.seekRestart(mid) {
			return false
		}
		if cmp(it.key, target) < 0 {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if !it.seekRestart(lo) {
		return false
	}
	for cmp(it.key, target) < 0 {
		if !it.decodeAt(it.next) {
			return false
		}
	}
	return true
}

// last positions at the block's last entry: it decodes forward from the
// last restart point, since prefix compression lets a key be read only
// after the keys before it, back to a restart point.
func (it *blockIter) last() bool {
	if !it.seekRestart(it.nrestart - 1) {
		return false
	}
	for it.next < len(it.data) {
		if !it.decodeAt(it.next) {
			return false
		}
	}
	return true
}

// prev moves to the entry before the current one. Entries link only
// forward, so it finds the last restart point before the current entry and
// decodes forward from there (at most restartInterval entries), as
// LevelDB's Block::Iter::Prev does.
func (it *blockIter) prev() bool {
	if !it.valid {
		return false
	}
	target := it.off
	if target == 0 {
		it.valid = false
		return false
	}
	// The last restart point whose offset is below the current entry.
	lo, hi := 0, it.nrestart
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if it.restart(mid) < target {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return it.corrupt() // restart 0 is offset 0, below every other entry
	}
	if !it.seekRestart(lo - 1) {
		return false
	}
	for it.next < target {
		if !it.decodeAt(it.next) {
			return false
		}
	}
	if it.next != target {
		// The restart points and the entries disagree about where the
		// current entry starts.
		return it.corrupt()
	}
	return true
}

// seekLT positions at the last entry whose key is < target under cmp.
func (it *blockIter) seekLT(target []byte, cmp func(a, b []byte) int) bool {
	if !it.seekGE(target, cmp) {
		if it.err != nil {
			return false
		}
		if !it.last() { // every key is < target
			return false
		}
	} else if !it.prev() {
		return false
	}
	if cmp(it.key, target) >= 0 {
		// Only keys out of order put an entry >= target before the
		// first one >= target.
		return it.corrupt()
	}
	return true
}

// seekUser is seekGE for the common point lookup: the first entry whose user
// key is >= ukey and, for an equal user key, whose sequence number is <= seq.
// It is seekGE written out without a comparison closure, which is the
// hottest loop of a Get.
func (it *blockIter) seekUser(ukey []byte, seq uint64) bool {
	target := makeTrailer(seq, kindMax)
	less := func(k []byte) bool { // k < (ukey, target); decodeAt saw len(k) >= trailerLen
		if c := bytes.Compare(k[:len(k)-trailerLen], ukey); c != 0 {
			return c < 0
		}
		return binary.LittleEndian.Uint64(k[len(k)-trailerLen:]) > target
	}
	lo, hi := 0, it.nrestart-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if !it.seekRestart(mid) {
			return false
		}
		if less(it.key) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if !it.seekRestart(lo) {
		return false
	}
	for {
		if !less(it.key) {
			return true
		}
		if !it.decodeAt(it.next) {
			return false
		}
	}
}
