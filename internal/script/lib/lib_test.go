package lib_test

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/minikv/minikv/internal/script/lib"
)

// TestArgumentErrorsNameTheCall guards, without a redis-server, what the
// comparisons with Redis check: the messages below are redis-server 7.2.4's.
// The method-call ones depend on reading gopher-lua's call frame (see
// calledAsMethod), which a gopher-lua upgrade could break.
func TestArgumentErrorsNameTheCall(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{`return cjson.encode(1, 2)`, "user_script:1: bad argument #1 to 'encode' (expected 1 argument)"},
		{`local f = cjson.encode return f(1, 2)`, "user_script:1: bad argument #1 to 'f' (expected 1 argument)"},
		{`return select(2, pcall(cjson.encode, 1, 2))`, "bad argument #1 to '?' (expected 1 argument)"},
		{`return cjson:encode(1)`, "user_script:1: calling 'encode' on bad self (expected 1 argument)"},
		{`return cjson:encode(cjson.encode(1), 2)`, "user_script:1: calling 'encode' on bad self (expected 1 argument)"},
		{`return cmsgpack:unpack_limit()`, "user_script:1: bad argument #1 to 'unpack_limit' (number expected, got no value)"},
		{`return struct.pack("i")`, "user_script:1: bad argument #2 to 'pack' (number expected, got nil)"},
		{`return cmsgpack.unpack("\129\192\1")`, "table index is nil"},
	} {
		L := newState()
		fn, err := L.Load(strings.NewReader(`local ok, e = pcall(function() `+c.code+` end) return e`), "user_script")
		if err != nil {
			t.Fatal(err)
		}
		L.Push(fn)
		if err := L.PCall(0, 1, nil); err != nil {
			t.Fatalf("%s: %v", c.code, err)
		}
		if got := L.Get(-1).String(); got != c.want {
			t.Errorf("%s: error %q, want %q", c.code, got, c.want)
		}
		L.Close()
	}
}

// TestIsNull checks that cjson.null, from any cjson table of a state, is
// what IsNull recognises, and nothing else is.
func TestIsNull(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	lib.Open(L)
	if err := L.DoString(`return cjson.decode("null"), cjson.new().null, cjson.decode("[null]"), false`); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false, false} {
		if got := lib.IsNull(L, L.Get(i+1)); got != want {
			t.Errorf("IsNull(value %d) = %v, want %v", i+1, got, want)
		}
	}
	lib.Open(L) // a second Open keeps the state's one null
	if err := L.DoString(`assert(cjson.decode("null") == cjson.null)`); err != nil {
		t.Error(err)
	}
}
