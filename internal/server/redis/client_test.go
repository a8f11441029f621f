package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

func newClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, PoolSize: 1})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// clientLines parses CLIENT LIST into one map per connection.
func clientLines(t *testing.T, rdb *redis.Client) []map[string]string {
	t.Helper()
	text, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		m := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		out = append(out, m)
	}
	return out
}

func findClient(lines []map[string]string, key, value string) map[string]string {
	for _, m := range lines {
		if m[key] == value {
			return m
		}
	}
	return nil
}

// countPaused is the number of the server's connections waiting for a
// client pause to end.
func countPaused(s *server.Server) int {
	n := 0
	s.EachConn(func(c *server.Conn) {
		if c.State() == server.StatePaused {
			n++
		}
	})
	return n
}

// TestClientListBothPorts: CLIENT LIST shows the connections of both
// ports: RESP ones with their name and last command, memcached ones
// marked flags=m with their memcached command and resp=0.
func TestClientListBothPorts(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	ctx := context.Background()
	mc := dial(t, rs.addr)
	mc.Expect("get nothing\r\n", "END")
	named := newClient(t, rs.respAddr)
	if err := named.Do(ctx, "CLIENT", "SETNAME", "worker").Err(); err != nil {
		t.Fatal(err)
	}
	named.Get(ctx, "k")
	sub := dialRESP(t, rs.respAddr)
	sub.Expect(multibulk("SUBSCRIBE", "ch"), "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n")

	rdb := newClient(t, rs.respAddr)
	lines := clientLines(t, rdb)
	if len(lines) != 4 {
		t.Fatalf("CLIENT LIST has %d lines, want 4: %v", len(lines), lines)
	}
	m := findClient(lines, "laddr", rs.addr)
	if m == nil || m["flags"] != "m" || m["cmd"] != "get" || m["resp"] != "0" || m["name"] != "" {
		t.Errorf("memcached connection: %v", m)
	}
	w := findClient(lines, "name", "worker")
	if w == nil || w["flags"] != "N" || w["cmd"] != "get" || w["resp"] != "3" || w["laddr"] != rs.respAddr {
		t.Errorf("named connection: %v", w)
	}
	s := findClient(lines, "cmd", "subscribe")
	if s == nil || s["flags"] != "P" || s["sub"] != "1" {
		t.Errorf("subscriber: %v", s)
	}
	self := findClient(lines, "cmd", "client|list")
	if self == nil || self["idle"] != "0" || self["argv-mem"] != "10" {
		t.Errorf("the caller: %v", self)
	}
	// TYPE and ID filters.
	pubsub, _ := rdb.ClientList(ctx).Result()
	_ = pubsub
	if text := rdb.Do(ctx, "CLIENT", "LIST", "TYPE", "pubsub").String(); !strings.Contains(text, "cmd=subscribe") || strings.Contains(text, "name=worker") {
		t.Errorf("CLIENT LIST TYPE pubsub: %s", text)
	}
	if text := rdb.Do(ctx, "CLIENT", "LIST", "TYPE", "normal").String(); strings.Contains(text, "cmd=subscribe") || !strings.Contains(text, "flags=m") {
		t.Errorf("CLIENT LIST TYPE normal: %s", text)
	}
	if text := rdb.Do(ctx, "CLIENT", "LIST", "ID", w["id"], "99999").String(); strings.Count(text, "id=") != 1 || !strings.Contains(text, "name=worker") {
		t.Errorf("CLIENT LIST ID %s 99999: %s", w["id"], text)
	}
}

