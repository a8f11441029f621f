package redis

// Pub/sub against a real redis-server 7.0: the single-connection sessions
// (confirmations, subscribed-mode refusals, PUBSUB, RESET, MULTI) go
// through the differential harness of differential_test.go, and
// TestPubsubDeliveryDifferential compares, byte for byte, what a
// publisher's PUBLISH delivers to RESP2 and RESP3 subscribers on other
// connections.
//
// Sessions avoid what Redis orders by its hash tables (UNSUBSCRIBE
// without arguments over several channels, PUBSUB CHANNELS over several,
// one client's several matching patterns) and the server-wide counts the
// parallel sessions change (PUBSUB NUMPAT, CHANNELS without a pattern of
// their own); pubsub_test.go checks those directly.

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

var pubsubSessions = []respSession{
	{name: "subscribed mode resp2", in: mb("UNSUBSCRIBE") + mb("PUNSUBSCRIBE") + mb("UNSUBSCRIBE", "ps1:x", "ps1:y") + mb("PUNSUBSCRIBE", "ps1:p*") +
		mb("SUBSCRIBE", "ps1:a", "ps1:b", "ps1:a") + mb("PING") + mb("PING", "x") + mb("PING", "x", "y") + mb("GET", "ps1:k") + mb("GET") +
		mb("CONFIG", "GET", "x") + mb("ECHO", "x") + mb("NOSUCH", "x") + mb("MULTI") + mb("HELLO", "3") + mb("PUBLISH", "ps1:a", "m") +
		mb("PUBSUB", "NUMSUB", "ps1:a") + mb("PSUBSCRIBE", "ps1:p*") + mb("UNSUBSCRIBE", "ps1:zz") + mb("UNSUBSCRIBE", "ps1:a") +
		mb("UNSUBSCRIBE") + mb("GET", "ps1:k") + mb("PUNSUBSCRIBE") + mb("GET", "ps1:k")},
	{name: "psubscribe order", in: mb("PSUBSCRIBE", "ps2:z*", "ps2:a*", "ps2:m*", "ps2:b?") + mb("PSUBSCRIBE", "ps2:a*") + mb("SUBSCRIBE", "ps2:ab") +
		// A bare PUNSUBSCRIBE with one pattern left: Redis 7.2 confirms
		// several in its hash table's order, a new one per process
		// (docs/redis.md, Pub/sub).
		mb("PUNSUBSCRIBE", "ps2:nope") + mb("PUNSUBSCRIBE", "ps2:m*", "ps2:z*", "ps2:a*") + mb("PUNSUBSCRIBE") + mb("UNSUBSCRIBE")},
	{name: "subscribed mode resp3", skip: 1, in: mb("HELLO", "3") + mb("UNSUBSCRIBE") + mb("PUNSUBSCRIBE") + mb("SUBSCRIBE", "ps3:c") + mb("PING") +
		mb("PING", "x") + mb("GET", "ps3:k") + mb("PUBLISH", "ps3:c", "m") + mb("PSUBSCRIBE", "ps3:c*") + mb("PUBLISH", "ps3:c", "m2") +
		mb("PUBLISH", "ps3:cc", "m3") + mb("PUBSUB", "NUMSUB", "ps3:c", "ps3:cc") + mb("PUBSUB", "CHANNELS", "ps3:*") +
		mb("UNSUBSCRIBE") + mb("PUNSUBSCRIBE") + mb("PUNSUBSCRIBE") + mb("PUBLISH", "ps3:c", "m4")},
	{name: "publish to self keeps order", in: mb("SUBSCRIBE", "ps4:c") + mb("UNSUBSCRIBE", "ps4:c") + mb("SET", "ps4:k", "v") + mb("MULTI") +
		mb("SUBSCRIBE", "ps4:c") + mb("GET", "ps4:k") + mb("PUBLISH", "ps4:c", "hi") + mb("PUBLISH", "ps4:c", "again") + mb("EXEC") +
		mb("UNSUBSCRIBE", "ps4:c")},
	{name: "subscribe in multi", in: mb("MULTI") + mb("SUBSCRIBE", "ps5:a") + mb("PSUBSCRIBE", "ps5:x*") + mb("PUBLISH", "ps5:a", "hi") + mb("EXEC") +
		mb("GET", "ps5:k") + mb("MULTI") + mb("UNSUBSCRIBE", "ps5:a") + mb("PUNSUBSCRIBE", "ps5:x*") + mb("GET", "ps5:k")},
	{name: "subscribe in multi resp3", skip: 1, in: mb("HELLO", "3") + mb("MULTI") + mb("SUBSCRIBE", "ps6:a") + mb("PUBLISH", "ps6:a", "x") +
		mb("EXEC") + mb("GET", "ps6:k") + mb("UNSUBSCRIBE")},
	{name: "reset", in: mb("SUBSCRIBE", "ps7:a") + mb("PSUBSCRIBE", "ps7:*") + mb("RESET") + mb("GET", "ps7:k") + mb("PUBSUB", "NUMSUB", "ps7:a") +
		mb("HELLO", "3")[:0] + mb("MULTI") + mb("RESET") + mb("EXEC") + mb("RESET", "x")},
	{name: "reset resp3", skip: 1, in: mb("HELLO", "3") + mb("SUBSCRIBE", "ps8:a") + mb("RESET") + mb("GET", "ps8:k") + mb("PUBSUB", "NUMSUB", "ps8:a")},
	{name: "quit subscribed", in: mb("SUBSCRIBE", "ps9:a") + mb("QUIT") + mb("PING")},
	{name: "pubsub command", in: mb("PUBSUB", "HELP") + mb("PUBSUB") + mb("PUBSUB", "FOO") + mb("PUBSUB", "CHANNELS", "ps10:*") +
		mb("PUBSUB", "CHANNELS", "a", "b") + mb("pubsub", "channels", "a", "b") + mb("PUBSUB", "NUMSUB") + mb("PUBSUB", "NUMSUB", "ps10:a", "ps10:b", "ps10:a") +
		mb("PUBSUB", "NUMPAT", "x") + mb("PUBLISH", "ps10:a") + mb("PUBLISH", "ps10:nobody", "msg") + mb("SUBSCRIBE") + mb("PSUBSCRIBE") +
		mb("pubsub", "help", "x") + mb("PUBSUB", "SHARDCHANNELS") + mb("PUBSUB", "SHARDCHANNELS", "a", "b") + mb("PUBSUB", "SHARDNUMSUB", "a", "b") +
		mb("PUBSUB", "SHARDNUMSUB") + mb("PUBLISH", "", "")},
	// Confirmations are pushes: CLIENT REPLY OFF and SKIP do not silence
	// them, nor the messages, in RESP2 or RESP3 (Redis's CLIENT_PUSHING).
	{name: "reply off", in: mb("CLIENT", "REPLY", "OFF") + mb("UNSUBSCRIBE") + mb("PUNSUBSCRIBE", "ps12:x", "ps12:y") + mb("PING") +
		mb("SUBSCRIBE", "ps12:a") + mb("PING") + mb("PSUBSCRIBE", "ps12:p*") + mb("CLIENT", "REPLY", "ON") + mb("UNSUBSCRIBE", "ps12:a") +
		mb("PUNSUBSCRIBE") + mb("GET", "ps12:k") + mb("MULTI") + mb("SUBSCRIBE", "ps12:b") + mb("EXEC") + mb("UNSUBSCRIBE") +
		mb("CLIENT", "REPLY", "ON") + mb("PING")},
	{name: "reply skip", in: mb("CLIENT", "REPLY", "SKIP") + mb("UNSUBSCRIBE", "ps13:a") + mb("PING") + mb("CLIENT", "REPLY", "SKIP") +
		mb("SUBSCRIBE", "ps13:a") + mb("PING") + mb("CLIENT", "REPLY", "SKIP") + mb("UNSUBSCRIBE") + mb("PING")},
	// RESET ends CLIENT REPLY OFF (its +RESET is sent) but not a SKIP
	// of RESET itself.
	{name: "reset and reply modes", in: mb("CLIENT", "REPLY", "OFF") + mb("SUBSCRIBE", "ps16:a") + mb("RESET") + mb("PING") +
		mb("CLIENT", "REPLY", "SKIP") + mb("RESET") + mb("PING") + mb("CLIENT", "REPLY", "SKIP") + mb("SUBSCRIBE", "ps16:b") + mb("RESET") +
		mb("PUBSUB", "NUMSUB", "ps16:a", "ps16:b")},
	{name: "reply off resp3", skip: 1, in: mb("HELLO", "3") + mb("CLIENT", "REPLY", "OFF") + mb("SUBSCRIBE", "ps14:a") +
		mb("PSUBSCRIBE", "ps14:a*") + mb("PUBLISH", "ps14:a", "m") + mb("GET", "ps14:k") + mb("UNSUBSCRIBE", "ps14:a") + mb("PUNSUBSCRIBE") +
		mb("UNSUBSCRIBE") + mb("CLIENT", "REPLY", "ON") + mb("PING")},
	// A refused EXEC is EXECABORT and drops the watches, even refused
	// for subscribed mode, outside MULTI.
	{name: "exec refused while subscribed", in: mb("SET", "ps15:k", "1") + mb("WATCH", "ps15:k") + mb("SUBSCRIBE", "ps15:a") +
		mb("MULTI") + mb("EXEC") + mb("DISCARD") + mb("UNSUBSCRIBE") + mb("SET", "ps15:k", "2") + mb("MULTI") + mb("GET", "ps15:k") +
		mb("EXEC") + mb("MULTI") + mb("SUBSCRIBE", "ps15:b") + mb("EXEC") + mb("MULTI") + mb("EXEC") + mb("UNSUBSCRIBE")},
	// Sharded pub/sub: shard channels are counted apart from channels and
	// patterns, keep the connection in subscribed mode, and SSUBSCRIBE is
	// refused inside EXEC (where SUBSCRIBE is not).
	{name: "sharded subscribed mode", in: mb("SUNSUBSCRIBE") + mb("SUNSUBSCRIBE", "ps20:x", "ps20:y") + mb("SSUBSCRIBE", "ps20:a") +
		mb("SSUBSCRIBE", "ps20:a", "ps20:b") + mb("SUBSCRIBE", "ps20:c") + mb("PSUBSCRIBE", "ps20:x*") + mb("GET", "ps20:k") + mb("PING") +
		mb("SPUBLISH", "ps20:a", "m") + mb("UNSUBSCRIBE") + mb("PUNSUBSCRIBE") + mb("GET", "ps20:k") + mb("SUNSUBSCRIBE", "ps20:b") +
		mb("SUNSUBSCRIBE", "ps20:a", "ps20:zz") + mb("GET", "ps20:k") + mb("SSUBSCRIBE", "ps20:d") + mb("UNSUBSCRIBE") + mb("SUNSUBSCRIBE") +
		mb("GET", "ps20:k")},
	{name: "sharded publish to self", skip: 1, in: mb("HELLO", "3") + mb("SSUBSCRIBE", "ps21:a") + mb("SPUBLISH", "ps21:a", "self") +
		mb("PUBLISH", "ps21:a", "x") + mb("SUBSCRIBE", "ps21:a") + mb("SPUBLISH", "ps21:a", "both") + mb("PUBLISH", "ps21:a", "both2") +
		mb("PUBSUB", "SHARDNUMSUB", "ps21:a", "ps21:b") + mb("PUBSUB", "SHARDCHANNELS", "ps21:*") + mb("PUBSUB", "NUMSUB", "ps21:a") +
		mb("PUBSUB", "CHANNELS", "ps21:*") + mb("GET", "ps21:k") + mb("SUNSUBSCRIBE") + mb("UNSUBSCRIBE") + mb("SPUBLISH", "ps21:a", "none")},
	{name: "sharded in multi", in: mb("MULTI") + mb("SSUBSCRIBE", "ps22:a") + mb("SPUBLISH", "ps22:a", "m") + mb("SUNSUBSCRIBE", "ps22:a") +
		mb("EXEC") + mb("GET", "ps22:k") + mb("MULTI") + mb("SSUBSCRIBE") + mb("EXEC")},
	{name: "sharded errors and scripts", in: mb("SSUBSCRIBE") + mb("SPUBLISH", "ps23:a") + mb("SPUBLISH", "ps23:a", "b", "c") +
		mb("EVAL", "return redis.call('ssubscribe', 'ps23:a')", "0") + mb("EVAL", "return redis.call('sunsubscribe')", "0") +
		mb("EVAL", "return redis.call('spublish', 'ps23:a', 'm')", "0") + mb("PUBSUB", "SHARDCHANNELS", "a", "b") +
		mb("PUBSUB", "SHARDNUMSUB", "ps23:a", "ps23:a")},
	{name: "sharded reset", in: mb("SSUBSCRIBE", "ps24:a") + mb("RESET") + mb("GET", "ps24:k") + mb("PUBSUB", "SHARDNUMSUB", "ps24:a") +
		mb("CLIENT", "REPLY", "OFF") + mb("SSUBSCRIBE", "ps24:b") + mb("SUNSUBSCRIBE", "ps24:b") + mb("CLIENT", "REPLY", "ON") + mb("PING")},
	{name: "pubsub resp3", skip: 1, in: mb("HELLO", "3") + mb("PUBSUB", "NUMSUB", "ps11:a") + mb("PUBSUB", "CHANNELS", "ps11:*") + mb("PUBSUB", "NUMSUB") +
		mb("PUBSUB", "SHARDNUMSUB", "x")},
}

func TestPubsubDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	for _, s := range pubsubSessions {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			want := runRESPSession(redisAddr, s)
			got := runRESPSession(rs.respAddr, s)
			if want.err != nil || got.err != nil {
				t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
			}
			if string(got.out) != string(want.out) || got.closed != want.closed {
				t.Errorf("session %q differs\nredis  (closed %v): %q\nminikv (closed %v): %q",
					s.name, want.closed, want.out, got.closed, got.out)
			}
		})
	}
}

// deliveryTranscript is what each connection read in one delivery run.
type deliveryTranscript struct {
	sub2, sub3, off, pub []string
}

// runDelivery subscribes a RESP2 and a RESP3 connection, publishes from a
// third, then has each subscriber PING: everything published was queued
// before the PING's reply, so reading up to it reads every message. A
// fourth, RESP2 under CLIENT REPLY OFF (no PING reply to wait for), reads
// its confirmations and then exactly the five messages it gets.
func runDelivery(t *testing.T, addr string) deliveryTranscript {
	t.Helper()
	type client struct {
		nc net.Conn
		br *bufio.Reader
	}
	dialc := func() *client {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		return &client{nc, bufio.NewReader(nc)}
	}
	send := func(c *client, in string) {
		if _, err := c.nc.Write([]byte(in)); err != nil {
			t.Fatal(err)
		}
	}
	read := func(c *client, n int) []string {
		var out []string
		for range n {
			r, err := readRESPReply(c.br)
			if err != nil {
				t.Fatalf("read: %v (after %q)", err, out)
			}
			out = append(out, r)
		}
		return out
	}
	readUntil := func(c *client, last string) []string {
		var out []string
		for {
			r := read(c, 1)[0]
			out = append(out, r)
			if r == last {
				return out
			}
		}
	}
	s2, s3, off, p := dialc(), dialc(), dialc(), dialc()
	var tr deliveryTranscript
	send(s2, mb("SUBSCRIBE", "d:ch", "d:other")+mb("PSUBSCRIBE", "d:c*"))
	tr.sub2 = read(s2, 3)
	send(off, mb("CLIENT", "REPLY", "OFF")+mb("SUBSCRIBE", "d:ch")+mb("PSUBSCRIBE", "d:c*")+mb("PING"))
	tr.off = read(off, 2)
	send(s3, mb("HELLO", "3")+mb("SUBSCRIBE", "d:ch")+mb("PSUBSCRIBE", "d:*"))
	read(s3, 1) // HELLO: ids and versions differ
	tr.sub3 = read(s3, 2)
	send(p, mb("PUBLISH", "d:ch", "hello")+mb("PUBLISH", "d:other", "bin\x00\r\n")+mb("PUBLISH", "d:cz", "")+
		mb("PUBLISH", "x:ch", "nobody")+mb("PUBLISH", "d:ch", string(make([]byte, 70000))))
	tr.pub = read(p, 5)
	send(s2, mb("PING"))
	tr.sub2 = append(tr.sub2, readUntil(s2, "*2\r\n$4\r\npong\r\n$0\r\n\r\n")...)
	send(s3, mb("PING"))
	tr.sub3 = append(tr.sub3, readUntil(s3, "+PONG\r\n")...)
	tr.off = append(tr.off, read(off, 5)...)
	return tr
}

