package redis

// Redis 7.2's consumer times (redis PR #11099) against redis-server 7.2.4:
// a consumer's seen-time (its last
// attempted interaction: XREADGROUP, XCLAIM, XAUTOCLAIM) and active-time
// (its last successful one: entries read into its PEL, entries claimed;
// -1 until then), XINFO CONSUMERS' idle and inactive, XINFO STREAM FULL's
// seen-time and active-time, and the consumers 7.2 makes where 7.0 did
// not (an XREADGROUP that reads nothing, an XCLAIM or XAUTOCLAIM that
// claims nothing).
//
// The sessions run over RESP2 and RESP3 and compare byte for byte, the
// times masked by mask72 only when plausible: an idle or inactive time a
// small non-negative number, a seen-time, active-time or delivery time a
// Unix ms near now, -1 kept as it is (so a consumer never active must be
// -1 on both servers).
//
// drop72 takes the 7.2 fields out of a reply, for the tests that compare
// with what a Redis 7.0 payload or replica has.

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// drop72 takes out of a RESP reply the fields Redis 7.2 added to XINFO:
// inactive (XINFO CONSUMERS) and active-time (XINFO STREAM FULL), each
// with its value, fixing the counts of the arrays and maps that held
// them. A reply that does not parse is returned as it is.
func drop72(reply string) string {
	n, err := parseRESPNode(bufio.NewReader(strings.NewReader(reply)))
	if err != nil {
		return reply
	}
	drop72Node(n)
	return n.String()
}

func drop72Node(n *respNode) {
	if len(n.head) > 0 && (n.head[0] == '*' || n.head[0] == '%') {
		dropped := 0
		for i := 0; i+1 < len(n.kids); i += 2 {
			if h := n.kids[i].head; h == "$11\r\nactive-time\r\n" || h == "$8\r\ninactive\r\n" {
				n.kids = append(n.kids[:i:i], n.kids[i+2:]...)
				dropped++
				i -= 2
			}
		}
		if dropped > 0 {
			if n.head[0] == '*' {
				n.head = "*" + strconv.Itoa(len(n.kids)) + "\r\n"
			} else {
				n.head = "%" + strconv.Itoa(len(n.kids)/2) + "\r\n"
			}
		}
	}
	for _, k := range n.kids {
		drop72Node(k)
	}
}

// drop72Value is drop72 for a reply as go-redis's Do returns it (nested
// []any); it also returns each consumer's seen-time and active-time
// found (a consumer of XINFO STREAM FULL), for the caller to check.
func drop72Value(v any) (any, [][2]int64) {
	var times [][2]int64
	var walk func(v any) any
	walk = func(v any) any {
		s, ok := v.([]any)
		if !ok {
			return v
		}
		var out []any
		seen, active := int64(0), int64(0)
		hasSeen, hasActive := false, false
		for i := 0; i < len(s); i++ {
			if k, ok := s[i].(string); ok && i%2 == 0 && i+1 < len(s) {
				switch k {
				case "seen-time":
					seen, hasSeen = toInt64(s[i+1]), true
				case "active-time":
					active, hasActive = toInt64(s[i+1]), true
					i++
					continue
				case "inactive":
					i++
					continue
				}
			}
			out = append(out, walk(s[i]))
		}
		if hasSeen && hasActive {
			times = append(times, [2]int64{seen, active})
		}
		return out
	}
	return walk(v), times
}

func toInt64(v any) int64 {
	if n, ok := v.(int64); ok {
		return n
	}
	return -2
}

