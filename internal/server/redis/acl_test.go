package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
	goredis "github.com/redis/go-redis/v9"
)

// TestACLMemcachedPort checks the memcached port against the ACL: -Y
// users are ACL users, the handshake logs in as one, its commands are
// checked as their Redis counterparts on their keys (docs/redis.md, ACL),
// denials are logged, and "auth <token>" follows requirepass.
func TestACLMemcachedPort(t *testing.T) {
	rs := startRESP(t, server.Config{AuthToken: []byte("tok"), AuthUsers: map[string]string{"alice": "pw"}}, store.Config{})
	admin := dialCmd(t, rs.respAddr, false)
	if r := admin.do(t, "AUTH", "tok"); r != "+OK\r\n" {
		t.Fatalf("AUTH: %q", r)
	}
	if r := admin.do(t, "ACL", "USERS"); r != "*2\r\n$5\r\nalice\r\n$7\r\ndefault\r\n" {
		t.Fatalf("ACL USERS: %q", r)
	}
	admin.do(t, "ACL", "SETUSER", "alice", "resetkeys", "-@all", "+get", "+set", "~a*", "%R~r*")
	admin.do(t, "ACL", "LOG", "RESET")
	admin.do(t, "SET", "r1", "x")

	mc := dial(t, rs.addr)
	mc.Expect("set x 0 0 8\r\nalice no\r\n", "CLIENT_ERROR authentication failure")
	mc.Expect("set x 0 0 8\r\nalice pw\r\n", "STORED")
	mc.Expect("set a1 0 0 1\r\nv\r\n", "STORED")
	mc.Expect("get a1\r\n", "VALUE a1 0 1", "v", "END")
	mc.Expect("get r1\r\n", "VALUE r1 0 1", "x", "END")
	mc.Expect("get b1\r\n", "CLIENT_ERROR NOPERM No permissions to access a key")
	mc.Expect("get a1 b1\r\n", "CLIENT_ERROR NOPERM No permissions to access a key")
	mc.Expect("set r1 0 0 1\r\nv\r\n", "CLIENT_ERROR NOPERM No permissions to access a key")
	mc.Expect("delete a1\r\n", "CLIENT_ERROR NOPERM User alice has no permissions to run the 'del' command")
	mc.Expect("incr a1 1\r\n", "CLIENT_ERROR NOPERM User alice has no permissions to run the 'incrby' command")
	mc.Expect("flush_all\r\n", "CLIENT_ERROR NOPERM User alice has no permissions to run the 'flushall' command")
	mc.Send("version\r\n")
	if l := mc.Line(); !strings.HasPrefix(l, "VERSION ") {
		t.Errorf("version: %q", l)
	}
	if r := admin.do(t, "GET", "r1"); r != "$1\r\nx\r\n" {
		t.Errorf("a denied set reached the store: r1 = %q", r)
	}
	log := admin.do(t, "ACL", "LOG")
	for _, want := range []string{"$8\r\nflushall\r\n", "$6\r\nincrby\r\n", "$3\r\ndel\r\n", "$2\r\nr1\r\n", "$2\r\nb1\r\n", "$5\r\nalice\r\n", "$4\r\nauth\r\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("ACL LOG lacks %q: %q", want, log)
		}
	}
	// "auth <token>" is the default user's password: requirepass changes it.
	admin.do(t, "CONFIG", "SET", "requirepass", "new")
	tc := dial(t, rs.addr)
	tc.Expect("auth new\r\n", "AUTHENTICATED")
	tc.Expect("set b1 0 0 1\r\nv\r\n", "STORED")
	old := dial(t, rs.addr)
	old.Expect("auth tok\r\n", "CLIENT_ERROR auth failed")
	// ACL DELUSER closes the user's memcached connections too.
	admin.do(t, "ACL", "DELUSER", "alice")
	if !mc.Closed(10 * time.Second) {
		t.Error("a deleted user's memcached connection stays open")
	}
}

