package lib

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// cjson.decode: lua-cjson's tokenizer and recursive descent parser, reading
// the text as the NUL-terminated C string it is in Redis.

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
