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

// ===== Decoding =====

type jsonTokenType int

const (
	tObjBegin jsonTokenType = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
	tUnknown
)

var jsonTokenNames = [...]string{
	"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END",
	"T_WHITESPACE", "T_ERROR", "T_UNKNOWN",
}

// ch2token classifies a token's first byte. NUL ends the text, as the C
// parser reads a NUL-terminated string: whatever follows a NUL is ignored.
var ch2token = func() [256]jsonTokenType {
	var t [256]jsonTokenType
	for i := range t {
		t[i] = tError
	}
	t['{'], t['}'], t['['], t[']'] = tObjBegin, tObjEnd, tArrBegin, tArrEnd
	t[','], t[':'], t[0] = tComma, tColon, tEnd
	t[' '], t['\t'], t['\n'], t['\r'] = tWhitespace, tWhitespace, tWhitespace, tWhitespace
	for _, c := range "fiInNt\"+-0123456789" {
		t[c] = tUnknown
	}
	return t
}()

var escape2char = func() [256]byte {
	var t [256]byte
	t['"'], t['\\'], t['/'] = '"', '\\', '/'
	t['b'], t['t'], t['n'], t['f'], t['r'] = '\b', '\t', '\n', '\f', '\r'
	t['u'] = 'u'
	return t
}()

type jsonToken struct {
	typ    jsonTokenType
	index  int
	str    string // T_STRING value, or T_ERROR reason
	number float64
	bool   bool
}

type jsonParser struct {
	L     *lua.LState
	cfg   *jsonConfig
	data  string
	ptr   int
	depth int32
	// top counts the Lua stack slots the C parser would be using, for its
	// lua_checkstack at each level: the argument, one slot per array level
	// (the table) and two per object level (table, key).
	top int
}

// at reads the text as the C code reads its NUL-terminated copy.
func (p *jsonParser) at(i int) byte {
	if i < len(p.data) {
		return p.data[i]
	}
	return 0
}

func (p *jsonParser) hasPrefix(s string) bool {
	return strings.HasPrefix(p.data[min(p.ptr, len(p.data)):], s)
}

func (c *jsonConfig) decode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "expected 1 argument")
	}
	data := checkLString(L, 1)
	// Detect Unicode other than UTF-8 (RFC 4627, section 3).
	if len(data) >= 2 && (data[0] == 0 || data[1] == 0) {
		raise(L, "JSON parser does not support UTF-16 or UTF-32")
	}
	p := &jsonParser{L: L, cfg: c, data: data, top: 1}
	var tok jsonToken
	p.nextToken(&tok)
	v := p.processValue(&tok)
	p.nextToken(&tok)
	if tok.typ != tEnd {
		p.throwParseError("the end", &tok)
	}
	L.Push(v)
	return 1
}

func (p *jsonParser) setTokenError(tok *jsonToken, reason string) {
	tok.typ = tError
	tok.index = p.ptr
	tok.str = reason
}

func (p *jsonParser) nextToken(tok *jsonToken) {
	var ch byte
	for {
		ch = p.at(p.ptr)
		tok.typ = ch2token[ch]
		if tok.typ != tWhitespace {
			break
		}
		p.ptr++
	}
	tok.index = p.ptr
	switch tok.typ {
	case tError:
		p.setTokenError(tok, "invalid token")
		return
	case tEnd:
		return
	case tUnknown:
	default:
		p.ptr++
		return
	}
	switch {
	case ch == '"':
		p.nextStringToken(tok)
	case ch == '-' || isDigit(ch):
		if p.cfg.decodeInvalidNumbers == 0 && p.isInvalidNumber() {
			p.setTokenError(tok, "invalid number")
			return
		}
		p.nextNumberToken(tok)
	case p.hasPrefix("true"):
		tok.typ, tok.bool = tBoolean, true
		p.ptr += 4
	case p.hasPrefix("false"):
		tok.typ, tok.bool = tBoolean, false
		p.ptr += 5
	case p.hasPrefix("null"):
		tok.typ = tNull
		p.ptr += 4
	case p.cfg.decodeInvalidNumbers != 0 && p.isInvalidNumber():
		// Only numbers known to be invalid JSON (inf, nan, hex, '+'): any
		// other bad token is reported as a token, not as a number.
		p.nextNumberToken(tok)
	default:
		p.setTokenError(tok, "invalid token")
	}
}

// isInvalidNumber is json_is_invalid_number: numbers strtod reads but JSON
// forbids.
func (p *jsonParser) isInvalidNumber() bool {
	i := p.ptr
	if p.at(i) == '+' {
		return true
	}
	if p.at(i) == '-' {
		i++
	}
	if c := p.at(i); c == '0' {
		c2 := p.at(i + 1)
		return c2|0x20 == 'x' || isDigit(c2)
	} else if c <= '9' {
		return false
	}
	rest := p.data[min(i, len(p.data)):]
	return hasPrefixFold(rest, "inf") || hasPrefixFold(rest, "nan")
}

func (p *jsonParser) nextNumberToken(tok *jsonToken) {
	tok.typ = tNumber
	// No need to cut the text at a NUL as the C string ends there: a NUL
	// is never part of a number, so strtod stops before it anyway (and
	// looking for it would make decoding quadratic in the numbers).
	f, n := strtod(p.data[p.ptr:])
	if n == 0 {
		p.setTokenError(tok, "invalid number")
		return
	}
	tok.number = f
	p.ptr += n
}

