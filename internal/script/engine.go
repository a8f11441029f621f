package script

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Host runs the Redis commands a script calls.
type Host interface {
	// Call runs argv as the script's client and returns the command's
	// reply as it would be written to a client of protocol 2 or 3
	// (resp3). A command the script may not run is answered with an
	// error reply ("-ERR This Redis command is not allowed from
	// script\r\n"), as Redis's scriptCall reports it. The bytes are read
	// before the next call: the Host may reuse its buffer.
	Call(argv [][]byte, resp3 bool) []byte
	// Log writes a line of redis.log at a Redis log level (0 debug .. 3
	// warning).
	Log(level int, msg string)
}

// Errors of Kill, in Redis's words (the server prints them as they are).
var (
	ErrNotBusy     = errors.New("NOTBUSY No scripts in execution right now.")
	ErrUnkillable  = errors.New("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
	errKilled      = errors.New("script: killed")
	errOutOfMemory = errors.New("script: out of memory")
)

// Script is a compiled script of the cache.
type Script struct {
	SHA   string // lower-case hex SHA1 of Body
	Body  []byte
	proto *lua.FunctionProto
}

// Config sizes an Engine.
type Config struct {
	// MaxScripts bounds the script cache; past it the oldest scripts
	// are dropped (Redis 7.0 keeps every script until SCRIPT FLUSH: a
	// client that sends EVAL with ever-changing bodies would exhaust
	// memory; the bound is MiniKV's). 0: 100000.
	MaxScripts int
	// MaxMemory bounds what one script run may allocate, in bytes; a
	// script that allocates more is stopped with an error. 0: 1 GiB.
	MaxMemory int64
	// Open, when set, is called on every new Lua state after the
	// standard libraries are loaded and before the sandbox closes the
	// globals: it registers more libraries (package lib's cjson, ...).
	Open func(L *lua.LState)
	// Now, when set, is the clock of Run.Started, in nanoseconds (the
	// server's cheap monotonic clock); else time.Since a fixed point.
	Now func() int64
}

// Engine holds the script cache and the pool of Lua states. Its methods
// are safe for concurrent use; the server runs one script at a time.
type Engine struct {
	cfg Config

	mu      sync.Mutex // protects scripts, order, bodyMem, states
	scripts map[string]*Script
	order   []string      // SHAs in load order, for the bound (oldest first)
	bodyMem int64         // bytes of the cached bodies (INFO used_memory_scripts)
	states  []*state      // idle states
	gen     atomic.Uint64 // raised when a script leaves the cache (LookupCache)

	run     atomic.Pointer[Run] // the script running, if any
	runMu   sync.Mutex          // serialises Begin, End and Kill; protects ctx, cancel, runs
	runs    []Run               // the rest of the slab the next runs are cut from (Begin)
	ctx     context.Context     // the context of runs, until one is cancelled
	cancel  context.CancelCauseFunc
	epoch   time.Time
	luaMem  atomic.Int64 // memory of the last state used, for INFO used_memory_lua
	created atomic.Int64 // states ever made

	guardOnce  sync.Once     // starts the memory guard (guard.go)
	guardWake  chan struct{} // Begin wakes the guard
	guardAwake atomic.Bool   // the guard looks every guardTick; false: it sleeps until woken
	guardStop  chan struct{} // Close stops it
	closeOnce  sync.Once
}

// maxArrayIndex bounds the array part of a Lua table. gopher-lua grows a
// table's array up to the largest index set below lua.MaxArrayIndex (64 M
// by default): one `t[6e7] = 1`, or a cmsgpack map with such a key, would
// allocate about 1 GiB at once, before the memory guard can look. Above
// the bound an index goes to the table's hash part, as sparse indexes do
// in Lua 5.1, so scripts see the same values.
const maxArrayIndex = 1 << 20

func init() { lua.MaxArrayIndex = maxArrayIndex }

// New returns an empty Engine.
func New(cfg Config) *Engine {
	if cfg.MaxScripts <= 0 {
		cfg.MaxScripts = 100000
	}
	if cfg.MaxMemory <= 0 {
		cfg.MaxMemory = 1 << 30
	}
	return &Engine{cfg: cfg, scripts: make(map[string]*Script), guardStop: make(chan struct{}), epoch: time.Now()}
}

// SHA1Hex is the lower-case hex SHA1 of b, the name of a script.
func SHA1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// Lookup returns the cached script whose SHA1 is sha (in any case), or
// nil.
func (e *Engine) Lookup(sha []byte) *Script {
	if len(sha) != 40 {
		return nil
	}
	var buf [40]byte
	for i, c := range sha {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	e.mu.Lock()
	s := e.scripts[string(buf[:])]
	e.mu.Unlock()
	return s
}

// A LookupCache is a client's last script (LookupCached): a client that
// sends EVALSHA of one script over and over skips the SHA's lowercasing
// and the cache's lock and map.
type LookupCache struct {
	s   *Script
	gen uint64 // Engine.gen when s was looked up
}

// LookupCached is Lookup through the client's cache c.
func (e *Engine) LookupCached(c *LookupCache, sha []byte) *Script {
	if s := c.s; s != nil && string(sha) == s.SHA && c.gen == e.gen.Load() {
		return s
	}
	gen := e.gen.Load() // before the lookup: a drop after it makes the entry stale
	s := e.Lookup(sha)
	c.s, c.gen = s, gen
	return s
}

// Load compiles body and caches it under its SHA1, or returns the
// script cached already. A body that does not compile is an error whose
// text is Redis's reply without the leading '-'.
//
// skip is the length of a first line Lua does not see (a "#!lua"
// shebang): the rest is compiled, its line numbers unchanged.
func (e *Engine) Load(body []byte, skip int) (*Script, error) {
	sha := SHA1Hex(body)
	e.mu.Lock()
	s := e.scripts[sha]
	e.mu.Unlock()
	if s != nil {
		return s, nil
	}
	proto, err := compile(body[skip:])
	if err != nil {
		return nil, err
	}
	s = &Script{SHA: sha, Body: bytes.Clone(body), proto: proto}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old := e.scripts[sha]; old != nil {
		return old, nil
	}
	for len(e.order) >= e.cfg.MaxScripts {
		victim := e.order[0]
		e.order = e.order[1:]
		if v := e.scripts[victim]; v != nil {
			e.bodyMem -= int64(len(v.Body))
			delete(e.scripts, victim)
			e.gen.Add(1)
		}
	}
	e.scripts[sha] = s
	e.order = append(e.order, sha)
	e.bodyMem += int64(len(s.Body))
	return s, nil
}

// compile parses and compiles a script body under Redis's chunk name,
// "user_script" (errors read "user_script:1: ...").
func compile(body []byte) (*lua.FunctionProto, error) {
	proto, msg := compileChunk(body, chunkName)
	if msg != "" {
		return nil, errors.New("ERR Error compiling script (new function): " + msg)
	}
	return proto, nil
}

// compileChunk compiles body under the chunk name chunk, or returns the
// compile error in Lua 5.1's words.
func compileChunk(body []byte, chunk string) (*lua.FunctionProto, string) {
	parsed, err := parse.Parse(bytes.NewReader(body), chunk)
	if err != nil {
		return nil, compileError(chunk, err.Error(), body)
	}
	proto, err := lua.Compile(parsed, chunk)
	if err != nil {
		return nil, compileError(chunk, err.Error(), body)
	}
	// gopher-lua marks every vararg function as needing Lua 5.0's "arg"
	// table, and builds one at each call; the main chunk has no local
	// of that name to reach it, so the table would be garbage made per
	// EVAL.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, ""
}

// compileError rewrites gopher-lua's syntax error ("user_script
// line:1(column:5) near '=':   syntax error", "user_script at EOF:
// syntax error") in Lua 5.1's form, "user_script:1: unexpected symbol
// near '='", which is what Redis prints. Lua's parser has more specific
// messages ("'end' expected"); gopher-lua's do not say, so a few
// compile errors read differently from Redis's.
func compileError(chunk, msg string, body []byte) string {
	msg = strings.TrimSpace(msg)
	if rest, ok := strings.CutPrefix(msg, chunk+" at EOF:"); ok {
		what := strings.TrimSpace(rest)
		if what == "syntax error" {
			what = "unexpected symbol"
		}
		return chunk + ":" + strconv.Itoa(bytes.Count(body, []byte("\n"))+1) + ": " + what + " near '<eof>'"
	}
	rest, ok := strings.CutPrefix(msg, chunk+" line:")
	if !ok {
		return msg
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	line := rest[:i]
	rest = rest[i:]
	if j := strings.IndexByte(rest, ')'); strings.HasPrefix(rest, "(column:") && j > 0 {
		rest = rest[j+1:]
	}
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "near '") {
		if j := strings.Index(rest, "':"); j > 0 {
			near, what := rest[:j+1], strings.TrimSpace(rest[j+2:])
			if what == "syntax error" {
				what = "unexpected symbol"
			}
			return chunk + ":" + line + ": " + what + " " + near
		}
	}
	return chunk + ":" + line + ": " + rest
}

// Exists reports whether the script sha is cached.
func (e *Engine) Exists(sha []byte) bool { return e.Lookup(sha) != nil }

// Flush empties the script cache (SCRIPT FLUSH). The idle Lua states
// are dropped too, as Redis starts a new interpreter.
func (e *Engine) Flush() {
	e.mu.Lock()
	e.scripts = make(map[string]*Script)
	e.order, e.bodyMem = nil, 0
	e.gen.Add(1)
	for _, st := range e.states {
		st.L.Close()
	}
	e.states = nil
	e.mu.Unlock()
	e.luaMem.Store(0)
}

// Stats are what INFO reports of the engine.
type Stats struct {
	Scripts     int   // number_of_cached_scripts
	ScriptBytes int64 // used_memory_scripts_eval (bodies)
	LuaBytes    int64 // used_memory_lua: an estimate of the interpreter's memory
}

// Stats returns the engine's INFO figures.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	s := Stats{Scripts: len(e.scripts), ScriptBytes: e.bodyMem}
	e.mu.Unlock()
	// A fresh Redis reports 31744 bytes for its one interpreter; the
	// states here are counted at a similar figure plus their scripts.
	s.LuaBytes = 31744 + e.luaMem.Load()
	return s
}

// runSlab is how many Runs one allocation makes.
const runSlab = 64

// Run is one script execution, from Begin to End. The server keeps it
// while the script runs, for BUSY and SCRIPT KILL.
type Run struct {
	e       *Engine
	Started int64     // Config.Now when it began
	Func    *Function // the function FCALL runs (function.go); nil: a script of EVAL
	Argv    [][]byte  // the FCALL that runs Func, for FUNCTION STATS
	ctx     context.Context
	wrote   atomic.Bool

	rescueAfter time.Duration // set before the run is published, read by the watchdog
	rescuer     Rescuer

	mu    sync.Mutex // protects done, ended
	done  chan struct{}
	ended bool
}

// Running returns the script running now, or nil.
func (e *Engine) Running() *Run { return e.run.Load() }

// Done is closed when the run ends. The channel is made for the first
// caller: most runs end with nobody waiting.
func (r *Run) Done() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done == nil {
		r.done = make(chan struct{})
		if r.ended {
			close(r.done)
		}
	}
	return r.done
}

