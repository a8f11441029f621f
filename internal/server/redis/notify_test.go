package redis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// notifySubscriber is a RESP2 connection subscribed to pattern, which
// reads keyspace notifications as "channel message" strings.
type notifySubscriber struct {
	c *servertest.RESPClient
}

func subscribeNotifications(t *testing.T, addr, pattern string) *notifySubscriber {
	t.Helper()
	c := dialRESP(t, addr)
	if r := c.Do("PSUBSCRIBE", pattern); !strings.Contains(r, "psubscribe") {
		t.Fatalf("PSUBSCRIBE: %q", r)
	}
	return &notifySubscriber{c}
}

// next reads the next message as "channel message". The read has the
// client's hang guard, not a bound the test depends on.
func (s *notifySubscriber) next() string {
	s.c.T.Helper()
	r := s.c.Reply()
	parts := strings.Split(r, "\r\n")
	if len(parts) < 9 || parts[2] != "pmessage" {
		s.c.T.Fatalf("not a pmessage: %q", r)
	}
	return parts[6] + " " + parts[8]
}

// until reads messages up to and including want, and returns them.
func (s *notifySubscriber) until(want string) []string {
	s.c.T.Helper()
	var got []string
	for {
		m := s.next()
		got = append(got, m)
		if m == want {
			return got
		}
	}
}

// drain returns the messages queued before a PING it sends now.
func (s *notifySubscriber) drain() []string {
	s.c.T.Helper()
	s.c.Send(mb("PING"))
	var got []string
	for {
		r := s.c.Reply()
		if r == "*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
			return got
		}
		parts := strings.Split(r, "\r\n")
		got = append(got, parts[6]+" "+parts[8])
	}
}

// TestExpiredNotificationLazy: with the sweeper off, a key past its
// deadline is found by the next lookup, which publishes "expired" before
// the command's reply (and the GET's own "keymiss").
func TestExpiredNotificationLazy(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{SweepInterval: -1})
	w := dialRESP(t, rs.respAddr)
	w.Expect(mb("CONFIG", "SET", "notify-keyspace-events", "KEA"), "+OK\r\n")
	sub := subscribeNotifications(t, rs.respAddr, "__keyspace@0__:*")
	w.Expect(mb("SET", "k", "v", "PX", "30"), "+OK\r\n")
	deadline := time.Now().Add(30 * time.Millisecond)
	for time.Now().Before(deadline.Add(2 * time.Millisecond)) {
		time.Sleep(5 * time.Millisecond) // wait for the deadline itself, not for a reaction
	}
	if got := sub.drain(); strings.Join(got, ",") != "__keyspace@0__:k set,__keyspace@0__:k expire" {
		t.Fatalf("before the lookup: %q (the sweeper is off: nothing may expire k)", got)
	}
	w.Expect(mb("GET", "k"), "$-1\r\n")
	if got := sub.drain(); strings.Join(got, ",") != "__keyspace@0__:k expired" {
		t.Fatalf("after GET: %q, want the expired event", got)
	}
}

// TestExpiredNotificationBackground: the sweeper removes a key nobody
// reads and publishes "expired" for it.
func TestExpiredNotificationBackground(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{SweepInterval: 5 * time.Millisecond})
	w := dialRESP(t, rs.respAddr)
	w.Expect(mb("CONFIG", "SET", "notify-keyspace-events", "Ex"), "+OK\r\n")
	sub := subscribeNotifications(t, rs.respAddr, "__keyevent@0__:*")
	w.Expect(mb("SET", "bg:a", "v", "PX", "20"), "+OK\r\n")
	w.Expect(mb("SET", "bg:b", "v", "PX", "20"), "+OK\r\n")
	got := map[string]bool{}
	for len(got) < 2 {
		m := sub.next() // no read of the keys: only the sweeper can find them
		if !strings.HasPrefix(m, "__keyevent@0__:expired ") {
			t.Fatalf("unexpected message %q", m)
		}
		got[strings.TrimPrefix(m, "__keyevent@0__:expired ")] = true
	}
	if !got["bg:a"] || !got["bg:b"] {
		t.Fatalf("expired %v, want bg:a and bg:b", got)
	}
	if n, _ := rs.store.Len(); n != 0 {
		t.Fatalf("%d keys left after their expired events", n)
	}
}

