package rdb

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/minikv/minikv/internal/store"
)

// The encodings Redis no longer writes but Redis 7.2 still reads, so
// dumps of older servers load: linked lists (RDB_TYPE_LIST), sorted sets
// with scores as strings (RDB_TYPE_ZSET), zipmaps (hashes before 2.6),
// ziplists (lists before 3.2, small hashes and sorted sets before 7.0)
// and quicklists of ziplists (lists from 3.2 to 6.2). Each blob is
// checked whole before an entry of it is used, as Redis's deep
// sanitization does.
//
// A ziplist (ziplist.c):
//
//	| zlbytes (4, LE) | zltail (4, LE) | zllen (2, LE) | entry ... | 0xFF |
//
//	entry   | prevlen: 1 byte < 254, or 0xFE + 4 bytes LE | encoding | data |
//	00pppppp                 string of up to 63 bytes
//	01pppppp qqqqqqqq        string of up to 16383 bytes (14 bits, BE)
//	10000000 + 4 bytes BE    longer string
//	0xC0 int16, 0xD0 int32, 0xE0 int64, 0xF0 int24, 0xFE int8 (LE)
//	0xF1..0xFD               the integer 0..12 in the byte itself
//
// A zipmap (zipmap.c):
//
//	| zmlen (1) | len key len(value) free value [free bytes] ... | 0xFF |
//
// where a len is 1 byte < 254, or 0xFE + 4 bytes LE.

// oldValue reads an object in one of the old encodings into v; false for
// a type this package does not know.
func (r *reader) oldValue(v *Value) bool {
	switch v.typ {
	case typeList:
		v.Kind = store.KindList
		n := r.count(1)
		for range n {
			v.elems = append(v.elems, r.str())
		}
	case typeZSet:
		v.Kind = store.KindZSet
		n := r.count(2)
		for range n {
			v.elems = append(v.elems, r.str())
			v.scores = append(v.scores, r.stringScore())
		}
	case typeHashZipmap:
		v.Kind = store.KindHash
		v.elems = r.zipmap(r.str())
	case typeListZiplist:
		v.Kind = store.KindList
		v.elems = r.ziplist(r.str())
	case typeHashZiplist:
		v.Kind = store.KindHash
		v.elems = r.ziplist(r.str())
		if len(v.elems)%2 != 0 {
			r.fail()
		}
	case typeZSetZiplist:
		v.Kind = store.KindZSet
		r.zsetPairs(v, r.ziplist(r.str()))
	case typeListQuick:
		v.Kind = store.KindList
		n := r.count(1)
		for range n {
			v.elems = append(v.elems, r.ziplist(r.str())...)
		}
	default:
		return false
	}
	return true
}

// stringScore reads an RDB_TYPE_ZSET score: a 1-byte length and the
// number's text, or 253, 254, 255 for NaN, +inf, -inf.
func (r *reader) stringScore() float64 {
	n := r.byte()
	switch n {
	case 253:
		r.fail() // NaN: refused, as by valid
		return 0
	case 254:
		return math.Inf(1)
	case 255:
		return math.Inf(-1)
	}
	b := r.take(uint64(n))
	if r.err != nil {
		return 0
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		r.fail()
	}
	return f
}

// ziplist checks zl and returns its entries, integers in decimal form.
func (r *reader) ziplist(zl []byte) [][]byte {
	if r.err != nil {
		return nil
	}
	out, ok := ziplistEntries(zl)
	if !ok {
		r.fail()
	}
	return out
}

