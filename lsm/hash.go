package lsm

import (
	"encoding/binary"
	"math/bits"
)

// hash64 is XXH64 with seed 0. It is written out here, rather than imported,
// so that the engine depends on the standard library only; filters persist
// its output, so it must never change (the format version guards that).
func hash64(b []byte) uint64 {
	const (
		p1 = 11400714785074694791
		p2 = 14029467366897019727
		p3 = 1609587929392839161
		p4 = 9650029242287828579
		p5 = 2870177450012600261
	)
	n := len(b)
	var h uint64
	if n >= 32 {
		v1 := uint64(6983438078262162902) // p1 + p2 mod 2^64
		v2 := uint64(p2)
		v3 := uint64(0)
		v4 := uint64(7046029288634856825) // -p1 mod 2^64
		for len(b) >= 32 {
			v1 = round64(v1, binary.LittleEndian.Uint64(b[0:]))
			v2 = round64(v2, binary.LittleEndian.Uint64(b[8:]))
			v3 = round64(v3, binary.LittleEndian.Uint64(b[16:]))
			v4 = round64(v4, binary.LittleEndian.Uint64(b[24:]))
			b = b[32:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = mergeRound64(h, v1)
		h = mergeRound64(h, v2)
		h = mergeRound64(h, v3)
		h = mergeRound64(h, v4)
	} else {
		h = p5
	}
	h += uint64(n)
	for ; len(b) >= 8; b = b[8:] {
		k1 := round64(0, binary.LittleEndian.Uint64(b))
		h ^= k1
		h = bits.RotateLeft64(h, 27)*p1 + p4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * p1
		h = bits.RotateLeft64(h, 23)*p2 + p3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * p5
		h = bits.RotateLeft64(h, 11) * p1
	}
	h ^= h >> 33
	h *= p2
	h ^= h >> 29
	h *= p3
	h ^= h >> 32
	return h
}

func round64(acc, input uint64) uint64 {
	acc += input * 14029467366897019727
	acc = bits.RotateLeft64(acc, 31)
	acc *= 11400714785074694791
	return acc
}

func mergeRound64(acc, val uint64) uint64 {
	val = round64(0, val)
	acc ^= val
	acc = acc*11400714785074694791 + 9650029242287828579
	return acc
}
