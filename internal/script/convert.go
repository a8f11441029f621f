package script

import (
	"errors"

	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/minikv/minikv/internal/dtoa"
)

// Conversions between RESP replies and Lua values, as Redis's
// script_lua.c makes them.
//
//	RESP -> Lua (redis.call's result)      Lua -> RESP (the script's return value)
//	:n       number                        number        :n (truncated to an integer)
//	$s       string                        string        $s
//	$-1 *-1  false                         false         null (:1 for true) after setresp(2),
//	+s       {ok=s}                                      #f (#t) after setresp(3)
//	-e       {err=e} (raised by call)      {ok=s}        +s
//	*n       array table                   {err=e}       -e
//	_        nil                           array table   *n, up to the first nil
//	#t #f    true false                    {double=d}    ,d (a bulk string in RESP2)
//	,d       {double=d}                    {big_number=s} (s (a bulk string in RESP2)
//	(n       {big_number=n}                {map=t}       %n (a flat array in RESP2)
//	=f:s     {verbatim_string={format=f,string=s}}       {set=t} ~n (an array in RESP2)
//	%n       {map={k=v...}}                {verbatim_string=...} =n (a bulk string in RESP2)
//	~n       {set={m=true...}}             nil, other    null
//	|n       attributes skipped

// maxDepth bounds the nesting of a reply either way: a self-referencing
// table returned by a script must not recurse forever (Redis stops at its
// Lua stack limit).
const maxDepth = 1000

var errBadReply = errors.New("malformed reply")

// parseReply converts the RESP value at the start of b to a Lua value
// and returns the rest of b.
func parseReply(L *lua.LState, b []byte) (lua.LValue, []byte, error) {
	return parseDepth(L, b, 0, nil)
}

// okCache holds the {ok="OK"} table of a state. Most writes answer
// +OK, and a fresh table costs gopher-lua three allocations (its hash
// part, key list and key index), so a state hands out the same table
// while it is as made: one that a script changed is replaced. Only
// identity tells them apart (two OK replies compare equal with ==),
// which no script relies on.
type okCache struct{ t *lua.LTable }

func (c *okCache) get(L *lua.LState) *lua.LTable {
	if t := c.t; t != nil && t.Metatable == lua.LNil && t.RawGetString("ok") == lua.LString("OK") {
		if k, _ := t.Next(lua.LNil); k == lua.LString("ok") {
			if k2, _ := t.Next(k); k2 == lua.LNil {
				return t
			}
		}
	}
	c.t = L.CreateTable(0, 1)
	c.t.RawSetString("ok", lua.LString("OK"))
	return c.t
}

func line(b []byte) (string, []byte, error) {
	for i := 1; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return string(b[1:i]), b[i+2:], nil
		}
	}
	return "", nil, errBadReply
}

