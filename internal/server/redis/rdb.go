package redis

import (
	"bytes"

	"encoding/binary"
	"errors"
	"github.com/minikv/minikv/internal/store"
	"hash/crc64"
	"math"
	"strconv"
)

// Redis's serialization format, as DUMP writes it and RESTORE reads it
// (rdb.c, rdbSaveObject and rdbLoadObject, for one value):
//
//	| type (1) | object | RDB version (2, LE) | CRC64 (8, LE) |
//
// The CRC is Redis's crc64 (Jones polynomial, reflected, no final xor)
// over everything before it. An object is built of lengths and strings:
//
//	length  00xxxxxx | 01xxxxxx xxxxxxxx | 0x80 + 4 B BE | 0x81 + 8 B BE
//	string  length + bytes, or 11xxxxxx: 0xC0/C1/C2 an 8/16/32-bit LE
//	        integer, 0xC3 an LZF-compressed string (length compressed,
//	        length uncompressed, data)
//
// The decoder reads bytes a client sent: every length is checked against
// what is left before anything is allocated for it, and a malformed
// payload is an error, never a panic (FuzzRDBDecode).

// RDB object types (rdb.h).
const (
	rdbTypeString       = 0
	rdbTypeSet          = 2
	rdbTypeHash         = 4
	rdbTypeZSet2        = 5
	rdbTypeSetIntset    = 11
	rdbTypeHashListpack = 16
	rdbTypeZSetListpack = 17
	rdbTypeListQuick2   = 18
	rdbTypeSetListpack  = 20 // Redis 7.2

	// rdbVersion is Redis 7.0's RDB_VERSION, written in DUMP payloads.
	rdbVersion = 10
	// rdbMaxVersion is the newest payload RESTORE reads: Redis 7.2's
	// (whose set listpack it knows). Redis 7.0 refuses 11.
	rdbMaxVersion = 11

	quicklistPlain  = 1
	quicklistPacked = 2
)

// redisCRC is Redis's crc64: the reflected Jones polynomial
// 0xad93d23594c935a9 (0x95ac9329ac4bc9b5 reversed), initial value 0 and
// no final xor. Go's crc64 complements before and after, hence the ^.
var redisCRCTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

func redisCRC(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, redisCRCTable, p)
}

var errBadData = errors.New("bad data format")

// rdbAppendLen appends a length.
func rdbAppendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, 0x40|byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, 0x81), n)
	}
}

// rdbAppendString appends s as Redis's rdbSaveRawString does, except for
// compression: a string of up to 11 bytes that is the canonical form of
// an integer fitting in 32 bits is written as that integer; a longer one
// is LZF-compressed when that saves room (lzf.go), as Redis does with
// rdbcompression on.
func rdbAppendString(b, s []byte) []byte {
	if len(s) <= 11 {
		if v, ok := canonicalInt(s); ok {
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return append(b, 0xC0, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				return binary.LittleEndian.AppendUint16(append(b, 0xC1), uint16(v))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				return binary.LittleEndian.AppendUint32(append(b, 0xC2), uint32(v))
			}
		}
	}
	if len(s) > 20 {
		if c := lzfCompress(s); c != nil {
			b = append(b, 0xC3)
			b = rdbAppendLen(b, uint64(len(c)))
			b = rdbAppendLen(b, uint64(len(s)))
			return append(b, c...)
		}
	}
	b = rdbAppendLen(b, uint64(len(s)))
	return append(b, s...)
}

// canonicalInt is Redis's string2ll: the canonical decimal form of an
// int64 and nothing else.
func canonicalInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || s[0] == '+' || len(s) > 1 && s[0] == '0' || len(s) > 1 && s[0] == '-' && s[1] == '0' {
		return 0, false
	}
	return v, true
}

// rdbAppendDouble appends a score as ZSET_2 does: 8 bytes, IEEE 754 LE.
func rdbAppendDouble(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

// rdbSeal appends the RDB version and the CRC, finishing a payload.
func rdbSeal(b []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, rdbVersion)
	return binary.LittleEndian.AppendUint64(b, redisCRC(0, b))
}

