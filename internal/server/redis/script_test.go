package redis

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/script"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
	lua "github.com/yuin/gopher-lua"
)

// The tests' Lua states have a wall clock, wall_ms() (Unix ms), besides
// Redis's libraries: TIME stands still in a script (Redis 7.2), and a test
// script that must run for a while spins on this instead.
func init() {
	open := scriptLibraries
	scriptLibraries = func(L *lua.LState) {
		open(L)
		L.SetGlobal("wall_ms", L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LNumber(time.Now().UnixMilli()))
			return 1
		}))
	}
}

// spinFor is Lua that runs for ms milliseconds of the wall clock.
func spinFor(ms int) string {
	return fmt.Sprintf("local t0 = wall_ms() while wall_ms() - t0 < %d do end ", ms)
}

// TestScriptAtomicAgainstMemcachedWriter: a script reads a key twice
// with work in between while a memcached client keeps setting it; the
// store is held for the whole script, so both reads agree.
func TestScriptAtomicAgainstMemcachedWriter(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	r := dialRESP(t, rs.respAddr)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		nc, err := net.Dial("tcp", rs.addr)
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		buf := make([]byte, 64)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprint(i % 10)
			if _, err := fmt.Fprintf(nc, "set k 0 0 1\r\n%s\r\n", v); err != nil {
				t.Error(err)
				return
			}
			if _, err := nc.Read(buf); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	const body = "local a = redis.call('get', KEYS[1]) local n = 0 for i = 1, 20000 do n = n + i end " +
		"local b = redis.call('get', KEYS[1]) if a == b then return 1 end return {a, b}"
	for range 50 {
		if got := r.Do("EVAL", body, "1", "k"); got != ":1\r\n" {
			t.Fatalf("the key changed during the script: %q", got)
		}
	}
	close(stop)
	wg.Wait()
}

// TestScriptBusyAndKill: past busy-reply-threshold another client gets
// BUSY, SCRIPT KILL stops the script (which answers Redis's error), and
// the server serves again.
// Both clients share one event loop in the second run: the script runs
// on its connection's goroutine, so the loop is free to answer.
func TestScriptBusyAndKill(t *testing.T) { withBusyPair(t, testScriptBusyAndKill) } // function_test.go

func testScriptBusyAndKill(t *testing.T, a, b *servertest.RESPClient) {
	body := "local i = 0 while true do i = i + 1 end"
	a.Send(multibulk("EVAL", body, "0"))
	for {
		got := b.Do("PING")
		if got == "-"+script.ErrBusyScript.Error()+"\r\n" {
			break
		}
		if got != "+PONG\r\n" {
			t.Fatalf("PING while a script runs = %q", got)
		}
	}
	b.Expect(multibulk("SCRIPT", "KILL"), "+OK\r\n")
	a.Expect("", "-ERR Script killed by user with SCRIPT KILL... script: "+script.SHA1Hex([]byte(body))+", on @user_script:1.\r\n")
	b.Expect(multibulk("PING"), "+PONG\r\n")
	b.Expect(multibulk("SCRIPT", "KILL"), "-NOTBUSY No scripts in execution right now.\r\n")
	a.Expect(multibulk("EVAL", "return 1", "0"), ":1\r\n")
}

// TestScriptInfo: INFO memory counts the cached scripts, with Redis
// 7.0's field names.
func TestScriptInfo(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	r := dialRESP(t, rs.respAddr)
	r.Do("SCRIPT", "FLUSH")
	r.Do("SCRIPT", "LOAD", "return 1")
	r.Do("EVAL", "return 2", "0")
	info := r.Do("INFO", "memory")
	for _, f := range []string{"used_memory_lua:", "used_memory_vm_eval:", "used_memory_lua_human:", "used_memory_scripts_eval:",
		"number_of_cached_scripts:2\r\n", "number_of_functions:0\r\n", "number_of_libraries:0\r\n", "used_memory_vm_functions:",
		"used_memory_vm_total:", "used_memory_vm_total_human:", "used_memory_functions:", "used_memory_scripts:",
		"used_memory_scripts_human:"} {
		if !strings.Contains(info, "\r\n"+f) {
			t.Errorf("INFO memory lacks %q:\n%s", f, info)
		}
	}
	r.Expect(multibulk("SCRIPT", "FLUSH"), "+OK\r\n")
	if info := r.Do("INFO", "memory"); !strings.Contains(info, "\r\nnumber_of_cached_scripts:0\r\n") {
		t.Errorf("after SCRIPT FLUSH, INFO memory:\n%s", info)
	}
}

