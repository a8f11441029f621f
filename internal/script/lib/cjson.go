package lib

import (
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// cjson is lua-cjson 2.1.0 as Redis builds it (deps/lua/src/lua_cjson.c):
// encode, decode, their settings, cjson.new and cjson.null. The settings live
// in one jsonConfig per module table, shared by its functions as the C code
// shares its config userdata through an upvalue; cjson.new makes another
// table with default settings.

// The defaults lua-cjson is built with in Redis.
const (
	defaultSparseConvert    = 0
	defaultSparseRatio      = 2
	defaultSparseSafe       = 10
	defaultEncodeMaxDepth   = 1000
	defaultDecodeMaxDepth   = 1000
	defaultEncodeInvalidNum = 0
	defaultDecodeInvalidNum = 1
	defaultEncodeKeepBuffer = 1
	defaultNumberPrecision  = 14
)

type jsonConfig struct {
	null *lua.LUserData // cjson.null of this state

	encodeSparseConvert   int
	encodeSparseRatio     int32
	encodeSparseSafe      int32
	encodeMaxDepth        int32
	encodeInvalidNumbers  int // 0 refuse, 1 allow, 2 encode as null
	encodeNumberPrecision int32
	encodeKeepBuffer      int

	decodeInvalidNumbers int
	decodeMaxDepth       int32
}

// nullKey is the registry field holding the state's cjson.null, so that
// IsNull and every cjson table of a state share it, as they share the one
// NULL light userdata in C.
const nullKey = "minikv.script.lib.cjson.null"

func newJSONNull(L *lua.LState) *lua.LUserData {
	if ud := stateNull(L); ud != nil {
		return ud
	}
	ud := L.NewUserData()
	L.SetField(L.Get(lua.RegistryIndex), nullKey, ud)
	return ud
}

func stateNull(L *lua.LState) *lua.LUserData {
	ud, _ := L.GetField(L.Get(lua.RegistryIndex), nullKey).(*lua.LUserData)
	return ud
}

func newCJSON(L *lua.LState, null *lua.LUserData) *lua.LTable {
	cfg := &jsonConfig{
		null:                  null,
		encodeSparseConvert:   defaultSparseConvert,
		encodeSparseRatio:     defaultSparseRatio,
		encodeSparseSafe:      defaultSparseSafe,
		encodeMaxDepth:        defaultEncodeMaxDepth,
		decodeMaxDepth:        defaultDecodeMaxDepth,
		encodeInvalidNumbers:  defaultEncodeInvalidNum,
		decodeInvalidNumbers:  defaultDecodeInvalidNum,
		encodeKeepBuffer:      defaultEncodeKeepBuffer,
		encodeNumberPrecision: defaultNumberPrecision,
	}
	t := L.NewTable()
	setFuncs(L, t, map[string]lua.LGFunction{
		"encode":                  cfg.encode,
		"decode":                  cfg.decode,
		"encode_sparse_array":     cfg.cfgEncodeSparseArray,
		"encode_max_depth":        cfg.cfgEncodeMaxDepth,
		"decode_max_depth":        cfg.cfgDecodeMaxDepth,
		"encode_number_precision": cfg.cfgEncodeNumberPrecision,
		"encode_keep_buffer":      cfg.cfgEncodeKeepBuffer,
		"encode_invalid_numbers":  cfg.cfgEncodeInvalidNumbers,
		"decode_invalid_numbers":  cfg.cfgDecodeInvalidNumbers,
		"new": func(L *lua.LState) int {
			L.Push(newCJSON(L, null))
			return 1
		},
	})
	t.RawSetString("null", null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// ===== Configuration =====

// argInit is json_arg_init: at most args arguments, padded with nils so that
// the values the option functions push land after them.
func argInit(L *lua.LState, args int) {
	if L.GetTop() > args {
		argError(L, args+1, "found too many arguments")
	}
	for L.GetTop() < args {
		L.Push(lua.LNil)
	}
}

// integerOption is json_integer_option. The C code stores the value in an
// int and always blames argument 1 for a value out of range.
func integerOption(L *lua.LState, idx int, setting *int32, min, max int32) {
	if L.Get(idx) != lua.LNil {
		v := int32(checkInteger(L, idx))
		if v < min || v > max {
			argError(L, 1, fmt.Sprintf("expected integer between %d and %d", min, max))
		}
		*setting = v
	}
	L.Push(lua.LNumber(*setting))
}

// enumOption is json_enum_option with bool_true = 1: true/false or one of the
// option names; the reply is a boolean for settings 0 and 1, else the name.
func enumOption(L *lua.LState, idx int, setting *int, options []string) {
	if options == nil {
		options = []string{"off", "on"}
	}
	if v := L.Get(idx); v != lua.LNil {
		if b, ok := v.(lua.LBool); ok {
			*setting = 0
			if b {
				*setting = 1
			}
		} else {
			*setting = checkOption(L, idx, options)
		}
	}
	if *setting == 0 || *setting == 1 {
		L.Push(lua.LBool(*setting == 1))
	} else {
		L.Push(lua.LString(options[*setting]))
	}
}

// checkOption is luaL_checkoption without a default.
func checkOption(L *lua.LState, idx int, options []string) int {
	name := checkCString(L, idx)
	for i, o := range options {
		if o == name {
			return i
		}
	}
	argError(L, idx, fmt.Sprintf("invalid option '%s'", name))
	return 0
}

func (c *jsonConfig) cfgEncodeSparseArray(L *lua.LState) int {
	argInit(L, 3)
	enumOption(L, 1, &c.encodeSparseConvert, nil)
	integerOption(L, 2, &c.encodeSparseRatio, 0, math.MaxInt32)
	integerOption(L, 3, &c.encodeSparseSafe, 0, math.MaxInt32)
	return 3
}

func (c *jsonConfig) cfgEncodeMaxDepth(L *lua.LState) int {
	argInit(L, 1)
	integerOption(L, 1, &c.encodeMaxDepth, 1, math.MaxInt32)
	return 1
}

func (c *jsonConfig) cfgDecodeMaxDepth(L *lua.LState) int {
	argInit(L, 1)
	integerOption(L, 1, &c.decodeMaxDepth, 1, math.MaxInt32)
	return 1
}

func (c *jsonConfig) cfgEncodeNumberPrecision(L *lua.LState) int {
	argInit(L, 1)
	integerOption(L, 1, &c.encodeNumberPrecision, 1, 14)
	return 1
}

// cfgEncodeKeepBuffer only records the setting: the buffer it keeps in C is
// an allocation detail with no visible effect.
func (c *jsonConfig) cfgEncodeKeepBuffer(L *lua.LState) int {
	argInit(L, 1)
	enumOption(L, 1, &c.encodeKeepBuffer, nil)
	return 1
}

func (c *jsonConfig) cfgEncodeInvalidNumbers(L *lua.LState) int {
	argInit(L, 1)
	enumOption(L, 1, &c.encodeInvalidNumbers, []string{"off", "on", "null"})
	return 1
}

func (c *jsonConfig) cfgDecodeInvalidNumbers(L *lua.LState) int {
	argInit(L, 1)
	enumOption(L, 1, &c.decodeInvalidNumbers, nil)
	return 1
}

// ===== Encoding =====

// char2escape is lua-cjson's escape table: control characters, '"', '\\',
// '/' and DEL are escaped; every other byte, UTF-8 or not, is copied.
var char2escape = func() [256]string {
	var t [256]string
	for i := 0; i < 32; i++ {
		t[i] = fmt.Sprintf("\\u%04x", i)
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	t['"'], t['\\'], t['/'] = `\"`, `\\`, `\/`
	t[127] = `\u007f`
	return t
}()

type jsonEncoder struct {
	L   *lua.LState
	cfg *jsonConfig
	buf strings.Builder
	// top counts the Lua stack slots the C encoder would be using, for its
	// lua_checkstack(l, 3) at each level: the argument, plus one slot per
	// array level (the element) and two per object level (key, value).
	top int
}

func (c *jsonConfig) encode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "expected 1 argument")
	}
	e := &jsonEncoder{L: L, cfg: c, top: 1}
	e.appendData(L.Get(1), 0)
	L.Push(lua.LString(e.buf.String()))
	return 1
}

// exception is json_encode_exception.
func (e *jsonEncoder) exception(v lua.LValue, reason string) {
	raise(e.L, "Cannot serialise %s: %s", v.Type().String(), reason)
}

func (e *jsonEncoder) appendString(s string) {
	e.buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if esc := char2escape[s[i]]; esc != "" {
			e.buf.WriteString(esc)
		} else {
			e.buf.WriteByte(s[i])
		}
	}
	e.buf.WriteByte('"')
}

