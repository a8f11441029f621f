package script

import (
	"strconv"
	"strings"
	"unsafe"

	lua "github.com/yuin/gopher-lua"

	"github.com/minikv/minikv/internal/dtoa"
)

// Version and VersionNum are redis.REDIS_VERSION and
// redis.REDIS_VERSION_NUM (0x00MMmmpp).
const (
	Version    = "7.2.4"
	VersionNum = 0x070204
)

// Redis's log levels (redis.LOG_*).
const (
	LogDebug = iota
	LogVerbose
	LogNotice
	LogWarning
)

// registerAPI sets the redis table and Redis's math.random.
func (st *state) registerAPI() {
	L := st.L
	r := L.NewTable()
	fns := map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return st.command(L, true) },
		"pcall":              func(L *lua.LState) int { return st.command(L, false) },
		"sha1hex":            sha1hex,
		"error_reply":        errorReply,
		"status_reply":       statusReply,
		"log":                st.log,
		"setresp":            st.setResp,
		"set_repl":           setRepl,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 }, // no debugger session
		"debug":              func(L *lua.LState) int { return 0 },
		"acl_check_cmd":      st.aclCheckCmd,
	}
	for name, fn := range fns {
		r.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]int{"LOG_DEBUG": LogDebug, "LOG_VERBOSE": LogVerbose, "LOG_NOTICE": LogNotice,
		"LOG_WARNING": LogWarning, "REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3,
		"REDIS_VERSION_NUM": VersionNum} {
		r.RawSetString(name, lua.LNumber(v))
	}
	r.RawSetString("REDIS_VERSION", lua.LString(Version))
	L.SetGlobal("redis", r)
	if m, ok := L.GetGlobal("math").(*lua.LTable); ok {
		m.RawSetString("random", L.NewFunction(st.random))
		m.RawSetString("randomseed", L.NewFunction(st.randomseed))
	}
}

// raise raises Redis's error table for msg ("ERR ..." or "-CODE ...").
func raise(L *lua.LState, msg string) int {
	L.Error(errorTable(L, msg), 0)
	return 0
}

// errorTable is Redis's luaPushErrorBuff: {err="CODE message"}, from
// "-CODE message" (the code is the first word) or from a message
// without a code, which gets ERR.
func errorTable(L *lua.LState, msg string) *lua.LTable {
	t := L.CreateTable(0, 2)
	t.RawSetString("err", lua.LString(errorText(msg)))
	return t
}

func errorText(msg string) string {
	code := "ERR"
	if rest, ok := strings.CutPrefix(msg, "-"); ok {
		if c, m, found := strings.Cut(rest, " "); found {
			code, msg = c, m
		} else {
			msg = rest
		}
	}
	msg = strings.Trim(msg, "\r\n")
	return code + " " + msg
}

// command is redis.call (raise) and redis.pcall.
func (st *state) command(L *lua.LState, raiseErr bool) int {
	if st.host == nil {
		return raise(L, "redis.call/pcall can only be called inside a script invocation")
	}
	n := L.GetTop()
	if n == 0 {
		return st.fail(L, raiseErr, "Please specify at least one argument for this redis lib call")
	}
	argv := st.args[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			argv = append(argv, unsafe.Slice(unsafe.StringData(string(v)), len(v)))
		case lua.LNumber:
			// Lua's own number format loses precision: Redis 7.2 uses
			// fpconv_dtoa (internal/dtoa).
			argv = append(argv, dtoa.AppendFpconvDtoa(nil, float64(v)))
		default:
			st.args = argv[:0]
			return st.fail(L, raiseErr, "Lua redis lib command arguments must be strings or integers")
		}
	}
	st.args = argv[:0]
	reply := st.host.Call(argv, st.resp3)
	clear(argv)
	v, _, err := parseDepth(L, reply, 0, &st.ok)
	if err != nil {
		return st.fail(L, raiseErr, "internal error: "+err.Error())
	}
	L.SetTop(0)
	if t, ok := v.(*lua.LTable); ok && raiseErr && len(reply) > 0 && reply[0] == '-' {
		L.Error(t, 0)
		return 0
	}
	L.Push(v)
	return 1
}

// fail is an error of redis.call (raised) or redis.pcall (returned).
func (st *state) fail(L *lua.LState, raiseErr bool, msg string) int {
	if raiseErr {
		return raise(L, msg)
	}
	L.SetTop(0)
	L.Push(errorTable(L, msg))
	return 1
}

