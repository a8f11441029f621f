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
		st.globals.RawSetString("KEYS", st.array(keys))
		st.globals.RawSetString("ARGV", st.array(args))
		L.Push(st.closure(s))
	} else {
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

func (st *state) array(items [][]byte) *lua.LTable {
	t := st.L.CreateTable(len(items), 0)
	for i, it := range items {
		t.RawSetInt(i+1, lua.LString(it))
	}
	return t
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
