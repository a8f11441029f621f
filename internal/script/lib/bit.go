package lib

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// bit is LuaBitOp 1.0.2 (deps/lua/src/lua_bit.c): 32-bit operations on Lua
// numbers, every result a signed 32-bit value returned as a number.

func newBit(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	setFuncs(L, t, map[string]lua.LGFunction{
		"tobit":  func(L *lua.LState) int { return bret(L, barg(L, 1)) },
		"bnot":   func(L *lua.LState) int { return bret(L, ^barg(L, 1)) },
		"band":   bitOp(func(a, b uint32) uint32 { return a & b }),
		"bor":    bitOp(func(a, b uint32) uint32 { return a | b }),
		"bxor":   bitOp(func(a, b uint32) uint32 { return a ^ b }),
		"lshift": bitShift(func(b, n uint32) uint32 { return b << n }),
		"rshift": bitShift(func(b, n uint32) uint32 { return b >> n }),
		"arshift": bitShift(func(b, n uint32) uint32 {
			return uint32(int32(b) >> n)
		}),
		"rol": bitShift(func(b, n uint32) uint32 { return b<<n | b>>(32-n) }),
		"ror": bitShift(func(b, n uint32) uint32 { return b<<(32-n) | b>>n }),
		"bswap": func(L *lua.LState) int {
			b := barg(L, 1)
			return bret(L, b>>24|(b>>8)&0xff00|(b&0xff00)<<8|b<<24)
		},
		"tohex": bitTohex,
	})
	return t
}

// barg converts argument idx as LuaBitOp does on a Lua 5.1 double: adding
// 2^52+2^51 moves the integer part, rounded to nearest even, into the low 32
// bits of the mantissa, which wraps any number modulo 2^32.
func barg(L *lua.LState, idx int) uint32 {
	f, ok := toNumber(L.Get(idx))
	if !ok {
		f = 0
	}
	b := uint32(math.Float64bits(f + 6755399441055744.0))
	if b == 0 && !ok {
		typeError(L, idx, "number")
	}
	return b
}

// bret returns b as a signed 32-bit number.
func bret(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

// bitOp folds its arguments from the last to the second into the first, the
// order in which the C code converts (and complains about) them.
func bitOp(op func(a, b uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := barg(L, 1)
		for i := L.GetTop(); i > 1; i-- {
			b = op(b, barg(L, i))
		}
		return bret(L, b)
	}
}

func bitShift(op func(b, n uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := barg(L, 1)
		n := barg(L, 2) & 31
		return bret(L, op(b, n))
	}
}

// bitTohex is bit.tohex(x [, n]): n hex digits (8 by default, at most 8),
// upper case when n is negative. Redis 7.2.4 cannot negate n = -2^31 and
// reads far past its buffer; this clamps n first, as Redis's later fix does.
func bitTohex(L *lua.LState) int {
	b := barg(L, 1)
	n := int32(8)
	if !isNone(L, 2) {
		n = int32(barg(L, 2))
	}
	digits := "0123456789abcdef"
	if n == math.MinInt32 {
		n = math.MinInt32 + 1
	}
	if n < 0 {
		n = -n
		digits = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	buf := make([]byte, n)
	for i := int(n) - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}
