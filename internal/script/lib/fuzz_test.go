package lib_test

import (
	"errors"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/minikv/minikv/internal/script/lib"
)

// The fuzz targets feed arbitrary bytes to the decoders through Lua, in a
// state with gopher-lua's default options, as a script would. A Lua error is
// an answer; a Go panic (which PCall turns into an ApiErrorPanic) is a bug.

// fuzzState is one state per fuzzing process: building one per input would
// spend most of the time in OpenLibs.
var fuzzState *lua.LState

// callLua calls the global function name with args and fails the test when
// the call panicked in Go rather than raising a Lua error.
func callLua(t *testing.T, name string, args ...lua.LValue) {
	t.Helper()
	if fuzzState == nil {
		// A msgpack map can carry a number key up to 2^32, and gopher-lua
		// pads its array part up to any key below MaxArrayIndex (64M):
		// one such key costs a gigabyte. Lowering the limit keeps the fuzzer
		// within memory without changing what the libraries do (keys past
		// it live in the hash part, as they would in Lua).
		lua.MaxArrayIndex = 1 << 16
		fuzzState = lua.NewState()
		lib.Open(fuzzState)
		if err := fuzzState.DoString(fuzzHelpers); err != nil {
			t.Fatal(err)
		}
	}
	L := fuzzState
	L.SetTop(0)
	err := L.CallByParam(lua.P{Fn: L.GetGlobal(name), NRet: 0, Protect: true}, args...)
	var apiErr *lua.ApiError
	if errors.As(err, &apiErr) && apiErr.Type == lua.ApiErrorPanic {
		t.Fatalf("%s(%q) panicked in Go: %v", name, args, err)
	}
}

// fuzzHelpers are the calls the targets make, in Lua so that the libraries
// run under a Lua caller, as in a script.
const fuzzHelpers = `
function fuzz_msgpack(s, n, off)
	local ok, a = pcall(cmsgpack.unpack, s)
	pcall(cmsgpack.unpack_one, s, off)
	pcall(cmsgpack.unpack_limit, s, n, off)
	if ok then pcall(cmsgpack.pack, a) end
end
function fuzz_struct(f, s, off)
	pcall(struct.unpack, f, s, off)
	pcall(struct.size, f)
	pcall(struct.pack, f, s, off, s, off)
end
function fuzz_json(s)
	local ok, v = pcall(cjson.decode, s)
	if ok then pcall(cjson.encode, v) end
	local c = cjson.new()
	c.decode_invalid_numbers(false)
	c.encode_invalid_numbers(true)
	ok, v = pcall(c.decode, s)
	if ok then pcall(c.encode, v) end
end
`

func FuzzCmsgpackUnpack(f *testing.F) {
	for _, seed := range []string{
		"", "\x01", "\xc0", "\xc2\xc3", "\xcc\xff", "\xcd\x01\x02", "\xce\x01\x02\x03\x04",
		"\xcf\xff\xff\xff\xff\xff\xff\xff\xff", "\xd3\x80\x00\x00\x00\x00\x00\x00\x00",
		"\xca\x40\x49\x0f\xdb", "\xcb\x40\x09\x21\xfb\x54\x44\x2d\x18",
		"\xa3abc", "\xd9\x03abc", "\xda\x00\x03abc", "\xdb\x00\x00\x00\x03abc",
		"\x93\x01\x02\x03", "\xdc\x00\x02\x01\x02", "\xdd\x00\x00\x00\x01\x01",
		"\x81\xa1a\x01", "\xde\x00\x01\x01\x02", "\xdf\x00\x00\x00\x01\xc0\x01",
		"\x81\xcb\xff\xf8\x00\x00\x00\x00\x00\x00\x01", "\xc1", "\xdb\xff\xff\xff\xff",
		"\xdd\xff\xff\xff\xff\x01", "\x91\x91\x91\x91\x91\x01", "\x81\xce\x03\x93\x87\x00\x01",
	} {
		f.Add([]byte(seed), int64(1), int64(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, n, off int64) {
		callLua(t, "fuzz_msgpack", lua.LString(data), lua.LNumber(n), lua.LNumber(off))
	})
}

func FuzzStructUnpack(f *testing.F) {
	for _, seed := range []struct {
		format, data string
		off          int64
	}{
		{">i", "\x00\x00\x01\x00", 1}, {"<h", "\xff\xff", 1}, {"bB", "\xff\xff", 1},
		{"!4 b i", "\x01\x00\x00\x00\x02\x00\x00\x00", 1}, {"Bc0", "\x03abcd", 1},
		{"c2c0", "10abcdefghijkl", 1}, {"s", "ab\x00cd", 1}, {">i16", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 1},
		{"f d", "\x00\x00\xc0\x3f\x00\x00\x00\x00\x00\x00\xf4\x3f", 1}, {"i33", "", 1},
		{"c99999999999", "a", 1}, {"!3", "", 1}, {"xxT", "0123456789", 2}, {"i", "abcd", -1},
		{"", "abc", 0}, {"!16 I5 i7 c3", "0123456789012345678901234567890123456789", 3},
	} {
		f.Add(seed.format, []byte(seed.data), seed.off)
	}
	f.Fuzz(func(t *testing.T, format string, data []byte, off int64) {
		callLua(t, "fuzz_struct", lua.LString(format), lua.LString(data), lua.LNumber(off))
	})
}

func FuzzCjsonDecode(f *testing.F) {
	for _, seed := range []string{
		`[1,2,3]`, `{"a":{"b":[true,false,null]}}`, `"\u00e9\ud83d\ude00\/"`, ` 12.5e3 `,
		`0x1F`, `-Infinity`, `NaN`, `+5`, `1.`, `.5`, `[1,]`, `{"a" 1}`, `{1:2}`, ``,
		`[1] x`, `tru`, `"abc`, `"\x"`, `"\u12"`, `"\udc00"`, `"\ud800\u0041"`,
		"[1]\x00junk", "\x00[", `{"a":1,"a":2}`, `[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]`,
		`1e400`, `-0`, `nan(123)`, `0x.8p1`, `[1e99999999999]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		callLua(t, "fuzz_json", lua.LString(data))
	})
}