// NoteWrite records that the script ran a write command: from then on it
// cannot be killed (SCRIPT KILL answers UNKILLABLE).
func (r *Run) NoteWrite() { r.wrote.Store(true) }

// Kill stops the running script if it has not written: a script of EVAL
// (SCRIPT KILL), or with function set a function (FUNCTION KILL). The
// other kind is not stopped: ErrBusyFunction or ErrBusyScript names the
// command that would.
func (e *Engine) Kill(function bool) error {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	r := e.run.Load()
	if r == nil {
		return ErrNotBusy
	}
	if r.wrote.Load() {
		return ErrUnkillable
	}
	if isFunc := r.Func != nil; isFunc != function {
		return r.BusyError()
	}
	e.cancel(errKilled)
	return nil
}

// stop cancels the run r with cause, if it is still the one running
// (the memory guard).
func (e *Engine) stop(r *Run, cause error) {
	e.runMu.Lock()
	if e.run.Load() == r {
		e.cancel(cause)
	}
	e.runMu.Unlock()
}

// Options are a run's settings.
type Options struct {
	RESP3    bool // the caller's protocol: how the return value is written
	ReadOnly bool // EVAL_RO / EVALSHA_RO (the Host enforces it; kept for the Host)
}

// A Rescuer is told, once, that a run has lasted long: the server's
// event loop that runs the script on its goroutine then has a stand-in
// serve its other clients (BUSY, SCRIPT KILL).
type Rescuer interface{ Rescue() }

