package store

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
)

// Listpack: the compact encoding of small collections, byte for byte the
// format of Redis 7's listpack.c, so that a small hash, sorted set or list
// node is one block of bytes (no Go pointer per element; the collector
// sees one []byte) and DUMP/RESTORE can move it to and from Redis as is.
//
//	+----------------+-----------------+---------+---------+-----+------+
//	| total bytes (4)| num elements (2)| entry 1 | entry 2 | ... | 0xFF |
//	+----------------+-----------------+---------+---------+-----+------+
//
//	entry: | encoding + data | backlen (1-5) |
//
// Both header fields are little-endian; num elements is 65535 when the count
// does not fit (then it is found by walking). An entry holds an integer or a
// string; a string that is the canonical decimal form of an int64 (what
// Redis's string2ll accepts: no sign but '-', no leading zeros, no "-0") is
// stored as an integer, in the smallest of these encodings:
//
//	0xxxxxxx                      7-bit unsigned integer
//	10xxxxxx + data               string of up to 63 bytes
//	110xxxxx yyyyyyyy             13-bit signed integer
//	1110xxxx yyyyyyyy + data      string of up to 4095 bytes
//	11110000 + len (4, LE) + data string
//	0xF1/0xF2/0xF3/0xF4 + 2/3/4/8 bytes (LE)   16/24/32/64-bit signed integer
//
// backlen is the length of "encoding + data" in 7-bit groups written from
// the most significant one, every group but the first with the high bit set,
// so it can be read backwards from the next entry's start (reverse walks).

const (
	lpHeaderSize    = 6
	lpEOF           = 0xFF
	lpCountUnknown  = 65535
	lpMaxIntEncLen  = 9
	lpMaxBacklenLen = 5
)

var errListpack = errors.New("store: malformed listpack")

// lpEntry is one decoded element: a string (Str non-nil, possibly empty)
// or an integer (Str nil).
type lpEntry struct {
	Str []byte
	Int int64
}

// isInt reports whether the entry holds an integer.
func (e lpEntry) isInt() bool { return e.Str == nil }

// appendTo appends the element's string form to dst.
func (e lpEntry) appendTo(dst []byte) []byte {
	if e.Str != nil {
		return append(dst, e.Str...)
	}
	return strconv.AppendInt(dst, e.Int, 10)
}

// equal reports whether the element's string form is s.
func (e lpEntry) equal(s []byte) bool {
	if e.Str != nil {
		return string(e.Str) == string(s)
	}
	v, ok := lpStringToInt64(s)
	return ok && v == e.Int
}

// lpNew returns an empty listpack.
func lpNew() []byte {
	lp := make([]byte, lpHeaderSize+1, 64)
	binary.LittleEndian.PutUint32(lp, lpHeaderSize+1)
	lp[lpHeaderSize] = lpEOF
	return lp
}

// lpCount returns the number of elements.
func lpCount(lp []byte) int {
	if n := binary.LittleEndian.Uint16(lp[4:]); n != lpCountUnknown {
		return int(n)
	}
	n := 0
	for p := lpFirst(lp); p >= 0; p = lpNext(lp, p) {
		n++
	}
	return n
}

func lpSetCount(lp []byte, n int) {
	if n >= lpCountUnknown {
		n = lpCountUnknown
	}
	binary.LittleEndian.PutUint16(lp[4:], uint16(n))
}

