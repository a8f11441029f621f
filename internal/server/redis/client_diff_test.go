package redis

import (
	"bufio"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// CLIENT's replies and errors beside Redis's, in the shared differential
// run (TestRESPDifferential). These sessions kill, pause or list nothing
// another session could be: their kills match no connection, their
// pauses end at once, their lists name no connection.
func init() {
	respSessions = append(respSessions,
		respSession{name: "client kill errors", in: mb("CLIENT", "KILL", "1.2.3.4:5") + mb("CLIENT", "KILL", "ID", "abc") +
			mb("CLIENT", "KILL", "ID", "0") + mb("CLIENT", "KILL", "ID", "-5") + mb("CLIENT", "KILL", "ID", "99999999") +
			mb("CLIENT", "KILL", "TYPE", "foo") + mb("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "maybe") +
			mb("CLIENT", "KILL", "ADDR", "1.2.3.4:5", "foo") + mb("CLIENT", "KILL", "USER", "nobody") +
			mb("CLIENT", "KILL", "a", "b", "c") +
			mb("CLIENT", "KILL") + mb("CLIENT", "KILL", "skipme") + mb("CLIENT", "KILL", "addr") +
			mb("CLIENT", "KILL", "ADDR", "1.2.3.4:5", "SKIPME", "no") + mb("CLIENT", "KILL", "LADDR", "1.1.1.1:1") +
			mb("CLIENT", "KILL", "USER", "default", "ID", "99999999") + mb("CLIENT", "KILL", "id", "99999999", "id", "99999998") +
			mb("CLIENT", "KILL", "TYPE", "master") + mb("CLIENT", "KILL", "TYPE", "replica", "TYPE", "slave")},
		respSession{name: "client pause syntax", in: mb("CLIENT", "PAUSE") + mb("CLIENT", "PAUSE", "abc") + mb("CLIENT", "PAUSE", "-1") +
			mb("CLIENT", "PAUSE", "10", "foo") + mb("CLIENT", "PAUSE", "abc", "foo") + mb("CLIENT", "PAUSE", "10", "write", "x") +
			mb("CLIENT", "PAUSE", "1.5") + mb("CLIENT", "PAUSE", "0") + mb("CLIENT", "PAUSE", "0", "write") + mb("CLIENT", "PAUSE", "0", "ALL") +
			mb("CLIENT", "UNPAUSE", "x") + mb("CLIENT", "UNPAUSE") + mb("GET", "cp:k")},
		respSession{name: "client reply", in: mb("CLIENT", "REPLY", "SKIP") + mb("SET", "cr:a", "1") + mb("GET", "cr:a") +
			mb("CLIENT", "REPLY", "SKIP") + mb("CLIENT", "REPLY", "SKIP") + mb("INCR", "cr:a") + mb("GET", "cr:a") +
			mb("CLIENT", "REPLY", "OFF") + mb("CLIENT", "REPLY", "SKIP") + mb("INCR", "cr:a") + mb("FOO") + mb("GET", "cr:a") +
			mb("CLIENT", "REPLY", "ON") + mb("GET", "cr:a") + mb("CLIENT", "REPLY") + mb("CLIENT", "REPLY", "foo") +
			mb("CLIENT", "REPLY", "on", "x") + mb("CLIENT", "REPLY", "SKIP") + mb("CLIENT", "REPLY", "ON") + mb("PING")},
		respSession{name: "client reply resp3", skip: 1, in: mb("HELLO", "3") + mb("CLIENT", "REPLY", "OFF") + mb("HSET", "cr3:h", "f", "v") +
			mb("HGETALL", "cr3:h") + mb("CLIENT", "REPLY", "ON") + mb("HGETALL", "cr3:h") + mb("CLIENT", "REPLY", "SKIP") +
			mb("HGETALL", "cr3:h") + mb("HGETALL", "cr3:h")},
		respSession{name: "client no-evict", in: mb("CLIENT", "NO-EVICT", "ON") + mb("CLIENT", "NO-EVICT", "off") +
			mb("CLIENT", "NO-EVICT", "maybe") + mb("CLIENT", "NO-EVICT") + mb("CLIENT", "NO-EVICT", "on", "x")},
		respSession{name: "client list filters", in: mb("CLIENT", "LIST", "TYPE", "foo") + mb("CLIENT", "LIST", "ID") +
			mb("CLIENT", "LIST", "ID", "abc") + mb("CLIENT", "LIST", "foo") + mb("CLIENT", "LIST", "ID", "1", "TYPE", "normal") +
			mb("CLIENT", "LIST", "ID", "99999999") + mb("CLIENT", "LIST", "ID", "0", "-1") + mb("CLIENT", "LIST", "TYPE", "master") +
			mb("CLIENT", "LIST", "TYPE", "REPLICA") + mb("CLIENT", "LIST", "TYPE", "slave") + mb("CLIENT", "LIST", "TYPE", "normal", "x")},
		respSession{name: "client list resp3", skip: 1, in: mb("HELLO", "3") + mb("CLIENT", "LIST", "ID", "99999999") +
			mb("CLIENT", "LIST", "TYPE", "master")},
	)
}

func init() {
	// MAXAGE is Redis 7.4's; 7.0.15 answers a syntax error.
	respDiffOnlySessions = append(respDiffOnlySessions, respSession{name: "client kill maxage",
		in: mb("CLIENT", "KILL", "MAXAGE", "x") + mb("CLIENT", "KILL", "MAXAGE", "0") + mb("CLIENT", "KILL", "MAXAGE", "99999999")})
	respKnownDiffs["client kill maxage"] = struct {
		difference string
		minikv     string
		closed     bool
	}{"CLIENT KILL MAXAGE (Redis 7.4) is served",
		"-ERR maxage is not an integer or out of range\r\n-ERR maxage should be greater than 0\r\n:0\r\n$7\r\n__end__\r\n", false}
}

// TestClientInfoFields: CLIENT INFO and CLIENT LIST lines carry Redis
// 7.0's fields in its order, so parsers of either read MiniKV's (the
// values differ by nature: ids, fds, buffer sizes).
func TestClientInfoFields(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	fields := func(addr, cmd string) []string {
		t.Helper()
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		args := strings.Fields(cmd)
		if _, err := nc.Write([]byte(multibulk(args...))); err != nil {
			t.Fatal(err)
		}
		reply, err := readRESPReply(bufio.NewReader(nc))
		if err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(reply, "\r\n")
		if !strings.HasSuffix(body, "\n\r\n") {
			t.Errorf("%s reply %q does not end its line with a newline", cmd, reply)
		}
		// The caller's line, by the command it runs (a connection that
		// just closed, after CLIENT INFO, may still be listed by either
		// server).
		self := "cmd=" + strings.ToLower(strings.ReplaceAll(cmd, " ", "|")) + " "
		var names []string
		for _, line := range strings.Split(body, "\n") {
			if !strings.Contains(line, self) {
				continue
			}
			for _, kv := range strings.Fields(line) {
				k, _, _ := strings.Cut(kv, "=")
				names = append(names, k)
			}
		}
		return names
	}
	for _, cmd := range []string{"CLIENT INFO", "CLIENT LIST"} {
		want, got := fields(redisAddr, cmd), fields(rs.respAddr, cmd)
		if g := strings.Join(got, " "); g != strings.Join(want, " ") {
			t.Errorf("%s fields:\nminikv %v\nredis  %v", cmd, g, want)
		}
	}
	c := dialRESP(t, rs.respAddr)
	c.Do("CLIENT", "SETINFO", "LIB-NAME", "go-redis(,go1.26)")
	c.Do("CLIENT", "SETINFO", "LIB-VER", "9.7.0")
	if info := c.Do("CLIENT", "INFO"); !strings.Contains(info, " lib-name=go-redis(,go1.26) lib-ver=9.7.0\n") {
		t.Errorf("CLIENT INFO after CLIENT SETINFO = %q", info)
	}
}

// clientCmdTranscript runs each command on one connection and, after its
// reply, reads that connection's cmd= in CLIENT LIST from another.
func clientCmdTranscript(t *testing.T, addr string, cmds [][]string) []string {
	t.Helper()
	a, b := dialRESP(t, addr), dialRESP(t, addr)
	a.Do("CLIENT", "SETNAME", "cmd-watched")
	var out []string
	for _, c := range cmds {
		out = append(out, strings.Join(c, " ")+" -> "+a.Do(c...))
		cmd := "(not listed)"
		for _, l := range strings.Split(b.Do("CLIENT", "LIST"), "\n") {
			if i := strings.Index(l, " cmd="); i >= 0 && strings.Contains(l, " name=cmd-watched ") {
				cmd = strings.Fields(l[i:])[0]
			}
		}
		out = append(out, cmd)
	}
	return out
}

// TestClientListCmdDifferential: the cmd= another connection sees after a
// command, refused ones included (arity: the command; unknown command or
// subcommand: NULL), is Redis's.
func TestClientListCmdDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	cmds := [][]string{{"SET", "cc:a", "b"}, {"GET"}, {"SET", "cc:a", "b"}, {"NOSUCH"}, {"CLIENT", "NOSUCH"},
		{"CLIENT", "GETNAME", "x"}, {"MULTI"}, {"SET", "cc:a", "b"}, {"GETRANGE", "cc:a"}, {"EXEC"}, {"EXEC", "x"},
		{"SUBSCRIBE", "cc:ch"}, {"GET", "cc:a"}, {"UNSUBSCRIBE"}, {"PING"}}
	want := clientCmdTranscript(t, redisAddr, cmds)
	got := clientCmdTranscript(t, rs.respAddr, cmds)
	if !slices.Equal(got, want) {
		t.Errorf("minikv: %q\nredis:  %q", got, want)
	}
}
