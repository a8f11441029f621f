// Package hll is Redis's HyperLogLog string format (hyperloglog.c in
// Redis 7.0), byte for byte, so that a value written by PFADD in Redis
// can be counted by MiniKV and the other way round: the 16-byte header
// ("HYLL", the encoding byte, three unused bytes, the cached cardinality
// as 8 little-endian bytes whose top bit marks it stale), 16384 6-bit
// registers either dense (12288 bytes, packed from the low bit up) or
// sparse (ZERO, XZERO and VAL run-length opcodes), MurmurHash64A with
// Redis's seed, Ertl's estimator, and the exact sequence of sparse edits
// Redis makes (so that a sparse value GET from either server is the
// same bytes). Corrupt values never panic: the functions report them as
// Redis does.
//
// The functions work on a caller-owned byte slice holding the whole
// value; those that can grow it return the new slice.
package hll

import (
	"encoding/binary"
	"math"
	"math/bits"
)

const (
	// P is the number of hash bits that pick a register.
	P = 14
	// Registers is the number of registers, 2^P.
	Registers = 1 << P
	q         = 64 - P // the bits left for the run of zeroes
	// HeaderSize is the size of the header: magic, encoding, 3 unused
	// bytes, the cached cardinality.
	HeaderSize = 16
	// DenseSize is the exact length of a dense value.
	DenseSize = HeaderSize + (Registers*6+7)/8
	// SparseMaxBytes is Redis's hll-sparse-max-bytes default: a sparse
	// value that would grow past it is made dense.
	SparseMaxBytes = 3000

	// Encodings, the header's fifth byte.
	Dense  = 0
	Sparse = 1

	regMax = 63

	valMaxValue = 32
	valMaxLen   = 4
	zeroMaxLen  = 64
	xzeroMaxLen = 16384

	seed = 0xadc83b19
)

// Valid reports whether b is a value Redis accepts as a HyperLogLog
// (isHLLObjectOrReply): at least a header, the "HYLL" magic, a known
// encoding, and exactly DenseSize bytes when dense. A sparse value may
// still be corrupt beyond that; the operations below find it.
func Valid(b []byte) bool {
	if len(b) < HeaderSize || string(b[:4]) != "HYLL" || b[4] > Sparse {
		return false
	}
	return b[4] != Dense || len(b) == DenseSize
}

// IsDense reports whether the valid value b is dense.
func IsDense(b []byte) bool { return b[4] == Dense }

// AppendNew appends an empty sparse value (what PFADD creates): the
// header and one XZERO opcode covering every register.
func AppendNew(dst []byte) []byte {
	dst = append(dst, 'H', 'Y', 'L', 'L', Sparse, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	for n := Registers; n > 0; n -= min(n, xzeroMaxLen) {
		l := min(n, xzeroMaxLen) - 1
		dst = append(dst, byte(l>>8)|0x40, byte(l))
	}
	return dst
}

// Cached returns the cached cardinality, if it is current.
func Cached(b []byte) (uint64, bool) {
	if b[15]&0x80 != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[8:16]), true
}

// SetCached stores card as the cached cardinality.
func SetCached(b []byte, card uint64) { binary.LittleEndian.PutUint64(b[8:16], card) }

// Invalidate marks the cached cardinality stale (only its top bit: the
// other bytes keep the old figure, as in Redis).
func Invalidate(b []byte) { b[15] |= 0x80 }

// murmur64A is MurmurHash64A, Redis's endian-neutral variant.
func murmur64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ uint64(len(key))*m
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// PatLen returns the register an element hashes to and the length of
// the 00..1 pattern that follows (hllPatLen), 1..q+1.
func PatLen(ele []byte) (index int, count uint8) {
	h := murmur64A(ele, seed)
	index = int(h & (Registers - 1))
	h >>= P
	h |= 1 << q
	return index, uint8(bits.TrailingZeros64(h) + 1)
}

