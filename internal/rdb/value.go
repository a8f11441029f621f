package rdb

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
	"math"
	"strconv"

	"github.com/minikv/minikv/internal/store"
)

// RDB object types (rdb.h). The ones this package writes are the ones
// Redis 7.2 writes; the older ones it reads as Redis 7.2 still reads
// them (old.go).
const (
	typeString        = 0
	typeList          = 1 // a linked list: before Redis 3.2
	typeSet           = 2
	typeZSet          = 3 // scores as strings: before Redis 4
	typeHash          = 4
	typeZSet2         = 5
	typeModulePreGA   = 6
	typeModule2       = 7
	typeHashZipmap    = 9  // before Redis 2.6
	typeListZiplist   = 10 // before Redis 3.2
	typeSetIntset     = 11
	typeZSetZiplist   = 12 // before Redis 7.0
	typeHashZiplist   = 13 // before Redis 7.0
	typeListQuick     = 14 // quicklist of ziplists: Redis 3.2 to 6.2
	typeStreamLP      = 15
	typeHashListpack  = 16
	typeZSetListpack  = 17
	typeListQuick2    = 18
	typeStreamLP2     = 19
	typeSetListpack   = 20 // Redis 7.2
	typeStreamLP3     = 21 // Redis 7.2
	quicklistPlain    = 1
	quicklistPacked   = 2
	dumpVersionFooter = 2 + 8 // a DUMP payload's version and CRC
)

// Version is the RDB version this package writes: Redis 7.2's
// RDB_VERSION, in files and in DUMP payloads. Redis 7.0 refuses 11 (its
// own is 10), as it refuses the set listpacks and type-21 streams that
// come with it.
const Version = 11

// MaxVersion is the newest version read: Redis 7.2's 11. Every older
// version is read too (files from 1, DUMP payloads of any version up to
// this one, as Redis's verifyDumpPayload takes them).
const MaxVersion = 11

// ErrBadData is the error of a malformed object or file.
var ErrBadData = errors.New("rdb: bad data format")

// crcTable is Redis's crc64: the reflected Jones polynomial
// 0xad93d23594c935a9 (0x95ac9329ac4bc9b5 reversed), initial value 0 and
// no final xor. Go's crc64 complements before and after, hence the ^ in
// CRC64.
var crcTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// CRC64 continues Redis's crc64 of some bytes (start with 0) over p.
func CRC64(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, crcTable, p)
}

// AppendLen appends a length.
func AppendLen(b []byte, n uint64) []byte {
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

// AppendString appends s as Redis's rdbSaveRawString does, with
// rdbcompression on: a string of up to 11 bytes that is the canonical
// form of an integer fitting in 32 bits is written as that integer; a
// longer one is LZF-compressed when that saves room (lzf.go).
func AppendString(b, s []byte) []byte {
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
		htab := lzfTables.Get().(*lzfTable)
		defer lzfTables.Put(htab)
		if c := lzfCompressTo(htab, s); c != nil {
			b = append(b, 0xC3)
			b = AppendLen(b, uint64(len(c)))
			b = AppendLen(b, uint64(len(s)))
			return append(b, c...)
		}
	}
	b = AppendLen(b, uint64(len(s)))
	return append(b, s...)
}

// canonicalInt is Redis's string2ll: the canonical decimal form of an
// int64 and nothing else. Most strings are turned away by their first
// byte, before any parsing.
func canonicalInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 20 || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return 0, false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || s[0] == '+' || len(s) > 1 && s[0] == '0' || len(s) > 1 && s[0] == '-' && s[1] == '0' {
		return 0, false
	}
	return v, true
}

// AppendDouble appends a score as ZSET_2 does: 8 bytes, IEEE 754 LE.
func AppendDouble(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

// Seal appends the RDB version and the CRC to an object, making a DUMP
// payload:
//
//	| type (1) | object | RDB version (2, LE) | CRC64 (8, LE) |
func Seal(b []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, Version)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b))
}

