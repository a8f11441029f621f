package memcache

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestAuthTable is the seed's five-case table on the memcached port.
func TestAuthTable(t *testing.T) {
	open := startServer(t, server.Config{}, store.Config{})
	locked := startServer(t, server.Config{AuthToken: []byte("s3cret")}, store.Config{})
	for _, tc := range []struct {
		name   string
		addr   string
		send   string
		want   []string
		closed bool
	}{
		{"no token, any command", open.addr, "version\r\n", []string{"VERSION " + server.Version}, false},
		{"no token, auth", open.addr, "auth s3cret\r\n", []string{"CLIENT_ERROR auth not configured"}, true},
		{"token, auth correct", locked.addr, "auth s3cret\r\nset k 0 0 1\r\nx\r\nget k\r\n",
			[]string{"AUTHENTICATED", "STORED", "VALUE k 0 1", "x", "END"}, false},
		{"token, auth wrong", locked.addr, "auth nope\r\nversion\r\n", []string{"CLIENT_ERROR auth failed"}, true},
		{"token, anything else", locked.addr, "get k\r\n", []string{"CLIENT_ERROR auth required"}, true},
		{"token, garbage first", locked.addr, "bogus\r\n", []string{"CLIENT_ERROR auth required"}, true},
		{"token, auth without token", locked.addr, "auth\r\n", []string{"CLIENT_ERROR auth required"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, tc.addr)
			c.Expect(tc.send, tc.want...)
			if got := c.Closed(500 * time.Millisecond); got != tc.closed {
				t.Errorf("closed = %v, want %v", got, tc.closed)
			}
		})
	}
	if s := locked.srv.Stats(); s.Count[server.StatAuthCmds] != 2 || s.Count[server.StatAuthErrors] != 1 {
		t.Errorf("auth_cmds %d auth_errors %d", s.Count[server.StatAuthCmds], s.Count[server.StatAuthErrors])
	}
}

// TestAuthPreAuthLimits: before authenticating, only tiny values are read.
func TestAuthPreAuthLimits(t *testing.T) {
	ts := startServer(t, server.Config{AuthUsers: map[string]string{"app": "pw"}}, store.Config{})
	c := dial(t, ts.addr)
	big := strings.Repeat("x", preAuthMaxValue+1)
	c.Expect("set k 0 0 "+strconv.Itoa(len(big))+"\r\n"+big+"\r\n", "CLIENT_ERROR unauthenticated")
	c.Expect("set auth 0 0 6\r\napp pw\r\n", "STORED")
	c.Expect("set k 0 0 "+strconv.Itoa(len(big))+"\r\n"+big+"\r\n", "STORED")
}

// TestAuthFileHandshake is memcached's -Y text-protocol authentication.
func TestAuthFileHandshake(t *testing.T) {
	ts := startServer(t, server.Config{AuthUsers: map[string]string{"alice": "secret", "bob": "pw2"}}, store.Config{})
	c := dial(t, ts.addr)
	c.Expect("version\r\n", "CLIENT_ERROR unauthenticated")
	c.Expect("get k\r\n", "CLIENT_ERROR unauthenticated")
	c.Expect("set ignored 0 0 11\r\nalice wrong\r\n", "CLIENT_ERROR authentication failure")
	c.Expect("set ignored 0 0 5\r\nalice\r\n", "CLIENT_ERROR bad authentication token format")
	// A short data block: the leftover "w2" line is a command of its own.
	c.Expect("set ignored 0 0 3\r\nbob pw2\r\n", "CLIENT_ERROR bad command line termination",
		"CLIENT_ERROR unauthenticated")
	c.Expect("set ignored 99 999 12\r\nalice secret\r\n", "STORED")
	c.Expect("version\r\n", "VERSION "+server.Version)
	c.Expect("get ignored\r\n", "END") // the handshake stores nothing
	if c.Closed(200 * time.Millisecond) {
		t.Error("connection closed")
	}
}