func ziplistEntries(zl []byte) ([][]byte, bool) {
	const header = 10
	if len(zl) < header+1 || binary.LittleEndian.Uint32(zl) != uint32(len(zl)) || zl[len(zl)-1] != 0xFF {
		return nil, false
	}
	tail := binary.LittleEndian.Uint32(zl[4:])
	count := binary.LittleEndian.Uint16(zl[8:])
	var out [][]byte
	p, prevSize, last := header, 0, header
	for zl[p] != 0xFF {
		start := p
		// prevlen: the size of the entry before, 0 for the first.
		prev := int(zl[p])
		p++
		if prev == 254 {
			if p+4 > len(zl) {
				return nil, false
			}
			prev = int(binary.LittleEndian.Uint32(zl[p:]))
			p += 4
		}
		if prev != prevSize || p >= len(zl) {
			return nil, false
		}
		enc := zl[p]
		p++
		var data []byte
		need := func(n int) bool {
			if n < 0 || p+n > len(zl)-1 {
				return false
			}
			data = zl[p : p+n]
			p += n
			return true
		}
		ok := true
		switch {
		case enc>>6 == 0:
			ok = need(int(enc & 0x3F))
		case enc>>6 == 1:
			if p >= len(zl)-1 {
				return nil, false
			}
			n := int(enc&0x3F)<<8 | int(zl[p])
			p++
			ok = need(n)
		case enc == 0x80:
			if p+4 > len(zl)-1 {
				return nil, false
			}
			n := binary.BigEndian.Uint32(zl[p:])
			p += 4
			ok = n < uint32(len(zl)) && need(int(n))
		case enc == 0xC0:
			if ok = need(2); ok {
				data = strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(data))), 10)
			}
		case enc == 0xD0:
			if ok = need(4); ok {
				data = strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(data))), 10)
			}
		case enc == 0xE0:
			if ok = need(8); ok {
				data = strconv.AppendInt(nil, int64(binary.LittleEndian.Uint64(data)), 10)
			}
		case enc == 0xF0:
			if ok = need(3); ok {
				x := int32(uint32(data[0])<<8|uint32(data[1])<<16|uint32(data[2])<<24) >> 8
				data = strconv.AppendInt(nil, int64(x), 10)
			}
		case enc == 0xFE:
			if ok = need(1); ok {
				data = strconv.AppendInt(nil, int64(int8(data[0])), 10)
			}
		case enc >= 0xF1 && enc <= 0xFD:
			data = strconv.AppendInt(nil, int64(enc&0x0F)-1, 10)
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
		out = append(out, data)
		prevSize, last = p-start, start
	}
	if p != len(zl)-1 || uint32(last) != tail || count != 0xFFFF && int(count) != len(out) {
		return nil, false
	}
	return out, true
}

// zipmap checks zm and returns its field, value pairs.
func (r *reader) zipmap(zm []byte) [][]byte {
	if r.err != nil {
		return nil
	}
	out, ok := zipmapEntries(zm)
	if !ok {
		r.fail()
	}
	return out
}

func zipmapEntries(zm []byte) ([][]byte, bool) {
	if len(zm) < 2 || zm[len(zm)-1] != 0xFF {
		return nil, false
	}
	p := 1
	length := func() (int, bool) {
		if p >= len(zm) {
			return 0, false
		}
		n := int(zm[p])
		p++
		switch n {
		case 254:
			if p+4 > len(zm) {
				return 0, false
			}
			n = int(binary.LittleEndian.Uint32(zm[p:]))
			p += 4
		case 255:
			return 0, false
		}
		return n, n <= len(zm)
	}
	str := func(n int) ([]byte, bool) {
		if p+n > len(zm)-1 {
			return nil, false
		}
		s := zm[p : p+n]
		p += n
		return s, true
	}
	var out [][]byte
	for p < len(zm) && zm[p] != 0xFF {
		kl, ok := length()
		if !ok {
			return nil, false
		}
		k, ok := str(kl)
		if !ok {
			return nil, false
		}
		vl, ok := length()
		if !ok || p >= len(zm) {
			return nil, false
		}
		free := int(zm[p])
		p++
		v, ok := str(vl)
		if !ok {
			return nil, false
		}
		if _, ok := str(free); !ok {
			return nil, false
		}
		out = append(out, k, v)
	}
	if p != len(zm)-1 || zm[0] < 254 && int(zm[0]) != len(out)/2 {
		return nil, false
	}
	return out, true
}