// at reads b[i], or past the end the byte after the value: Redis's
// strings carry a byte after their last one (a NUL, unless an edit of a
// corrupt value left something there), which an XZERO opcode cut off at
// the end reads. A value read from the store has a NUL there; a working
// buffer (Prepare) keeps that byte in its capacity, as Redis does.
func at(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// Prepare makes b a working buffer for Add and Set: room for the byte
// after the value, set to NUL as in a fresh Redis string.
func Prepare(b []byte) []byte {
	if cap(b) < len(b)+4 {
		nb := make([]byte, len(b), len(b)+64)
		copy(nb, b)
		b = nb
	}
	b[:len(b)+1][len(b)] = 0
	return b
}

// after is the byte after the value in a working buffer.
func after(b []byte) byte { return b[:len(b)+1][len(b)] }

// Sparse opcodes.
func isZero(op byte) bool  { return op&0xc0 == 0 }
func isXZero(op byte) bool { return op&0xc0 == 0x40 }
func isVal(op byte) bool   { return op&0x80 != 0 }
func zeroLen(op byte) int  { return int(op&0x3f) + 1 }
func xzeroLen(b []byte, p int, next byte) int {
	if p+1 < len(b) {
		next = b[p+1]
	}
	return (int(b[p]&0x3f)<<8 | int(next)) + 1
}
func valValue(op byte) int { return int(op>>2&0x1f) + 1 }
func valLen(op byte) int   { return int(op&3) + 1 }
func valOp(v, n int) byte  { return byte((v-1)<<2|(n-1)) | 0x80 }

// denseGet and denseSet read and write register i of a dense value's
// registers r.
func denseGet(r []byte, i int) uint8 {
	byt, fb := i*6/8, uint(i*6&7)
	b0, b1 := uint(r[byt]), uint(at(r, byt+1))
	return uint8((b0>>fb | b1<<(8-fb)) & regMax)
}

func denseSet(r []byte, i int, v uint8) {
	byt, fb := i*6/8, uint(i*6&7)
	r[byt] &^= byte(regMax << fb)
	r[byt] |= byte(uint(v) << fb)
	if byt+1 < len(r) {
		r[byt+1] &^= byte(regMax >> (8 - fb))
		r[byt+1] |= byte(uint(v) >> (8 - fb))
	}
}

// ToDense converts a sparse value to dense (hllSparseToDense), appending
// the result to dst; the header, cached cardinality included, is kept.
// It fails when the opcodes do not cover exactly Registers registers.
// A dense value is appended unchanged.
func ToDense(dst, b []byte) ([]byte, bool) { return toDense(dst, b, 0) }

// toDense is ToDense with the byte after the value given.
func toDense(dst, b []byte, next byte) ([]byte, bool) {
	if b[4] == Dense {
		return append(dst, b...), true
	}
	start := len(dst)
	dst = append(dst, b[:HeaderSize]...)
	dst[start+4] = Dense
	dst = append(dst, make([]byte, DenseSize-HeaderSize)...)
	regs := dst[start+HeaderSize:]
	idx := 0
	for p := HeaderSize; p < len(b); {
		switch op := b[p]; {
		case isZero(op):
			idx += zeroLen(op)
			p++
		case isXZero(op):
			idx += xzeroLen(b, p, next)
			p += 2
		default:
			n, v := valLen(op), valValue(op)
			if n+idx > Registers {
				p = len(b)
				continue
			}
			for ; n > 0; n-- {
				denseSet(regs, idx, uint8(v))
				idx++
			}
			p++
		}
	}
	if idx != Registers {
		return dst[:start], false
	}
	return dst, true
}

// Add adds one element to the valid value b, a working buffer (Prepare),
// as hllAdd does: 1 when a register grew, 0 when none did, -1 when b is
// a corrupt sparse value. b may be replaced (a sparse value grows, or
// turns dense past maxSparse bytes).
func Add(b, ele []byte, maxSparse int) ([]byte, int) {
	index, count := PatLen(ele)
	return Set(b, index, count, maxSparse)
}

// Set raises register index to count if it is lower (hllDenseSet,
// hllSparseSet), with Add's results.
func Set(b []byte, index int, count uint8, maxSparse int) ([]byte, int) {
	if b[4] == Dense {
		r := b[HeaderSize:]
		if count > denseGet(r, index) {
			denseSet(r, index, count)
			return b, 1
		}
		return b, 0
	}
	if count > valMaxValue {
		return promote(b, index, count)
	}
	// Redis makes room for 3 more bytes first (sdsMakeRoomFor).
	if cap(b) < len(b)+4 {
		h := byte(0)
		if cap(b) > len(b) {
			h = after(b)
		}
		nb := make([]byte, len(b)+1, 2*len(b)+4)
		copy(nb, b)
		nb[len(b)] = h
		b = nb[:len(b)]
	}
	hidden := after(b)
	// Step 1: find the opcode covering index.
	p, end := HeaderSize, len(b)
	first, span, prev := 0, 0, -1
	for p < end {
		oplen := 1
		switch op := b[p]; {
		case isZero(op):
			span = zeroLen(op)
		case isVal(op):
			span = valLen(op)
		default:
			span = xzeroLen(b, p, hidden)
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return b, -1
	}
	next := p + 1
	if isXZero(b[p]) {
		next = p + 2
	}
	if next >= end {
		next = -1
	}
	op := b[p]
	var runlen int
	switch {
	case isZero(op):
		runlen = zeroLen(op)
	case isXZero(op):
		runlen = xzeroLen(b, p, hidden)
	default:
		runlen = valLen(op)
	}
	// Step 2: the cases that change the opcode in place.
	switch {
	case isVal(op) && valValue(op) >= int(count):
		return b, 0
	case isVal(op) && runlen == 1, isZero(op) && runlen == 1:
		b[p] = valOp(int(count), 1)
		return mergeVals(b, prev), 1
	}
	// The general case: split the opcode into up to three.
	var seq [5]byte
	n := 0
	last := first + span - 1
	putZeros := func(l int) {
		if l > zeroMaxLen {
			seq[n], seq[n+1] = byte((l-1)>>8)|0x40, byte(l-1)
			n += 2
		} else {
			seq[n] = byte(l - 1)
			n++
		}
	}
	if !isVal(op) {
		if index != first {
			putZeros(index - first)
		}
		seq[n] = valOp(int(count), 1)
		n++
		if index != last {
			putZeros(last - index)
		}
	} else {
		cur := valValue(op)
		if index != first {
			seq[n] = valOp(cur, index-first)
			n++
		}
		seq[n] = valOp(int(count), 1)
		n++
		if index != last {
			seq[n] = valOp(cur, last-index)
			n++
		}
	}
	// Step 3: put the new sequence in place of the old opcode.
	oldlen := 1
	if isXZero(op) {
		oldlen = 2
	}
	delta := n - oldlen
	if delta > 0 && len(b)+delta > maxSparse {
		return promote(b, index, count)
	}
	// As Redis: move what follows, set the new length (a NUL after it),
	// then copy the sequence in. A truncated XZERO as the last opcode
	// claims the byte after the value: the sequence's last byte lands
	// there, past the new length.
	full := b[:cap(b)]
	if delta != 0 && next >= 0 {
		copy(full[next+delta:], full[next:end])
	}
	newLen := len(b) + delta
	b = full[:newLen]
	full[newLen] = 0
	copy(full[p:], seq[:n])
	return mergeVals(b, prev), 1
}

// mergeVals is Step 4 of hllSparseSet: adjacent VAL opcodes of the same
// value are merged, scanning up to five opcodes from prev; the cached
// cardinality is then marked stale.
func mergeVals(b []byte, prev int) []byte {
	p := HeaderSize
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < len(b) && scan > 0; scan-- {
		switch op := b[p]; {
		case isXZero(op):
			p += 2
			continue
		case isZero(op):
			p++
			continue
		}
		if p+1 < len(b) && isVal(b[p+1]) {
			v1, v2 := valValue(b[p]), valValue(b[p+1])
			if l := valLen(b[p]) + valLen(b[p+1]); v1 == v2 && l <= valMaxLen {
				// memmove(p, p+1, end-p) takes the byte after the
				// value along; the new length's NUL then covers it.
				b[p+1] = valOp(v1, l)
				end := len(b)
				full := b[:end+1]
				copy(full[p:], full[p+1:])
				b = full[:end-1]
				full[end-1] = 0
				continue
			}
		}
		p++
	}
	Invalidate(b)
	return b
}

// promote makes the sparse value b dense and sets the register there.
func promote(b []byte, index int, count uint8) ([]byte, int) {
	d, ok := toDense(make([]byte, 0, DenseSize+1), b, after(b))
	if !ok {
		return b, -1
	}
	denseSet(d[HeaderSize:], index, count)
	return d, 1
}

// Merge raises each of max's registers to b's (hllMerge). b must be
// Valid; a corrupt sparse value returns false. As in Redis 7.2, a VAL
// opcode that runs past the last register ends the walk, and the value is
// corrupt only if the registers walked so far are not exactly all of them
// (Redis 7.0 refused any such opcode): opcodes past a full set of
// registers are ignored.
func Merge(max *[Registers]uint8, b []byte) bool {
	if b[4] == Dense {
		r := b[HeaderSize:]
		for i := range max {
			if v := denseGet(r, i); v > max[i] {
				max[i] = v
			}
		}
		return true
	}
	i := 0
	for p := HeaderSize; p < len(b); {
		switch op := b[p]; {
		case isZero(op):
			i += zeroLen(op)
			p++
		case isXZero(op):
			i += xzeroLen(b, p, 0)
			p += 2
		default:
			n, v := valLen(op), uint8(valValue(op))
			if n+i > Registers {
				return i == Registers
			}
			for ; n > 0; n-- {
				if v > max[i] {
					max[i] = v
				}
				i++
			}
			p++
		}
	}
	return i == Registers
}

// Count computes the cardinality of the valid value b (hllCount),
// ignoring the cache; ok is false for a corrupt sparse value.
func Count(b []byte) (card uint64, ok bool) {
	var histo [64]int
	if b[4] == Dense {
		r := b[HeaderSize:]
		for i := range Registers {
			histo[denseGet(r, i)]++
		}
		return estimate(&histo), true
	}
	idx := 0
	for p := HeaderSize; p < len(b); {
		switch op := b[p]; {
		case isZero(op):
			n := zeroLen(op)
			idx += n
			histo[0] += n
			p++
		case isXZero(op):
			n := xzeroLen(b, p, 0)
			idx += n
			histo[0] += n
			p += 2
		default:
			n := valLen(op)
			idx += n
			histo[valValue(op)] += n
			p++
		}
	}
	return estimate(&histo), idx == Registers
}

// CountRegisters is the cardinality of one register per byte (PFCOUNT of
// several keys, after Merge).
func CountRegisters(max *[Registers]uint8) uint64 {
	var histo [64]int
	for _, v := range max {
		histo[v&63]++
	}
	return estimate(&histo)
}

// estimate is Ertl's estimator over the register histogram, in the same
// double operations as Redis (explicit conversions keep Go from fusing a
// multiply and an add).
func estimate(histo *[64]int) uint64 {
	m := float64(Registers)
	z := float64(m * tau((m-float64(histo[q+1]))/m))
	for j := q; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += float64(m * sigma(float64(histo[0])/m))
	const alphaInf = 0.721347520444481703680 // 0.5/ln(2)
	alpha := float64(alphaInf)
	e := float64(float64(alpha*m)*m) / z
	// llroundl, then the double to uint64 conversion of x86-64: a value
	// out of range (or infinite) becomes 1<<63.
	if math.IsNaN(e) || e >= 1<<63 || e < -(1<<63) {
		return 1 << 63
	}
	return uint64(int64(math.Round(e)))
}

func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		zp := z
		z += float64(x * y)
		y += y
		if zp == z {
			return z
		}
	}
}

func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		zp := z
		y *= 0.5
		d := float64((1 - x) * (1 - x))
		z -= float64(d * y)
		if zp == z {
			return z / 3
		}
	}
}