// rdbVerify checks a payload's footer, as Redis's verifyDumpPayload, and
// returns the bytes to decode: the whole payload, footer included, as
// Redis reads it (an object cut short reads into the footer, and bytes
// left over after the object are ignored).
func rdbVerify(p []byte) ([]byte, bool) {
	if len(p) < 10 {
		return nil, false
	}
	footer := p[len(p)-10:]
	if v := binary.LittleEndian.Uint16(footer); v > rdbMaxVersion {
		return nil, false
	}
	if redisCRC(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, false
	}
	return p, true
}

// rdbReader reads an object's lengths and strings.
type rdbReader struct {
	b   []byte
	err error
}

func (r *rdbReader) fail() { r.err = errBadData }

func (r *rdbReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *rdbReader) take(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

// length reads a length, or, when encoded is set, the 6-bit code of a
// special string encoding.
func (r *rdbReader) length() (n uint64, encoded bool) {
	c := r.byte()
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3F), false
	case 1:
		return uint64(c&0x3F)<<8 | uint64(r.byte()), false
	case 3:
		return uint64(c & 0x3F), true
	}
	switch c {
	case 0x80:
		if b := r.take(4); b != nil {
			return uint64(binary.BigEndian.Uint32(b)), false
		}
	case 0x81:
		if b := r.take(8); b != nil {
			return binary.BigEndian.Uint64(b), false
		}
	default:
		r.fail()
	}
	return 0, false
}

// count reads a length that counts elements, each of which takes at
// least min bytes of what is left (so no count makes a large allocation).
func (r *rdbReader) count(min int) int {
	n, enc := r.length()
	if enc || n > uint64(len(r.b)/min) {
		r.fail()
		return 0
	}
	return int(n)
}

// str reads a string; integers come back in their decimal form and LZF
// strings decompressed, in new memory. Raw strings alias the payload.
func (r *rdbReader) str() []byte {
	n, enc := r.length()
	if r.err != nil {
		return nil
	}
	if !enc {
		return r.take(n)
	}
	switch n {
	case 0:
		return strconv.AppendInt(nil, int64(int8(r.byte())), 10)
	case 1:
		if b := r.take(2); b != nil {
			return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(b))), 10)
		}
	case 2:
		if b := r.take(4); b != nil {
			return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(b))), 10)
		}
	case 3:
		clen, e1 := r.length()
		ulen, e2 := r.length()
		if e1 || e2 || r.err != nil {
			r.fail()
			return nil
		}
		// LZF expands at most about 256 times (a 2-byte back reference
		// copies up to 264 bytes): a longer claim is a lie.
		if ulen == 0 || clen > uint64(len(r.b)) || ulen > clen*264 {
			r.fail()
			return nil
		}
		out, ok := lzfDecompress(r.take(clen), int(ulen))
		if !ok {
			r.fail()
			return nil
		}
		return out
	default:
		r.fail()
	}
	return nil
}

// double reads a ZSET_2 score.
func (r *rdbReader) double() float64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// rdbValue is a decoded DUMP payload.
type rdbValue struct {
	typ    byte
	kind   store.Kind
	str    []byte    // a string
	lp     []byte    // a hash's listpack as sent, for a restore as is
	elems  [][]byte  // hash: field, value, ...; set, zset: members; list: elements
	scores []float64 // zset: the members' scores
}