// TestClientKillBothPorts: CLIENT KILL closes a memcached connection and
// a RESP one, each by one of the filters, from another connection; the
// victims see their connection closed and the killer's count is right.
func TestClientKillBothPorts(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	ctx := context.Background()
	rdb := newClient(t, rs.respAddr)

	mc := dial(t, rs.addr)
	mc.Expect("version\r\n", "VERSION "+server.Version)
	m := findClient(clientLines(t, rdb), "flags", "m")
	if m == nil {
		t.Fatal("no memcached connection in CLIENT LIST")
	}
	if err := rdb.ClientKill(ctx, m["addr"]).Err(); err != nil { // the old form: OK
		t.Fatalf("CLIENT KILL %s: %v", m["addr"], err)
	}
	if !mc.Closed(30 * time.Second) {
		t.Fatal("memcached connection still open after CLIENT KILL")
	}
	if err := rdb.ClientKill(ctx, m["addr"]).Err(); err == nil || err.Error() != "ERR No such client" {
		t.Errorf("CLIENT KILL of a gone address = %v", err)
	}

	victim := dialRESP(t, rs.respAddr)
	id := strings.TrimSpace(strings.TrimPrefix(victim.Do("CLIENT", "ID"), ":"))
	n, err := rdb.ClientKillByFilter(ctx, "ID", id).Result()
	if err != nil || n != 1 {
		t.Fatalf("CLIENT KILL ID %s = %d, %v", id, n, err)
	}
	if !victim.Closed(30 * time.Second) {
		t.Error("the killed RESP connection is still open")
	}
	pollUntil(t, "the killed connections to go", func() bool { return rs.srv.CurrConns() == 1 })

	// Filters that match several: TYPE normal kills every other normal
	// connection, of both ports; SKIPME no would kill the caller too.
	a, b := dial(t, rs.addr), dialRESP(t, rs.respAddr)
	a.Expect("version\r\n", "VERSION "+server.Version)
	b.Expect(multibulk("PING"), "+PONG\r\n")
	if n, err := rdb.ClientKillByFilter(ctx, "TYPE", "normal").Result(); err != nil || n != 2 {
		t.Errorf("CLIENT KILL TYPE normal = %d, %v; want 2", n, err)
	}
	if !a.Closed(30*time.Second) || !b.Closed(30*time.Second) {
		t.Error("connections still open after CLIENT KILL TYPE normal")
	}
	self := dialRESP(t, rs.respAddr)
	self.Expect(multibulk("CLIENT", "KILL", "LADDR", rs.respAddr, "SKIPME", "no"), ":2\r\n") // the caller and rdb's
	if !self.Closed(30 * time.Second) {
		t.Error("the caller of CLIENT KILL ... SKIPME no is still open after its reply")
	}
}

// TestClientPauseWrite: under CLIENT PAUSE WRITE, reads of both ports go
// on while writes of both ports wait, without a reply, until CLIENT
// UNPAUSE; then they run. Nothing here times the pause: the test polls
// the connections' state.
func TestClientPauseWrite(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	ctx := context.Background()
	admin := newClient(t, rs.respAddr)
	reader := newClient(t, rs.respAddr)
	writer := newClient(t, rs.respAddr)
	if err := admin.Set(ctx, "k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "CLIENT", "PAUSE", "600000", "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- writer.Set(ctx, "k", "after", 0).Err() }()
	mcWriter := dial(t, rs.addr)
	mcWriter.Send("set mk 0 0 1\r\nx\r\n")
	pollUntil(t, "two paused writes", func() bool { return countPaused(rs.srv) == 2 })

	if got, err := reader.Get(ctx, "k").Result(); err != nil || got != "before" {
		t.Errorf("GET while writes are paused = %q, %v", got, err)
	}
	mcReader := dial(t, rs.addr)
	mcReader.Expect("get mk\r\n", "END")
	if text := admin.Do(ctx, "CLIENT", "LIST").String(); !strings.Contains(text, "flags=b") {
		t.Errorf("CLIENT LIST shows no paused client (flags=b): %s", text)
	}
	select {
	case err := <-done:
		t.Fatalf("SET returned (%v) while writes are paused", err)
	default:
	}
	if err := admin.Do(ctx, "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("SET after UNPAUSE: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("SET still waiting after UNPAUSE")
	}
	if got := mcWriter.Line(); got != "STORED" {
		t.Errorf("memcached set after UNPAUSE: %q", got)
	}
	if got := reader.Get(ctx, "k").Val(); got != "after" {
		t.Errorf("GET after UNPAUSE = %q", got)
	}
}