// TestScriptWritesBlockedClient: a script's push serves a client
// blocked on the list, once the script is over.
func TestScriptWritesBlockedClient(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	a, b := dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr)
	b.Send(multibulk("BLPOP", "bl", "0"))
	for !strings.Contains(a.Do("CLIENT", "LIST"), "cmd=blpop") {
	}
	a.Expect(multibulk("EVAL", "return redis.call('rpush', KEYS[1], 'x')", "1", "bl"), ":1\r\n")
	b.Expect("", "*2\r\n$2\r\nbl\r\n$1\r\nx\r\n")
}

// TestPipelinedScriptsServeBlockedClientBetween: pipelined scripts run
// under one hold of the store, but a client blocked on a key one of
// them pushes to is served before the next runs, as in Redis; and an
// EVAL inside EXEC serves it once EXEC is over.
func TestPipelinedScriptsServeBlockedClientBetween(t *testing.T) {
	for _, loops := range []int{0, 1} {
		t.Run(fmt.Sprint("event loops ", loops), func(t *testing.T) {
			rs := startRESP(t, server.Config{EventLoops: loops}, store.Config{})
			a, b := dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr)
			push := multibulk("EVAL", "return redis.call('rpush', KEYS[1], ARGV[1])", "1", "bl", "x")
			get := multibulk("EVAL", "return redis.call('llen', KEYS[1])", "1", "bl")
			b.Send(multibulk("BLPOP", "bl", "0"))
			for !strings.Contains(a.Do("CLIENT", "LIST"), "cmd=blpop") {
			}
			a.Expect(push+get+push+get, ":1\r\n", ":0\r\n", ":1\r\n", ":1\r\n")
			b.Expect("", "*2\r\n$2\r\nbl\r\n$1\r\nx\r\n")
			a.Expect(multibulk("DEL", "bl"), ":1\r\n")
			b.Send(multibulk("BLPOP", "bl", "0"))
			for !strings.Contains(a.Do("CLIENT", "LIST"), "cmd=blpop") {
			}
			a.Expect(multibulk("MULTI")+push+get+multibulk("EXEC"), "+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*2\r\n:1\r\n:1\r\n")
			b.Expect("", "*2\r\n$2\r\nbl\r\n$1\r\nx\r\n")
			a.Expect(get, ":0\r\n")
		})
	}
}

// TestPipelinedScriptsEachAtomic: a batch of pipelined EVALSHAs answers
// every one in order, errors included, and a later request that is not a
// script ends the batch.
func TestPipelinedScriptsEachAtomic(t *testing.T) {
	rs := startRESP(t, server.Config{EventLoops: 1}, store.Config{})
	a := dialRESP(t, rs.respAddr)
	incr := multibulk("EVAL", "return redis.call('incr', KEYS[1])", "1", "n")
	bad := multibulk("EVAL", "return redis.call('hget', KEYS[1], 'f')", "1", "n")
	a.Expect(incr+incr+bad+incr+multibulk("GET", "n")+incr,
		":1\r\n", ":2\r\n", "-WRONGTYPE Operation against a key holding the wrong kind of value script: "+
			script.SHA1Hex([]byte("return redis.call('hget', KEYS[1], 'f')"))+", on @user_script:1.\r\n", ":3\r\n", "$1\r\n3\r\n", ":4\r\n")
}

// TestScriptKillUnderThreshold: Redis reads no command while a script
// runs until the script has run past busy-reply-threshold, so a SCRIPT
// KILL sent sooner is answered once the script has ended: NOTBUSY, and
// the script's own reply is its result. (Parallel differential sessions
// saw a kill meant for nothing stop another session's script.)
func TestScriptKillUnderThreshold(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	a, b := dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr)
	b.Expect(multibulk("CONFIG", "SET", "busy-reply-threshold", "60000"), "+OK\r\n")
	a.Send(multibulk("EVAL", spinFor(300)+"return 'done'", "0"))
	time.Sleep(50 * time.Millisecond) // most often during the script; after it, the replies are the same
	b.Expect(multibulk("SCRIPT", "KILL"), "-NOTBUSY No scripts in execution right now.\r\n")
	a.Expect("", "$4\r\ndone\r\n")
}