// lpStringToInt64 is Redis's string2ll: the canonical decimal form of an
// int64, and nothing else.
func lpStringToInt64(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	neg := s[0] == '-'
	p := s
	if neg {
		p = s[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true // -(1<<63) wraps to itself, as intended
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// lpEncodedSize is the size of s's entry: encoding, data and backlen.
func lpEncodedSize(s []byte) int {
	if len(s) <= 20 {
		var buf [32]byte
		return len(lpAppendEncoded(buf[:0], s))
	}
	h := 5
	switch n := len(s); {
	case n < 64:
		h = 1
	case n < 4096:
		h = 2
	}
	return h + len(s) + lpBacklenSize(uint64(h+len(s)))
}

// lpAppendEncoded appends the entry (encoding, data, backlen) for s.
func lpAppendEncoded(dst, s []byte) []byte {
	start := len(dst)
	if v, ok := lpStringToInt64(s); ok {
		dst = lpAppendInt(dst, v)
	} else {
		switch n := len(s); {
		case n < 64:
			dst = append(dst, 0x80|byte(n))
		case n < 4096:
			dst = append(dst, 0xE0|byte(n>>8), byte(n))
		default:
			dst = append(dst, 0xF0)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
		}
		dst = append(dst, s...)
	}
	return lpAppendBacklen(dst, uint64(len(dst)-start))
}

func lpAppendInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0 && v <= 127:
		return append(dst, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		return append(dst, 0xC0|byte(u>>8), byte(u))
	case v >= -32768 && v <= 32767:
		return append(dst, 0xF1, byte(v), byte(v>>8))
	case v >= -8388608 && v <= 8388607:
		return append(dst, 0xF2, byte(v), byte(v>>8), byte(v>>16))
	case v >= -2147483648 && v <= 2147483647:
		return append(dst, 0xF3, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	default:
		dst = append(dst, 0xF4)
		return binary.LittleEndian.AppendUint64(dst, uint64(v))
	}
}

func lpAppendBacklen(dst []byte, l uint64) []byte {
	switch {
	case l <= 127:
		return append(dst, byte(l))
	case l < 16383:
		return append(dst, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		return append(dst, byte(l>>14), byte((l>>7)&127)|128, byte(l&127)|128)
	case l < 268435455:
		return append(dst, byte(l>>21), byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	default:
		return append(dst, byte(l>>28), byte((l>>21)&127)|128, byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	}
}

// lpEntrySize returns the size of the entry at p (encoding, data and
// backlen), or -1 if it runs past the end of lp.
func lpEntrySize(lp []byte, p int) int {
	if p >= len(lp) {
		return -1
	}
	b := lp[p]
	var n int // encoding + data
	switch {
	case b&0x80 == 0:
		n = 1
	case b&0xC0 == 0x80:
		n = 1 + int(b&0x3F)
	case b&0xE0 == 0xC0:
		n = 2
	case b&0xF0 == 0xE0:
		if p+1 >= len(lp) {
			return -1
		}
		n = 2 + (int(b&0x0F)<<8 | int(lp[p+1]))
	case b == 0xF0:
		if p+5 > len(lp) {
			return -1
		}
		l := binary.LittleEndian.Uint32(lp[p+1:])
		if uint64(l) > uint64(len(lp)) {
			return -1
		}
		n = 5 + int(l)
	case b == 0xF1:
		n = 3
	case b == 0xF2:
		n = 4
	case b == 0xF3:
		n = 5
	case b == 0xF4:
		n = 9
	default:
		return -1 // 0xF5..0xFE are unused, 0xFF is the end
	}
	n += lpBacklenSize(uint64(n))
	if p+n > len(lp)-1 { // the end byte follows every entry
		return -1
	}
	return n
}

func lpBacklenSize(l uint64) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	default:
		return 5
	}
}

// lpFirst returns the offset of the first entry, or -1 if there is none.
func lpFirst(lp []byte) int {
	if lp[lpHeaderSize] == lpEOF {
		return -1
	}
	return lpHeaderSize
}

// lpNext returns the offset of the entry after the one at p, or -1.
func lpNext(lp []byte, p int) int {
	p += lpEntrySize(lp, p)
	if lp[p] == lpEOF {
		return -1
	}
	return p
}

// lpPrev returns the offset of the entry before the one at p (p may be the
// end byte's offset, for the last entry), or -1.
func lpPrev(lp []byte, p int) int {
	if p <= lpHeaderSize {
		return -1
	}
	// Read the backlen that ends at p-1, most significant group last.
	var l uint64
	shift := 0
	q := p - 1
	for i := 0; i < lpMaxBacklenLen && q >= lpHeaderSize; i++ {
		b := lp[q]
		l |= uint64(b&127) << shift
		if b&128 == 0 {
			break
		}
		shift += 7
		q--
	}
	return p - int(l) - lpBacklenSize(l)
}

// lpLast returns the offset of the last entry, or -1.
func lpLast(lp []byte) int {
	return lpPrev(lp, len(lp)-1)
}

// lpGet decodes the entry at p. A string aliases lp.
func lpGet(lp []byte, p int) lpEntry {
	b := lp[p]
	switch {
	case b&0x80 == 0:
		return lpEntry{Int: int64(b)}
	case b&0xC0 == 0x80:
		n := int(b & 0x3F)
		return lpEntry{Str: lp[p+1 : p+1+n : p+1+n]}
	case b&0xE0 == 0xC0:
		u := uint64(b&0x1F)<<8 | uint64(lp[p+1])
		return lpEntry{Int: signExtend(u, 13)}
	case b&0xF0 == 0xE0:
		n := int(b&0x0F)<<8 | int(lp[p+1])
		return lpEntry{Str: lp[p+2 : p+2+n : p+2+n]}
	case b == 0xF0:
		n := int(binary.LittleEndian.Uint32(lp[p+1:]))
		return lpEntry{Str: lp[p+5 : p+5+n : p+5+n]}
	case b == 0xF1:
		return lpEntry{Int: signExtend(uint64(binary.LittleEndian.Uint16(lp[p+1:])), 16)}
	case b == 0xF2:
		u := uint64(lp[p+1]) | uint64(lp[p+2])<<8 | uint64(lp[p+3])<<16
		return lpEntry{Int: signExtend(u, 24)}
	case b == 0xF3:
		return lpEntry{Int: signExtend(uint64(binary.LittleEndian.Uint32(lp[p+1:])), 32)}
	default: // 0xF4
		return lpEntry{Int: int64(binary.LittleEndian.Uint64(lp[p+1:]))}
	}
}

func signExtend(u uint64, bits uint) int64 {
	shift := 64 - bits
	return int64(u<<shift) >> shift
}

// lpInsert returns lp with s inserted before the entry at p (p the end
// byte's offset: appended). lp is reused when its capacity allows.
func lpInsert(lp []byte, p int, s []byte) []byte {
	n := len(lp)
	size := lpEncodedSize(s)
	lp = slices.Grow(lp, size)[:n+size]
	copy(lp[p+size:], lp[p:n])
	lpAppendEncoded(lp[p:p], s) // fills lp[p:p+size], within capacity
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	if c := binary.LittleEndian.Uint16(lp[4:]); c != lpCountUnknown {
		lpSetCount(lp, int(c)+1)
	}
	return lp
}

// lpAppend returns lp with s appended.
func lpAppend(lp []byte, s []byte) []byte {
	return lpInsert(lp, len(lp)-1, s)
}

// lpDelete returns lp without the entry at p, in place.
func lpDelete(lp []byte, p int) []byte {
	n := lpEntrySize(lp, p)
	copy(lp[p:], lp[p+n:])
	lp = lp[:len(lp)-n]
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	if c := binary.LittleEndian.Uint16(lp[4:]); c != lpCountUnknown {
		lpSetCount(lp, int(c)-1)
	} else {
		lpSetCount(lp, lpCount(lp)) // may now fit
	}
	return lp
}

// lpReplace returns lp with the entry at p replaced by s.
func lpReplace(lp []byte, p int, s []byte) []byte {
	lp = lpDelete(lp, p)
	return lpInsert(lp, p, s)
}

// lpValidate checks a listpack from an untrusted source (RESTORE) deeply:
// header, every entry's encoding and backlen, the end byte, and the count.
// Nothing else in this file may be given bytes that did not pass it.
func lpValidate(lp []byte) error {
	if len(lp) < lpHeaderSize+1 {
		return errListpack
	}
	if int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != lpEOF {
		return errListpack
	}
	count := 0
	p := lpHeaderSize
	for lp[p] != lpEOF {
		n := lpEntrySize(lp, p)
		if n < 0 {
			return errListpack
		}
		b := lp[p]
		if b == 0xF0 && binary.LittleEndian.Uint32(lp[p+1:]) > uint32(len(lp)) {
			return errListpack
		}
		// The backlen must say what the entry's size says.
		if q := lpPrev(lp, p+n); q != p {
			return errListpack
		}
		p += n
		count++
	}
	if p != len(lp)-1 {
		return errListpack
	}
	if c := binary.LittleEndian.Uint16(lp[4:]); c != lpCountUnknown && int(c) != count {
		return errListpack
	}
	return nil
}