func (p *jsonParser) nextStringToken(tok *jsonToken) {
	p.ptr++ // the opening quote
	var sb strings.Builder
	for {
		ch := p.at(p.ptr)
		if ch == '"' {
			break
		}
		if ch == 0 {
			p.setTokenError(tok, "unexpected end of string")
			return
		}
		if ch == '\\' {
			ch = escape2char[p.at(p.ptr+1)]
			if ch == 'u' {
				if p.appendUnicodeEscape(&sb) {
					continue
				}
				p.setTokenError(tok, "invalid unicode escape code")
				return
			}
			if ch == 0 {
				p.setTokenError(tok, "invalid escape code")
				return
			}
			p.ptr++
		}
		sb.WriteByte(ch)
		p.ptr++
	}
	p.ptr++ // the closing quote
	tok.typ = tString
	tok.str = sb.String()
}

func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c|0x20 && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10
	}
	return -1
}

func (p *jsonParser) decodeHex4(i int) int {
	v := 0
	for j := 0; j < 4; j++ {
		d := hexDigit(p.at(i + j))
		if d < 0 {
			return -1
		}
		v = v<<4 | d
	}
	return v
}

// appendUnicodeEscape is json_append_unicode_escape: \uXXXX, or a surrogate
// pair of them, to UTF-8.
func (p *jsonParser) appendUnicodeEscape(sb *strings.Builder) bool {
	escapeLen := 6
	cp := p.decodeHex4(p.ptr + 2)
	if cp < 0 {
		return false
	}
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 {
			return false // a low surrogate first
		}
		if p.at(p.ptr+6) != '\\' || p.at(p.ptr+7) != 'u' {
			return false
		}
		low := p.decodeHex4(p.ptr + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = ((cp&0x3FF)<<10 | low&0x3FF) + 0x10000
		escapeLen = 12
	}
	switch {
	case cp <= 0x7F:
		sb.WriteByte(byte(cp))
	case cp <= 0x7FF:
		sb.WriteByte(byte(cp>>6 | 0xC0))
		sb.WriteByte(byte(cp&0x3F | 0x80))
	case cp <= 0xFFFF:
		sb.WriteByte(byte(cp>>12 | 0xE0))
		sb.WriteByte(byte(cp>>6&0x3F | 0x80))
		sb.WriteByte(byte(cp&0x3F | 0x80))
	default:
		sb.WriteByte(byte(cp>>18 | 0xF0))
		sb.WriteByte(byte(cp>>12&0x3F | 0x80))
		sb.WriteByte(byte(cp>>6&0x3F | 0x80))
		sb.WriteByte(byte(cp&0x3F | 0x80))
	}
	p.ptr += escapeLen
	return true
}

func (p *jsonParser) throwParseError(exp string, tok *jsonToken) {
	found := jsonTokenNames[tok.typ]
	if tok.typ == tError {
		found = tok.str
	}
	raise(p.L, "Expected %s but found %s at character %d", exp, found, tok.index+1)
}

// descend is json_decode_descend.
func (p *jsonParser) descend(slots int) {
	p.depth++
	if p.depth <= p.cfg.decodeMaxDepth && p.top+slots <= maxCStack {
		return
	}
	raise(p.L, "Found too many nested data structures (%d) at character %d", p.depth, p.ptr)
}

func (p *jsonParser) parseObject() *lua.LTable {
	p.descend(3)
	t := p.L.CreateTable(0, 0)
	p.top += 2
	var tok jsonToken
	p.nextToken(&tok)
	if tok.typ == tObjEnd {
		p.depth--
		p.top -= 2
		return t
	}
	for {
		if tok.typ != tString {
			p.throwParseError("object key string", &tok)
		}
		key := tok.str
		p.nextToken(&tok)
		if tok.typ != tColon {
			p.throwParseError("colon", &tok)
		}
		p.nextToken(&tok)
		v := p.processValue(&tok)
		t.RawSetString(key, v)
		p.nextToken(&tok)
		if tok.typ == tObjEnd {
			p.depth--
			p.top -= 2
			return t
		}
		if tok.typ != tComma {
			p.throwParseError("comma or object end", &tok)
		}
		p.nextToken(&tok)
	}
}

func (p *jsonParser) parseArray() *lua.LTable {
	p.descend(2)
	t := p.L.CreateTable(0, 0)
	p.top++
	var tok jsonToken
	p.nextToken(&tok)
	if tok.typ == tArrEnd {
		p.depth--
		p.top--
		return t
	}
	for i := 1; ; i++ {
		v := p.processValue(&tok)
		t.RawSetInt(i, v)
		p.nextToken(&tok)
		if tok.typ == tArrEnd {
			p.depth--
			p.top--
			return t
		}
		if tok.typ != tComma {
			p.throwParseError("comma or array end", &tok)
		}
		p.nextToken(&tok)
	}
}

func (p *jsonParser) processValue(tok *jsonToken) lua.LValue {
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.number)
	case tBoolean:
		return lua.LBool(tok.bool)
	case tObjBegin:
		return p.parseObject()
	case tArrBegin:
		return p.parseArray()
	case tNull:
		return p.cfg.null
	}
	p.throwParseError("value", tok)
	return lua.LNil
}
