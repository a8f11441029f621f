package lib

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// maxCStack is Lua 5.1's LUAI_MAXCSTACK: lua_checkstack fails when a C
// function's stack would grow past it, and the C libraries turn that failure
// into their own error messages, which scripts can see.
const maxCStack = 8000

// Open registers cjson, cmsgpack, bit and struct as globals of L, each a fresh
// table, as Redis's luaLoadLibraries does for every scripting state.
func Open(L *lua.LState) {
	L.SetGlobal("cjson", newCJSON(L, newJSONNull(L)))
	L.SetGlobal("struct", newStruct(L))
	L.SetGlobal("cmsgpack", newCmsgpack(L))
	L.SetGlobal("bit", newBit(L))
}

// IsNull reports whether v is cjson.null, the value cjson.decode gives for a
// JSON null. In Redis it is a NULL light userdata, which a script's reply
// converts to a nil bulk reply like any other userdata.
func IsNull(L *lua.LState, v lua.LValue) bool {
	ud, ok := v.(*lua.LUserData)
	return ok && ud == stateNull(L)
}

// setFuncs fills a module table with Go functions, in the order of their
// names so that every state's tables are built, and traversed, alike.
func setFuncs(L *lua.LState, t *lua.LTable, funcs map[string]lua.LGFunction) {
	for _, name := range slices.Sorted(maps.Keys(funcs)) {
		t.RawSetString(name, L.NewFunction(funcs[name]))
	}
}

// raise raises msg as a Lua error the way luaL_error does from a C function:
// prefixed with the position of the Lua code that called the function, and
// with no prefix when the caller is not Lua code (pcall(f, ...)).
func raise(L *lua.LState, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	L.Error(lua.LString(where(L)+msg), 0)
}

// raiseBare raises msg without a position, as lua_error and luaG_runerror do
// from inside a C function ("table index is nil").
func raiseBare(L *lua.LState, msg string) {
	L.Error(lua.LString(msg), 0)
}

// where is luaL_where(L, 1): "chunk:line: " of the calling Lua function.
func where(L *lua.LState) string {
	dbg, ok := L.GetStack(1)
	if !ok {
		return ""
	}
	if _, err := L.GetInfo("Sl", dbg, nil); err != nil {
		return ""
	}
	if dbg.What == "G" || dbg.CurrentLine <= 0 {
		return ""
	}
	src := dbg.Source
	if strings.HasPrefix(src, "@") || strings.HasPrefix(src, "=") {
		src = src[1:]
	}
	return fmt.Sprintf("%s:%d: ", src, dbg.CurrentLine)
}

// funcName is the name Lua 5.1's luaL_argerror puts in quotes: how the
// calling code named the running function, or "?".
func funcName(L *lua.LState) string {
	dbg, ok := L.GetStack(0)
	if !ok {
		return "?"
	}
	if _, err := L.GetInfo("n", dbg, nil); err != nil {
		return "?"
	}
	// gopher-lua's names for calls it cannot name: from Go, at the bottom of
	// a state or of a coroutine ("corountine", sic), or of a Lua function.
	name := dbg.Name
	switch {
	case name == "", name == "(anonymous)", name == "main chunk", name == "corountine",
		strings.HasPrefix(name, "<"):
		return "?"
	}
	return name
}

// argError is luaL_argerror. A function called as a method (obj:f(...))
// does not count self among its arguments.
func argError(L *lua.LState, n int, msg string) {
	name := funcName(L)
	if calledAsMethod(L) {
		n--
		if n == 0 {
			raise(L, "calling '%s' on bad self (%s)", name, msg)
		}
	}
	raise(L, "bad argument #%d to '%s' (%s)", n, name, msg)
}

// calledAsMethod tells whether the Lua code one level up called the running
// function as obj:f(...). Lua 5.1 learns it from the instruction that loaded
// the called register (OP_SELF); gopher-lua does not report it, so this reads
// the caller's bytecode the same way, at the caller's program counter. The
// counter is in an unexported field of the pinned gopher-lua's call frame,
// read with reflect; should that field move, the answer is "no", and errors
// merely keep counting self as an argument.
func calledAsMethod(L *lua.LState) bool {
	dbg, ok := L.GetStack(1)
	if !ok {
		return false
	}
	fv, err := L.GetInfo("f", dbg, nil)
	fn, ok := fv.(*lua.LFunction)
	if err != nil || !ok || fn.IsG || fn.Proto == nil {
		return false
	}
	frame := reflect.ValueOf(dbg).Elem().FieldByName("frame")
	if !frame.IsValid() || frame.Kind() != reflect.Pointer || frame.IsNil() {
		return false
	}
	pcv := frame.Elem().FieldByName("Pc")
	if !pcv.IsValid() || pcv.Kind() != reflect.Int {
		return false
	}
	pc := int(pcv.Int()) - 1 // Pc is past the call instruction
	if pc < 0 || pc >= len(fn.Proto.Code) {
		return false
	}
	return selfCall(fn.Proto.Code, pc)
}