// mask72 is streamMask plus the times of XINFO CONSUMERS and XINFO
// STREAM FULL, each replaced by a placeholder only when plausible (see
// the file's comment): an implausible one stays and fails the compare.
func mask72(argv []string, reply string) string {
	reply = streamMask(argv, reply)
	if len(argv) < 3 || argv[0] != "xinfo" || strings.HasPrefix(reply, "-") {
		return reply
	}
	n, err := parseRESPNode(bufio.NewReader(strings.NewReader(reply)))
	if err != nil {
		return reply
	}
	now := time.Now().UnixMilli()
	num := func(k *respNode) (int64, bool) {
		if !strings.HasPrefix(k.head, ":") {
			return 0, false
		}
		v, err := strconv.ParseInt(strings.TrimSpace(k.head[1:]), 10, 64)
		return v, err == nil
	}
	small := func(k *respNode, name string) { // idle, inactive: ms ago
		if v, ok := num(k); ok && v >= 0 && v < 60_000 {
			k.head = ":<" + name + ">\r\n"
		}
	}
	stamp := func(k *respNode, name string) { // a Unix ms
		if v, ok := num(k); ok && v > now-60_000 && v < now+60_000 {
			k.head = ":<" + name + ">\r\n"
		}
	}
	var fields func(n *respNode)
	fields = func(n *respNode) {
		for i := 0; i+1 < len(n.kids); i += 2 {
			switch n.kids[i].head {
			case "$4\r\nidle\r\n":
				small(n.kids[i+1], "idle")
			case "$8\r\ninactive\r\n":
				small(n.kids[i+1], "inactive")
			case "$9\r\nseen-time\r\n":
				stamp(n.kids[i+1], "seen-time")
			case "$11\r\nactive-time\r\n":
				stamp(n.kids[i+1], "active-time")
			case "$15\r\nradix-tree-keys\r\n", "$16\r\nradix-tree-nodes\r\n":
				n.kids[i+1].head = ":0\r\n"
			case "$7\r\npending\r\n":
				// A PEL: [id consumer time count] (a group's) or
				// [id time count] (a consumer's).
				for _, e := range n.kids[i+1].kids {
					if len(e.kids) >= 3 {
						stamp(e.kids[len(e.kids)-2], "delivery-time")
					}
				}
			}
		}
		for _, k := range n.kids {
			fields(k)
		}
	}
	fields(n)
	return n.String()
}

// TestStream72Mask checks mask72 and drop72 themselves.
func TestStream72Mask(t *testing.T) {
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	consumers := "*2\r\n*8\r\n$4\r\nname\r\n$1\r\na\r\n$7\r\npending\r\n:1\r\n$4\r\nidle\r\n:12\r\n$8\r\ninactive\r\n:-1\r\n" +
		"*8\r\n$4\r\nname\r\n$1\r\nb\r\n$7\r\npending\r\n:0\r\n$4\r\nidle\r\n:99999999\r\n$8\r\ninactive\r\n:3\r\n"
	for _, c := range []struct {
		argv        []string
		reply, want string
	}{
		{[]string{"xinfo", "CONSUMERS", "s", "g"}, consumers,
			"*2\r\n*8\r\n$4\r\nname\r\n$1\r\na\r\n$7\r\npending\r\n:1\r\n$4\r\nidle\r\n:<idle>\r\n$8\r\ninactive\r\n:-1\r\n" +
				"*8\r\n$4\r\nname\r\n$1\r\nb\r\n$7\r\npending\r\n:0\r\n$4\r\nidle\r\n:99999999\r\n$8\r\ninactive\r\n:<inactive>\r\n"},
		{[]string{"xinfo", "STREAM", "s", "FULL"}, "%2\r\n$9\r\nseen-time\r\n:" + now + "\r\n$11\r\nactive-time\r\n:5\r\n",
			"%2\r\n$9\r\nseen-time\r\n:<seen-time>\r\n$11\r\nactive-time\r\n:5\r\n"},
		{[]string{"xinfo", "STREAM", "s", "FULL"}, "*2\r\n$7\r\npending\r\n*1\r\n*3\r\n$3\r\n1-1\r\n:" + now + "\r\n:2\r\n",
			"*2\r\n$7\r\npending\r\n*1\r\n*3\r\n$3\r\n1-1\r\n:<delivery-time>\r\n:2\r\n"},
	} {
		if got := mask72(c.argv, c.reply); got != c.want {
			t.Errorf("mask72(%q, %q) = %q, want %q", c.argv, c.reply, got, c.want)
		}
	}
	if got, want := drop72(consumers), "*2\r\n*6\r\n$4\r\nname\r\n$1\r\na\r\n$7\r\npending\r\n:1\r\n$4\r\nidle\r\n:12\r\n"+
		"*6\r\n$4\r\nname\r\n$1\r\nb\r\n$7\r\npending\r\n:0\r\n$4\r\nidle\r\n:99999999\r\n"; got != want {
		t.Errorf("drop72 = %q, want %q", got, want)
	}
	if got, want := drop72("%3\r\n$4\r\nname\r\n$1\r\na\r\n$11\r\nactive-time\r\n:-1\r\n$9\r\npel-count\r\n:0\r\n"),
		"%2\r\n$4\r\nname\r\n$1\r\na\r\n$9\r\npel-count\r\n:0\r\n"; got != want {
		t.Errorf("drop72 = %q, want %q", got, want)
	}
	v, times := drop72Value([]any{"name", "a", "seen-time", int64(7), "active-time", int64(-1), "pel-count", int64(0)})
	if fmt.Sprint(v) != "[name a seen-time 7 pel-count 0]" || len(times) != 1 || times[0] != [2]int64{7, -1} {
		t.Errorf("drop72Value: %v %v", v, times)
	}
}