// TestEvictedNotification: with a small memory limit, every key the store
// evicts for room is published once as "evicted", and is gone.
func TestEvictedNotification(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{MemoryLimit: 1 << 20, SweepInterval: -1})
	w := dialRESP(t, rs.respAddr)
	w.Expect(mb("CONFIG", "SET", "notify-keyspace-events", "Ee"), "+OK\r\n")
	sub := subscribeNotifications(t, rs.respAddr, "__keyevent@0__:*")
	value := strings.Repeat("v", 1000)
	var batch strings.Builder
	const n = 4000 // about 4 MB into 1 MiB
	for i := range n {
		batch.WriteString(mb("SET", fmt.Sprintf("ev:%05d", i), value))
	}
	w.Send(batch.String())
	for range n {
		if r := w.Reply(); r != "+OK\r\n" {
			t.Fatalf("SET: %q", r)
		}
	}
	got := sub.drain()
	evictions := rs.store.Stats().Evictions
	if evictions == 0 || uint64(len(got)) != evictions {
		t.Fatalf("%d evicted events for %d evictions", len(got), evictions)
	}
	seen := map[string]bool{}
	for _, m := range got {
		key, ok := strings.CutPrefix(m, "__keyevent@0__:evicted ")
		if !ok || seen[key] {
			t.Fatalf("unexpected or repeated message %q", m)
		}
		seen[key] = true
		if r := w.Do("EXISTS", key); r != ":0\r\n" {
			t.Fatalf("%s was published as evicted and still exists", key)
		}
	}
}

// TestNotificationsFromMemcachedPort: writes on the memcached port publish
// the events of their RESP counterparts.
func TestNotificationsFromMemcachedPort(t *testing.T) {
	rs := startRESP(t, server.Config{NotifyKeyspaceEvents: server.EventKeyspace | server.EventAll}, store.Config{})
	sub := subscribeNotifications(t, rs.respAddr, "__keyspace@0__:*")
	mc := dial(t, rs.addr)
	mc.Expect("set a 0 0 1\r\nx\r\n", "STORED")
	mc.Expect("set b 0 100 1\r\nx\r\n", "STORED")
	mc.Expect("add a 0 0 1\r\ny\r\n", "NOT_STORED")
	mc.Expect("append a 0 0 1\r\ny\r\n", "STORED")
	mc.Expect("prepend a 0 0 1\r\nz\r\n", "STORED")
	mc.Expect("set n 0 0 1\r\n5\r\n", "STORED")
	mc.Expect("incr n 2\r\n", "7")
	mc.Expect("decr n 1\r\n", "6")
	mc.Expect("touch a 100\r\n", "TOUCHED")
	mc.Expect("touch nope 100\r\n", "NOT_FOUND")
	mc.Expect("delete a\r\n", "DELETED")
	mc.Expect("delete a\r\n", "NOT_FOUND")
	mc.Expect("ms m 1 T0\r\nq\r\n", "HD")
	mc.Expect("md m\r\n", "HD")
	mc.Expect("ma c N0 J5\r\n", "HD")
	mc.Expect("ma c\r\n", "HD")
	mc.Expect("gat 0 c\r\n", "VALUE c 0 1", "6", "END")
	mc.Expect("flush_all\r\n", "OK")
	want := []string{"a set", "b set", "b expire", "a append", "a prepend", "n set", "n incrby", "n incrby",
		"a expire", "a del", "m set", "m del", "c incrby", "c incrby", "c persist"}
	got := sub.drain()
	for i := range got {
		got[i] = strings.TrimPrefix(got[i], "__keyspace@0__:")
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("memcached writes published %q, want %q", got, want)
	}
}