// selfCall reports whether the call instruction at pc calls a register last
// written by OP_SELF. Instructions are decoded as gopher-lua v1.1.2 encodes
// them: the opcode in the top 6 bits, register A in the next 8.
func selfCall(code []uint32, pc int) bool {
	op := func(i uint32) int { return int(i >> 26) }
	argA := func(i uint32) int { return int(i>>18) & 0xff }
	if o := op(code[pc]); o != lua.OP_CALL && o != lua.OP_TAILCALL {
		return false
	}
	a := argA(code[pc])
	for i := pc - 1; i >= 0; i-- {
		if argA(code[i]) != a {
			continue
		}
		switch op(code[i]) {
		case lua.OP_EQ, lua.OP_LT, lua.OP_LE, lua.OP_TEST, lua.OP_JMP, lua.OP_SETGLOBAL,
			lua.OP_SETUPVAL, lua.OP_SETTABLE, lua.OP_RETURN, lua.OP_CLOSE:
			continue // these read A, or use it as a flag: they do not load it
		case lua.OP_SELF:
			return true
		}
		return false
	}
	return false
}

// typeError is luaL_typerror.
func typeError(L *lua.LState, n int, tname string) {
	argError(L, n, fmt.Sprintf("%s expected, got %s", tname, typeName(L, n)))
}

// typeName is luaL_typename: "no value" past the last argument.
func typeName(L *lua.LState, n int) string {
	if n > L.GetTop() {
		return "no value"
	}
	return L.Get(n).Type().String()
}

// isNone is lua_isnone.
func isNone(L *lua.LState, n int) bool { return n > L.GetTop() }

// toNumber is lua_tonumber/lua_isnumber: numbers, and strings that Lua 5.1
// would convert.
func toNumber(v lua.LValue) (float64, bool) {
	switch x := v.(type) {
	case lua.LNumber:
		return float64(x), true
	case lua.LString:
		return str2d(string(x))
	}
	return 0, false
}

// str2d is Lua 5.1's luaO_str2d: strtod over the whole string (C string
// semantics: it ends at a NUL), trailing white space allowed.
func str2d(s string) (float64, bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	f, n := strtod(s[i:])
	if n == 0 {
		return 0, false
	}
	rest := s[i+n:]
	for j := 0; j < len(rest); j++ {
		if !isSpace(rest[j]) {
			return 0, false
		}
	}
	return f, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// checkNumber is luaL_checknumber.
func checkNumber(L *lua.LState, n int) float64 {
	f, ok := toNumber(L.Get(n))
	if !ok {
		typeError(L, n, "number")
	}
	return f
}

// checkInteger is luaL_checkinteger: the number truncated to lua_Integer
// (int64 on x86-64).
func checkInteger(L *lua.LState, n int) int64 {
	return cInt64(checkNumber(L, n))
}

// optInteger is luaL_optinteger.
func optInteger(L *lua.LState, n int, def int64) int64 {
	if v := L.Get(n); v == lua.LNil {
		return def
	}
	return checkInteger(L, n)
}

// checkLString is luaL_checklstring: strings, and numbers converted as Lua 5.1
// converts them ("%.14g").
func checkLString(L *lua.LState, n int) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return numberToString(float64(v))
	}
	typeError(L, n, "string")
	return ""
}

// checkCString is luaL_checkstring as C code that stops at the first NUL
// sees it.
func checkCString(L *lua.LState, n int) string {
	s := checkLString(L, n)
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s
}

// numberToString is Lua 5.1's tostring for numbers on glibc: "%.14g", with
// glibc's spellings of the special values.
func numberToString(f float64) string { return fmtG(f, 14) }

// fmtG is C's printf("%.<prec>g", f) as glibc prints it. strconv's 'g' with an
// explicit precision picks the same notation and drops trailing zeros as C
// does; only infinities and NaNs are spelt differently.
func fmtG(f float64, prec int) string {
	switch {
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', prec, 64)
}

// cInt64 converts like an x86-64 C cast from double to a 64-bit integer
// (cvttsd2si): truncation, and the "integer indefinite" value INT64_MIN for
// NaN and anything out of range.
func cInt64(f float64) int64 {
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// cInt32 is cInt64 for a 32-bit int.
func cInt32(f float64) int32 {
	if f != f || f >= 2147483648.0 || f < -2147483648.0 {
		return math.MinInt32
	}
	return int32(f)
}

// cUint64 converts like gcc's x86-64 code for a cast from double to a 64-bit
// unsigned integer: values below 2^63 (and NaN) through the signed
// conversion, larger ones offset by 2^63 first.
func cUint64(f float64) uint64 {
	if !(f >= 9223372036854775808.0) {
		return uint64(cInt64(f))
	}
	return uint64(cInt64(f-9223372036854775808.0)) ^ (1 << 63)
}
