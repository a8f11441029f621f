package script

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// chunkName is the name Redis gives an EVAL script ("@user_script"):
// Lua prints it without the '@' in messages ("user_script:1: ...") and
// Redis's error handler reports the raw source ("on @user_script:1.").
const chunkName = "user_script"

// Lua states are built with these limits. A script that recurses or
// pushes without bound gets Lua's "stack overflow" error instead of
// growing the process: the call stack holds about what Lua 5.1's
// LUAI_MAXCALLS allows a script in practice, the value stack grows in
// steps up to a few megabytes.
const (
	callStackSize   = 1000
	registrySize    = 1024 * 4
	registryMaxSize = 64 * 1024
)

// state is one sandboxed interpreter and what a run needs of it.
type state struct {
	L        *lua.LState
	globals  *lua.LTable // the real globals: what KEYS and ARGV are set in
	env      *lua.LTable // what scripts see: a read-only view of globals
	handler  *lua.LFunction
	fns      map[*lua.FunctionProto]*lua.LFunction // closures of compiled scripts, by proto
	broken   bool                                  // a run left it unusable: drop it
	proxies  []*lua.LTable                         // the read-only views (sandbox), empty between runs
	decoyMT  *lua.LTable                           // the metatable of what getmetatable shows of a view
	view     func(t *lua.LTable) *lua.LTable       // makes a read-only view of t (sandbox)
	proxyMTs map[*lua.LTable]bool                  // newproxy's metatables (env.go), emptied after each run

	// The run in progress.
	run   *Run
	host  Host
	sha   string
	resp3 bool // redis.setresp(3)
	ro    bool
	rng   rand48
	ok    okCache  // the {ok="OK"} table redis.call returns
	keys  argTable // KEYS, reused (run.go)
	argv  argTable // ARGV, reused
	args  [][]byte // redis.call's argv, reused
}

// readonlyMsg and undefinedMsg are Redis's errors for the sandbox.
const (
	readonlyMsg  = "Attempt to modify a readonly table"
	undefinedMsg = "Script attempted to access nonexistent global variable '"
)

// newState builds a state: the libraries Redis loads, the redis API, the
// extra libraries of open, then the sandbox.
func newState(open func(L *lua.LState)) *state {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: callStackSize,
		RegistrySize: registrySize, RegistryMaxSize: registryMaxSize, RegistryGrowStep: 1024})
	st := &state{L: L, fns: make(map[*lua.FunctionProto]*lua.LFunction)}
	// Redis 7.0 seeds its generator once, not before each script
	// (scripts are replicated by their effects since 7.0).
	st.rng.seed(int32(time.Now().UnixNano()))
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{"", lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.CoroutineLibName, lua.OpenCoroutine}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	g := L.G.Global
	// Redis removes these for the sandbox (deny list), and gopher-lua's
	// own extras that Lua 5.1 lacks. Redis 7.2 keeps getfenv, setfenv
	// and newproxy (its allow list): they are Lua 5.1's here over the
	// sandbox, as are loadstring and load (env.go).
	for _, name := range []string{"print", "dofile", "loadfile", "module", "require", "_printregs", "_GOPHER_LUA_VERSION"} {
		g.RawSetString(name, lua.LNil)
	}
	g.RawSetString("getfenv", L.NewFunction(st.getfenv))
	g.RawSetString("setfenv", L.NewFunction(st.setfenv))
	g.RawSetString("newproxy", L.NewFunction(st.newproxy))
	g.RawSetString("loadstring", L.NewFunction(loadstring))
	g.RawSetString("load", L.NewFunction(load))
	g.RawSetString("pcall", L.NewFunction(st.pcall))
	g.RawSetString("error", L.NewFunction(luaError))
	g.RawSetString("tostring", L.NewFunction(tostring))
	g.RawSetString("rawset", L.NewFunction(st.rawset))
	setmt := g.RawGetString("setmetatable")
	g.RawSetString("setmetatable", L.NewFunction(func(L *lua.LState) int {
		if t, ok := L.Get(1).(*lua.LTable); ok && (slices.Contains(st.proxies, t) || t == st.globals || t.Metatable == st.decoyMT) {
			L.Error(lua.LString(readonlyMsg), 0)
		}
		L.Push(setmt)
		L.Insert(setmt, 1)
		L.Pop(1)
		L.Call(L.GetTop()-1, 1)
		return 1
	}))
	g.RawSetString("gcinfo", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(st.L.GetTop())) // Lua 5.1's KB in use; gopher-lua does not count
		return 1
	}))
	if m, ok := g.RawGetString("math").(*lua.LTable); ok {
		m.RawSetString("huge", lua.LNumber(math.Inf(1))) // gopher-lua has the largest float
	}
	if t, ok := g.RawGetString("table").(*lua.LTable); ok {
		// Lua 5.1's deprecated table functions, which Redis's Lua keeps
		// and gopher-lua lacks.
		t.RawSetString("foreach", L.NewFunction(tableForeach))
		t.RawSetString("foreachi", L.NewFunction(tableForeachi))
		t.RawSetString("getn", L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LNumber(L.ObjLen(L.CheckTable(1))))
			return 1
		}))
		t.RawSetString("setn", L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("'setn' is obsolete")
			return 0
		}))
	}
	st.registerAPI()
	if open != nil {
		open(L)
	}
	st.globals = g
	st.handler = L.NewFunction(st.errorHandler)
	g.RawSetString("__redis__err__handler", st.handler) // a global in Redis too
	st.sandbox()
	return st
}

