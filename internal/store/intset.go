package store

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
)

// Intset: the compact encoding of a set of integers, byte for byte the
// format of Redis's intset.c, so that a small all-integer set is one
// block of bytes in its record, kept sorted for binary search.
//
//	+--------------+------------+------------------------------------+
//	| encoding (4) | length (4) | length integers of encoding bytes |
//	+--------------+------------+------------------------------------+
//
// Every field is little-endian. encoding is 2, 4 or 8: the width of every
// element, the smallest that holds the largest magnitude in the set (it
// is widened when an element needs it, never narrowed). The elements are
// signed and strictly ascending.

const isHeaderSize = 8

var errIntset = errors.New("store: malformed intset")

// emptyIntset is an intset with no element, copied before any change.
var emptyIntset = []byte{2, 0, 0, 0, 0, 0, 0, 0}

// isWidthOf is the smallest encoding that holds v.
func isWidthOf(v int64) int {
	switch {
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 4
	default:
		return 8
	}
}

func isWidth(is []byte) int { return int(binary.LittleEndian.Uint32(is)) }

// isLen is the number of elements.
func isLen(is []byte) int { return int(binary.LittleEndian.Uint32(is[4:])) }

// isGet returns the i-th element.
func isGet(is []byte, i int) int64 {
	return isGetW(is, i, isWidth(is))
}

func isGetW(is []byte, i, w int) int64 {
	p := isHeaderSize + i*w
	switch w {
	case 2:
		return int64(int16(binary.LittleEndian.Uint16(is[p:])))
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(is[p:])))
	default:
		return int64(binary.LittleEndian.Uint64(is[p:]))
	}
}

func isPut(is []byte, i, w int, v int64) {
	p := isHeaderSize + i*w
	switch w {
	case 2:
		binary.LittleEndian.PutUint16(is[p:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(is[p:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(is[p:], uint64(v))
	}
}

// isSearch returns v's position, or the position it would be inserted at.
func isSearch(is []byte, v int64) (int, bool) {
	w, n := isWidth(is), isLen(is)
	if n == 0 || v > isGetW(is, n-1, w) {
		return n, false
	}
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if isGetW(is, m, w) < v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < n && isGetW(is, lo, w) == v
}

// isInsert returns is with v inserted at position i (from isSearch),
// widening every element first when v needs a wider encoding; is is
// reused when its capacity allows.
func isInsert(is []byte, i int, v int64) []byte {
	w, n := isWidth(is), isLen(is)
	if nw := isWidthOf(v); nw > w {
		// v is beyond every element: it goes first or last. Move the
		// elements from the last, each to a place at or after its own.
		is = slices.Grow(is, isHeaderSize+(n+1)*nw-len(is))[:isHeaderSize+(n+1)*nw]
		pre := 0
		if v < 0 {
			pre = 1
		}
		for j := n - 1; j >= 0; j-- {
			isPut(is, j+pre, nw, isGetW(is, j, w))
		}
		if v < 0 {
			isPut(is, 0, nw, v)
		} else {
			isPut(is, n, nw, v)
		}
		binary.LittleEndian.PutUint32(is, uint32(nw))
	} else {
		is = slices.Grow(is, w)[:len(is)+w]
		p := isHeaderSize + i*w
		copy(is[p+w:], is[p:])
		isPut(is, i, w, v)
	}
	binary.LittleEndian.PutUint32(is[4:], uint32(n+1))
	return is
}

// isDelete returns is without its i-th element, in place.
func isDelete(is []byte, i int) []byte {
	w, n := isWidth(is), isLen(is)
	p := isHeaderSize + i*w
	copy(is[p:], is[p+w:])
	is = is[:len(is)-w]
	binary.LittleEndian.PutUint32(is[4:], uint32(n-1))
	return is
}

// isValidate checks an intset from an untrusted source as Redis's
// intsetValidateIntegrity does deeply: a known encoding, a length that
// matches the size, at least one element, strictly ascending. Nothing
// else in this file may be given bytes that did not pass it.
func isValidate(is []byte) error {
	if len(is) < isHeaderSize {
		return errIntset
	}
	w := binary.LittleEndian.Uint32(is)
	if w != 2 && w != 4 && w != 8 {
		return errIntset
	}
	n := uint64(binary.LittleEndian.Uint32(is[4:]))
	if n == 0 || uint64(isHeaderSize)+n*uint64(w) != uint64(len(is)) {
		return errIntset
	}
	prev := isGetW(is, 0, int(w))
	for i := 1; i < int(n); i++ {
		v := isGetW(is, i, int(w))
		if v <= prev {
			return errIntset
		}
		prev = v
	}
	return nil
}

// IntsetEach checks is deeply (it may come from a client, as a RESTORE
// payload's RDB_TYPE_SET_INTSET) and then calls fn with each element's
// decimal form, in ascending order; the slice is valid during the call
// only.
func IntsetEach(is []byte, fn func(m []byte)) error {
	if isValidate(is) != nil {
		return ErrBadEncoding
	}
	var num [24]byte
	for i := range isLen(is) {
		fn(strconv.AppendInt(num[:0], isGet(is, i), 10))
	}
	return nil
}
