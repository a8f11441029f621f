package script

import (
	"runtime"
	"strings"
	"testing"
)

// fakeHost answers a few commands with fixed replies, in the protocol
// asked.
type fakeHost struct{ calls [][]string }

func (h *fakeHost) Call(argv [][]byte, resp3 bool) []byte {
	var c []string
	for _, a := range argv {
		c = append(c, string(a))
	}
	h.calls = append(h.calls, c)
	switch strings.ToLower(c[0]) {
	case "get":
		if resp3 {
			return []byte("_\r\n")
		}
		return []byte("$-1\r\n")
	case "set":
		return []byte("+OK\r\n")
	case "incr":
		return []byte("-ERR value is not an integer or out of range\r\n")
	case "hgetall":
		if resp3 {
			return []byte("%1\r\n$1\r\na\r\n$1\r\n1\r\n")
		}
		return []byte("*2\r\n$1\r\na\r\n$1\r\n1\r\n")
	case "echo":
		return append(append([]byte("$"+itoa(len(c[1]))+"\r\n"), c[1]...), "\r\n"...)
	}
	return []byte("-ERR Unknown Redis command called from script\r\n")
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+n%10))) }

func (h *fakeHost) Log(level int, msg string) {}

func eval(t *testing.T, e *Engine, body string, resp3 bool, keys ...string) string {
	t.Helper()
	s, err := e.Load([]byte(body), 0)
	if err != nil {
		return "-" + err.Error() + "\r\n"
	}
	var k [][]byte
	for _, x := range keys {
		k = append(k, []byte(x))
	}
	r := e.Begin()
	defer r.End()
	return string(r.Exec(nil, s, k, nil, &fakeHost{}, Options{RESP3: resp3}))
}

func TestEvalReplies(t *testing.T) {
	e := New(Config{})
	sha := func(b string) string { return SHA1Hex([]byte(b)) }
	tests := []struct {
		body  string
		resp3 bool
		want  string
	}{
		{"return 1", false, ":1\r\n"},
		{"return 3.99", false, ":3\r\n"},
		{"return 'x'", false, "$1\r\nx\r\n"},
		{"return {1,2,3,'ciao',{1,2}}", false, "*5\r\n:1\r\n:2\r\n:3\r\n$4\r\nciao\r\n*2\r\n:1\r\n:2\r\n"},
		{"return {1,2,nil,3}", false, "*2\r\n:1\r\n:2\r\n"},
		{"return true", false, ":1\r\n"},
		{"return false", false, "$-1\r\n"},
		{"return false", true, "_\r\n"},
		{"return nil", false, "$-1\r\n"},
		{"return {err='boom'}", false, "-boom\r\n"},
		{"return redis.error_reply('My Error')", false, "-My Error\r\n"},
		{"return redis.status_reply('FINE')", false, "+FINE\r\n"},
		{"return {double=3.5}", true, ",3.5\r\n"},
		{"return {double=0.1}", false, "$3\r\n0.1\r\n"},
		{"return {big_number='123'}", true, "(123\r\n"},
		{"return {verbatim_string={format='txt',string='hi'}}", true, "=6\r\ntxt:hi\r\n"},
		{"return {map={a=1}}", true, "%1\r\n$1\r\na\r\n:1\r\n"},
		{"return {set={a=true}}", true, "~1\r\n$1\r\na\r\n"},
		{"return 3.5e20", false, ":-9223372036854775808\r\n"},
		{"redis.setresp(3); return true", true, "#t\r\n"},
		{"redis.setresp(3); return false", false, ":0\r\n"},
		{"redis.setresp(3); return redis.call('hgetall','h')", true, "%1\r\n$1\r\na\r\n$1\r\n1\r\n"},
		{"redis.setresp(3); return type(redis.call('get','x'))", false, "$3\r\nnil\r\n"},
		{"return redis.call('get','x')", false, "$-1\r\n"},
		{"return redis.pcall('incr','x')", false, "-ERR value is not an integer or out of range\r\n"},
		{"local r = math.random(100) return r >= 1 and r <= 100", false, ":1\r\n"},
		{"return redis.REDIS_VERSION_NUM", false, ":459268\r\n"},
		{"return _VERSION", false, "$7\r\nLua 5.1\r\n"},
		{"return type(loadstring)", false, "$8\r\nfunction\r\n"},
		{"return redis.sha1hex('')", false, "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n"},
		{"local ok, e = pcall(function() redis.call('nosuch') end) return e", false, "$44\r\nERR Unknown Redis command called from script\r\n"},
		{"return redis.call('get', {})", false, "-ERR Lua redis lib command arguments must be strings or integers script: " + sha("return redis.call('get', {})") + ", on @user_script:1.\r\n"},
		{"return redis.pcall('get', {})", false, "-ERR Lua redis lib command arguments must be strings or integers\r\n"},
		{"return x", false, "-ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: " + sha("return x") + ", on @user_script:1.\r\n"},
		{"x=1", false, "-ERR user_script:1: Attempt to modify a readonly table script: " + sha("x=1") + ", on @user_script:1.\r\n"},
		{"redis.call = 1", false, "-ERR user_script:1: Attempt to modify a readonly table script: " + sha("redis.call = 1") + ", on @user_script:1.\r\n"},
		{"print('x')", false, "-ERR user_script:1: Script attempted to access nonexistent global variable 'print' script: " + sha("print('x')") + ", on @user_script:1.\r\n"},
		{"return redis.call('incr','a')", false, "-ERR value is not an integer or out of range script: " + sha("return redis.call('incr','a')") + ", on @user_script:1.\r\n"},
		{"\nerror('boom')", false, "-ERR user_script:2: boom script: " + sha("\nerror('boom')") + ", on @user_script:2.\r\n"},
		{"error({err='XX boom'})", false, "-XX boom script: " + sha("error({err='XX boom'})") + ", on @user_script:1.\r\n"},
		{"return redis.call()", false, "-ERR Please specify at least one argument for this redis lib call script: " + sha("return redis.call()") + ", on @user_script:1.\r\n"},
		{"return redis.setresp(4)", false, "-ERR RESP version must be 2 or 3. script: " + sha("return redis.setresp(4)") + ", on @user_script:1.\r\n"},
		{"return {KEYS[1], #KEYS}", false, "*2\r\n$1\r\nk\r\n:1\r\n"},
		{"return 'a'..", false, "-ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'\r\n"},
	}
	for _, tc := range tests {
		got := eval(t, e, tc.body, tc.resp3, "k")
		if got != tc.want {
			t.Errorf("EVAL %q (resp3 %v) = %q, want %q", tc.body, tc.resp3, got, tc.want)
		}
	}
}

