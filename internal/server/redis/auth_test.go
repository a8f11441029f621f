package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestRESPAuthToken checks Redis's requirepass behaviour with an auth
// token configured: NOAUTH before AUTH (after the unknown-command and
// arity checks, as in Redis), WRONGPASS without closing, the pre-auth
// limits of 10 arguments and 16 KiB bulks, and HELLO AUTH.
func TestRESPAuthToken(t *testing.T) {
	rs := startRESP(t, server.Config{AuthToken: []byte("s3cret"), AuthUsers: map[string]string{"alice": "pw"}}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect("PING\r\n", "-NOAUTH Authentication required.\r\n")
	c.Expect("GET\r\n", "-ERR wrong number of arguments for 'get' command\r\n")
	c.Expect("FOO\r\n", "-ERR unknown command 'FOO', with args beginning with: \r\n")
	c.Expect(multibulk("HELLO", "3"), "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n")
	c.Expect(multibulk("AUTH", "wrong"), "-"+errWrongPass+"\r\n")
	c.Expect(multibulk("AUTH", "bob", "s3cret"), "-"+errWrongPass+"\r\n")
	c.Expect(multibulk("SET", "k", "v"), "-NOAUTH Authentication required.\r\n")
	c.Expect(multibulk("AUTH", "s3cret"), "+OK\r\n")
	c.Expect(multibulk("SET", "k", "v"), "+OK\r\n")
	c.Expect(multibulk("ECHO", strings.Repeat("x", 20000)), "$20000\r\n"+strings.Repeat("x", 20000)+"\r\n")

	c = dialRESP(t, rs.respAddr)
	c.Expect(multibulk("AUTH", "default", "s3cret"), "+OK\r\n")
	c.Expect(multibulk("GET", "k"), "$1\r\nv\r\n")
	c = dialRESP(t, rs.respAddr)
	c.Expect(multibulk("AUTH", "alice", "pw"), "+OK\r\n")
	c.Expect(multibulk("GET", "k"), "$1\r\nv\r\n")
	c = dialRESP(t, rs.respAddr)
	if got := c.Do("HELLO", "3", "AUTH", "default", "s3cret"); !strings.HasPrefix(got, "%7\r\n") {
		t.Errorf("HELLO 3 AUTH = %q", got)
	}
	c.Expect(multibulk("GET", "nope"), "_\r\n")

	for _, in := range []string{"*11\r\n", "*2\r\n$4\r\nECHO\r\n$16385\r\n"} {
		c = dialRESP(t, rs.respAddr)
		want := "-ERR Protocol error: unauthenticated multibulk length\r\n"
		if strings.Contains(in, "16385") {
			want = "-ERR Protocol error: unauthenticated bulk length\r\n"
		}
		c.Expect(in, want)
		if !c.Closed(time.Second) {
			t.Errorf("%q before auth: connection left open", in)
		}
	}

	ctx := context.Background()
	for _, opt := range []*redis.Options{
		{Addr: rs.respAddr, Password: "s3cret"},
		{Addr: rs.respAddr, Password: "s3cret", Protocol: 2},
		{Addr: rs.respAddr, Username: "alice", Password: "pw"},
	} {
		rdb := redis.NewClient(opt)
		if got, err := rdb.Get(ctx, "k").Result(); err != nil || got != "v" {
			t.Errorf("go-redis %+v: GET = %q, %v", opt, got, err)
		}
		rdb.Close()
	}
	rdb := redis.NewClient(&redis.Options{Addr: rs.respAddr, Password: "nope", MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("go-redis with a wrong password: %v", err)
	}
}
