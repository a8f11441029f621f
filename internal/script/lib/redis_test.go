package lib_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/minikv/minikv/internal/script/lib"
)

// The differential tests run each case, one line of Lua, in gopher-lua with
// lib.Open and in redis-server 7.2.4 through EVAL, and compare what the two
// return. Every case runs inside pcall, so an error is compared by its
// message, and what it returns is serialised by the same Lua function on both
// sides (tables with their entries sorted, numbers with %.17g, strings with
// their length), so the comparison does not depend on how either side turns
// Lua values into replies.
//
// The case starts on line 1 of a chunk named user_script, as Redis names the
// body of an EVAL, after the wrapper, so error positions compare too.
//
// Cases must not change the state they run in: Redis keeps one Lua state for
// every EVAL, so a case that configures cjson does it on cjson.new().

const serialise = `local function ser(v, d) d = d or 0 local t = type(v) ` +
	`if t == "nil" then return "nil" elseif t == "boolean" then return tostring(v) ` +
	`elseif t == "number" then if v ~= v then return "nan" elseif v == 1/0 then return "inf" ` +
	`elseif v == -1/0 then return "-inf" end return string.format("%.17g", v) ` +
	`elseif t == "string" then return "s" .. #v .. ":" .. v ` +
	`elseif t == "table" then if d > 30 then return "deep" end local parts = {} ` +
	`for k, x in pairs(v) do parts[#parts + 1] = ser(k, d + 1) .. "=" .. ser(x, d + 1) end ` +
	`table.sort(parts) return "{" .. table.concat(parts, ",") .. "}" ` +
	`elseif v == cjson.null then return "null" else return t end end ` +
	`local function pack(...) return {n = select('#', ...), ...} end `

func wrap(code string) string {
	return serialise + `local r = pack(pcall(function() ` + code + ` end)) ` +
		`local out = {} for i = 1, r.n do out[i] = ser(r[i]) end ` +
		`return r.n .. ": " .. table.concat(out, " | ")`
}

// newState is a script state as the tests use it: the standard libraries,
// and a data stack allowed to grow as far as Redis's (8000 slots per C call).
func newState() *lua.LState {
	L := lua.NewState(lua.Options{RegistrySize: 1024 * 20, RegistryMaxSize: 1024 * 256})
	lib.Open(L)
	return L
}

// runGopher runs wrap(code) in a fresh gopher-lua state and returns the
// string it returns, or "ERR " and the error.
func runGopher(code string) string {
	L := newState()
	defer L.Close()
	fn, err := L.Load(strings.NewReader(wrap(code)), "user_script")
	if err != nil {
		return "ERR " + err.Error()
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		return "ERR " + err.Error()
	}
	return L.Get(-1).String()
}

type luaCase struct {
	name string
	code string
}

// checkCases runs the cases on both sides and reports each difference.
func checkCases(t *testing.T, cases []luaCase) {
	t.Helper()
	r := redisPeer(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := runGopher(c.code)
			want := r.eval(t, wrap(c.code))
			if got != want {
				t.Errorf("%s\n got (gopher-lua) %s\nwant (redis)      %s", c.code, quoteShort(got), quoteShort(want))
			}
		})
	}
}

func quoteShort(s string) string {
	if len(s) > 600 {
		return strconv.Quote(s[:600]) + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// ----- a redis-server to compare with -----

type redisConn struct {
	nc net.Conn
	rd *bufio.Reader
}

var (
	peer     *redisConn
	peerSkip string // why the comparisons are skipped, once known
)

// redisPeer starts one redis-server for the package's tests (stopped by
// TestMain), or skips the test when there is none, unless
// MINIKV_REQUIRE_PEERS=1 asks for the comparison to be mandatory.
func redisPeer(t *testing.T) *redisConn {
	t.Helper()
	if peerSkip != "" {
		t.Skip(peerSkip)
	}
	if peer != nil {
		return peer
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("MINIKV_REQUIRE_PEERS") == "1" {
			t.Fatalf("redis-server not found and MINIKV_REQUIRE_PEERS=1: %v", err)
		}
		t.Skipf("redis-server not installed (%v): no comparison with Redis", err)
	}
	var lastOut string
	for range 3 { // a free port can be taken between probe and bind: retry
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_, port, _ := net.SplitHostPort(addr)
		ln.Close()
		dir, err := os.MkdirTemp("", "minikv-lib-redis")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(path, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--protected-mode", "no", "--dir", dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("start redis-server: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		stop := func() {
			_ = cmd.Process.Kill() // by PID: only the process started here
			<-exited
			os.RemoveAll(dir)
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			nc, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				peer = &redisConn{nc: nc, rd: bufio.NewReader(nc)}
				stopPeer = func() { nc.Close(); stop() }
				// The libraries copy 7.2.4's C files: another version may
				// differ for reasons of its own.
				if v := peer.eval(t, "return redis.REDIS_VERSION"); v != "7.2.4" {
					if os.Getenv("MINIKV_REQUIRE_PEERS") == "1" {
						t.Fatalf("redis-server is %q, not 7.2.4, and MINIKV_REQUIRE_PEERS=1", v)
					}
					peerSkip = fmt.Sprintf("redis-server is %q, not 7.2.4: no comparison with Redis", v)
					t.Skip(peerSkip)
				}
				return peer
			}
			select {
			case <-exited:
				deadline = time.Now()
			case <-time.After(20 * time.Millisecond):
			}
		}
		stop()
		lastOut = out.String()
	}
	t.Fatalf("redis-server did not start: %s", lastOut)
	return nil
}

var stopPeer = func() {}

func TestMain(m *testing.M) {
	code := m.Run()
	stopPeer()
	os.Exit(code)
}

// eval sends EVAL script 0 and returns the bulk reply, or "ERR " and the
// error reply.
func (r *redisConn) eval(t *testing.T, script string) string {
	t.Helper()
	var req bytes.Buffer
	fmt.Fprintf(&req, "*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n", len(script), script)
	if err := r.nc.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.nc.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	line, err := r.rd.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch line[0] {
	case '-':
		return "ERR " + line[1:]
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			t.Fatalf("unexpected reply %q", line)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r.rd, buf); err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
	t.Fatalf("unexpected reply %q", line)
	return ""
}