// Begin marks a script as running; End must follow. Runs share one
// context, made anew only after one was cancelled: a context per run
// would cost an allocation and a goroutine-safe cancel for every EVAL.
func (e *Engine) Begin() *Run { return e.BeginRescued(0, nil) }

// BeginRescued is Begin for a run whose Rescuer, when not nil, the
// engine's watchdog calls once the run has lasted after.
func (e *Engine) BeginRescued(after time.Duration, rs Rescuer) *Run {
	return e.begin(nil, nil, after, rs)
}

// begin starts a run of a script, or of the function f called by argv.
func (e *Engine) begin(f *Function, argv [][]byte, after time.Duration, rs Rescuer) *Run {
	started := e.now()
	e.runMu.Lock()
	// Runs are cut from a slab, a new one per runSlab runs: one
	// allocation per EVALSHA showed in its profile (3 %). A Run is never
	// reused, so whoever still holds one (a client waiting on Done) holds
	// that one run.
	if len(e.runs) == 0 {
		e.runs = make([]Run, runSlab)
	}
	r := &e.runs[0]
	e.runs = e.runs[1:]
	r.e, r.Started, r.rescueAfter, r.rescuer = e, started, after, rs
	r.Func, r.Argv = f, argv
	if e.ctx == nil || e.ctx.Err() != nil {
		e.ctx, e.cancel = context.WithCancelCause(context.Background())
	}
	r.ctx = e.ctx
	e.run.Store(r)
	e.runMu.Unlock()
	e.wake()
	return r
}

