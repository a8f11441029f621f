package lib

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// cmsgpack is lua-cmsgpack 0.4.0 as Redis ships it (deps/lua/src/
// lua_cmsgpack.c): pack, unpack, unpack_one and unpack_limit.
//
// Its encoding choices, which a script sees in the bytes: a number is an
// integer when it converts to an int64 and back unchanged, in the smallest
// msgpack integer type that holds it (unsigned types for positive values); any
// other number is a float32 when that holds it exactly, else a float64. A
// table whose keys are exactly 1..n is an array, any other table (and only
// those) a map; strings use the str8/str16/str32 (raw) types; nil, functions,
// userdata and threads are nil; tables nested 16 deep are nil too, which is how
// the C code survives cycles.

// maxNesting is LUACMSGPACK_MAX_NESTING.
const maxNesting = 16

func newCmsgpack(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	setFuncs(L, t, map[string]lua.LGFunction{
		"pack":         mpPack,
		"unpack":       mpUnpack,
		"unpack_one":   mpUnpackOne,
		"unpack_limit": mpUnpackLimit,
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

// ----- Encoding -----

func mpPack(L *lua.LState) int {
	nargs := L.GetTop()
	if nargs == 0 {
		argError(L, 0, "MessagePack pack needs input.")
	}
	if nargs+nargs > maxCStack {
		argError(L, 0, "Too many arguments for MessagePack pack.")
	}
	var buf []byte
	for i := 1; i <= nargs; i++ {
		buf = mpEncode(buf, L.Get(i), 0)
	}
	L.Push(lua.LString(buf))
	return 1
}

func mpEncode(buf []byte, v lua.LValue, level int) []byte {
	switch x := v.(type) {
	case lua.LString:
		return mpEncodeBytes(buf, string(x))
	case lua.LBool:
		if x {
			return append(buf, 0xc3)
		}
		return append(buf, 0xc2)
	case lua.LNumber:
		n := float64(x)
		if !math.IsInf(n, 0) && float64(cInt64(n)) == n {
			return mpEncodeInt(buf, cInt64(n))
		}
		return mpEncodeDouble(buf, n)
	case *lua.LTable:
		if level == maxNesting {
			return append(buf, 0xc0)
		}
		if n, ok := tableIsAnArray(x); ok {
			buf = mpEncodeArrayHeader(buf, uint64(n))
			for j := 1; j <= n; j++ {
				buf = mpEncode(buf, x.RawGet(lua.LNumber(j)), level+1)
			}
			return buf
		}
		n := 0
		for k, _ := x.Next(lua.LNil); k != lua.LNil; k, _ = x.Next(k) {
			n++
		}
		buf = mpEncodeMapHeader(buf, uint64(n))
		for k, val := x.Next(lua.LNil); k != lua.LNil; k, val = x.Next(k) {
			buf = mpEncode(buf, k, level+1)
			buf = mpEncode(buf, val, level+1)
		}
		return buf
	}
	return append(buf, 0xc0)
}

// tableIsAnArray is table_is_an_array: every key a positive number that an
// int holds exactly, and the largest key equal to the number of keys.
func tableIsAnArray(t *lua.LTable) (int, bool) {
	var count, max int32
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		if !ok {
			return 0, false
		}
		f := float64(n)
		if f <= 0 || math.IsInf(f, 0) || float64(cInt32(f)) != f {
			return 0, false
		}
		if int32(f) > max {
			max = int32(f)
		}
		count++
	}
	return int(count), max == count
}

func mpEncodeBytes(buf []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		buf = append(buf, 0xa0|byte(n))
	case n <= 0xff:
		buf = append(buf, 0xd9, byte(n))
	case n <= 0xffff:
		buf = append(buf, 0xda, byte(n>>8), byte(n))
	default:
		buf = append(buf, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(buf, s...)
}

func mpEncodeDouble(buf []byte, d float64) []byte {
	f := float32(d)
	if d == float64(f) {
		buf = append(buf, 0xca)
		return binary.BigEndian.AppendUint32(buf, math.Float32bits(f))
	}
	buf = append(buf, 0xcb)
	return binary.BigEndian.AppendUint64(buf, math.Float64bits(d))
}

func mpEncodeInt(buf []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(buf, byte(n))
		case n <= 0xff:
			return append(buf, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(buf, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(buf, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(buf, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(buf, byte(int8(n)))
	case n >= -128:
		return append(buf, 0xd0, byte(n))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(buf, 0xd1), uint16(n))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(buf, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(buf, 0xd3), uint64(n))
}

func mpEncodeArrayHeader(buf []byte, n uint64) []byte {
	switch {
	case n <= 15:
		return append(buf, 0x90|byte(n))
	case n <= 65535:
		return binary.BigEndian.AppendUint16(append(buf, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(buf, 0xdd), uint32(n))
}

func mpEncodeMapHeader(buf []byte, n uint64) []byte {
	switch {
	case n <= 15:
		return append(buf, 0x80|byte(n))
	case n <= 65535:
		return binary.BigEndian.AppendUint16(append(buf, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(buf, 0xdf), uint32(n))
}

// ----- Decoding -----

type mpErr int

const (
	mpOK     mpErr = iota
	mpEOF          // MP_CUR_ERROR_EOF: not enough data
	mpBadFmt       // MP_CUR_ERROR_BADFMT
)

type mpDecoder struct {
	L    *lua.LState
	data string
	pos  int
	err  mpErr
	// top counts the Lua stack slots the C decoder would be using, for its
	// luaL_checkstack calls: the arguments and every value decoded so far,
	// plus a table and a key per level being decoded.
	top int
}

func (d *mpDecoder) left() int { return len(d.data) - d.pos }

// checkStack is luaL_checkstack(L, 1, msg).
func (d *mpDecoder) checkStack(msg string) {
	if d.top+1 > maxCStack {
		raise(d.L, "stack overflow (%s)", msg)
	}
}

// decode is mp_decode_to_lua_type: one value, or LNil with d.err set.
func (d *mpDecoder) decode() lua.LValue {
	if d.left() < 1 {
		d.err = mpEOF
		return lua.LNil
	}
	d.checkStack("too many return values at once; use unpack_one or unpack_limit instead.")
	p := d.data[d.pos:]
	need := func(n int) bool {
		if len(p) < n {
			d.err = mpEOF
			return false
		}
		return true
	}
	u16 := func() int { return int(p[1])<<8 | int(p[2]) }
	u32 := func() uint32 { return binary.BigEndian.Uint32([]byte(p[1:5])) }
	switch c := p[0]; c {
	case 0xcc: // uint 8
		if !need(2) {
			return lua.LNil
		}
		d.pos += 2
		return lua.LNumber(p[1])
	case 0xd0: // int 8
		if !need(2) {
			return lua.LNil
		}
		d.pos += 2
		return lua.LNumber(int8(p[1]))
	case 0xcd: // uint 16
		if !need(3) {
			return lua.LNil
		}
		d.pos += 3
		return lua.LNumber(u16())
	case 0xd1: // int 16
		if !need(3) {
			return lua.LNil
		}
		d.pos += 3
		return lua.LNumber(int16(u16()))
	case 0xce: // uint 32
		if !need(5) {
			return lua.LNil
		}
		d.pos += 5
		return lua.LNumber(u32())
	case 0xd2: // int 32
		if !need(5) {
			return lua.LNil
		}
		d.pos += 5
		return lua.LNumber(int32(u32()))
	case 0xcf: // uint 64, pushed as a lua_Integer: above 2^63 it wraps
		if !need(9) {
			return lua.LNil
		}
		d.pos += 9
		return lua.LNumber(int64(binary.BigEndian.Uint64([]byte(p[1:9]))))
	case 0xd3: // int 64
		if !need(9) {
			return lua.LNil
		}
		d.pos += 9
		return lua.LNumber(int64(binary.BigEndian.Uint64([]byte(p[1:9]))))
	case 0xc0:
		d.pos++
		return lua.LNil
	case 0xc3:
		d.pos++
		return lua.LTrue
	case 0xc2:
		d.pos++
		return lua.LFalse
	case 0xca: // float
		if !need(5) {
			return lua.LNil
		}
		d.pos += 5
		return lua.LNumber(math.Float32frombits(u32()))
	case 0xcb: // double
		if !need(9) {
			return lua.LNil
		}
		d.pos += 9
		return lua.LNumber(math.Float64frombits(binary.BigEndian.Uint64([]byte(p[1:9]))))
	case 0xd9: // raw 8
		if !need(2) {
			return lua.LNil
		}
		l := int(p[1])
		if !need(2 + l) {
			return lua.LNil
		}
		d.pos += 2 + l
		return lua.LString(p[2 : 2+l])
	case 0xda: // raw 16
		if !need(3) {
			return lua.LNil
		}
		l := u16()
		if !need(3 + l) {
			return lua.LNil
		}
		d.pos += 3 + l
		return lua.LString(p[3 : 3+l])
	case 0xdb: // raw 32
		if !need(5) {
			return lua.LNil
		}
		l := int(u32())
		d.pos += 5
		if d.left() < l {
			d.err = mpEOF
			return lua.LNil
		}
		s := d.data[d.pos : d.pos+l]
		d.pos += l
		return lua.LString(s)
	case 0xdc: // array 16
		if !need(3) {
			return lua.LNil
		}
		d.pos += 3
		return d.decodeArray(uint64(u16()))
	case 0xdd: // array 32
		if !need(5) {
			return lua.LNil
		}
		d.pos += 5
		return d.decodeArray(uint64(u32()))
	case 0xde: // map 16
		if !need(3) {
			return lua.LNil
		}
		d.pos += 3
		return d.decodeMap(uint64(u16()))
	case 0xdf: // map 32
		if !need(5) {
			return lua.LNil
		}
		d.pos += 5
		return d.decodeMap(uint64(u32()))
	default:
		switch {
		case c&0x80 == 0: // positive fixnum
			d.pos++
			return lua.LNumber(c)
		case c&0xe0 == 0xe0: // negative fixnum
			d.pos++
			return lua.LNumber(int8(c))
		case c&0xe0 == 0xa0: // fix raw
			l := int(c & 0x1f)
			if !need(1 + l) {
				return lua.LNil
			}
			d.pos += 1 + l
			return lua.LString(p[1 : 1+l])
		case c&0xf0 == 0x90: // fix array
			d.pos++
			return d.decodeArray(uint64(c & 0xf))
		case c&0xf0 == 0x80: // fix map
			d.pos++
			return d.decodeMap(uint64(c & 0xf))
		}
		d.err = mpBadFmt
		return lua.LNil
	}
}

// decodeArray is mp_decode_to_lua_array. Every element takes at least one
// byte, so a count larger than the input left fails with "Missing bytes"
// after the input runs out, never by allocating for the count.
func (d *mpDecoder) decodeArray(n uint64) lua.LValue {
	t := d.L.CreateTable(0, 0)
	d.top++ // the table
	d.checkStack("in function mp_decode_to_lua_array")
	for i := uint64(1); i <= n; i++ {
		d.top++ // the index
		v := d.decode()
		if d.err != mpOK {
			return lua.LNil
		}
		t.RawSet(lua.LNumber(i), v)
		d.top--
	}
	d.top--
	return t
}

// decodeMap is mp_decode_to_lua_hash; lua_settable refuses a nil or NaN key.
func (d *mpDecoder) decodeMap(n uint64) lua.LValue {
	t := d.L.CreateTable(0, 0)
	d.top++ // the table
	for ; n > 0; n-- {
		k := d.decode()
		if d.err != mpOK {
			return lua.LNil
		}
		d.top++
		v := d.decode()
		if d.err != mpOK {
			return lua.LNil
		}
		switch key := k.(type) {
		case *lua.LNilType:
			raiseBare(d.L, "table index is nil")
		case lua.LNumber:
			if math.IsNaN(float64(key)) {
				raiseBare(d.L, "table index is NaN")
			}
		}
		t.RawSet(k, v)
		d.top--
	}
	d.top--
	return t
}

// unpackFull is mp_unpack_full; limit and offset 0 decode everything and
// return no offset.
func unpackFull(L *lua.LState, limit, offset int64) int {
	s := checkLString(L, 1)
	decodeAll := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		raise(L, "Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(s)))
	} else if uint64(offset) > uint64(len(s)) {
		raise(L, "Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	if decodeAll {
		limit = math.MaxInt32
	}
	d := &mpDecoder{L: L, data: s, pos: int(offset), top: L.GetTop()}
	var values []lua.LValue
	for cnt := int64(0); d.left() > 0 && cnt < limit; cnt++ {
		v := d.decode()
		switch d.err {
		case mpEOF:
			raise(L, "Missing bytes in input.")
		case mpBadFmt:
			raise(L, "Bad data format in input.")
		}
		values = append(values, v)
		d.top++
	}
	if !decodeAll {
		d.checkStack("in function mp_unpack_full")
		next := int64(d.pos)
		if d.left() == 0 {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range values {
		L.Push(v)
	}
	if !decodeAll {
		return len(values) + 1
	}
	return len(values)
}

func mpUnpack(L *lua.LState) int { return unpackFull(L, 0, 0) }

func mpUnpackOne(L *lua.LState) int {
	offset := optInteger(L, 2, 0)
	popToFirst(L)
	return unpackFull(L, 1, offset)
}

func mpUnpackLimit(L *lua.LState) int {
	limit := checkInteger(L, 2)
	offset := optInteger(L, 3, 0)
	popToFirst(L)
	return unpackFull(L, limit, offset)
}

// popToFirst is the C code's lua_pop(L, lua_gettop(L)-1), which leaves an
// empty stack empty.
func popToFirst(L *lua.LState) {
	if L.GetTop() > 1 {
		L.SetTop(1)
	}
}
