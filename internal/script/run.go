package script

import (
	"fmt"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// exec runs s in st for run r and appends its reply to dst; with s nil
// it runs the function f instead (FCALL), with keys and args as its
// arguments rather than KEYS and ARGV.
func (st *state) exec(dst []byte, r *Run, s *Script, f *Function, keys, args [][]byte, h Host, opt Options) (out []byte) {
	L := st.L
	defer func() {
		// gopher-lua lets a few errors escape PCall: one raised while the
		// value stack is full is raised again when the error handler is
		// pushed. The state is dropped, and the error answered.
		if p := recover(); p != nil {
			st.broken = true
			out = appendLine(append(dst, '-'), panicMessage(p, st.sha))
		}
	}()
	st.run, st.host, st.resp3, st.ro = r, h, false, opt.ReadOnly
	if s != nil {
		st.sha = s.SHA
	} else {
		st.sha = f.Name
	}
	L.SetContext(r.ctx)
	defer func() {
		L.RemoveContext()
		L.SetTop(0)
		// KEYS and ARGV stay until the next run replaces them: deleting
		// them costs gopher-lua a map delete and a re-insert per run.
		st.scrub()
		st.run, st.host = nil, nil
	}()
	nargs := 0
	if s != nil {
		if t := st.keys.fill(L, keys); t != nil {
			st.globals.RawSetString("KEYS", t)
		}
		if t := st.argv.fill(L, args); t != nil {
			st.globals.RawSetString("ARGV", t)
		}
		L.Push(st.closure(s))
	} else {
		// A function gets its keys and arguments as parameters: tables
		// of its own, which it may keep.
		L.Push(f.fn)
		L.Push(st.array(keys))
		L.Push(st.array(args))
		nargs = 2
	}
	if err := L.PCall(nargs, 1, st.handler); err != nil {
		return st.appendError(dst, err)
	}
	return appendReply(dst, L.Get(-1), opt.RESP3, st.resp3, 0)
}

// argTable is the KEYS or ARGV table of a state, reused from run to run:
// a new table costs gopher-lua two allocations and a global's map write.
type argTable struct {
	t *lua.LTable
	n int // entries the last run set: 1..n
}

// fill puts items in the table as strings, 1..len(items), and returns
// the table if it is a new one, to be set as the global, or nil. The last
// run's table is kept when that run left it as it was made (no
// metatable, nothing past its last entry): a script may change KEYS and
// ARGV as it likes, and the next one must not see what it did.
func (a *argTable) fill(L *lua.LState, items [][]byte) *lua.LTable {
	var made *lua.LTable
	if a.t == nil || a.t.Metatable != lua.LNil || !tailEmpty(a.t, a.n) {
		a.t = L.CreateTable(len(items), 0)
		a.n = 0
		made = a.t
	}
	t := a.t
	for i, it := range items {
		t.RawSetInt(i+1, lua.LString(it))
	}
	for i := a.n; i > len(items); i-- {
		t.RawSetInt(i, lua.LNil)
	}
	a.n = len(items)
	return made
}

// array is a new Lua array of items: a function's keys and arguments.
func (st *state) array(items [][]byte) *lua.LTable {
	t := st.L.CreateTable(len(items), 0)
	for i, it := range items {
		t.RawSetInt(i+1, lua.LString(it))
	}
	return t
}

// tailEmpty reports whether t holds nothing past index n: no array
// entry above it and no hash entry.
func tailEmpty(t *lua.LTable, n int) bool {
	var from lua.LValue = lua.LNil
	if n > 0 {
		from = lua.LNumber(n)
	}
	k, _ := t.Next(from)
	return k == lua.LNil
}

// appendError writes a script's error as eval.c does: the message of
// the error table, then " script: <sha>, on <source>:<line>." when the
// error handler found the line.
func (st *state) appendError(dst []byte, err error) []byte {
	var obj lua.LValue = lua.LString(err.Error())
	if aerr, ok := err.(*lua.ApiError); ok {
		obj = aerr.Object
		if aerr.Type == lua.ApiErrorPanic {
			// A Go panic inside the interpreter: the state may be
			// inconsistent, so it is not reused.
			st.broken = true
		}
	}
	t, ok := obj.(*lua.LTable)
	if !ok {
		// The error handler itself failed (the call stack was full):
		// the message still names the line, as Lua's does in Redis.
		msg := "execution failure"
		if s, isStr := obj.(lua.LString); isStr {
			msg = string(s)
		}
		if strings.HasPrefix(msg, chunkName+":") {
			return appendLine(append(dst, '-'), panicMessage(msg, st.sha))
		}
		if len(msg) > 100 {
			msg = msg[:100]
		}
		return appendLine(append(dst, '-'), "ERR Error running script "+st.sha+", "+msg)
	}
	msg := "-"
	if e, isStr := t.RawGetString("err").(lua.LString); isStr {
		msg += string(e)
	}
	source, sok := t.RawGetString("source").(lua.LString)
	line := t.RawGetString("line")
	if sok && line != lua.LNil {
		l := lua.LVAsString(line)
		if n, isNum := line.(lua.LNumber); isNum {
			l = strconv.FormatInt(int64(n), 10)
		}
		msg += " script: " + st.sha + ", on " + string(source) + ":" + l + "."
	}
	dst = append(dst, '-')
	return appendLine(dst, msg[1:])
}

// panicMessage is the error reply text of a Lua error that escaped
// PCall: Redis's form, with the line its message names.
func panicMessage(p any, sha string) string {
	var msg string
	switch v := p.(type) {
	case *lua.ApiError:
		msg = lua.LVAsString(v.Object)
	case error:
		msg = v.Error()
	case string:
		msg = v
	default:
		msg = fmt.Sprint(v)
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i] // the traceback
	}
	line := "0"
	if rest, ok := strings.CutPrefix(msg, chunkName+":"); ok {
		if j := strings.IndexByte(rest, ':'); j > 0 {
			line = rest[:j]
		}
	}
	return "ERR " + msg + " script: " + sha + ", on @" + chunkName + ":" + line + "."
}