// End marks the run over.
func (r *Run) End() {
	e := r.e
	e.runMu.Lock()
	e.run.CompareAndSwap(r, nil)
	e.runMu.Unlock()
	r.mu.Lock()
	r.ended = true
	if r.done != nil {
		close(r.done)
	}
	r.mu.Unlock()
}

// now is Config.Now, or a monotonic clock in nanoseconds.
func (e *Engine) now() int64 {
	if e.cfg.Now != nil {
		return e.cfg.Now()
	}
	return int64(time.Since(e.epoch))
}

// Exec runs s with KEYS and ARGV and appends its reply, in the
// caller's protocol, to dst. It never fails: errors are error replies.
func (r *Run) Exec(dst []byte, s *Script, keys, args [][]byte, h Host, opt Options) []byte {
	e := r.e
	st := e.getState()
	defer e.putState(st)
	return st.exec(dst, r, s, nil, keys, args, h, opt)
}

func (e *Engine) getState() *state {
	e.mu.Lock()
	if n := len(e.states); n > 0 {
		st := e.states[n-1]
		e.states = e.states[:n-1]
		e.mu.Unlock()
		return st
	}
	e.mu.Unlock()
	e.created.Add(1)
	return newState(e.cfg.Open)
}

func (e *Engine) putState(st *state) {
	if st.broken {
		st.L.Close()
		return
	}
	e.mu.Lock()
	if len(e.states) < 4 {
		e.states = append(e.states, st)
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	st.L.Close()
}
