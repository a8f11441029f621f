package script

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Functions (Redis 7.0's functions.c and function_lua.c): libraries of
// named Lua functions, loaded with FUNCTION LOAD and called with FCALL.
//
// Every library lives in one Lua state of its own, as in Redis, separate
// from EVAL's pooled states: a library's code runs once, at load, and
// what it leaves behind is its callbacks, closures of that state. A
// library's code sees a different world from its functions':
//
//	load:  globals = {redis = {register_function, log, LOG_*, REDIS_VERSION*}}
//	FCALL: globals = the sandbox of EVAL (redis.call, cjson, ...), without KEYS and ARGV
//
// Both are one read-only view (state.env) whose __index is switched for
// the load, so the closures a library makes see the full API once it is
// loaded, as Redis switches the __index of its globals' metatable. A load
// that fails changes nothing: its registrations go to a Library that is
// linked only once the code ran to the end and every check passed.

// Errors of FUNCTION LOAD and of Kill, in Redis's words.
var (
	ErrBusyScript   = errors.New("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
	ErrBusyFunction = errors.New("BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.")
	errLibraryName  = errors.New("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
)

// BusyError is what other clients are told while r runs: the kill
// command that stops it is named.
func (r *Run) BusyError() error {
	if r.Func != nil {
		return ErrBusyFunction
	}
	return ErrBusyScript
}

// FlagNames are the function flags, in Redis's order (scripts_flags_def):
// bit i of Function.Flags is FlagNames[i].
var FlagNames = []string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}

// loadTimeout bounds a library's load, as Redis's LOAD_TIMEOUT_MS.
const loadTimeout = 500 * time.Millisecond

// functionChunk is the chunk name of library code ("user_function:2: ...").
const functionChunk = "user_function"

// Library is a loaded function library.
type Library struct {
	Name      string
	Code      []byte      // the whole code, shebang included (FUNCTION LIST WITHCODE, DUMP)
	Functions []*Function // in the order they were registered
	fs        *Functions
}

// Function is one function of a library.
type Function struct {
	Name        string
	Description string
	HasDesc     bool // Description was given (else FUNCTION LIST shows null)
	Flags       uint // bit i: FlagNames[i]
	Lib         *Library
	fn          *lua.LFunction
	st          *state // the state fn belongs to
}

// libSet is a set of libraries and of their functions. Library names are
// case-sensitive, function names not (Redis's dict types).
type libSet struct {
	libs map[string]*Library
	fns  map[string]*Function // by ASCII lower-case name
}

func newLibSet() libSet {
	return libSet{libs: make(map[string]*Library), fns: make(map[string]*Function)}
}

// link adds lib. A library may hold functions whose names differ only in
// case (Redis checks a library's names with case); FCALL then finds the
// first registered, as Redis's dictAdd keeps the first.
func (ls libSet) link(lib *Library) {
	ls.libs[lib.Name] = lib
	for _, f := range lib.Functions {
		if k := lowerASCII(f.Name); ls.fns[k] == nil {
			ls.fns[k] = f
		}
	}
}

func (ls libSet) unlink(lib *Library) {
	delete(ls.libs, lib.Name)
	for _, f := range lib.Functions {
		if k := lowerASCII(f.Name); ls.fns[k] != nil && ls.fns[k].Lib == lib {
			delete(ls.fns, k)
		}
	}
}

// Functions holds the function libraries and the Lua state they live in.
// Its methods are safe for concurrent use.
type Functions struct {
	e *Engine

	// stMu is held while library code or a function runs in st; mu
	// only while the libraries are read or changed, so FUNCTION STATS,
	// LIST and INFO answer while a function runs. stMu is taken first.
	stMu    sync.Mutex
	mu      sync.Mutex // protects cur and st (changed under both)
	cur     libSet
	st      *state
	loading *Library // the library whose code is running (register_function adds to it)
	loadG   *lua.LTable
}

// NewFunctions returns an empty set of libraries whose functions run as
// e's scripts do (Begin, Kill, the memory guard).
func NewFunctions(e *Engine) *Functions {
	fs := &Functions{e: e, cur: newLibSet()}
	fs.newState()
	return fs
}

// newState makes the Lua state of the libraries and their load-time API.
// Both locks are held (or fs is new).
func (fs *Functions) newState() {
	st := newState(fs.e.cfg.Open)
	L := st.L
	undef := st.globals.Metatable // reading a missing name is an error, as for globals
	api := L.NewTable()
	api.RawSetString("register_function", L.NewFunction(fs.register))
	api.RawSetString("log", L.NewFunction(st.log))
	for name, v := range map[string]int{"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice,
		"LOG_WARNING": LogWarning, "REDIS_VERSION_NUM": VersionNum} {
		api.RawSetString(name, lua.LNumber(v))
	}
	api.RawSetString("REDIS_VERSION", lua.LString(Version))
	api.Metatable = undef
	g := L.NewTable()
	g.RawSetString("redis", st.view(api))
	g.Metatable = undef
	fs.st, fs.loadG = st, g
}

// lowerASCII is s in ASCII lower case (Redis compares names with
// strcasecmp).
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// validName is functionsVerifyName: letters, digits and underscores, at
// least one.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// libraryMeta is functionExtractLibMetaData: the engine and name of the
// "#!lua name=<lib>" line, and the code after it (from its newline, so
// line numbers stay those of the whole text).
func libraryMeta(code []byte) (engine, name string, body []byte, err error) {
	if !strings.HasPrefix(string(code[:min(len(code), 2)]), "#!") {
		return "", "", nil, errors.New("Missing library metadata")
	}
	end := strings.IndexByte(string(code), '\n')
	if end < 0 {
		return "", "", nil, errors.New("Invalid library metadata")
	}
	parts := strings.Fields(string(code[:end]))
	if len(parts) == 0 {
		return "", "", nil, errors.New("Invalid library metadata")
	}
	engine = parts[0][2:]
	named := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if named {
				return "", "", nil, errors.New("Invalid metadata value, name argument was given multiple times")
			}
			name, named = p[5:], true
			continue
		}
		return "", "", nil, errors.New("Invalid metadata value given: " + p)
	}
	if !named {
		return "", "", nil, errors.New("Library name was not given")
	}
	return engine, name, code[end:], nil
}