// rdbDecode decodes a payload's type and object (the footer checked and
// cut off by rdbVerify), checking it as Redis's rdbLoadObject does with
// deep sanitization: a collection is never empty, a hash field or set or
// sorted set member never repeats, a score is never NaN, and every
// listpack and intset is well formed.
func rdbDecode(p []byte) (*rdbValue, error) {
	r := &rdbReader{b: p}
	v := &rdbValue{typ: r.byte()}
	switch v.typ {
	case rdbTypeString:
		v.kind = store.KindString
		v.str = r.str()
	case rdbTypeHash:
		v.kind = store.KindHash
		n := r.count(2)
		for range n {
			v.elems = append(v.elems, r.str(), r.str())
		}
	case rdbTypeHashListpack:
		v.kind = store.KindHash
		v.lp = r.str()
		v.elems = r.listpack(v.lp)
		if len(v.elems)%2 != 0 {
			r.fail()
		}
	case rdbTypeSet:
		v.kind = store.KindSet
		n := r.count(1)
		for range n {
			v.elems = append(v.elems, r.str())
		}
	case rdbTypeSetListpack:
		v.kind = store.KindSet
		v.elems = r.listpack(r.str())
	case rdbTypeSetIntset:
		v.kind = store.KindSet
		v.elems = r.intset(r.str())
	case rdbTypeZSet2:
		v.kind = store.KindZSet
		n := r.count(9)
		for range n {
			v.elems = append(v.elems, r.str())
			v.scores = append(v.scores, r.double())
		}
	case rdbTypeZSetListpack:
		v.kind = store.KindZSet
		pairs := r.listpack(r.str())
		if len(pairs)%2 != 0 {
			r.fail()
			break
		}
		for i := 0; i < len(pairs); i += 2 {
			f, err := strconv.ParseFloat(string(pairs[i+1]), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				r.fail()
				break
			}
			v.elems = append(v.elems, pairs[i])
			v.scores = append(v.scores, f)
		}
	case rdbTypeListQuick2:
		v.kind = store.KindList
		n := r.count(2)
		for range n {
			c, enc := r.length()
			if enc || c != quicklistPlain && c != quicklistPacked {
				r.fail()
				break
			}
			s := r.str()
			if c == quicklistPlain {
				v.elems = append(v.elems, s)
				continue
			}
			if r.err == nil {
				if err := store.ListpackEach(s, func(e []byte) { v.elems = append(v.elems, bytes.Clone(e)) }); err != nil {
					r.fail()
				}
			}
		}
	default:
		r.fail()
	}
	if r.err != nil {
		return nil, r.err
	}
	if v.kind != store.KindString && !v.valid() {
		return nil, errBadData
	}
	return v, nil
}

// valid checks a collection: not empty, no repeated field or member, no
// NaN score.
func (v *rdbValue) valid() bool {
	if len(v.elems) == 0 {
		return false
	}
	step := 1
	if v.kind == store.KindHash {
		step = 2
	}
	if v.kind != store.KindList {
		seen := make(map[string]struct{}, len(v.elems)/step)
		for i := 0; i < len(v.elems); i += step {
			if _, dup := seen[string(v.elems[i])]; dup {
				return false
			}
			seen[string(v.elems[i])] = struct{}{}
		}
	}
	for _, f := range v.scores {
		if math.IsNaN(f) {
			return false
		}
	}
	return true
}

// listpack reads the entries of a listpack, which it checks.
func (r *rdbReader) listpack(lp []byte) [][]byte {
	if r.err != nil {
		return nil
	}
	var out [][]byte
	if err := store.ListpackEach(lp, func(e []byte) { out = append(out, bytes.Clone(e)) }); err != nil {
		r.fail()
	}
	return out
}

// intset reads the members of a Redis intset (intset.c: encoding 2, 4 or
// 8, a count, the integers strictly ascending, all little-endian).
func (r *rdbReader) intset(is []byte) [][]byte {
	if r.err != nil {
		return nil
	}
	if len(is) < 8 {
		r.fail()
		return nil
	}
	w := binary.LittleEndian.Uint32(is)
	n := binary.LittleEndian.Uint32(is[4:])
	if w != 2 && w != 4 && w != 8 || uint64(len(is)-8) != uint64(n)*uint64(w) {
		r.fail()
		return nil
	}
	out := make([][]byte, 0, n)
	var prev int64
	for i := range int(n) {
		p := is[8+i*int(w):]
		var x int64
		switch w {
		case 2:
			x = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			x = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			x = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && x <= prev {
			r.fail()
			return nil
		}
		prev = x
		out = append(out, strconv.AppendInt(nil, x, 10))
	}
	return out
}