func (e *jsonEncoder) appendNumber(v lua.LValue, num float64) {
	switch e.cfg.encodeInvalidNumbers {
	case 0:
		if math.IsInf(num, 0) || math.IsNaN(num) {
			e.exception(v, "must not be NaN or Inf")
		}
	case 1:
		// Encoded as is, but NaN always as "nan": some platforms print "-nan".
		if math.IsNaN(num) {
			e.buf.WriteString("nan")
			return
		}
	default:
		if math.IsInf(num, 0) || math.IsNaN(num) {
			e.buf.WriteString("null")
			return
		}
	}
	e.buf.WriteString(fmtG(num, int(e.cfg.encodeNumberPrecision)))
}

// arrayLength is lua_array_length: the largest key when every key is a
// positive integral number (the C code keeps it in an int, so it is converted
// as a cast would), -1 for an object, including an excessively sparse array
// when converting those is allowed.
func (e *jsonEncoder) arrayLength(t *lua.LTable) int32 {
	var max, items int32
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		if !ok || n == 0 {
			return -1
		}
		f := float64(n)
		if math.Floor(f) != f || f < 1 {
			return -1
		}
		if f > float64(max) {
			max = cInt32(f)
		}
		items++
	}
	cfg := e.cfg
	if cfg.encodeSparseRatio > 0 && max > items*cfg.encodeSparseRatio && max > cfg.encodeSparseSafe {
		if cfg.encodeSparseConvert == 0 {
			e.exception(t, "excessively sparse array")
		}
		return -1
	}
	return max
}