// Load is FUNCTION LOAD: it creates the library of code, replacing one
// of the same name only if replace is set, and returns its name. h is
// redis.log's host during the load. An error is Redis's reply without
// "-ERR ".
func (fs *Functions) Load(code []byte, replace bool, h Host) (string, error) {
	fs.stMu.Lock()
	defer fs.stMu.Unlock()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	lib, err := fs.createLocked(code, replace, fs.cur, h)
	if err != nil {
		return "", err
	}
	if old := fs.cur.libs[lib.Name]; old != nil {
		fs.cur.unlink(old)
	}
	fs.cur.link(lib)
	return lib.Name, nil
}

// createLocked is functionsCreateWithLibraryCtx without the final link:
// it builds the library of code, checked against the set ls.
func (fs *Functions) createLocked(code []byte, replace bool, ls libSet, h Host) (*Library, error) {
	engine, name, body, err := libraryMeta(code)
	if err != nil {
		return nil, err
	}
	if !validName(name) {
		return nil, errLibraryName
	}
	if !strings.EqualFold(engine, "lua") {
		return nil, errors.New("Engine '" + engine + "' not found")
	}
	old := ls.libs[name]
	if old != nil && !replace {
		return nil, errors.New("Library '" + name + "' already exists")
	}
	lib := &Library{Name: name, Code: append([]byte(nil), code...), fs: fs}
	if err := fs.runLibraryLocked(lib, body, h); err != nil {
		return nil, err
	}
	if len(lib.Functions) == 0 {
		return nil, errors.New("No functions registered")
	}
	for _, f := range lib.Functions {
		if other := ls.fns[lowerASCII(f.Name)]; other != nil && (old == nil || other.Lib != old) {
			return nil, errors.New("Function " + f.Name + " already exists")
		}
	}
	return lib, nil
}