// stream72Sessions exercise every point where Redis 7.2 sets a
// consumer's times, with explicit IDs, and read them with XINFO
// CONSUMERS, XINFO STREAM FULL and XINFO GROUPS after each.
var stream72Sessions = []streamSession{
	{"consumer times", func(k func(string) string) string {
		s := k("s")
		info := func() string {
			return mb("XINFO", "CONSUMERS", s, "g") + mb("XINFO", "STREAM", s, "FULL") + mb("XINFO", "GROUPS", s)
		}
		return xaddN(s, 6) + mb("XGROUP", "CREATE", s, "g", "0") + info() +
			// Made and never active.
			mb("XGROUP", "CREATECONSUMER", s, "g", "made") + info() +
			// Reads that deliver: active; NOACK: only seen.
			mb("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", s, ">") + info() +
			mb("XREADGROUP", "GROUP", "g", "noack", "NOACK", "COUNT", "1", "STREAMS", s, ">") + info() +
			// A history read: seen, its active-time as it was.
			mb("XREADGROUP", "GROUP", "g", "alice", "STREAMS", s, "0") + mb("XREADGROUP", "GROUP", "g", "hist", "STREAMS", s, "0") + info() +
			// Claims: something claimed (active), nothing (seen only).
			mb("XCLAIM", s, "g", "bob", "0", "1-1") + mb("XCLAIM", s, "g", "carol", "99999999", "2-1") +
			mb("XCLAIM", s, "g", "dave", "0", "5-1", "FORCE", "JUSTID") + mb("XCLAIM", s, "g", "erin", "0", "99-1") + info() +
			mb("XAUTOCLAIM", s, "g", "frank", "0", "0", "COUNT", "1") + mb("XAUTOCLAIM", s, "g", "gina", "99999999", "0") + info() +
			// An entry deleted while pending: XAUTOCLAIM clears it, claims
			// nothing (not active), XCLAIM of a deleted one likewise.
			mb("XREADGROUP", "GROUP", "g", "hal", "COUNT", "1", "STREAMS", s, ">") + mb("XDEL", s, "4-1") +
			mb("XAUTOCLAIM", s, "g", "ivy", "0", "4-1", "COUNT", "1") + mb("XCLAIM", s, "g", "jo", "0", "3-1") + info() +
			// XACK and XPENDING change no consumer's times.
			mb("XACK", s, "g", "1-1", "5-1") + mb("XPENDING", s, "g") + mb("XPENDING", s, "g", "-", "+", "10") + info() +
			mb("XGROUP", "DELCONSUMER", s, "g", "bob") + info() +
			mb("XINFO", "STREAM", s, "FULL", "COUNT", "1") + mb("XINFO", "STREAM", s, "FULL", "COUNT", "0")
	}},
	{"reads and claims that get nothing", func(k func(string) string) string {
		s := k("s")
		info := func() string {
			return mb("XINFO", "CONSUMERS", s, "g") + mb("XINFO", "GROUPS", s) + mb("XINFO", "STREAM", s, "FULL")
		}
		return mb("XADD", s, "1-1", "a", "1") + mb("XGROUP", "CREATE", s, "g", "$") + info() +
			mb("XREADGROUP", "GROUP", "g", "r1", "STREAMS", s, ">") + mb("XREADGROUP", "GROUP", "g", "r2", "BLOCK", "5", "STREAMS", s, ">") +
			mb("XREADGROUP", "GROUP", "g", "r3", "NOACK", "STREAMS", s, ">") + mb("XREADGROUP", "GROUP", "g", "r4", "STREAMS", s, "0") + info() +
			mb("MULTI") + mb("XREADGROUP", "GROUP", "g", "r5", "BLOCK", "0", "STREAMS", s, ">") + mb("EXEC") + info() +
			mb("XCLAIM", s, "g", "c1", "0", "1-1") + mb("XCLAIM", s, "g", "c2", "0", "1-1", "JUSTID") +
			mb("XAUTOCLAIM", s, "g", "c3", "0", "0") + mb("XAUTOCLAIM", s, "g", "c4", "0", "0", "JUSTID") + info() +
			// Errors make no consumer.
			mb("XCLAIM", s, "g", "e1", "0", "1-1", "IDLE", "x") + mb("XCLAIM", s, "nogroup", "e2", "0", "1-1") +
			mb("XAUTOCLAIM", s, "g", "e3", "0", "x") + mb("XREADGROUP", "GROUP", "nogroup", "e4", "STREAMS", s, ">") +
			mb("XREADGROUP", "GROUP", "g", "e5", "STREAMS", s, k("nokey"), ">", ">") + info() +
			// Then the stream grows: the first read that delivers.
			mb("XADD", s, "2-1", "b", "2") + mb("XREADGROUP", "GROUP", "g", "r1", "STREAMS", s, ">") + info()
	}},
}