// TestClientPauseAllAndKill: PAUSE ALL holds every command, reads too;
// a paused client that is killed ends without running its command; the
// pause ends by itself when its time is up.
func TestClientPauseAllAndKill(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	ctx := context.Background()
	admin := newClient(t, rs.respAddr)
	victim := newClient(t, rs.respAddr)
	id := victim.ClientID(ctx).Val()
	waiter := newClient(t, rs.respAddr)
	if err := admin.Do(ctx, "CLIENT", "PAUSE", "600000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	victimDone := make(chan error, 1)
	go func() { victimDone <- victim.Set(ctx, "v", "1", 0).Err() }()
	waiterDone := make(chan error, 1)
	go func() { waiterDone <- waiter.Get(ctx, "v").Err() }()
	pollUntil(t, "two paused commands", func() bool { return countPaused(rs.srv) == 2 })

	var victimConn *server.Conn
	rs.srv.EachConn(func(c *server.Conn) {
		if int64(c.ID()) == id {
			victimConn = c
		}
	})
	if victimConn == nil || !victimConn.Kill() {
		t.Fatal("could not kill the paused client")
	}
	select {
	case err := <-victimDone:
		if err == nil {
			t.Error("the killed paused SET succeeded")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("killed paused client still waiting")
	}
	// A short pause replaces nothing: the long one stays in force.
	rs.srv.Pause(time.Now(), false)
	if on, _, all := rs.srv.PauseInfo(); !on || !all {
		t.Errorf("PauseInfo after a shorter WRITE pause = %v, all %v; want the ALL pause", on, all)
	}
	rs.srv.Unpause()
	if err := <-waiterDone; err != redis.Nil {
		t.Errorf("GET after the pause = %v, want nil reply", err)
	}
	if _, err := waiter.Get(ctx, "v").Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("the killed client's SET ran: GET v = %v", err)
	}
	// A pause that runs out ends by itself.
	if err := admin.Do(ctx, "CLIENT", "PAUSE", "1", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	if err := waiter.Ping(ctx).Err(); err != nil {
		t.Errorf("PING after a 1 ms pause: %v", err)
	}
}

// TestStatsConnsBothPorts: memcached's "stats conns" lists the RESP
// port's listener and connections beside its own.
func TestStatsConnsBothPorts(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	r := dialRESP(t, rs.respAddr)
	r.Expect(multibulk("PING"), "+PONG\r\n")
	mc := dial(t, rs.addr)
	var all string
	// The RESP connection has answered PING; poll until it waits for
	// its next command (conn_read).
	pollUntil(t, "the RESP connection to wait", func() bool {
		mc.Send("stats conns\r\n")
		var text []string
		for {
			line := mc.Line()
			if line == "END" {
				break
			}
			text = append(text, line)
		}
		all = strings.Join(text, "\n")
		return strings.Contains(all, "state conn_read")
	})
	for _, want := range []string{"addr tcp:" + rs.respAddr + "\n", "listen_addr tcp:" + rs.respAddr + "\n",
		"addr tcp:" + rs.addr + "\n", "listen_addr tcp:" + rs.addr + "\n", "state conn_listening", "state conn_read", "state conn_parse_cmd"} {
		if !strings.Contains(all+"\n", want) {
			t.Errorf("stats conns lacks %q:\n%s", want, all)
		}
	}
}

// TestClientKillMaxAge: CLIENT KILL MAXAGE n closes the connections
// older than n seconds, of both ports, and no younger one.
func TestClientKillMaxAge(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	old := dial(t, rs.addr)
	old.Expect("version\r\n", "VERSION "+server.Version)
	var created time.Time
	rs.srv.EachConn(func(c *server.Conn) { created = c.Created() })
	pollUntil(t, "the memcached connection to be 2 s old", func() bool { return time.Since(created) >= 2*time.Second })
	killer := dialRESP(t, rs.respAddr) // younger than a second, or not: SKIPME spares it
	young := dialRESP(t, rs.respAddr)
	young.Expect(multibulk("PING"), "+PONG\r\n")
	var youngCreated time.Time
	rs.srv.EachConn(func(c *server.Conn) {
		if c.Created().After(youngCreated) {
			youngCreated = c.Created()
		}
	})
	maxAge := int64(time.Since(created)/time.Second) - 1 // below the old one's age
	if time.Since(youngCreated) >= time.Duration(maxAge)*time.Second {
		t.Skip("the machine is too slow for the young connection to stay young")
	}
	killer.Expect(multibulk("CLIENT", "KILL", "MAXAGE", fmt.Sprint(maxAge)), ":1\r\n")
	if !old.Closed(30 * time.Second) {
		t.Error("the old connection is still open")
	}
	young.Expect(multibulk("PING"), "+PONG\r\n")
}