func parseDepth(L *lua.LState, b []byte, depth int, oc *okCache) (lua.LValue, []byte, error) {
	if len(b) == 0 || depth > maxDepth {
		return lua.LNil, nil, errBadReply
	}
	t := b[0]
	s, rest, err := line(b)
	if err != nil {
		return lua.LNil, nil, err
	}
	switch t {
	case ':':
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return lua.LNil, nil, errBadReply
		}
		return lua.LNumber(n), rest, nil
	case '+':
		if oc != nil && s == "OK" {
			return oc.get(L), rest, nil
		}
		tb := L.CreateTable(0, 1)
		tb.RawSetString("ok", lua.LString(s))
		return tb, rest, nil
	case '-':
		tb := errorTable(L, "-"+s)
		tb.RawSetString("ignore_error_stats_update", lua.LTrue)
		return tb, rest, nil
	case '_':
		return lua.LNil, rest, nil
	case '#':
		return lua.LBool(s == "t"), rest, nil
	case ',':
		f, err := parseDouble(s)
		if err != nil {
			return lua.LNil, nil, errBadReply
		}
		tb := L.CreateTable(0, 1)
		tb.RawSetString("double", lua.LNumber(f))
		return tb, rest, nil
	case '(':
		tb := L.CreateTable(0, 1)
		tb.RawSetString("big_number", lua.LString(s))
		return tb, rest, nil
	case '$', '=':
		n, err := strconv.Atoi(s)
		if err != nil {
			return lua.LNil, nil, errBadReply
		}
		if n < 0 {
			return lua.LFalse, rest, nil
		}
		if n+2 > len(rest) {
			return lua.LNil, nil, errBadReply
		}
		str := string(rest[:n])
		rest = rest[n+2:]
		if t == '$' {
			return lua.LString(str), rest, nil
		}
		format, text := "", str
		if len(str) >= 4 && str[3] == ':' {
			format, text = str[:3], str[4:]
		}
		v := L.CreateTable(0, 2)
		v.RawSetString("string", lua.LString(text))
		v.RawSetString("format", lua.LString(format))
		tb := L.CreateTable(0, 1)
		tb.RawSetString("verbatim_string", v)
		return tb, rest, nil
	case '*', '>', '~', '%', '|':
		n, err := strconv.Atoi(s)
		if err != nil {
			return lua.LNil, nil, errBadReply
		}
		if n < 0 {
			return lua.LFalse, rest, nil
		}
		if n > len(rest) {
			return lua.LNil, nil, errBadReply // each element takes at least one byte
		}
		switch t {
		case '*', '>':
			tb := L.CreateTable(min(n, 1024), 0)
			for i := 1; i <= n; i++ {
				var v lua.LValue
				if v, rest, err = parseDepth(L, rest, depth+1, oc); err != nil {
					return lua.LNil, nil, err
				}
				tb.RawSetInt(i, v)
			}
			return tb, rest, nil
		case '~':
			set := L.CreateTable(0, min(n, 1024))
			for i := 0; i < n; i++ {
				var v lua.LValue
				if v, rest, err = parseDepth(L, rest, depth+1, oc); err != nil {
					return lua.LNil, nil, err
				}
				if v != lua.LNil {
					set.RawSet(v, lua.LTrue)
				}
			}
			tb := L.CreateTable(0, 1)
			tb.RawSetString("set", set)
			return tb, rest, nil
		case '%':
			m := L.CreateTable(0, min(n, 1024))
			for i := 0; i < n; i++ {
				var k, v lua.LValue
				if k, rest, err = parseDepth(L, rest, depth+1, oc); err != nil {
					return lua.LNil, nil, err
				}
				if v, rest, err = parseDepth(L, rest, depth+1, oc); err != nil {
					return lua.LNil, nil, err
				}
				if k != lua.LNil {
					m.RawSet(k, v)
				}
			}
			tb := L.CreateTable(0, 1)
			tb.RawSetString("map", m)
			return tb, rest, nil
		default: // '|': attributes are not shown to scripts; the value follows
			for i := 0; i < 2*n; i++ {
				if _, rest, err = parseDepth(L, rest, depth+1, oc); err != nil {
					return lua.LNil, nil, err
				}
			}
			return parseDepth(L, rest, depth+1, oc)
		}
	}
	return lua.LNil, nil, errBadReply
}

func parseDouble(s string) (float64, error) {
	switch s {
	case "inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	case "nan":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
}

// appendReply appends v, a script's return value, as a RESP reply for a
// client of protocol 3 (resp3) or 2. scriptRESP3 is what redis.setresp
// chose: it decides how booleans are written.
func appendReply(b []byte, v lua.LValue, resp3, scriptRESP3 bool, depth int) []byte {
	if depth > maxDepth {
		return append(b, "-ERR reached lua stack limit\r\n"...)
	}
	switch v := v.(type) {
	case lua.LString:
		return appendBulk(b, string(v))
	case lua.LBool:
		switch {
		case !scriptRESP3 && bool(v):
			return append(b, ":1\r\n"...)
		case !scriptRESP3:
			return appendNull(b, resp3)
		case resp3 && bool(v):
			return append(b, "#t\r\n"...)
		case resp3:
			return append(b, "#f\r\n"...)
		case bool(v):
			return append(b, ":1\r\n"...)
		default:
			return append(b, ":0\r\n"...)
		}
	case lua.LNumber:
		return appendInt(b, ':', toInteger(float64(v)))
	case *lua.LTable:
		return appendTable(b, v, resp3, scriptRESP3, depth)
	}
	return appendNull(b, resp3)
}

// toInteger is C's (long long) cast of a double as x86-64 makes it: NaN
// and values out of range become the minimum integer.
func toInteger(f float64) int64 {
	if math.IsNaN(f) || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return math.MinInt64
	}
	return int64(f)
}