// sandbox makes globals read-only and undefined globals an error. Lua
// 5.1 has no read-only tables (Redis patched its Lua to add them), so a
// script sees proxies: an empty table whose __index is the real one and
// whose __newindex raises Redis's error. The library tables get the same
// treatment, so "string.x = 1" and "redis.call = nil" fail as in Redis.
func (st *state) sandbox() {
	L := st.L
	ro := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(readonlyMsg)
		return 0
	})
	// getmetatable on a view gives a read-only decoy (a table, as
	// Redis's read-only metatables are), never the metatable itself,
	// which a script could change to undo the sandbox for later runs.
	decoy := L.NewTable()
	decoyMT := L.NewTable()
	decoyMT.RawSetString("__newindex", ro)
	decoyMT.RawSetString("__metatable", decoy)
	decoy.Metatable = decoyMT
	st.decoyMT = decoyMT
	proxy := func(t *lua.LTable) *lua.LTable {
		p := L.NewTable()
		mt := L.NewTable()
		mt.RawSetString("__index", t)
		mt.RawSetString("__newindex", ro)
		mt.RawSetString("__metatable", decoy)
		p.Metatable = mt
		st.proxies = append(st.proxies, p)
		return p
	}
	st.view = proxy // the functions' load-time API (function.go)
	var libs []string
	st.globals.ForEach(func(k, v lua.LValue) {
		if name, ok := k.(lua.LString); ok && name != "_G" {
			if _, ok := v.(*lua.LTable); ok {
				libs = append(libs, string(name))
			}
		}
	})
	for _, name := range libs {
		st.globals.RawSetString(name, proxy(st.globals.RawGetString(name).(*lua.LTable)))
	}
	undef := L.NewTable()
	undef.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("%s", undefinedMsg+L.ToString(2)+"'")
		return 0
	}))
	undef.RawSetString("__metatable", decoy)
	st.globals.Metatable = undef
	st.env = proxy(st.globals)
	st.globals.RawSetString("_G", st.env)
	// The thread's environment, what loadstring's functions, coroutines
	// and getfenv(0) get, is the read-only view as well: Lua 5.1 gives
	// them the globals, which Redis made read-only.
	L.Env = st.env
}

// scrub empties the read-only views after a run: rawset bypasses their
// __newindex, and what a script stored there must not reach the next
// one (Redis's read-only tables refuse rawset too).
func (st *state) scrub() {
	clear(st.proxyMTs)
	for _, p := range st.proxies {
		for k, _ := p.Next(lua.LNil); k != lua.LNil; k, _ = p.Next(lua.LNil) {
			p.RawSet(k, lua.LNil)
		}
	}
}

// luaError is Lua 5.1's error: unlike gopher-lua's, it takes no
// argument too (error() raises nil).
func luaError(L *lua.LState) int {
	obj := L.Get(1)
	level := L.OptInt(2, 1)
	if level == 1 {
		// Lua names the position of the function calling error; when
		// that is a Go function (pcall(error, "x")) there is none.
		if dbg, ok := L.GetStack(1); ok {
			if _, err := L.GetInfo("S", dbg, lua.LNil); err == nil && dbg.What == "G" {
				level = 0
			}
		}
	}
	switch v := obj.(type) {
	case lua.LString:
		L.Error(v, level)
	case lua.LNumber: // a number is a string to error, as in Lua
		L.Error(lua.LString(formatNumber(float64(v))), level)
	}
	L.Error(obj, 0)
	return 0
}