// checkDepth is json_check_encode_depth.
func (e *jsonEncoder) checkDepth(depth int) {
	if depth <= int(e.cfg.encodeMaxDepth) && e.top+3 <= maxCStack {
		return
	}
	raise(e.L, "Cannot serialise, excessive nesting (%d)", depth)
}

func (e *jsonEncoder) appendData(v lua.LValue, depth int) {
	switch x := v.(type) {
	case lua.LString:
		e.appendString(string(x))
	case lua.LNumber:
		e.appendNumber(v, float64(x))
	case lua.LBool:
		if x {
			e.buf.WriteString("true")
		} else {
			e.buf.WriteString("false")
		}
	case *lua.LTable:
		depth++
		e.checkDepth(depth)
		if n := e.arrayLength(x); n > 0 {
			e.appendArray(x, n, depth)
		} else {
			e.appendObject(x, depth)
		}
	case *lua.LNilType:
		e.buf.WriteString("null")
	default:
		if v == e.cfg.null {
			e.buf.WriteString("null")
			return
		}
		e.exception(v, "type not supported")
	}
}

func (e *jsonEncoder) appendArray(t *lua.LTable, n int32, depth int) {
	e.buf.WriteByte('[')
	e.top++
	for i := int32(1); i <= n; i++ {
		if i > 1 {
			e.buf.WriteByte(',')
		}
		e.appendData(t.RawGet(lua.LNumber(i)), depth)
	}
	e.top--
	e.buf.WriteByte(']')
}

func (e *jsonEncoder) appendObject(t *lua.LTable, depth int) {
	e.buf.WriteByte('{')
	e.top += 2
	first := true
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if !first {
			e.buf.WriteByte(',')
		}
		first = false
		switch key := k.(type) {
		case lua.LNumber:
			e.buf.WriteByte('"')
			e.appendNumber(k, float64(key))
			e.buf.WriteString(`":`)
		case lua.LString:
			e.appendString(string(key))
			e.buf.WriteByte(':')
		default:
			e.exception(k, "table key must be a number or string")
		}
		e.appendData(v, depth)
	}
	e.top -= 2
	e.buf.WriteByte('}')
}