// TestPubsubDeliveryDifferential: PUBLISH delivers exactly Redis's bytes,
// message and pmessage, to RESP2 and RESP3 subscribers, and answers
// Redis's receiver counts.
func TestPubsubDeliveryDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	want := runDelivery(t, redisAddr)
	got := runDelivery(t, rs.respAddr)
	for _, c := range []struct {
		name      string
		got, want []string
	}{{"publisher", got.pub, want.pub}, {"RESP2 subscriber", got.sub2, want.sub2}, {"RESP3 subscriber", got.sub3, want.sub3},
		{"subscriber under CLIENT REPLY OFF", got.off, want.off}} {
		if len(c.got) != len(c.want) {
			t.Errorf("%s read %d replies, Redis's %d\nminikv: %.2000q\nredis:  %.2000q", c.name, len(c.got), len(c.want), c.got, c.want)
			continue
		}
		for i := range c.got {
			if c.got[i] != c.want[i] {
				t.Errorf("%s reply %d = %.300q, Redis's %.300q", c.name, i, c.got[i], c.want[i])
			}
		}
	}
}

// unsubscribeAllTranscript is Redis's pubsub.tcl "PUBLISH/SUBSCRIBE after
// UNSUBSCRIBE without arguments" and its PSUBSCRIBE twin on addr: the
// subscriber does not read its confirmations; another client waits until
// CLIENT LIST shows cmd=unsubscribe (punsubscribe), then publishes. The
// confirmations are read last.
func unsubscribeAllTranscript(t *testing.T, addr string, patterns bool) []string {
	t.Helper()
	sub, c := dialRESP(t, addr), dialRESP(t, addr)
	subCmd, unsubCmd, names, pubs := "SUBSCRIBE", "UNSUBSCRIBE", []string{"ua:chan1", "ua:chan2", "ua:chan3"}, []string{"ua:chan1", "ua:chan2", "ua:chan3"}
	if patterns {
		subCmd, unsubCmd = "PSUBSCRIBE", "PUNSUBSCRIBE"
		names, pubs = []string{"ua:chan1.*", "ua:chan2.*", "ua:chan3.*"}, []string{"ua:chan1.hi", "ua:chan2.hi", "ua:chan3.hi"}
	}
	var out []string
	sub.Send(mb("CLIENT", "SETNAME", "ua-sub") + mb(append([]string{subCmd}, names...)...))
	for range 1 + len(names) {
		out = append(out, sub.Reply())
	}
	sub.Send(mb(unsubCmd))
	want := " cmd=" + strings.ToLower(unsubCmd) + " "
	for deadline := time.Now().Add(time.Minute); ; {
		if l := c.Do("CLIENT", "LIST"); strings.Contains(l, " name=ua-sub ") && strings.Contains(l[strings.Index(l, " name=ua-sub "):], want) {
			break
		}
		if time.Now().After(deadline) { // a bound for a broken server, not a timing
			t.Fatalf("CLIENT LIST never showed%s", want)
		}
	}
	for _, ch := range pubs {
		out = append(out, c.Do("PUBLISH", ch, "hello"))
	}
	// Each confirmation without its count, then the counts, each sorted:
	// the order, and so which name comes with which count, is Redis's
	// hash order.
	var confs, counts []string
	for range names {
		r := sub.Reply()
		i := strings.LastIndex(r[:len(r)-2], "\r\n")
		confs, counts = append(confs, r[:i]), append(counts, r[i:])
	}
	slices.Sort(confs)
	slices.Sort(counts)
	return append(append(out, confs...), counts...)
}