func TestUnboundedAllocationStopped(t *testing.T) {
	e := New(Config{MaxMemory: 64 << 20})
	defer e.Close()
	got := eval(t, e, "local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep('x', 100000) .. i end", false)
	if !strings.HasPrefix(got, "-ERR") || !strings.Contains(got, "not enough memory") {
		t.Fatalf("unbounded allocation = %q, want a not enough memory error", got)
	}
	if got := eval(t, e, "return 1", false); got != ":1\r\n" {
		t.Fatalf("after the stopped script, EVAL return 1 = %q", got)
	}
}

func TestDeepRecursionStopped(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	got := eval(t, e, "local function f(n) return f(n+1)+1 end return f(1)", false)
	t.Logf("deep recursion = %q", got)
	if !strings.HasPrefix(got, "-ERR") {
		t.Fatalf("deep recursion = %q, want an error", got)
	}
	got = eval(t, e, "local t = {} for i=1,1e6 do t[i] = i end return #{unpack(t)}", false)
	if !strings.HasPrefix(got, "-ERR") {
		t.Logf("huge unpack = %q", got)
	}
}

func TestKill(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	s, _ := e.Load([]byte("local i = 0 while true do i = i + 1 end"), 0)
	r := e.Begin()
	done := make(chan string)
	go func() { done <- string(r.Exec(nil, s, nil, nil, &fakeHost{}, Options{})) }()
	for e.Kill(false) != nil {
	}
	got := <-done
	r.End()
	want := "-ERR Script killed by user with SCRIPT KILL... script: " + s.SHA + ", on @user_script:1.\r\n"
	if got != want {
		t.Fatalf("killed script = %q, want %q", got, want)
	}
	if err := e.Kill(false); err != ErrNotBusy {
		t.Fatalf("Kill with nothing running = %v, want ErrNotBusy", err)
	}
}

