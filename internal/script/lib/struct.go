package lib

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// struct is Roberto Ierusalimschy's struct library (struct.c 1.4) as Redis
// ships it in deps/lua/src/lua_struct.c, with the bounds checks Redis added
// (CVE-2020-14147): struct.pack, struct.unpack, struct.size.
//
// Formats, with the sizes of Redis's x86-64 build:
//
//	>  big endian            <  little endian (the default, native)
//	![n]  maximum alignment n (default 8)    ' '  ignored
//	x  one byte of padding   b/B  signed/unsigned char (1)
//	h/H  short (2)           l/L  long (8)    T  size_t (8)
//	i/I[n]  int of n bytes (default 4, at most 32)
//	c[n]  n chars; c0 packs the whole string, unpacks the length read just before
//	s  zero-terminated string    f  float (4)    d  double (8)

const (
	structMaxIntSize = 32
	structMaxAlign   = 8 // max(offsetof(struct{char; double}, d), sizeof(int))
	structBig        = 0
	structLittle     = 1
	structNative     = structLittle
)

type structHeader struct {
	endian int
	align  int
}

func newStruct(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	setFuncs(L, t, map[string]lua.LGFunction{
		"pack":   structPack,
		"unpack": structUnpack,
		"size":   structSize,
	})
	return t
}

// structFormat walks a format string as the C code walks its char pointer:
// it ends at the end of the string (checkCString already cut it at a NUL).
type structFormat struct {
	s string
	i int
}

func (f *structFormat) more() bool { return f.i < len(f.s) }

func (f *structFormat) next() byte {
	c := f.s[f.i]
	f.i++
	return c
}