// tostring is Lua 5.1's: numbers as "%.14g" (gopher-lua prints them
// in full precision).
func tostring(L *lua.LState) int {
	v := L.CheckAny(1)
	if n, ok := v.(lua.LNumber); ok {
		L.Push(lua.LString(formatNumber(float64(n))))
		return 1
	}
	L.Push(L.ToStringMeta(v))
	return 1
}

// formatNumber is C's "%.14g", how Lua 5.1 turns a number into a string.
func formatNumber(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', 14, 64)
}

// rawset is Lua's, except on the read-only views: Redis's read-only
// tables refuse it with the error the views give, without a position.
func (st *state) rawset(L *lua.LState) int {
	t := L.CheckTable(1)
	if slices.Contains(st.proxies, t) {
		L.Error(lua.LString(readonlyMsg), 0)
	}
	k := L.CheckAny(2)
	if k == lua.LNil {
		L.ArgError(2, "table index is nil")
	}
	t.RawSet(k, L.CheckAny(3))
	L.SetTop(1)
	return 1
}

// quoteArgError writes gopher-lua's "bad argument #1 to f (...)" as
// Lua 5.1 does, with the function's name quoted.
func quoteArgError(msg string) string {
	i := strings.Index(msg, "bad argument #")
	if i < 0 {
		return msg
	}
	j := strings.Index(msg[i:], " to ")
	if j < 0 {
		return msg
	}
	start := i + j + 4
	end := strings.Index(msg[start:], " (")
	if end <= 0 || msg[start] == '\'' || msg[start] == '?' {
		return msg
	}
	return msg[:start] + "'" + msg[start:start+end] + "'" + msg[start+end:]
}

func tableForeach(L *lua.LState) int {
	t := L.CheckTable(1)
	f := L.CheckFunction(2)
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		L.Push(f)
		L.Push(k)
		L.Push(v)
		L.Call(2, 1)
		if r := L.Get(-1); r != lua.LNil {
			return 1
		}
		L.Pop(1)
	}
	return 0
}

func tableForeachi(L *lua.LState) int {
	t := L.CheckTable(1)
	f := L.CheckFunction(2)
	n := L.ObjLen(t)
	for i := 1; i <= n; i++ {
		L.Push(f)
		L.Push(lua.LNumber(i))
		L.Push(t.RawGetInt(i))
		L.Call(2, 1)
		if r := L.Get(-1); r != lua.LNil {
			return 1
		}
		L.Pop(1)
	}
	return 0
}

// closure returns the script's function in this state, with the sandbox
// as its environment.
func (st *state) closure(s *Script) *lua.LFunction {
	fn := st.fns[s.proto]
	if fn == nil {
		fn = st.L.NewFunctionFromProto(s.proto)
		fn.Env = st.env
		if len(st.fns) > 1000 {
			clear(st.fns) // a state serving ever-new scripts keeps the last few
		}
		st.fns[s.proto] = fn
	}
	return fn
}

// pcall is Redis's pcall: Lua's, except that an error raised as a table
// with an err field (redis.call's) is returned as its message, as scripts
// written for Redis before 7.0 expect.
func (st *state) pcall(L *lua.LState) int {
	L.CheckAny(1)
	nargs := L.GetTop() - 1
	if err := L.PCall(nargs, lua.MultRet, nil); err != nil {
		L.Push(lua.LFalse)
		obj := lua.LValue(lua.LString(err.Error()))
		if aerr, ok := err.(*lua.ApiError); ok {
			obj = aerr.Object
		}
		if t, ok := obj.(*lua.LTable); ok {
			if msg, ok := t.RawGetString("err").(lua.LString); ok {
				obj = msg
			}
		}
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// errorHandler is Redis's __redis__err__handler: it turns the error into
// a table {err=, source=, line=} naming the script line that raised it
// (the first Lua frame: redis.call's caller for a command's error).
func (st *state) errorHandler(L *lua.LState) int {
	obj := L.Get(1)
	t, ok := obj.(*lua.LTable)
	if !ok {
		t = L.NewTable()
		msg := "ERR " + quoteArgError(lua.LVAsString(L.ToStringMeta(obj)))
		if st.run != nil {
			switch context.Cause(st.run.ctx) {
			case errKilled:
				msg = "ERR Script killed by user with SCRIPT KILL..."
			case errOutOfMemory:
				msg = "ERR " + chunkName + ": not enough memory"
			}
		}
		t.RawSetString("err", lua.LString(msg))
	}
	for level := 1; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil {
			break
		}
		if dbg.What != "G" && dbg.CurrentLine > 0 {
			t.RawSetString("source", lua.LString("@"+dbg.Source))
			t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
			break
		}
	}
	L.Push(t)
	return 1
}
