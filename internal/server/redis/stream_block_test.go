package redis

// Blocking XREAD and XREADGROUP against redis-server 7.2.4: scenarios
// over several connections (blocking_diff_test.go's runner: "wait N"
// polls INFO clients until N clients are blocked, so the order of events
// is certain without sleeping), every reply compared byte for byte.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server/servertest"
)

var streamBlockingScenarios = []blockingScenario{
	{"xread woken by xadd from another connection", []string{
		"1 XREAD BLOCK 0 STREAMS xb1:s $", "wait 1", "2 XADD xb1:s 1-1 a 1", "2 ?", "1 ?",
		"1 XREAD BLOCK 0 STREAMS xb1:s $", "wait 1", "2 XADD xb1:s 2-1 b 2", "2 ?", "1 ?",
		"1 XREAD BLOCK 0 STREAMS xb1:s 2-1", "wait 1", "2 XADD xb1:s 3-1 c 3", "2 ?", "1 ?"}},
	{"xread with a timeout woken", []string{
		"1 XREAD BLOCK 100000 COUNT 5 STREAMS xb2:s $", "wait 1", "2 XADD xb2:s 5-5 f v", "2 ?", "1 ?"}},
	{"xread several streams woken by the second", []string{
		"2 XADD xb3:a 1-1 a 1", "2 ?", "1 XREAD BLOCK 0 STREAMS xb3:a xb3:b xb3:c $ $ 0", "wait 1", "2 XADD xb3:c 7-1 c 1", "2 ?", "1 ?",
		"1 XREAD BLOCK 0 STREAMS xb3:a xb3:b $ $", "wait 1", "2 XADD xb3:b 2-1 b 1", "2 ?", "1 ?"}},
	{"xread count and the entries of one exec", []string{
		"1 XREAD BLOCK 0 COUNT 2 STREAMS xb4:s $", "wait 1", "2 MULTI", "2 ?", "2 XADD xb4:s 1-1 a 1", "2 ?", "2 XADD xb4:s 2-1 a 2", "2 ?",
		"2 XADD xb4:s 3-1 a 3", "2 ?", "2 EXEC", "2 ?", "1 ?",
		"1 XREAD BLOCK 0 STREAMS xb4:s $", "wait 1", "2 MULTI", "2 ?", "2 XADD xb4:s 4-1 a 4", "2 ?", "2 XADD xb4:s 5-1 a 5", "2 ?", "2 EXEC", "2 ?", "1 ?"}},
	{"every xread waiter is served by one xadd", []string{
		"1 XREAD BLOCK 0 STREAMS xb5:s $", "wait 1", "2 XREAD BLOCK 0 STREAMS xb5:s xb5:t $ $", "wait 2", "3 XREAD BLOCK 0 COUNT 1 STREAMS xb5:s 0", "wait 3",
		"4 XADD xb5:s 1-1 a 1", "4 ?", "1 ?", "2 ?", "3 ?"}},
	{"xadd from a lua script wakes", []string{
		"1 XREAD BLOCK 0 STREAMS xb6:s $", "wait 1", "2 EVAL return(redis.call('XADD',KEYS[1],'1-1','a','1')) 1 xb6:s", "2 ?", "1 ?",
		"1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb6:s >", "1 ?", "2 XGROUP CREATE xb6:s g $", "2 ?",
		"1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb6:s >", "wait 1",
		"2 EVAL redis.call('XADD',KEYS[1],'2-1','b','2');return(redis.call('XADD',KEYS[1],'3-1','c','3')) 1 xb6:s", "2 ?", "1 ?"}},
	{"xread timeouts", []string{
		"1 XREAD BLOCK 20 STREAMS xb7:s $", "1 ?", "1 XREAD BLOCK 1 STREAMS xb7:s xb7:t 0 0", "1 ?",
		"1 XREADGROUP GROUP g c BLOCK 20 STREAMS xb7:s >", "1 ?", "2 XGROUP CREATE xb7:s g $ MKSTREAM", "2 ?",
		"1 XREADGROUP GROUP g c BLOCK 20 STREAMS xb7:s >", "1 ?", "1 XREADGROUP GROUP g c BLOCK 20 COUNT 3 NOACK STREAMS xb7:s >", "1 ?",
		"1 HELLO 3", "1 skip", "1 XREAD BLOCK 20 STREAMS xb7:s $", "1 ?", "1 XREADGROUP GROUP g c BLOCK 20 STREAMS xb7:s >", "1 ?"}},
	{"the waiter's own pipelined xadd waits behind it", []string{
		"1 pipe XREAD BLOCK 50 STREAMS xb8:s $ | XADD xb8:s 1-1 a 1 | XREAD BLOCK 0 STREAMS xb8:s 0", "1 ?", "1 ?", "1 ?",
		"1 XADD xb8:s 2-1 a 2", "1 ?", "1 XREAD BLOCK 0 STREAMS xb8:s 1-1", "1 ?"}},
	{"xreadgroup woken and the entry pending", []string{
		"2 XGROUP CREATE xb9:s g $ MKSTREAM", "2 ?", "1 XREADGROUP GROUP g alice BLOCK 0 STREAMS xb9:s >", "wait 1",
		"2 XADD xb9:s 1-1 a 1", "2 ?", "1 ?", "2 XPENDING xb9:s g", "2 ?", "2 XINFO GROUPS xb9:s", "2 ?",
		"1 XREADGROUP GROUP g alice BLOCK 0 NOACK STREAMS xb9:s >", "wait 1", "2 XADD xb9:s 2-1 b 2", "2 ?", "1 ?", "2 XPENDING xb9:s g", "2 ?",
		"1 XREADGROUP GROUP g alice BLOCK 0 STREAMS xb9:s 0", "1 ?"}},
	{"xreadgroup waiters served one by one in order", []string{
		"2 XGROUP CREATE xb10:s g $ MKSTREAM", "2 ?",
		"1 XREADGROUP GROUP g c1 BLOCK 0 STREAMS xb10:s >", "wait 1", "3 XREADGROUP GROUP g c3 BLOCK 0 COUNT 1 STREAMS xb10:s >", "wait 2",
		"4 XREADGROUP GROUP g c4 BLOCK 0 STREAMS xb10:s >", "wait 3",
		"2 XADD xb10:s 1-1 a 1", "2 ?", "1 ?", "wait 2", "2 XADD xb10:s 2-1 b 2", "2 ?", "3 ?", "wait 1",
		"2 MULTI", "2 ?", "2 XADD xb10:s 3-1 c 3", "2 ?", "2 XADD xb10:s 4-1 d 4", "2 ?", "2 EXEC", "2 ?", "4 ?", "wait 0",
		"2 XPENDING xb10:s g", "2 ?"}},
	{"xreadgroup on two groups and xread together", []string{
		"2 XGROUP CREATE xb11:s g $ MKSTREAM", "2 ?", "2 XGROUP CREATE xb11:s h $", "2 ?",
		"1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb11:s >", "wait 1", "3 XREADGROUP GROUP h c BLOCK 0 STREAMS xb11:s >", "wait 2",
		"4 XREAD BLOCK 0 STREAMS xb11:s $", "wait 3", "2 XADD xb11:s 1-1 a 1", "2 ?", "1 ?", "3 ?", "4 ?", "2 XINFO GROUPS xb11:s", "2 ?"}},
	{"the key deleted under xreadgroup", []string{
		"2 XGROUP CREATE xb12:s g $ MKSTREAM", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb12:s >", "wait 1", "2 DEL xb12:s", "2 ?", "1 ?",
		"2 XGROUP CREATE xb12:s g $ MKSTREAM", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb12:s >", "wait 1",
		"2 SET xb12:o x", "2 ?", "2 RENAME xb12:o xb12:s", "2 ?", "1 ?",
		"2 DEL xb12:s", "2 ?", "2 XGROUP CREATE xb12:s g $ MKSTREAM", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb12:s >", "wait 1",
		"2 XGROUP DESTROY xb12:s g", "2 ?", "1 ?", "2 XGROUP CREATE xb12:s g $", "2 ?",
		"1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb12:s >", "wait 1", "2 FLUSHALL", "2 ?", "1 ?", "1 PING", "1 ?"}},
	{"xread outlives its key", []string{
		"1 XREAD BLOCK 0 STREAMS xb13:s $", "wait 1", "2 XADD xb13:o 5-1 a 1", "2 ?", "2 SET xb13:s str", "2 ?", "wait 1", "2 DEL xb13:s", "2 ?",
		"wait 1", "2 XADD xb13:s 1-1 a 1", "2 ?", "1 ?",
		"1 XREAD BLOCK 0 STREAMS xb13:s $", "wait 1", "2 DEL xb13:s", "2 ?", "wait 1", "2 RENAME xb13:o xb13:s", "2 ?", "1 ?"}},
	// Redis 7.2 runs the command again, which finds nothing after its ID
	// (7.0 answered an empty list): the waiter waits on, for the next;
	// an XREADGROUP run again makes its consumer anew (deleted while it
	// waited: XGROUP DELCONSUMER runs nothing again).
	{"an xadd trimmed to nothing", []string{
		"2 XADD xb14:s 1-1 a 1", "2 ?", "1 XREAD BLOCK 0 STREAMS xb14:s $", "wait 1", "2 XADD xb14:s MAXLEN 0 2-1 a 2", "2 ?", "wait 1",
		"2 XADD xb14:s 3-1 a 3", "2 ?", "1 ?",
		"2 XGROUP CREATE xb14:s g $", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb14:s >", "wait 1",
		"2 XGROUP DELCONSUMER xb14:s g c", "2 ?", "wait 1", "2 XINFO GROUPS xb14:s", "2 ?", "2 XADD xb14:s MAXLEN 0 4-1 a 4", "2 ?",
		"wait 1", "2 XINFO GROUPS xb14:s", "2 ?", "2 XADD xb14:s 5-1 a 5", "2 ?", "1 ?",
		"1 ID", "1 XREAD BLOCK 0 COUNT 1 STREAMS xb14:s $", "wait 1", "2 XADD xb14:s MAXLEN 0 6-1 a 6", "2 ?", "wait 1", "2 CLIENT UNBLOCK %1", "2 ?", "1 ?"}},
	// Redis 7.2 runs the command again over all its keys: what an EXEC
	// added to several is read at once (7.0 served the first key only),
	// and a key of another type is an error.
	{"the run again reads every key", []string{
		"1 XREAD BLOCK 0 STREAMS xb19:a xb19:b $ $", "wait 1", "2 MULTI", "2 ?", "2 XADD xb19:b 1-1 b 1", "2 ?", "2 XADD xb19:a 1-1 a 1", "2 ?",
		"2 EXEC", "2 ?", "1 ?",
		"2 XGROUP CREATE xb19:a g $", "2 ?", "2 XGROUP CREATE xb19:b g $", "2 ?",
		"1 XREADGROUP GROUP g c BLOCK 0 COUNT 1 STREAMS xb19:a xb19:b > >", "wait 1", "2 MULTI", "2 ?", "2 XADD xb19:b 2-1 b 2", "2 ?",
		"2 XADD xb19:a 2-1 a 2", "2 ?", "2 XADD xb19:a 3-1 a 3", "2 ?", "2 EXEC", "2 ?", "1 ?",
		"1 XREAD BLOCK 0 STREAMS xb19:a xb19:c $ $", "wait 1", "2 SET xb19:c x", "2 ?", "wait 1", "2 XADD xb19:a 4-1 a 4", "2 ?", "1 ?",
		"2 XGROUP SETID xb19:a g $", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb19:a xb19:b > >", "wait 1", "2 DEL xb19:b", "2 ?", "1 ?",
		"1 XREAD BLOCK 0 STREAMS xb19:a $", "wait 1", "2 MULTI", "2 ?", "2 DEL xb19:a", "2 ?", "2 XADD xb19:a 1-1 a 1", "2 ?", "2 EXEC", "2 ?", "wait 1",
		"2 XADD xb19:a 9-1 a 9", "2 ?", "1 ?"}},
	// The reply has every entry, not the 1000 Redis 7.0 gave a blocked
	// XREAD without COUNT.
	{"a blocked read without count", append([]string{"1 XREAD BLOCK 0 STREAMS xb20:s $", "wait 1", "2 MULTI", "2 ?"},
		append(func() (s []string) {
			for i := 1; i <= 1100; i++ {
				s = append(s, "2 XADD xb20:s "+strconv.Itoa(i)+"-1 f v", "2 ?")
			}
			return s
		}(), "2 EXEC", "2 ?", "1 ?")...)},
	{"writes that add nothing leave waiters blocked", []string{
		"2 XADD xb15:s 1-1 a 1", "2 ?", "2 XGROUP CREATE xb15:s g $", "2 ?",
		"1 XREAD BLOCK 0 STREAMS xb15:s $", "wait 1", "3 XREADGROUP GROUP g c BLOCK 0 STREAMS xb15:s >", "wait 2",
		"2 XDEL xb15:s 1-1", "2 ?", "2 XTRIM xb15:s MAXLEN 0", "2 ?", "2 XSETID xb15:s 5-1", "2 ?", "2 XGROUP CREATECONSUMER xb15:s g d", "2 ?",
		"2 XADD xb15:s 1-1 a 1", "2 ?", "wait 2", "2 XADD xb15:s 6-1 z 1", "2 ?", "1 ?", "3 ?"}},
	{"client unblock of stream readers", []string{
		"1 ID", "1 XREAD BLOCK 0 STREAMS xb16:s $", "wait 1", "2 CLIENT UNBLOCK %1", "2 ?", "1 ?",
		"1 XREAD BLOCK 0 STREAMS xb16:s $", "wait 1", "2 CLIENT UNBLOCK %1 ERROR", "2 ?", "1 ?",
		"2 XGROUP CREATE xb16:s g $ MKSTREAM", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb16:s >", "wait 1", "2 CLIENT UNBLOCK %1 TIMEOUT", "2 ?", "1 ?",
		"1 HELLO 3", "1 skip", "1 XREAD BLOCK 0 STREAMS xb16:s $", "wait 1", "2 CLIENT UNBLOCK %1", "2 ?", "1 ?",
		"1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb16:s >", "wait 1", "2 XADD xb16:s 1-1 a 1", "2 ?", "1 ?"}},
	{"resp3 waiters", []string{
		"1 HELLO 3", "1 skip", "1 XREAD BLOCK 0 STREAMS xb17:a xb17:b $ $", "wait 1", "2 XADD xb17:b 1-1 a 1", "2 ?", "1 ?",
		"2 XGROUP CREATE xb17:a g $ MKSTREAM", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb17:a >", "wait 1", "2 XADD xb17:a 1-1 a 1", "2 ?", "1 ?",
		"2 XGROUP CREATE xb17:x g $ MKSTREAM", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb17:x >", "wait 1", "2 DEL xb17:x", "2 ?", "1 ?"}},
	// The consumer made first (stream72BlockingScenarios has the case
	// where the blocked read makes it, as Redis 7.2 does).
	{"a waiter that disconnects, its consumer made before", []string{
		"2 XGROUP CREATE xb18:s g $ MKSTREAM", "2 ?", "2 XGROUP CREATECONSUMER xb18:s g c", "2 ?", "1 XREADGROUP GROUP g c BLOCK 0 STREAMS xb18:s >", "wait 1", "1 close", "wait 0",
		"2 XADD xb18:s 1-1 a 1", "2 ?", "2 XPENDING xb18:s g", "2 ?", "2 XINFO GROUPS xb18:s", "2 ?"}},
}

// TestStreamBlockingDifferential runs the stream blocking scenarios against
// redis-server and MiniKV (or, with -stream.self, a second redis-server),
// one after the other, and compares every reply.
func TestStreamBlockingDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	peer := streamPeer(t)
	for _, sc := range streamBlockingScenarios {
		t.Run(sc.name, func(t *testing.T) {
			want, err := runBlockingScenario(redisAddr, sc)
			if err != nil {
				t.Fatalf("redis: %v", err)
			}
			if *streamLog {
				for _, r := range want {
					t.Logf("redis: %.300q", r)
				}
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
}

// TestStreamBlockTimeout: XREAD and XREADGROUP BLOCK n time out after
// about n milliseconds, not at once and not never (the lower bound is
// exact; the upper one a generous hang guard).
func TestStreamBlockTimeout(t *testing.T) {
	addr := streamPeer(t)
	c := dialRESP(t, addr)
	c.Expect(mb("XGROUP", "CREATE", "bt:s", "g", "$", "MKSTREAM"), "+OK\r\n")
	for _, args := range [][]string{{"XREAD", "BLOCK", "150", "STREAMS", "bt:s", "$"},
		{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "150", "STREAMS", "bt:s", ">"}} {
		start := time.Now()
		if got := c.Do(args...); got != "*-1\r\n" {
			t.Fatalf("%q = %q, want a null array", args, got)
		}
		if d := time.Since(start); d < 150*time.Millisecond || d > 4*time.Second {
			t.Errorf("%q returned after %v, want 150 ms", args, d)
		}
	}
}

// TestStreamBlockedGroupKeyExpires: a stream whose XREADGROUP reader
// waits expires, found by a lookup (EXISTS) or by the server's own sweep;
// the reader is answered as after a DEL: -NOGROUP (Redis 7.2 runs the
// read again), on redis-server and on MiniKV alike.
func TestStreamBlockedGroupKeyExpires(t *testing.T) {
	for _, srv := range []struct{ name, addr string }{{"redis", startRedisServer(t)}, {"minikv", streamPeer(t)}} {
		for _, lazy := range []bool{true, false} {
			reader, other := dialRESP(t, srv.addr), dialRESP(t, srv.addr)
			key := "xe:lazy"
			if !lazy {
				key = "xe:swept"
			}
			other.Expect(mb("XGROUP", "CREATE", key, "g", "$", "MKSTREAM"), "+OK\r\n")
			reader.Send(mb("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", key, ">"))
			waitFor(t, srv.name+": the reader blocked", func() bool {
				return strings.Contains(other.Do("INFO", "clients"), "\r\nblocked_clients:1\r\n")
			})
			expired := func() string {
				info := other.Do("INFO", "stats")
				i := strings.Index(info, "expired_keys:")
				if i < 0 {
					t.Fatalf("%s: INFO stats without expired_keys", srv.name)
				}
				return info[i : i+strings.Index(info[i:], "\r\n")]
			}
			before := expired()
			other.Expect(mb("PEXPIRE", key, "1"), ":1\r\n")
			if lazy {
				waitFor(t, srv.name+": the key expired", func() bool { return other.Do("EXISTS", key) == ":0\r\n" })
			} else {
				waitFor(t, srv.name+": the key swept", func() bool { return expired() != before })
			}
			want := "-NOGROUP No such key '" + key + "' or consumer group 'g' in XREADGROUP with GROUP option\r\n"
			if got := reader.Reply(); got != want {
				t.Errorf("%s, lazy %v: the reader got %q, want %q", srv.name, lazy, got, want)
			}
		}
	}
}

// TestStreamBlockingKeysInfo: INFO clients counts the keys commands wait
// on (total_blocking_keys) and, as Redis 7.2 does, those an XREADGROUP
// waits on (total_blocking_keys_on_nokey), on redis-server and MiniKV.
func TestStreamBlockingKeysInfo(t *testing.T) {
	for _, srv := range []struct{ name, addr string }{{"redis", startRedisServer(t)}, {"minikv", streamPeer(t)}} {
		ctl := dialRESP(t, srv.addr)
		counts := func() string {
			var out []string
			for _, l := range strings.Split(ctl.Do("INFO", "clients"), "\r\n") {
				if strings.HasPrefix(l, "blocked_clients:") || strings.HasPrefix(l, "total_blocking_keys") {
					out = append(out, l)
				}
			}
			return strings.Join(out, " ")
		}
		ctl.Expect(mb("XGROUP", "CREATE", "xk:a", "g", "$", "MKSTREAM"), "+OK\r\n")
		ctl.Expect(mb("XGROUP", "CREATE", "xk:b", "g", "$", "MKSTREAM"), "+OK\r\n")
		var readers []*servertest.RESPClient
		for i, cmd := range []string{
			mb("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "xk:a", "xk:b", ">", ">"),
			mb("XREAD", "BLOCK", "0", "STREAMS", "xk:c", "xk:a", "$", "$"),
			mb("BLPOP", "xk:l", "0"),
		} {
			r := dialRESP(t, srv.addr)
			r.Send(cmd)
			readers = append(readers, r)
			waitFor(t, srv.name+": a reader blocked", func() bool { return strings.HasPrefix(counts(), "blocked_clients:"+strconv.Itoa(i+1)+" ") })
		}
		if got, want := counts(), "blocked_clients:3 total_blocking_keys:4 total_blocking_keys_on_nokey:2"; got != want {
			t.Errorf("%s: INFO clients: %s, want %s", srv.name, got, want)
		}
		ctl.Expect(mb("DEL", "xk:b"), ":1\r\n")
		if got := readers[0].Reply(); !strings.HasPrefix(got, "-NOGROUP") {
			t.Errorf("%s: the group reader got %q", srv.name, got)
		}
		waitFor(t, srv.name+": the group reader gone", func() bool { return strings.HasPrefix(counts(), "blocked_clients:2 ") })
		if got, want := counts(), "blocked_clients:2 total_blocking_keys:3 total_blocking_keys_on_nokey:0"; got != want {
			t.Errorf("%s: INFO clients: %s, want %s", srv.name, got, want)
		}
	}
}