// runLibraryLocked compiles and runs a library's code with the load-time
// API, its registrations going to lib.
func (fs *Functions) runLibraryLocked(lib *Library, body []byte, h Host) error {
	proto, msg := compileChunk(body, functionChunk)
	if msg != "" {
		return errors.New("Error compiling function: " + msg)
	}
	st := fs.st
	L := st.L
	fn := L.NewFunctionFromProto(proto)
	fn.Env = st.env
	mt := st.env.Metatable.(*lua.LTable)
	mt.RawSetString("__index", fs.loadG)
	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	L.SetContext(ctx)
	fs.loading, st.host = lib, h
	defer func() {
		cancel()
		L.RemoveContext()
		L.SetTop(0)
		st.scrub()
		mt.RawSetString("__index", st.globals)
		fs.loading, st.host = nil, nil
	}()
	L.Push(fn)
	err := L.PCall(0, 0, nil)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return errors.New("Error registering functions: ERR FUNCTION LOAD timeout")
	}
	var obj lua.LValue = lua.LString(err.Error())
	if aerr, ok := err.(*lua.ApiError); ok {
		obj = aerr.Object
		if aerr.Type == lua.ApiErrorPanic {
			st.broken = true
		}
	}
	msg = "ERR " + lua.LVAsString(obj)
	if t, ok := obj.(*lua.LTable); ok {
		msg = lua.LVAsString(t.RawGetString("err"))
	} else if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] // gopher-lua's traceback
	}
	return errors.New("Error registering functions: " + quoteArgError(msg))
}

// register is redis.register_function, at load time only.
func (fs *Functions) register(L *lua.LState) int {
	lib := fs.loading
	if lib == nil {
		return raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f := &Function{Lib: lib, st: fs.st}
	switch L.GetTop() {
	case 1:
		if msg := f.namedArgs(L); msg != "" {
			return raise(L, msg)
		}
	case 2:
		name, ok := luaString(L.Get(1))
		if !ok {
			return raise(L, "first argument to redis.register_function must be a string")
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return raise(L, "second argument to redis.register_function must be a function")
		}
		f.Name, f.fn = name, fn
	default:
		return raise(L, "wrong number of arguments to redis.register_function")
	}
	if !validName(f.Name) {
		return raise(L, errLibraryName.Error())
	}
	for _, o := range lib.Functions {
		if o.Name == f.Name {
			return raise(L, "Function already exists in the library")
		}
	}
	lib.Functions = append(lib.Functions, f)
	return 0
}

// namedArgs reads register_function's table form into f, or returns the
// error (luaRegisterFunctionReadNamedArgs).
func (f *Function) namedArgs(L *lua.LState) string {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	}
	var msg string
	named := false
	t.ForEach(func(k, v lua.LValue) {
		if msg != "" {
			return
		}
		key, ok := luaString(k)
		if !ok {
			msg = "named argument key given to redis.register_function is not a string"
			return
		}
		switch strings.ToLower(key) {
		case "function_name":
			if f.Name, named = luaString(v); !named {
				msg = "function_name argument given to redis.register_function must be a string"
			}
		case "description":
			if f.Description, f.HasDesc = luaString(v); !f.HasDesc {
				msg = "description argument given to redis.register_function must be a string"
			}
		case "callback":
			if f.fn, ok = v.(*lua.LFunction); !ok {
				msg = "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				msg = "flags argument to redis.register_function must be a table representing function flags"
				return
			}
			if f.Flags, ok = readFlags(ft); !ok {
				msg = "unknown flag given"
			}
		default:
			msg = "unknown argument given to redis.register_function"
		}
	})
	switch {
	case msg != "":
		return msg
	case !named:
		return "redis.register_function must get a function name argument"
	case f.fn == nil:
		return "redis.register_function must get a callback argument"
	}
	return ""
}

// readFlags reads the flags list t[1], t[2], ... up to the first nil.
func readFlags(t *lua.LTable) (uint, bool) {
	var flags uint
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		s, ok := luaString(v)
		if !ok {
			return 0, false
		}
		j := slices.IndexFunc(FlagNames, func(n string) bool { return strings.EqualFold(n, s) })
		if j < 0 {
			return 0, false
		}
		flags |= 1 << j
	}
}

// luaString is lua_isstring and lua_tostring: a string, or a number in
// Lua's format.
func luaString(v lua.LValue) (string, bool) {
	switch x := v.(type) {
	case lua.LString:
		return string(x), true
	case lua.LNumber:
		return formatNumber(float64(x)), true
	}
	return "", false
}

// Lookup returns the function named name (in any case), or nil.
func (fs *Functions) Lookup(name []byte) *Function {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.cur.fns[lowerASCII(string(name))]
}

// Delete is FUNCTION DELETE: it reports whether the library existed.
func (fs *Functions) Delete(name string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	lib := fs.cur.libs[name]
	if lib != nil {
		fs.cur.unlink(lib)
	}
	return lib != nil
}

// Flush is FUNCTION FLUSH: no libraries, and a new Lua state.
func (fs *Functions) Flush() {
	fs.stMu.Lock()
	defer fs.stMu.Unlock()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.cur = newLibSet()
	fs.newState()
}