// TestACLGoRedis logs in with go-redis's Username/Password (HELLO 3 AUTH
// on RESP3, AUTH user pass on RESP2) and runs allowed and denied
// commands through it, with its own ACL helpers.
func TestACLGoRedis(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	admin := goredis.NewClient(&goredis.Options{Addr: rs.respAddr, MaxRetries: -1})
	t.Cleanup(func() { admin.Close() })
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "gr", "on", ">s3cret", "~app:*", "+@read", "+@write", "+@connection", "-flushall").Err(); err != nil {
		t.Fatal(err)
	}
	for _, proto := range []int{2, 3} {
		c := goredis.NewClient(&goredis.Options{Addr: rs.respAddr, Username: "gr", Password: "s3cret", Protocol: proto, MaxRetries: -1})
		if err := c.Set(ctx, "app:1", "v", 0).Err(); err != nil {
			t.Fatalf("RESP%d set: %v", proto, err)
		}
		if v, err := c.Get(ctx, "app:1").Result(); err != nil || v != "v" {
			t.Fatalf("RESP%d get: %q %v", proto, v, err)
		}
		if err := c.Get(ctx, "other").Err(); err == nil || err.Error() != "NOPERM No permissions to access a key" {
			t.Errorf("RESP%d denied key: %v", proto, err)
		}
		if err := c.FlushAll(ctx).Err(); err == nil || err.Error() != "NOPERM User gr has no permissions to run the 'flushall' command" {
			t.Errorf("RESP%d denied command: %v", proto, err)
		}
		if who, err := c.Do(ctx, "ACL", "WHOAMI").Result(); err == nil || who != nil {
			t.Errorf("RESP%d ACL WHOAMI (not allowed): %v %v", proto, who, err)
		}
		c.Close()
		bad := goredis.NewClient(&goredis.Options{Addr: rs.respAddr, Username: "gr", Password: "nope", Protocol: proto, MaxRetries: -1})
		if err := bad.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Errorf("RESP%d wrong password: %v", proto, err)
		}
		bad.Close()
	}
	if n, err := admin.Exists(ctx, "other").Result(); err != nil || n != 0 {
		t.Errorf("exists other: %d %v", n, err)
	}
}

// TestACLRevokedChannelsCloseSubscribers checks that ACL SETUSER taking
// a channel away closes the user's subscribers to it (Redis's
// ACLKillPubsubClientsIfNeeded) and leaves the others.
func TestACLRevokedChannelsCloseSubscribers(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	admin := dialCmd(t, rs.respAddr, false)
	admin.do(t, "ACL", "SETUSER", "ps", "on", "nopass", "+@all", "~*", "resetchannels", "&a*", "&b")
	subA, subB, pat := dialCmd(t, rs.respAddr, false), dialCmd(t, rs.respAddr, false), dialCmd(t, rs.respAddr, false)
	for _, c := range []*cmdConn{subA, subB, pat} {
		c.do(t, "AUTH", "ps", "x")
	}
	subA.do(t, "SUBSCRIBE", "a1")
	subB.do(t, "SUBSCRIBE", "b")
	pat.do(t, "PSUBSCRIBE", "a*")
	if r := subB.do(t, "SUBSCRIBE", "c"); !strings.HasPrefix(r, "-NOPERM") {
		t.Fatalf("SUBSCRIBE c: %q", r)
	}
	admin.do(t, "ACL", "SETUSER", "ps", "resetchannels", "&b", "&a1")
	for name, c := range map[string]*cmdConn{"subscriber to a1": subA, "subscriber to b": subB} {
		c.do(t, "PING")
		_ = name
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_ = pat.nc.SetReadDeadline(time.Now().Add(time.Second))
		_, _ = pat.nc.Write([]byte(mb("PING")))
		if _, err := readRESPReply(pat.br); err != nil {
			break // closed: the pattern a* is no longer allowed literally
		}
		if time.Now().After(deadline) {
			t.Fatal("the pattern subscriber stays open")
		}
	}
	if r := admin.do(t, "PUBSUB", "NUMSUB", "a1", "b"); r != "*4\r\n$2\r\na1\r\n:1\r\n$1\r\nb\r\n:1\r\n" {
		t.Errorf("NUMSUB: %q", r)
	}
}
