package lib_test

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// benchLua runs fn(arg) from Lua in a loop: the libraries as a script calls
// them, argument checks and all.
func benchLua(b *testing.B, fn string, arg string) {
	L := newState()
	defer L.Close()
	if err := L.DoString("f = " + fn); err != nil {
		b.Fatal(err)
	}
	f := L.GetGlobal("f")
	in := lua.LString(arg)
	b.SetBytes(int64(len(arg)))
	b.ReportAllocs()
	for b.Loop() {
		if err := L.CallByParam(lua.P{Fn: f, NRet: 1, Protect: true}, in); err != nil {
			b.Fatal(err)
		}
		L.SetTop(0)
	}
}

var benchJSON = "[" + strings.Repeat(`{"id":12345,"name":"a name","tags":["x","y"],"score":3.25,"ok":true},`, 999) +
	`{"id":1,"name":"last","tags":[],"score":0,"ok":false}]`

func BenchmarkCJSONDecode(b *testing.B) { benchLua(b, "cjson.decode", benchJSON) }

func BenchmarkCJSONEncode(b *testing.B) {
	benchLua(b, "function(s) return cjson.encode(cjson.decode(s)) end", benchJSON)
}

func BenchmarkCmsgpackRoundTrip(b *testing.B) {
	benchLua(b, "function(s) return cmsgpack.unpack(cmsgpack.pack(cjson.decode(s))) end", benchJSON)
}

func BenchmarkStructUnpack(b *testing.B) {
	benchLua(b, "function(s) return struct.unpack('>i4 i4 d c8 s', s) end",
		"\x00\x00\x00\x01\x00\x00\x00\x02\x40\x09\x21\xfb\x54\x44\x2d\x18abcdefghend\x00")
}