// TestPubsubAfterUnsubscribeAllDifferential: after an UNSUBSCRIBE
// (PUNSUBSCRIBE) without arguments that CLIENT LIST shows, PUBLISH reaches
// nobody, on MiniKV as on redis-server.
func TestPubsubAfterUnsubscribeAllDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	for _, patterns := range []bool{false, true} {
		want := unsubscribeAllTranscript(t, redisAddr, patterns)
		got := unsubscribeAllTranscript(t, rs.respAddr, patterns)
		if !slices.Equal(got, want) {
			t.Errorf("patterns %v:\nminikv: %q\nredis:  %q", patterns, got, want)
		}
	}
}

// TestPublishAfterUnsubscribeWithoutWait is the Redis 7.0 version of
// pubsub.tcl's "PUBLISH/SUBSCRIBE after UNSUBSCRIBE without arguments":
// the subscriber sends UNSUBSCRIBE and does not read its confirmations,
// and another connection publishes at once. Redis's one thread serves the
// two in the order they arrived; MiniKV's PUBLISH waits for the
// subscriber's earlier requests (awaitEarlier), so the message reaches
// nobody every time (before it did, about one time in three).
func TestPublishAfterUnsubscribeWithoutWait(t *testing.T) {
	// The wait's safety valve out of the way: only the order can fail.
	defer maxAwaitEarlier.Store(maxAwaitEarlier.Swap(int64(time.Hour)))
	rs := startRESP(t, server.Config{}, store.Config{})
	sub, c := dialRESP(t, rs.respAddr), dialRESP(t, rs.respAddr)
	names := []string{"uw:chan1", "uw:chan2", "uw:chan3"}
	failed := 0
	const rounds = 200
	for range rounds {
		sub.Send(mb(append([]string{"SUBSCRIBE"}, names...)...))
		for range names {
			sub.Reply()
		}
		sub.Send(mb("UNSUBSCRIBE"))
		if got := c.Do("PUBLISH", "uw:chan1", "hello"); got != ":0\r\n" {
			failed++
		}
		for range names {
			sub.Reply()
		}
	}
	if failed > 0 {
		t.Errorf("PUBLISH right after another connection's UNSUBSCRIBE reached a receiver in %d of %d rounds", failed, rounds)
	}
}
