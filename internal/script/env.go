package script

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's getfenv, setfenv, newproxy, loadstring and load as Redis
// 7.2's sandbox has them. gopher-lua's own would hand a script the real
// globals table (getfenv of a Go function, the functions loadstring
// makes), which is writable with rawset and would carry a script's
// globals into the next script; here the environment they see is the
// read-only view (state.env), as Redis's globals are read-only.

// envFunc is Lua 5.1's getfunc: the function argument 1 names, itself
// or by its level on the call stack (level 0: the running function,
// which is getfenv or setfenv itself). It reports level 0 as the thread.
func envFunc(L *lua.LState, optional bool) (fn *lua.LFunction, thread bool) {
	if f, ok := L.Get(1).(*lua.LFunction); ok {
		return f, false
	}
	level := 1
	if optional {
		level = L.OptInt(1, 1)
	} else {
		level = L.CheckInt(1)
	}
	if level < 0 {
		L.ArgError(1, "level must be non-negative")
	}
	dbg, ok := L.GetStack(level)
	if !ok {
		L.ArgError(1, "invalid level")
	}
	v, err := L.GetInfo("f", dbg, lua.LNil)
	f, _ := v.(*lua.LFunction)
	if err != nil || f == nil {
		L.RaiseError("no function environment for tail call at level %d", level)
	}
	return f, level == 0
}

// getfenv: a Lua function's environment, else (a Go function, level 0)
// the thread's, the read-only globals.
func (st *state) getfenv(L *lua.LState) int {
	fn, _ := envFunc(L, true)
	if fn.IsG || fn.Env == nil {
		L.Push(L.Env)
	} else {
		L.Push(fn.Env)
	}
	return 1
}

// setfenvMsg is Lua 5.1's error for an environment it cannot change.
const setfenvMsg = "'setfenv' cannot change environment of given object"

// setfenv sets a Lua function's environment and returns the function.
// setfenv(0, t), the thread's environment, is refused: in Redis 7.2 it
// replaces the globals of the Lua state every later script runs in, which
// then all fail ("error in error handling") until SCRIPT FLUSH
// (docs/redis.md, Scripting).
func (st *state) setfenv(L *lua.LState) int {
	env := L.CheckTable(2)
	fn, thread := envFunc(L, false)
	if thread || fn.IsG {
		L.Error(lua.LString(setfenvMsg), 0)
	}
	fn.Env = env
	L.Push(fn)
	return 1
}

// newproxy is Lua 5.1's undocumented newproxy: a userdata without a
// metatable, with a new one (true), or with the metatable of another
// such proxy.
func (st *state) newproxy(L *lua.LState) int {
	L.SetTop(1)
	ud := L.NewUserData()
	switch v := L.Get(1); {
	case !lua.LVAsBool(v):
	case v == lua.LTrue:
		mt := L.NewTable()
		if st.proxyMTs == nil {
			st.proxyMTs = make(map[*lua.LTable]bool)
		}
		st.proxyMTs[mt] = true
		ud.Metatable = mt
	default:
		var mt *lua.LTable
		if u, ok := v.(*lua.LUserData); ok {
			mt, _ = u.Metatable.(*lua.LTable)
		}
		if mt == nil || !st.proxyMTs[mt] {
			L.ArgError(1, "boolean or proxy expected")
		}
		ud.Metatable = mt
	}
	L.Push(ud)
	return 1
}

// loadstring is Lua 5.1's: the chunk is named as Lua names it in
// messages ([string "..."]), its environment is the thread's.
func loadstring(L *lua.LState) int {
	src := L.CheckString(1)
	return loadChunk(L, src, L.OptString(2, src))
}

// load is Lua 5.1's: the pieces the function returns, until nil or "".
func load(L *lua.LState) int {
	fn := L.CheckFunction(1)
	name := L.OptString(2, "=(load)")
	var b strings.Builder
	for {
		L.Push(fn)
		L.Call(0, 1)
		v := L.Get(-1)
		L.Pop(1)
		if v == lua.LNil {
			break
		}
		s, ok := v.(lua.LString)
		if !ok {
			if n, isNum := v.(lua.LNumber); isNum {
				s, ok = lua.LString(formatNumber(float64(n))), true
			}
		}
		if !ok {
			L.Push(lua.LNil)
			L.Push(lua.LString("reader function must return a string"))
			return 2
		}
		if s == "" {
			break
		}
		b.WriteString(string(s))
	}
	return loadChunk(L, b.String(), name)
}

func loadChunk(L *lua.LState, src, name string) int {
	chunk := chunkID(name)
	proto, msg := compileChunk([]byte(src), chunk)
	if msg != "" {
		L.Push(lua.LNil)
		L.Push(lua.LString(msg))
		return 2
	}
	fn := L.NewFunctionFromProto(proto)
	fn.Env = L.Env
	L.Push(fn)
	return 1
}

// chunkID is Lua 5.1's luaO_chunkid (LUA_IDSIZE 60): "=name" is name,
// "@file" the file's name (its last 52 bytes), anything else
// [string "its first line"], cut to 43 bytes with "..." after.
func chunkID(source string) string {
	const idSize = 60
	switch {
	case strings.HasPrefix(source, "="):
		s := source[1:]
		if len(s) > idSize-1 {
			s = s[:idSize-1]
		}
		return s
	case strings.HasPrefix(source, "@"):
		s := source[1:]
		if keep := idSize - len(" '...' ") - 1; len(s) > keep {
			return "..." + s[len(s)-keep:]
		}
		return s
	}
	n := strings.IndexAny(source, "\n\r")
	if n < 0 {
		n = len(source)
	}
	if keep := idSize - len(` [string "..."] `) - 1; n > keep {
		n = keep
	}
	if n < len(source) {
		return `[string "` + source[:n] + `..."]`
	}
	return `[string "` + source + `"]`
}
