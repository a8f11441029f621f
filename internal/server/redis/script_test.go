package redis

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/minikv/minikv/internal/script"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

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