// getnum reads an optional decimal count, refusing one an int cannot hold.
func (f *structFormat) getnum(L *lua.LState, df int) int {
	if !f.more() || !isDigit(f.s[f.i]) {
		return df
	}
	a := 0
	for f.more() && isDigit(f.s[f.i]) {
		d := int(f.s[f.i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			raise(L, "integral size overflow")
		}
		a = a*10 + d
		f.i++
	}
	return a
}

func (f *structFormat) optsize(L *lua.LState, opt byte) int {
	switch opt {
	case 'B', 'b', 'x':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'c':
		return f.getnum(L, 1)
	case 'i', 'I':
		sz := f.getnum(L, 4)
		if sz > structMaxIntSize {
			raise(L, "integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0 // other options need no alignment
}

// gettoalign is the padding before an item of size bytes at offset pos. The
// arithmetic is the C code's on size_t, including for sizes that are not
// powers of two.
func gettoalign(pos uint64, h *structHeader, opt byte, size int) uint64 {
	if size == 0 || opt == 'c' {
		return 0
	}
	sz := uint64(size)
	if sz > uint64(h.align) {
		sz = uint64(h.align)
	}
	return (sz - (pos & (sz - 1))) & (sz - 1)
}

// controloptions handles the options that are not items.
func (f *structFormat) controloptions(L *lua.LState, opt byte, h *structHeader) {
	switch opt {
	case ' ':
	case '>':
		h.endian = structBig
	case '<':
		h.endian = structLittle
	case '!':
		a := f.getnum(L, structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			raise(L, "alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		argError(L, 1, fmt.Sprintf("invalid format option '%c'", opt))
	}
}

// putinteger writes the number as the C code does: negative numbers through a
// long, others through an unsigned long, then size bytes of that 64-bit value
// (zeros past the eighth byte).
func putinteger(L *lua.LState, b *strings.Builder, arg int, endian, size int) {
	n := checkNumber(L, arg)
	var v uint64
	if n < 0 {
		v = uint64(cInt64(n))
	} else {
		v = cUint64(n)
	}
	buf := make([]byte, size)
	for i := 0; i < size; i++ {
		j := i
		if endian == structBig {
			j = size - 1 - i
		}
		buf[j] = byte(v)
		v >>= 8
		if i >= 7 {
			v = 0
		}
	}
	b.Write(buf)
}

func structPack(L *lua.LState) int {
	f := &structFormat{s: checkCString(L, 1)}
	h := structHeader{endian: structNative, align: 1}
	arg := 2
	var total uint64
	var b strings.Builder
	// The C code pushes a nil to mark the end of the arguments before its
	// buffer: a missing argument right after the last one is "nil", not "no
	// value", in its error messages.
	L.Push(lua.LNil)
	for f.more() {
		opt := f.next()
		size := f.optsize(L, opt)
		pad := gettoalign(total, &h, opt, size)
		total += pad
		for ; pad > 0; pad-- {
			b.WriteByte(0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			putinteger(L, &b, arg, h.endian, size)
			arg++
		case 'x':
			b.WriteByte(0)
		case 'f':
			bits := math.Float32bits(float32(checkNumber(L, arg)))
			arg++
			if h.endian == structBig {
				b.Write(binary.BigEndian.AppendUint32(nil, bits))
			} else {
				b.Write(binary.LittleEndian.AppendUint32(nil, bits))
			}
		case 'd':
			bits := math.Float64bits(checkNumber(L, arg))
			arg++
			if h.endian == structBig {
				b.Write(binary.BigEndian.AppendUint64(nil, bits))
			} else {
				b.Write(binary.LittleEndian.AppendUint64(nil, bits))
			}
		case 'c', 's':
			s := checkLString(L, arg)
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				// The C code has already moved arg on: it blames the next one.
				argError(L, arg, "string too short")
			}
			b.WriteString(s[:size])
			if opt == 's' {
				b.WriteByte(0)
				size++
			}
		default:
			f.controloptions(L, opt, &h)
		}
		total += uint64(size)
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// getinteger reads size bytes into a 64-bit value (earlier bytes shift out
// past the eighth) and sign-extends with the C code's mask, whose shift count
// x86-64 takes modulo 64.
func getinteger(data string, endian int, signed bool, size int) float64 {
	var l uint64
	for i := 0; i < size; i++ {
		j := i
		if endian != structBig {
			j = size - 1 - i
		}
		l = l<<8 | uint64(data[j])
	}
	if !signed {
		return float64(l)
	}
	mask := ^uint64(0) << (uint(size*8-1) & 63)
	if l&mask != 0 {
		l |= mask
	}
	return float64(int64(l))
}

func structUnpack(L *lua.LState) int {
	f := &structFormat{s: checkCString(L, 1)}
	data := checkLString(L, 2)
	ld := uint64(len(data))
	pos := uint64(optInteger(L, 3, 1))
	if pos == 0 {
		argError(L, 3, "offset must be 1 or greater")
	}
	pos-- // Lua offsets are 1-based
	h := structHeader{endian: structNative, align: 1}
	top := L.GetTop()
	var results []lua.LValue
	for f.more() {
		opt := f.next()
		size := uint64(f.optsize(L, opt))
		pos += gettoalign(pos, &h, opt, int(size))
		if !(size <= ld && pos <= ld-size) {
			argError(L, 2, "data string too short")
		}
		// Stack space for the item and the next position.
		if top+len(results)+2 > maxCStack {
			raise(L, "stack overflow (too many results)")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			signed := 'a' <= opt && opt <= 'z'
			results = append(results, lua.LNumber(getinteger(data[pos:], h.endian, signed, int(size))))
		case 'x':
		case 'f':
			bits := binary.LittleEndian.Uint32([]byte(data[pos : pos+4]))
			if h.endian == structBig {
				bits = binary.BigEndian.Uint32([]byte(data[pos : pos+4]))
			}
			results = append(results, lua.LNumber(math.Float32frombits(bits)))
		case 'd':
			bits := binary.LittleEndian.Uint64([]byte(data[pos : pos+8]))
			if h.endian == structBig {
				bits = binary.BigEndian.Uint64([]byte(data[pos : pos+8]))
			}
			results = append(results, lua.LNumber(math.Float64frombits(bits)))
		case 'c':
			if size == 0 {
				var prev float64
				ok := false
				if len(results) > 0 {
					prev, ok = toNumber(results[len(results)-1])
				}
				if !ok {
					raise(L, "format 'c0' needs a previous size")
				}
				size = cUint64(prev)
				results = results[:len(results)-1]
				if !(size <= ld && pos <= ld-size) {
					argError(L, 2, "data string too short")
				}
			}
			results = append(results, lua.LString(data[pos:pos+size]))
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				raise(L, "unfinished string in data")
			}
			results = append(results, lua.LString(data[pos:pos+uint64(e)]))
			size = uint64(e) + 1
		default:
			f.controloptions(L, opt, &h)
		}
		pos += size
	}
	for _, v := range results {
		L.Push(v)
	}
	L.Push(lua.LNumber(int64(pos + 1)))
	return len(results) + 1
}

func structSize(L *lua.LState) int {
	f := &structFormat{s: checkCString(L, 1)}
	h := structHeader{endian: structNative, align: 1}
	var pos uint64
	for f.more() {
		opt := f.next()
		size := f.optsize(L, opt)
		pos += gettoalign(pos, &h, opt, size)
		if opt == 's' {
			argError(L, 1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			argError(L, 1, "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			f.controloptions(L, opt, &h)
		}
		pos += uint64(size)
	}
	L.Push(lua.LNumber(int64(pos)))
	return 1
}