// Verify checks a DUMP payload's footer, as Redis's verifyDumpPayload,
// and returns the bytes to decode: the whole payload, footer included, as
// Redis reads it (an object cut short reads into the footer, and bytes
// left over after the object are ignored).
func Verify(p []byte) ([]byte, bool) {
	if len(p) < dumpVersionFooter {
		return nil, false
	}
	footer := p[len(p)-dumpVersionFooter:]
	if v := binary.LittleEndian.Uint16(footer); v > MaxVersion {
		return nil, false
	}
	if CRC64(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, false
	}
	return p, true
}

// reader reads an RDB's lengths, strings and objects from bytes held
// whole in memory: every length is checked against what is left before
// anything is allocated for it, so no input makes a large allocation, and
// a malformed one is an error, never a panic.
type reader struct {
	b   []byte
	err error
	// limits, when the values read are to be stored in a store with
	// them, lets a listpack that the store can hold as it is be checked
	// as such (store.CheckListpack) instead of split into its elements.
	limits *store.Limits
}

func (r *reader) fail() { r.err = ErrBadData }

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) take(n uint64) []byte {
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
func (r *reader) length() (n uint64, encoded bool) {
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

// plainLength reads a length that may not be a string encoding.
func (r *reader) plainLength() uint64 {
	n, enc := r.length()
	if enc {
		r.fail()
	}
	return n
}

// count reads a length that counts elements, each of which takes at
// least min bytes of what is left (so no count makes a large allocation).
func (r *reader) count(min int) int {
	n, enc := r.length()
	if enc || n > uint64(len(r.b)/min) {
		r.fail()
		return 0
	}
	return int(n)
}

// str reads a string; integers come back in their decimal form and LZF
// strings decompressed, in new memory. Raw strings alias the input.
func (r *reader) str() []byte {
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
func (r *reader) double() float64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// Value is a decoded object: a DUMP payload's, or one key's in a file.
type Value struct {
	Kind   store.Kind
	Str    []byte             // a string's bytes
	Stream *store.StreamValue // a stream, checked whole (store.ValidateStream)
	typ    byte               // the RDB type it was read as
	lp     []byte             // a hash's, set's, sorted set's or one-node list's listpack as sent, which the store may hold as it is
	is     []byte             // a set's intset as sent, likewise
	// checked is lp checked for the store (reader.checked); elems and
	// scores are then not filled in.
	checked   store.CheckedListpack
	isChecked bool
	elems     [][]byte  // hash: field, value, ...; set, zset: members; list: elements
	scores    []float64 // zset: the members' scores
}

// DecodeValue decodes an object (a type byte, then the object, as DUMP
// writes them; a footer left after it is ignored), checking it as Redis's
// rdbLoadObject does with deep sanitization: a collection is never empty,
// a hash field or set or sorted set member never repeats, a score is
// never NaN, and every listpack, ziplist, zipmap and intset is well
// formed.
func DecodeValue(obj []byte) (*Value, error) {
	r := &reader{b: obj}
	return r.value(r.byte())
}

// value reads the object of type typ.
func (r *reader) value(typ byte) (*Value, error) {
	v := &Value{typ: typ}
	switch typ {
	case typeString:
		v.Kind = store.KindString
		v.Str = r.str()
	case typeHash:
		v.Kind = store.KindHash
		n := r.count(2)
		for range n {
			v.elems = append(v.elems, r.str(), r.str())
		}
	case typeHashListpack:
		v.Kind = store.KindHash
		v.lp = r.str()
		if r.checked(v) {
			break
		}
		v.elems = r.listpack(v.lp)
		if len(v.elems)%2 != 0 {
			r.fail()
		}
	case typeSet:
		v.Kind = store.KindSet
		n := r.count(1)
		for range n {
			v.elems = append(v.elems, r.str())
		}
	case typeSetListpack:
		v.Kind = store.KindSet
		v.lp = r.str()
		if !r.checked(v) {
			v.elems = r.listpack(v.lp)
		}
	case typeSetIntset:
		v.Kind = store.KindSet
		v.is = r.str()
		if r.limits != nil && r.err == nil {
			v.checked, v.isChecked = store.CheckIntset(v.is, *r.limits)
		}
		if !v.isChecked {
			v.elems = r.intset(v.is)
		}
	case typeZSet2:
		v.Kind = store.KindZSet
		n := r.count(9)
		for range n {
			v.elems = append(v.elems, r.str())
			v.scores = append(v.scores, r.double())
		}
	case typeZSetListpack:
		v.Kind = store.KindZSet
		v.lp = r.str()
		if !r.checked(v) {
			r.zsetPairs(v, r.listpack(v.lp))
		}
	case typeListQuick2:
		v.Kind = store.KindList
		n := r.count(2)
		for range n {
			c := r.plainLength()
			if c != quicklistPlain && c != quicklistPacked {
				r.fail()
				break
			}
			s := r.str()
			if c == quicklistPlain {
				v.elems = append(v.elems, s)
				continue
			}
			if n == 1 {
				v.lp = s // one node: the list's listpack, as the store may hold it
				if r.checked(v) {
					break
				}
			}
			v.elems = append(v.elems, r.listpack(s)...)
		}
	case typeStreamLP, typeStreamLP2, typeStreamLP3:
		v.Kind = store.KindStream
		v.Stream = r.stream(typ) // stream.go
	case typeModulePreGA, typeModule2:
		return nil, ErrModule
	default:
		if !r.oldValue(v) { // old.go
			r.fail()
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if v.Kind != store.KindString && v.Kind != store.KindStream && !v.isChecked && !v.valid() {
		return nil, ErrBadData
	}
	return v, nil
}

// checked reports whether v.lp, a hash's, set's, sorted set's or list's
// listpack, passed store.CheckListpack under r.limits, so that the store
// takes it as it is and v needs no elements.
func (r *reader) checked(v *Value) bool {
	if r.limits == nil || r.err != nil {
		return false
	}
	v.checked, v.isChecked = store.CheckListpack(v.Kind, v.lp, *r.limits)
	return v.isChecked
}

// ErrModule is the error of what MiniKV does not hold: module types.
var ErrModule = errors.New("rdb: module data types are not supported by MiniKV")

// zsetPairs reads a sorted set's member, score pairs from a listpack's or
// ziplist's entries (the score in its string form).
func (r *reader) zsetPairs(v *Value, pairs [][]byte) {
	if r.err != nil {
		return
	}
	if len(pairs)%2 != 0 {
		r.fail()
		return
	}
	for i := 0; i < len(pairs); i += 2 {
		f, err := strconv.ParseFloat(string(pairs[i+1]), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			r.fail()
			return
		}
		v.elems = append(v.elems, pairs[i])
		v.scores = append(v.scores, f)
	}
}

// valid checks a collection: not empty, no repeated field or member, no
// NaN score.
func (v *Value) valid() bool {
	if len(v.elems) == 0 {
		return false
	}
	step := 1
	if v.Kind == store.KindHash {
		step = 2
	}
	if v.Kind != store.KindList {
		if n := len(v.elems) / step; n <= 16 {
			for i := 0; i < len(v.elems); i += step {
				for j := 0; j < i; j += step {
					if string(v.elems[i]) == string(v.elems[j]) {
						return false
					}
				}
			}
		} else {
			seen := make(map[string]struct{}, n)
			for i := 0; i < len(v.elems); i += step {
				if _, dup := seen[string(v.elems[i])]; dup {
					return false
				}
				seen[string(v.elems[i])] = struct{}{}
			}
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
func (r *reader) listpack(lp []byte) [][]byte {
	if r.err != nil {
		return nil
	}
	// The entries are copied into one block (which may move as it
	// grows: those copied before keep the old one).
	var out [][]byte
	if len(lp) >= 6 { // the count in the header, which ListpackEach checks
		out = make([][]byte, 0, min(int(binary.LittleEndian.Uint16(lp[4:])), len(lp)))
	}
	var block []byte
	if err := store.ListpackEach(lp, func(e []byte) {
		if len(e) > cap(block)-len(block) {
			block = make([]byte, 0, max(2*len(lp), len(e)))
		}
		block = append(block, e...)
		out = append(out, block[len(block)-len(e):len(block):len(block)])
	}); err != nil {
		r.fail()
	}
	return out
}

// intset reads the members of a Redis intset (intset.c: encoding 2, 4 or
// 8, a count, the integers strictly ascending, all little-endian).
func (r *reader) intset(is []byte) [][]byte {
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