// TestStream72Differential runs stream72Sessions against redis-server.
func TestStream72Differential(t *testing.T) {
	ref := startRedisServer(t)
	peer := streamPeer(t)
	for i, s := range stream72Sessions {
		for _, r3 := range []bool{false, true} {
			p := "x72-" + strconv.Itoa(i)
			rs := respSession{name: s.name}
			if r3 {
				p += "r3"
				rs = respSession{name: s.name + " resp3", skip: 1, in: mb("HELLO", "3")}
			}
			rs.in += s.in(func(k string) string { return p + ":" + k })
			t.Run(rs.name, func(t *testing.T) { compareStreamSessionMasked(t, ref, peer, rs, mask72) })
		}
	}
}

// stream72NotifySessions: the consumers Redis 7.2 makes where 7.0 did
// not, each announced by xgroup-createconsumer.
var stream72NotifySessions = []notifySession{
	{name: "consumers made by reads and claims that get nothing", in: mb("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") +
		mb("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">") + mb("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">") +
		mb("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "5", "STREAMS", "s", ">") + mb("XCLAIM", "s", "g", "c3", "0", "7-1") +
		mb("XCLAIM", "s", "g", "c4", "99999999", "7-1") + mb("XAUTOCLAIM", "s", "g", "c5", "0", "0") +
		mb("XCLAIM", "s", "g", "e1", "0", "1-1", "IDLE", "x") + mb("XGROUP", "DELCONSUMER", "s", "g", "c1") + mb("DEL", "s")},
}

func TestStream72NotificationsDifferential(t *testing.T) {
	ref := startRedisServer(t)
	peer := streamPeer(t)
	for _, s := range stream72NotifySessions {
		t.Run(s.name, func(t *testing.T) {
			want := runNotifySession(t, ref, s)
			if len(want[0]) == 0 {
				t.Fatalf("redis-server published nothing: the session is broken")
			}
			got := runNotifySession(t, peer, s)
			for i, kind := range []string{"RESP2 subscriber", "RESP3 subscriber"} {
				if strings.Join(got[i], "") != strings.Join(want[i], "") {
					t.Errorf("%s: %s differs\nredis:  %s\nminikv: %s", s.name, kind, shortEvents(want[i]), shortEvents(got[i]))
				}
			}
		})
	}
}

// stream72BlockingScenarios: a blocked XREADGROUP makes its consumer
// when it blocks (Redis 7.2), seen then and again when served.
var stream72BlockingScenarios = []blockingScenario{
	{"a waiter that disconnects", []string{
		"2 XGROUP CREATE xc1:s g $ MKSTREAM", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xc1:s >", "wait 1", "1 close", "wait 0",
		"2 XADD xc1:s 1-1 a 1", "2 ?", "2 XPENDING xc1:s g", "2 ?", "2 XINFO GROUPS xc1:s", "2 ?"}},
	{"a blocked reader's consumer", []string{
		"2 XGROUP CREATE xc2:s g $ MKSTREAM", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xc2:s >", "wait 1",
		"2 XINFO GROUPS xc2:s", "2 ?", "2 XADD xc2:s 1-1 a 1", "2 ?", "1 ?", "2 XINFO GROUPS xc2:s", "2 ?",
		"1 XREADGROUP GROUP g d BLOCK 0 NOACK STREAMS xc2:s >", "wait 1", "2 XADD xc2:s 2-1 a 1", "2 ?", "1 ?", "2 XINFO GROUPS xc2:s", "2 ?"}},
}

func TestStream72BlockingDifferential(t *testing.T) {
	ref := startRedisServer(t)
	peer := streamPeer(t)
	for _, sc := range stream72BlockingScenarios {
		t.Run(sc.name, func(t *testing.T) {
			want, err := runBlockingScenario(ref, sc)
			if err != nil {
				t.Fatalf("redis: %v", err)
			}
			got, err := runBlockingScenario(peer, sc)
			if err != nil {
				t.Fatalf("minikv: %v", err)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("replies differ\nredis:\n%s\nminikv:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		})
	}
	// The times themselves, parsed: the blocked reader served is active,
	// the NOACK one only seen.
	c := goredis.NewClient(&goredis.Options{Addr: peer, Protocol: 2})
	defer c.Close()
	cs, err := c.XInfoConsumers(context.Background(), "xc2:s", "g").Result()
	if err != nil || len(cs) != 2 {
		t.Fatalf("XINFO CONSUMERS: %v %v", cs, err)
	}
	if cs[0].Name != "c" || cs[0].Inactive < 0 || cs[1].Name != "d" || cs[1].Inactive != -time.Millisecond {
		t.Errorf("XINFO CONSUMERS after the blocked reads: %+v", cs)
	}
}

// TestStream72RestoreFromRedis: a stream redis-server 7.2 DUMPs (type
// 21, RDB version 11) RESTOREs into MiniKV with its consumers' times:
// XINFO STREAM FULL then says exactly what redis-server says of the same
// payload restored (seen-time and active-time, -1 among them, unmasked);
// MiniKV's own DUMP of it is the very bytes redis-server sent, with the
// active times.
func TestStream72RestoreFromRedis(t *testing.T) {
	ref := startRedisServer(t)
	peer := streamPeer(t)
	vc := goredis.NewClient(&goredis.Options{Addr: ref, Protocol: 2})
	mc := goredis.NewClient(&goredis.Options{Addr: peer, Protocol: 2})
	t.Cleanup(func() { vc.Close(); mc.Close() })
	ctx := context.Background()
	for _, cmd := range streamDumpCmds() {
		if err := vc.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("redis %v: %v", cmd, err)
		}
	}
	full := func(c *goredis.Client, key string) string {
		v, err := c.Do(ctx, "XINFO", "STREAM", key, "FULL").Result()
		if err != nil {
			t.Fatalf("XINFO STREAM %s FULL: %v", key, err)
		}
		return fmt.Sprint(v)
	}
	never := 0
	for _, k := range streamDumpKeys {
		p, err := vc.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if p[0] != 21 {
			t.Fatalf("%s: redis-server DUMPs type %d", k, p[0])
		}
		for _, c := range []*goredis.Client{vc, mc} {
			if err := c.Restore(ctx, "r:"+k, 0, p).Err(); err != nil {
				t.Fatalf("RESTORE of redis-server's %s: %v", k, err)
			}
		}
		want := full(vc, "r:"+k)
		if got := full(mc, "r:"+k); got != want {
			t.Errorf("%s: XINFO STREAM FULL after RESTORE:\nminikv %.2000s\nredis  %.2000s", k, got, want)
		}
		never += strings.Count(want, "active-time -1")
		mp, err := mc.Dump(ctx, "r:"+k).Result()
		if err != nil || mp != p {
			t.Fatalf("%s: MiniKV's DUMP (%v)\nminikv %q\nredis  %q", k, err, mp, p)
		}
	}
	if never == 0 {
		t.Errorf("no consumer never active (active-time -1) in the payloads")
	}
}