func appendTable(b []byte, t *lua.LTable, resp3, scriptRESP3 bool, depth int) []byte {
	if e, ok := t.RawGetString("err").(lua.LString); ok {
		return appendLine(append(b, '-'), string(e))
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		return appendLine(append(b, '+'), string(s))
	}
	if d, ok := t.RawGetString("double").(lua.LNumber); ok {
		return appendDouble(b, float64(d), resp3)
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		if !resp3 {
			return appendBulk(b, string(s))
		}
		return appendLine(append(b, '('), string(s))
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		f, fok := vt.RawGetString("format").(lua.LString)
		s, sok := vt.RawGetString("string").(lua.LString)
		if fok && sok {
			if !resp3 {
				return appendBulk(b, string(s))
			}
			format := (string(f) + "   ")[:3]
			b = appendInt(b, '=', int64(len(s)+4))
			b = append(b, format...)
			b = append(b, ':')
			b = append(b, s...)
			return append(b, '\r', '\n')
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		n := 0
		for k, _ := m.Next(lua.LNil); k != lua.LNil; k, _ = m.Next(k) {
			n++
		}
		if resp3 {
			b = appendInt(b, '%', int64(n))
		} else {
			b = appendInt(b, '*', int64(2*n))
		}
		for k, v := m.Next(lua.LNil); k != lua.LNil; k, v = m.Next(k) {
			b = appendReply(b, k, resp3, scriptRESP3, depth+1)
			b = appendReply(b, v, resp3, scriptRESP3, depth+1)
		}
		return b
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		n := 0
		for k, _ := s.Next(lua.LNil); k != lua.LNil; k, _ = s.Next(k) {
			n++
		}
		if resp3 {
			b = appendInt(b, '~', int64(n))
		} else {
			b = appendInt(b, '*', int64(n))
		}
		for k, _ := s.Next(lua.LNil); k != lua.LNil; k, _ = s.Next(k) {
			b = appendReply(b, k, resp3, scriptRESP3, depth+1)
		}
		return b
	}
	// An array: the elements up to the first nil, as Redis reads it.
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	b = appendInt(b, '*', int64(n))
	for i := 1; i <= n; i++ {
		b = appendReply(b, t.RawGetInt(i), resp3, scriptRESP3, depth+1)
	}
	return b
}

func appendInt(b []byte, t byte, n int64) []byte {
	b = append(b, t)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

func appendBulk(b []byte, s string) []byte {
	b = appendInt(b, '$', int64(len(s)))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// appendLine appends s and CRLF, with any CR or LF in s made a space
// (Redis's sdsmapchars on status and error replies), trimming them at the
// ends first as Redis does for errors.
func appendLine(b []byte, s string) []byte {
	if b[len(b)-1] == '-' {
		s = strings.Trim(s, "\r\n")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, '\r', '\n')
}

func appendNull(b []byte, resp3 bool) []byte {
	if resp3 {
		return append(b, "_\r\n"...)
	}
	return append(b, "$-1\r\n"...)
}

// appendDouble is Redis 7.2's addReplyDouble: d2string's text
// (internal/dtoa), a bulk string in RESP2.
func appendDouble(b []byte, f float64, resp3 bool) []byte {
	var buf [32]byte
	num := dtoa.AppendDouble72(buf[:0], f)
	if resp3 {
		b = append(b, ',')
		b = append(b, num...)
		return append(b, '\r', '\n')
	}
	return appendBulk(b, string(num))
}