func TestRawsetDoesNotLeak(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	eval(t, e, "rawset(_G, 'leak', 1) rawset(redis, 'leak', 2)", false)
	if got := eval(t, e, "return rawget(_G, 'leak') or rawget(redis, 'leak') or 0", false); got != ":0\r\n" {
		t.Fatalf("a later script sees what rawset stored: %q", got)
	}
}

// TestEnvironmentFunctionsKeepTheSandbox: getfenv, setfenv, loadstring
// and load (Redis 7.2 lets scripts call them) never hand a script the
// real globals, so nothing a script stores through them reaches the next
// one, and setfenv(0) cannot replace the globals of later scripts.
func TestEnvironmentFunctionsKeepTheSandbox(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	for _, tc := range []struct{ body, want string }{
		{"loadstring('leak1 = 1')()", "Attempt to modify a readonly table"},
		{"local ok, e = pcall(loadstring('leak2 = 1')); return e", "[string \"leak2 = 1\"]:1: Attempt to modify a readonly table"},
		{"local done; load(function() if not done then done = true return 'leak3 = 1' end end)()", "Attempt to modify a readonly table"},
		{"getfenv(0).leak4 = 1", "Attempt to modify a readonly table"},
		{"rawset(getfenv(tostring), 'leak5', 1)", "Attempt to modify a readonly table"},
		{"rawset(getfenv(1), 'leak6', 1)", "Attempt to modify a readonly table"},
		{"setfenv(0, {leak7 = 1})", "'setfenv' cannot change environment of given object"},
		{"setfenv(tostring, {})", "'setfenv' cannot change environment of given object"},
		{"local co = coroutine.create(function() leak8 = 1 end); local ok, e = coroutine.resume(co); return e", "Attempt to modify a readonly table"},
		{"return tostring(getfenv(0) == _G) .. tostring(getfenv(1) == _G) .. tostring(getfenv(tostring) == _G)", "truetruetrue"},
		{"local f = setfenv(function() return x end, {x = 5}); return f()", ":5"},
		{"local f = setfenv(loadstring('y = 7; return y'), {}); return f()", ":7"},
		{"return type(newproxy(true))", "userdata"},
		{"local a = newproxy(true); return tostring(getmetatable(newproxy(a)) == getmetatable(a))", "true"},
		{"return newproxy(1)", "boolean or proxy expected"},
		{"return getfenv(2)", "invalid level"},
	} {
		if got := eval(t, e, tc.body, false); !strings.Contains(got, tc.want) {
			t.Errorf("EVAL %q = %q, want it to hold %q", tc.body, got, tc.want)
		}
	}
	if got := eval(t, e, "return {leak1, leak2, leak3, leak4, leak5, leak6, leak7, leak8}", false); !strings.Contains(got, "nonexistent global variable 'leak1'") {
		t.Fatalf("a later script sees a global an earlier one set: %q", got)
	}
	for i := 2; i <= 8; i++ {
		if got := eval(t, e, "return rawget(_G, 'leak"+itoa(i)+"')", false); got != "$-1\r\n" {
			t.Errorf("leak%d is set for later scripts: %q", i, got)
		}
	}
	if got := eval(t, e, "return redis.call('get', 'x')", false); got != "$-1\r\n" {
		t.Fatalf("after the environment tricks, redis.call = %q", got)
	}
}