// Libraries returns the libraries, by name.
func (fs *Functions) Libraries() []*Library {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]*Library, 0, len(fs.cur.libs))
	for _, lib := range fs.cur.libs {
		out = append(out, lib)
	}
	slices.SortFunc(out, func(a, b *Library) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// FunctionStats are what FUNCTION STATS and INFO report of the libraries.
type FunctionStats struct {
	Libraries int
	Functions int   // the libraries' functions (FUNCTION STATS)
	Names     int   // the names FCALL finds (INFO's number_of_functions): fewer when a library's differ only in case
	Bytes     int64 // an estimate of what the libraries take (used_memory_functions)
}

// Stats counts the libraries and their functions.
func (fs *Functions) Stats() FunctionStats {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	// Redis reports 200 bytes for no library; its dicts and entries are
	// counted here at about the sizes it reports for small libraries.
	s := FunctionStats{Libraries: len(fs.cur.libs), Names: len(fs.cur.fns), Bytes: 200}
	for _, lib := range fs.cur.libs {
		s.Functions += len(lib.Functions)
		s.Bytes += int64(len(lib.Code)+len(lib.Name)) + 120
		for _, f := range lib.Functions {
			s.Bytes += int64(len(f.Name)+len(f.Description)) + 110
		}
	}
	return s
}

// Restore policies of FUNCTION RESTORE.
const (
	RestoreAppend = iota
	RestoreReplace
	RestoreFlush
)

// Restore is FUNCTION RESTORE of libraries whose codes are codes (the
// payload decoded): all of them are created first, then joined to the
// current ones by policy, all or nothing.
func (fs *Functions) Restore(codes [][]byte, policy int, h Host) error {
	fs.stMu.Lock()
	defer fs.stMu.Unlock()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	add := newLibSet()
	for _, code := range codes {
		lib, err := fs.createLocked(code, false, add, h)
		if err != nil {
			return err
		}
		add.link(lib)
	}
	if policy == RestoreFlush {
		fs.cur = add
		return nil
	}
	// libraryJoin: a name taken is an error unless REPLACE; the
	// functions of what stays must not collide with the new ones.
	var replaced []*Library
	for name := range add.libs {
		if old := fs.cur.libs[name]; old != nil {
			if policy != RestoreReplace {
				return errors.New("Library " + name + " already exists")
			}
			replaced = append(replaced, old)
		}
	}
	for key, f := range add.fns {
		if other := fs.cur.fns[key]; other != nil && !slices.Contains(replaced, other.Lib) {
			return errors.New("Function " + f.Name + " already exists")
		}
	}
	for _, old := range replaced {
		fs.cur.unlink(old)
	}
	for _, lib := range add.libs {
		fs.cur.link(lib)
	}
	return nil
}

// BeginFunction is Begin for FCALL of f, with argv the command; rs, when
// not nil, is the Rescuer the watchdog calls once the run has lasted
// after (Engine.BeginRescued).
func (fs *Functions) BeginFunction(f *Function, argv [][]byte, after time.Duration, rs Rescuer) *Run {
	return fs.e.begin(f, argv, after, rs)
}

// Call runs the function f for r with keys and args as its arguments and
// appends its reply, in the caller's protocol, to dst. f may have been
// replaced or deleted since it was looked up: the function of that name
// now runs, or none is found.
func (r *Run) Call(dst []byte, f *Function, keys, args [][]byte, h Host, opt Options) []byte {
	fs := f.Lib.fs
	fs.stMu.Lock()
	defer fs.stMu.Unlock()
	fs.mu.Lock()
	if cur := fs.cur.fns[lowerASCII(f.Name)]; cur != f {
		f = cur
	}
	st := fs.st
	fs.mu.Unlock()
	if f == nil || f.st != st {
		return append(dst, "-ERR Function not found\r\n"...)
	}
	out := st.exec(dst, r, nil, f, keys, args, h, opt)
	if st.broken {
		fs.mu.Lock()
		fs.reloadLocked(h)
		fs.mu.Unlock()
	}
	return out
}

// reloadLocked rebuilds a state a run left unusable: a new one, with
// every library loaded again. Both locks are held.
func (fs *Functions) reloadLocked(h Host) {
	libs := fs.cur.libs
	fs.cur = newLibSet()
	fs.newState()
	for _, lib := range libs {
		if n, err := fs.createLocked(lib.Code, false, fs.cur, h); err == nil {
			fs.cur.link(n)
		}
	}
}