func sha1hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, "wrong number of arguments")
	}
	s := lua.LVAsString(L.Get(1))
	L.Push(lua.LString(SHA1Hex([]byte(s))))
	return 1
}

func errorReply(L *lua.LState) int {
	s, ok := L.Get(-1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	msg := string(s)
	if !strings.HasPrefix(msg, "-") {
		msg = "-" + msg
	}
	L.Push(errorTable(L, msg))
	return 1
}

func statusReply(L *lua.LState) int {
	s, ok := L.Get(-1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

func setRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, "redis.set_repl() requires one argument.")
	}
	flags := int(L.ToNumber(-1))
	if flags&^3 != 0 {
		return raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

func (st *state) log(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		return raise(L, "redis.log() requires two arguments or more.")
	}
	lv, ok := L.Get(1).(lua.LNumber)
	if !ok {
		if s, isStr := L.Get(1).(lua.LString); isStr {
			if f, err := strconv.ParseFloat(strings.TrimSpace(string(s)), 64); err == nil {
				lv, ok = lua.LNumber(f), true
			}
		}
	}
	if !ok {
		return raise(L, "First argument must be a number (log level).")
	}
	level := int(lv)
	if level < LogDebug || level > LogWarning {
		return raise(L, "Invalid debug level.")
	}
	var b strings.Builder
	for i := 2; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString, lua.LNumber:
			if i != 2 {
				b.WriteByte(' ')
			}
			b.WriteString(lua.LVAsString(v))
		}
	}
	if st.host != nil {
		st.host.Log(level, b.String())
	}
	return 0
}

func (st *state) setResp(L *lua.LState) int {
	if st.host == nil {
		return raise(L, "redis.setresp can only be called inside a script invocation")
	}
	if L.GetTop() != 1 {
		return raise(L, "redis.setresp() requires one argument.")
	}
	switch int(L.ToNumber(1)) {
	case 2:
		st.resp3 = false
	case 3:
		st.resp3 = true
	default:
		return raise(L, "RESP version must be 2 or 3.")
	}
	return 0
}

// aclCheckCmd is redis.acl_check_cmd: whether the script's user may run
// the command with these arguments. A host with ACLs answers through
// CheckCmd; one without permits every command that exists.
func (st *state) aclCheckCmd(L *lua.LState) int {
	if st.host == nil {
		return raise(L, "redis.acl_check_cmd can only be called inside a script invocation")
	}
	n := L.GetTop()
	if n == 0 {
		return raise(L, "Please specify at least one argument for this redis lib call")
	}
	if c, ok := st.host.(interface {
		CheckCmd(argv [][]byte) (known, allowed bool)
	}); ok {
		argv := make([][]byte, n)
		for i := range n {
			argv[i] = []byte(lua.LVAsString(L.Get(i + 1)))
		}
		known, allowed := c.CheckCmd(argv)
		if !known {
			return raise(L, "Invalid command passed to redis.acl_check_cmd()")
		}
		L.Push(lua.LBool(allowed))
		return 1
	}
	name := lua.LVAsString(L.Get(1))
	if c, ok := st.host.(interface{ Known(name string) bool }); ok && !c.Known(name) {
		return raise(L, "Invalid command passed to redis.acl_check_cmd()")
	}
	L.Push(lua.LTrue)
	return 1
}

// random is Redis's math.random: Lua's, over redisLrand48, so a script
// gets the same sequence on every platform (seeded 0 before each run).
func (st *state) random(L *lua.LState) int {
	if st.host == nil {
		L.RaiseError("math.random can only be called inside a script invocation")
	}
	r := float64(st.rng.next()%lrand48Max) / float64(lrand48Max)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.RaiseError("bad argument #1 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.RaiseError("bad argument #2 to 'random' (interval is empty)")
		}
		L.Push(lua.LNumber(floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (st *state) randomseed(L *lua.LState) int {
	if st.host == nil {
		L.RaiseError("math.randomseed can only be called inside a script invocation")
	}
	if L.GetTop() == 0 {
		L.RaiseError("bad argument #1 to 'randomseed' (number expected, got no value)")
	}
	st.rng.seed(int32(L.CheckInt(1)))
	return 0
}