// TestChunkID: loadstring's chunk names as Lua 5.1's luaO_chunkid prints
// them.
func TestChunkID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"x = 1", `[string "x = 1"]`},
		{"a\nb", `[string "a..."]`},
		{"=name", "name"},
		{"@file.lua", "file.lua"},
		{strings.Repeat("y", 50), `[string "` + strings.Repeat("y", 43) + `..."]`},
		{strings.Repeat("y", 43), `[string "` + strings.Repeat("y", 43) + `"]`},
	} {
		if got := chunkID(tc.in); got != tc.want {
			t.Errorf("chunkID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSandboxSurvivesMetatableTricks(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	for _, body := range []string{"getmetatable(_G).__index = nil", "setmetatable(_G, nil)", "getmetatable(redis).__index = {}",
		"rawset(getmetatable(_G), '__index', nil)"} {
		eval(t, e, body, false)
	}
	if got := eval(t, e, "return redis.call('get', 'x')", false); got != "$-1\r\n" {
		t.Fatalf("after metatable tricks, redis.call = %q", got)
	}
	if got := eval(t, e, "return undefinedvar", false); !strings.Contains(got, "nonexistent global variable 'undefinedvar'") {
		t.Fatalf("after metatable tricks, an undefined global = %q", got)
	}
}

// TestSparseIndexAllocatesLittle: setting one high index of a table does
// not allocate an array up to it (1 GiB at 6e7: maxArrayIndex), and reads
// back as in Lua 5.1.
func TestSparseIndexAllocatesLittle(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if got := eval(t, e, "local t = {} t[6e7] = 7 t[6e7+1] = 8 return {t[6e7], t[6e7+1], #t}", false); got != "*3\r\n:7\r\n:8\r\n:0\r\n" {
		t.Fatalf("sparse table = %q", got)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Fatalf("setting t[6e7] allocated %d MiB", grew>>20)
	}
}

// TestKeysTableReusedClean: KEYS is one table from run to run, but what
// a script did to it (more entries, a hash key, a metatable, fewer
// keys next time) never reaches the next script.
func TestKeysTableReusedClean(t *testing.T) {
	e := New(Config{})
	defer e.Close()
	const show = "local n = 0 for k, v in pairs(KEYS) do n = n + 1 end return {n, getmetatable(KEYS) == nil, KEYS[1], KEYS[2]}"
	steps := []struct {
		body string
		keys []string
		want string
	}{
		{show, []string{"a", "b"}, "*4\r\n:2\r\n:1\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"KEYS[3] = 'x' return 1", []string{"a", "b"}, ":1\r\n"},
		{show, []string{"c"}, "*3\r\n:1\r\n:1\r\n$1\r\nc\r\n"},
		{"KEYS.x = 1 return 1", []string{"c"}, ":1\r\n"},
		{show, []string{"d", "e"}, "*4\r\n:2\r\n:1\r\n$1\r\nd\r\n$1\r\ne\r\n"},
		{"setmetatable(KEYS, {__index = function() return 'm' end}) return 1", nil, ":1\r\n"},
		{show, nil, "*2\r\n:0\r\n:1\r\n"},
		{"KEYS[1] = nil return 1", []string{"f", "g"}, ":1\r\n"},
		{show, []string{"h", "i"}, "*4\r\n:2\r\n:1\r\n$1\r\nh\r\n$1\r\ni\r\n"},
		{show, nil, "*2\r\n:0\r\n:1\r\n"},
	}
	for _, s := range steps {
		if got := eval(t, e, s.body, false, s.keys...); got != s.want {
			t.Errorf("eval(%q, keys %q) = %q, want %q", s.body, s.keys, got, s.want)
		}
	}
}

// TestLookupCachedSeesFlush: a client's cached script is gone once
// SCRIPT FLUSH dropped it, or the bounded cache did.
func TestLookupCachedSeesFlush(t *testing.T) {
	e := New(Config{MaxScripts: 1})
	defer e.Close()
	var c LookupCache
	s, _ := e.Load([]byte("return 1"), 0)
	if got := e.LookupCached(&c, []byte(s.SHA)); got != s {
		t.Fatalf("LookupCached(%s) = %v, want the script", s.SHA, got)
	}
	if got := e.LookupCached(&c, []byte(strings.ToUpper(s.SHA))); got != s {
		t.Fatalf("LookupCached(upper-case %s) = %v, want the script", s.SHA, got)
	}
	e.Flush()
	if got := e.LookupCached(&c, []byte(s.SHA)); got != nil {
		t.Fatalf("after Flush, LookupCached(%s) = %v, want nil", s.SHA, got)
	}
	s, _ = e.Load([]byte("return 1"), 0)
	if got := e.LookupCached(&c, []byte(s.SHA)); got != s {
		t.Fatalf("LookupCached(%s) = %v, want the script", s.SHA, got)
	}
	e.Load([]byte("return 2"), 0) // drops the first: MaxScripts is 1
	if got := e.LookupCached(&c, []byte(s.SHA)); got != nil {
		t.Fatalf("after eviction, LookupCached(%s) = %v, want nil", s.SHA, got)
	}
}