// TestNotifyKeyspaceEventsConfig: CONFIG SET checks the value and CONFIG
// GET shows it normalised, as Redis 7.0 does; the start-up value
// (--notify-keyspace-events) is the first CONFIG GET.
func TestNotifyKeyspaceEventsConfig(t *testing.T) {
	rs := startRESP(t, server.Config{NotifyKeyspaceEvents: server.EventKeyevent | server.EventExpired}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect(mb("CONFIG", "GET", "notify-keyspace-events"), "*2\r\n$22\r\nnotify-keyspace-events\r\n$2\r\nxE\r\n")
	for _, tc := range []struct{ in, want string }{
		{"", ""}, {"KEA", "AKE"}, {"AKEn", "AKE"}, {"Kgg$lshzxetmdn", "AKm"}, {"nE", "nE"}, {"g$lshzxetd", "A"},
		{"mK", "Km"}, {"EKxe", "xeKE"},
	} {
		c.Expect(mb("CONFIG", "SET", "notify-keyspace-events", tc.in), "+OK\r\n")
		c.Expect(mb("CONFIG", "GET", "notify-keyspace-events"), fmt.Sprintf("*2\r\n$22\r\nnotify-keyspace-events\r\n$%d\r\n%s\r\n", len(tc.want), tc.want))
	}
	// "AKEn" reads back as "AKE", as in Redis, but n stays on.
	c.Expect(mb("CONFIG", "SET", "notify-keyspace-events", "AKEn"), "+OK\r\n")
	if got := rs.srv.KeyEvents(); got&server.EventNew == 0 {
		t.Errorf("AKEn: classes %b lost n", got)
	}
}

var notifyConfigSessions = []respSession{
	{name: "config set notify-keyspace-events", in: mb("CONFIG", "SET", "notify-keyspace-events", "KEA") +
		mb("CONFIG", "GET", "notify-keyspace-events") + mb("CONFIG", "SET", "notify-keyspace-events", "xyz") +
		mb("CONFIG", "SET", "notify-keyspace-events", "KEA ") + mb("CONFIG", "SET", "notify-keyspace-events", "a") +
		mb("CONFIG", "GET", "notify-keyspace-events") + mb("CONFIG", "SET", "NOTIFY-KEYSPACE-EVENTS", "Elg$") +
		mb("config", "get", "Notify-Keyspace-Events") + mb("CONFIG", "GET", "notify-keyspace-*") +
		mb("CONFIG", "SET", "notify-keyspace-events", "Kx", "notify-keyspace-events", "E") +
		mb("CONFIG", "SET", "notify-keyspace-events", "Kx", "hash-max-listpack-entries", "x") + mb("CONFIG", "GET", "notify-keyspace-events") +
		mb("CONFIG", "SET", "hash-max-listpack-entries", "128", "notify-keyspace-events", "?") + mb("CONFIG", "GET", "notify-keyspace-events") +
		mb("CONFIG", "SET", "notify-keyspace-events", "Kgg$lshzxetmdn") + mb("CONFIG", "GET", "notify-keyspace-events") +
		mb("CONFIG", "SET", "notify-keyspace-events", "") + mb("CONFIG", "GET", "notify-keyspace-events") +
		mb("CONFIG", "SET", "notify-keyspace-events")},
}

// TestNotifyConfigDifferential: CONFIG SET and GET of
// notify-keyspace-events answer as redis-server 7.0 does, errors included.
// The setting is server-wide, so the servers are this test's own.
func TestNotifyConfigDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	for _, s := range notifyConfigSessions {
		want := runRESPSession(redisAddr, s)
		got := runRESPSession(rs.respAddr, s)
		if want.err != nil || got.err != nil {
			t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
		}
		if string(got.out) != string(want.out) {
			t.Errorf("session %q differs\nredis:  %q\nminikv: %q", s.name, want.out, got.out)
		}
	}
}

// TestGoRedisKeyspaceNotifications: a go-redis subscriber (RESP3, its
// default) receives the notifications of another client's writes.
func TestGoRedisKeyspaceNotifications(t *testing.T) {
	rdb, _ := newGoRedis(t, false)
	ctx := context.Background()
	if err := rdb.ConfigSet(ctx, "notify-keyspace-events", "KEA").Err(); err != nil {
		t.Fatal(err)
	}
	if got := rdb.ConfigGet(ctx, "notify-keyspace-events").Val(); got["notify-keyspace-events"] != "AKE" {
		t.Fatalf("CONFIG GET = %v", got)
	}
	ps := rdb.PSubscribe(ctx, "__keyspace@0__:gr:*", "__keyevent@0__:del")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the first confirmation
		t.Fatal(err)
	}
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, "gr:a", "1", time.Minute)
	rdb.HSet(ctx, "gr:h", "f", "v")
	rdb.Del(ctx, "gr:a")
	want := []string{"__keyspace@0__:gr:a set", "__keyspace@0__:gr:a expire", "__keyspace@0__:gr:h hset",
		"__keyspace@0__:gr:a del", "__keyevent@0__:del gr:a"}
	ch := ps.Channel()
	for i, w := range want {
		select {
		case m := <-ch:
			if got := m.Channel + " " + m.Payload; got != w {
				t.Fatalf("message %d = %q, want %q", i, got, w)
			}
		case <-time.After(10 * time.Second): // a hang guard
			t.Fatalf("message %d (%q) never came", i, w)
		}
	}
}
