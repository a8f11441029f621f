package redis

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Blocking commands with real clients: go-redis (RESP3 and RESP2) and
// redis-py. No test waits a fixed time for an event: each polls the
// server's blocked-client count (INFO clients, or the Protocol's own) until
// the state it needs is there, and the sleeps below only give a timeout a
// chance to fire that must not.

// hangGuard bounds every wait for a state that should come: it only turns
// a hang into a failure.
const hangGuard = 30 * time.Second

// waitBlocked polls until n clients are blocked.
func waitBlocked(t testing.TB, rdb *redis.Client, n int) {
	t.Helper()
	want := "blocked_clients:" + strconv.Itoa(n) + "\r\n"
	for deadline := time.Now().Add(hangGuard); ; time.Sleep(time.Millisecond) {
		info, err := rdb.Info(context.Background(), "clients").Result()
		if err != nil {
			t.Fatalf("INFO clients: %v", err)
		}
		if strings.Contains(info, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never %d blocked clients: %s", n, info)
		}
	}
}

// goRedisPair returns a fresh server and a go-redis client factory for it.
func goRedisPair(t *testing.T, cfg server.Config, resp2 bool) (*respServer, func() *redis.Client) {
	t.Helper()
	rs := startRESP(t, cfg, store.Config{})
	return rs, func() *redis.Client {
		opt := &redis.Options{Addr: rs.respAddr, MaxRetries: -1, PoolSize: 1}
		if resp2 {
			opt.Protocol = 2
		}
		c := redis.NewClient(opt)
		t.Cleanup(func() { c.Close() })
		return c
	}
}

// result is what a blocking call in a goroutine returned.
type result struct {
	v   any
	err error
}

func TestBlockingGoRedis(t *testing.T) {
	for _, resp2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp2=%v", resp2), func(t *testing.T) {
			_, client := goRedisPair(t, server.Config{}, resp2)
			ctx := context.Background()
			ctl := client()

			// BLPOP woken by a push from another connection.
			waiter := client()
			ch := make(chan result, 1)
			go func() { v, err := waiter.BLPop(ctx, 0, "g:list").Result(); ch <- result{v, err} }()
			waitBlocked(t, ctl, 1)
			if err := ctl.RPush(ctx, "g:list", "hello").Err(); err != nil {
				t.Fatal(err)
			}
			if r := <-ch; r.err != nil || fmt.Sprint(r.v) != "[g:list hello]" {
				t.Fatalf("BLPOP = %v, %v", r.v, r.err)
			}

			// BZPOPMIN woken by ZADD, the score as a float.
			go func() { v, err := waiter.BZPopMin(ctx, 0, "g:nope", "g:zset").Result(); ch <- result{v, err} }()
			waitBlocked(t, ctl, 1)
			ctl.ZAdd(ctx, "g:zset", redis.Z{Score: 2.5, Member: "b"}, redis.Z{Score: 1.5, Member: "a"})
			if r := <-ch; r.err != nil || fmt.Sprint(r.v) != "&{{1.5 a} g:zset}" {
				t.Fatalf("BZPOPMIN = %v, %v", r.v, r.err)
			}
			if v, err := waiter.BZPopMax(ctx, time.Second, "g:zset").Result(); err != nil || v.Member != "b" || v.Score != 2.5 {
				t.Fatalf("BZPOPMAX at once = %v, %v", v, err)
			}

			// BLMOVE into a list another BLPOP waits on.
			w2 := client()
			ch2 := make(chan result, 1)
			go func() {
				v, err := waiter.BLMove(ctx, "g:src", "g:dst", "LEFT", "RIGHT", 0).Result()
				ch <- result{v, err}
			}()
			waitBlocked(t, ctl, 1)
			go func() { v, err := w2.BLPop(ctx, 0, "g:dst").Result(); ch2 <- result{v, err} }()
			waitBlocked(t, ctl, 2)
			ctl.RPush(ctx, "g:src", "m1", "m2")
			if r := <-ch; r.err != nil || r.v != "m1" {
				t.Fatalf("BLMOVE = %v, %v", r.v, r.err)
			}
			if r := <-ch2; r.err != nil || fmt.Sprint(r.v) != "[g:dst m1]" {
				t.Fatalf("BLPOP after BLMOVE = %v, %v", r.v, r.err)
			}

			// BLMPOP and BZMPOP with COUNT.
			go func() {
				k, v, err := waiter.BLMPop(ctx, 0, "right", 2, "g:m1", "g:m2").Result()
				ch <- result{k + " " + fmt.Sprint(v), err}
			}()
			waitBlocked(t, ctl, 1)
			ctl.RPush(ctx, "g:m2", "1", "2", "3")
			if r := <-ch; r.err != nil || r.v != "g:m2 [3 2]" {
				t.Fatalf("BLMPOP = %v, %v", r.v, r.err)
			}
			go func() {
				k, v, err := waiter.BZMPop(ctx, 0, "max", 5, "g:zm").Result()
				ch <- result{k + " " + fmt.Sprint(v), err}
			}()
			waitBlocked(t, ctl, 1)
			ctl.ZAdd(ctx, "g:zm", redis.Z{Score: 1, Member: "x"}, redis.Z{Score: 2, Member: "y"})
			if r := <-ch; r.err != nil || r.v != "g:zm [{2 y} {1 x}]" {
				t.Fatalf("BZMPOP = %v, %v", r.v, r.err)
			}
			if v, err := waiter.BRPopLPush(ctx, "g:m2", "g:m3", time.Second).Result(); err != nil || v != "1" {
				t.Fatalf("BRPOPLPUSH at once = %v, %v", v, err)
			}

			// A timeout is redis.Nil. (go-redis rounds a timeout up to a
			// second; Do sends it as given.)
			for _, cmd := range [][]any{{"BLPOP", "g:empty", "0.02"}, {"BZPOPMIN", "g:empty", "0.02"},
				{"BLMOVE", "g:empty", "g:d", "LEFT", "LEFT", "0.02"}, {"BRPOPLPUSH", "g:empty", "g:d", "0.02"},
				{"BLMPOP", "0.02", "1", "g:empty", "LEFT"}, {"BZMPOP", "0.02", "1", "g:empty", "MAX"}} {
				if v, err := waiter.Do(ctx, cmd...).Result(); err != redis.Nil {
					t.Fatalf("%v: %v, %v; want redis.Nil", cmd, v, err)
				}
			}
			if _, err := waiter.BLPop(ctx, time.Second, "g:empty").Result(); err != redis.Nil {
				t.Fatalf("BLPOP timeout: %v, want redis.Nil", err)
			}

			// Inside MULTI a blocking command does not block.
			cmds, err := waiter.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.BLPop(ctx, 0, "g:empty")
				p.RPush(ctx, "g:tx", "a")
				p.BLPop(ctx, 0, "g:tx")
				return nil
			})
			if !errors.Is(err, redis.Nil) || len(cmds) != 3 || fmt.Sprint(cmds[2].(*redis.StringSliceCmd).Val()) != "[g:tx a]" {
				t.Fatalf("MULTI BLPOP: %v %v", cmds, err)
			}
			waitBlocked(t, ctl, 0)
		})
	}
}

// TestBlockingFIFO checks that waiters on a key are served in the order
// they blocked, one element each, over several pushes.
func TestBlockingFIFO(t *testing.T) {
	_, client := goRedisPair(t, server.Config{}, false)
	ctx := context.Background()
	ctl := client()
	const n = 8
	chans := make([]chan result, n)
	for i := range n {
		c := client()
		chans[i] = make(chan result, 1)
		keys := []string{"fifo:k"}
		if i%2 == 1 {
			keys = []string{"fifo:other", "fifo:k"} // waiting on two keys changes nothing
		}
		go func() { v, err := c.BLPop(ctx, 0, keys...).Result(); chans[i] <- result{v, err} }()
		waitBlocked(t, ctl, i+1)
	}
	for i := range n {
		if err := ctl.RPush(ctx, "fifo:k", "e"+strconv.Itoa(i)).Err(); err != nil {
			t.Fatal(err)
		}
		r := <-chans[i]
		if r.err != nil || fmt.Sprint(r.v) != fmt.Sprintf("[fifo:k e%d]", i) {
			t.Fatalf("waiter %d got %v, %v", i, r.v, r.err)
		}
	}
	// One push of several elements serves several waiters, in order.
	for i := range 3 {
		c := client()
		chans[i] = make(chan result, 1)
		go func() { v, err := c.BRPop(ctx, 0, "fifo:k").Result(); chans[i] <- result{v, err} }()
		waitBlocked(t, ctl, i+1)
	}
	ctl.RPush(ctx, "fifo:k", "a", "b", "c", "d")
	for i, want := range []string{"d", "c", "b"} {
		if r := <-chans[i]; r.err != nil || fmt.Sprint(r.v) != "[fifo:k "+want+"]" {
			t.Fatalf("waiter %d got %v, %v", i, r.v, r.err)
		}
	}
	if v := ctl.LRange(ctx, "fifo:k", 0, -1).Val(); fmt.Sprint(v) != "[a]" {
		t.Fatalf("left in the list: %v", v)
	}
}

// rawBlock sends a blocking command on a raw connection and returns it.
func rawBlock(t *testing.T, addr string, args ...string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := fmt.Fprint(nc, multibulk(args...)); err != nil {
		t.Fatal(err)
	}
	return nc, bufio.NewReader(nc)
}

// TestBlockingDisconnectLosesNothing: a waiter whose client has gone is
// never handed an element; the push after it stays in the list.
func TestBlockingDisconnectLosesNothing(t *testing.T) {
	rs, client := goRedisPair(t, server.Config{}, false)
	ctx := context.Background()
	ctl := client()
	for _, cmd := range [][]string{
		{"BLPOP", "dc:k", "0"}, {"BLMOVE", "dc:k", "dc:d", "LEFT", "RIGHT", "0"}, {"BLMPOP", "0", "1", "dc:k", "LEFT", "COUNT", "9"},
		{"BZPOPMIN", "dc:z", "0"}, {"BZMPOP", "0", "1", "dc:z", "MAX"},
	} {
		nc, _ := rawBlock(t, rs.respAddr, cmd...)
		waitBlocked(t, ctl, 1)
		nc.Close()
		waitBlocked(t, ctl, 0)
		ctl.RPush(ctx, "dc:k", "kept")
		ctl.ZAdd(ctx, "dc:z", redis.Z{Score: 1, Member: "kept"})
		if v := ctl.LRange(ctx, "dc:k", 0, -1).Val(); fmt.Sprint(v) != "[kept]" {
			t.Fatalf("%v: the list holds %v after its waiter left", cmd, v)
		}
		if v := ctl.ZRange(ctx, "dc:z", 0, -1).Val(); fmt.Sprint(v) != "[kept]" {
			t.Fatalf("%v: the sorted set holds %v after its waiter left", cmd, v)
		}
		if n := ctl.Exists(ctx, "dc:d").Val(); n != 0 {
			t.Fatalf("%v: BLMOVE's destination exists", cmd)
		}
		ctl.Del(ctx, "dc:k", "dc:z")
	}
}

func TestBlockingClientUnblock(t *testing.T) {
	for _, resp2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp2=%v", resp2), func(t *testing.T) {
			_, client := goRedisPair(t, server.Config{}, resp2)
			ctx := context.Background()
			ctl, waiter := client(), client()
			id := waiter.ClientID(ctx).Val()
			ch := make(chan result, 1)

			go func() { v, err := waiter.BLPop(ctx, 0, "ub:k").Result(); ch <- result{v, err} }()
			waitBlocked(t, ctl, 1)
			if n, err := ctl.ClientUnblock(ctx, id).Result(); n != 1 || err != nil {
				t.Fatalf("CLIENT UNBLOCK = %d, %v", n, err)
			}
			if r := <-ch; r.err != redis.Nil {
				t.Fatalf("unblocked (timeout) BLPOP = %v, %v; want redis.Nil", r.v, r.err)
			}

			go func() { v, err := waiter.BZPopMax(ctx, 0, "ub:z").Result(); ch <- result{v, err} }()
			waitBlocked(t, ctl, 1)
			if n, err := ctl.ClientUnblockWithError(ctx, id).Result(); n != 1 || err != nil {
				t.Fatalf("CLIENT UNBLOCK ERROR = %d, %v", n, err)
			}
			if r := <-ch; r.err == nil || r.err.Error() != "UNBLOCKED client unblocked via CLIENT UNBLOCK" {
				t.Fatalf("unblocked (error) BZPOPMAX = %v, %v", r.v, r.err)
			}
			if n := ctl.ClientUnblock(ctx, id).Val(); n != 0 {
				t.Fatalf("CLIENT UNBLOCK of a client not blocked = %d", n)
			}
			// The connection is in step: it serves commands as before.
			if v, err := waiter.Ping(ctx).Result(); v != "PONG" || err != nil {
				t.Fatalf("PING after unblock = %q, %v", v, err)
			}
			ctl.RPush(ctx, "ub:k", "a")
			if v := ctl.LRange(ctx, "ub:k", 0, -1).Val(); fmt.Sprint(v) != "[a]" {
				t.Fatalf("unblocked waiter took an element: %v", v)
			}
		})
	}
}

// TestBlockingShutdown: Shutdown ends blocked commands at once (they are
// closed without a reply, as when redis-server exits) and loses nothing.
func TestBlockingShutdown(t *testing.T) {
	rs, client := goRedisPair(t, server.Config{ShutdownTimeout: hangGuard}, false)
	ctl := client()
	var conns []*bufio.Reader
	for i := range 4 {
		_, br := rawBlock(t, rs.respAddr, "BLPOP", "sd:k"+strconv.Itoa(i), "0")
		conns = append(conns, br)
		waitBlocked(t, ctl, i+1)
	}
	_, br := rawBlock(t, rs.respAddr, "BZPOPMIN", "sd:z", "100")
	conns = append(conns, br)
	waitBlocked(t, ctl, 5)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := rs.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with blocked clients: %v", err)
	}
	for i, br := range conns {
		if r, err := readRESPReply(br); err == nil {
			t.Errorf("blocked client %d got %q at shutdown, want the connection closed", i, r)
		}
	}
}

// TestBlockingTimeoutsOfTheConnection: the idle timeout does not close a
// blocked client (Redis exempts them), the command timeout does not cut
// a block short, and after the block both apply again.
func TestBlockingTimeoutsOfTheConnection(t *testing.T) {
	const short = 100 * time.Millisecond
	rs, client := goRedisPair(t, server.Config{IdleTimeout: short, CommandTimeout: short}, false)
	ctx := context.Background()
	ctl := client()
	nc, br := rawBlock(t, rs.respAddr, "BLPOP", "to:k", "0")
	waitBlocked(t, ctl, 1)
	time.Sleep(5 * short) // both timeouts would have closed an idle or stuck connection
	// The control connection was idle: it may have been closed, so the
	// push goes on a new one.
	if err := client().RPush(ctx, "to:k", "v").Err(); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(hangGuard))
	if r, err := readRESPReply(br); err != nil || r != "*2\r\n$4\r\nto:k\r\n$1\r\nv\r\n" {
		t.Fatalf("blocked past the idle and command timeouts: %q, %v", r, err)
	}
	// A block's own timeout longer than both: a null array, not a close.
	fmt.Fprint(nc, multibulk("BLPOP", "to:k", "0.5"))
	if r, err := readRESPReply(br); err != nil || r != "*-1\r\n" {
		t.Fatalf("BLPOP with a timeout beyond the command timeout: %q, %v", r, err)
	}
	// Idle again: the idle timeout closes it now.
	if r, err := readRESPReply(br); err == nil {
		t.Fatalf("idle connection not closed after its block: got %q", r)
	}
}

// TestBlockingPipelineBehindABlock: commands sent behind a blocking one
// are kept (never lost, never run early) and served after its reply; so
// are more than a read buffer's worth of them.
func TestBlockingPipelineBehindABlock(t *testing.T) {
	rs, client := goRedisPair(t, server.Config{}, false)
	ctx := context.Background()
	ctl := client()
	nc, err := net.Dial("tcp", rs.respAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	const n = 3000 // ~ 100 KiB of INCRs: more than the read buffer holds
	var b strings.Builder
	b.WriteString(multibulk("BLPOP", "pl:k", "0"))
	for range n {
		b.WriteString(multibulk("INCR", "pl:counter"))
	}
	go func() { _, _ = fmt.Fprint(nc, b.String()) }()
	waitBlocked(t, ctl, 1)
	if v, _ := ctl.Get(ctx, "pl:counter").Result(); v != "" {
		t.Fatalf("a command behind the blocked one ran early: counter %q", v)
	}
	ctl.RPush(ctx, "pl:k", "go")
	br := bufio.NewReader(nc)
	_ = nc.SetReadDeadline(time.Now().Add(hangGuard))
	if r, err := readRESPReply(br); err != nil || r != "*2\r\n$4\r\npl:k\r\n$2\r\ngo\r\n" {
		t.Fatalf("BLPOP = %q, %v", r, err)
	}
	for i := 1; i <= n; i++ {
		if r, err := readRESPReply(br); err != nil || r != ":"+strconv.Itoa(i)+"\r\n" {
			t.Fatalf("INCR %d = %q, %v", i, r, err)
		}
	}
}

// TestBlockingStress: producers push (LPUSH, RPUSH, in MULTI, ZADD)
// while consumers pop with every blocking command; every element is
// delivered exactly once and nothing is left.
func TestBlockingStress(t *testing.T) {
	rs, client := goRedisPair(t, server.Config{}, false)
	ctx := context.Background()
	ctl := client()
	const producers, perProducer, consumers = 4, 400, 8
	lists := []string{"st:a", "st:b", "st:c"}
	const zkey = "st:z"

	var mu sync.Mutex
	got := map[string]int{}
	take := func(v string) {
		mu.Lock()
		got[v]++
		mu.Unlock()
	}
	var cwg sync.WaitGroup
	for i := range consumers {
		c := redis.NewClient(&redis.Options{Addr: rs.respAddr, MaxRetries: -1, PoolSize: 1})
		defer c.Close()
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for {
				var vals []string
				switch i % 4 {
				case 0:
					v, err := c.BLPop(ctx, 0, lists...).Result()
					if err != nil {
						t.Error(err)
						return
					}
					vals = v[1:]
				case 1:
					_, v, err := c.BLMPop(ctx, 0, "right", 3, lists...).Result()
					if err != nil {
						t.Error(err)
						return
					}
					vals = v
				case 2:
					v, err := c.BLMove(ctx, lists[i%len(lists)], "st:moved"+strconv.Itoa(i), "LEFT", "LEFT", 0).Result()
					if err != nil {
						t.Error(err)
						return
					}
					if strings.HasPrefix(v, "stop") {
						return
					}
					continue // counted where it went, at the end
				case 3:
					z, err := c.BZPopMin(ctx, 0, zkey).Result()
					if err != nil {
						t.Error(err)
						return
					}
					vals = []string{z.Member.(string)}
				}
				stop := false
				for _, v := range vals {
					if strings.HasPrefix(v, "stop") {
						stop = true
						continue
					}
					take(v)
				}
				if stop {
					return
				}
			}
		}()
	}
	var pwg sync.WaitGroup
	for p := range producers {
		c := redis.NewClient(&redis.Options{Addr: rs.respAddr, MaxRetries: -1, PoolSize: 1})
		defer c.Close()
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for j := 0; j < perProducer; {
				v := func(k int) string { return "p" + strconv.Itoa(p) + "-" + strconv.Itoa(k) }
				var err error
				switch j % 5 {
				case 0:
					err = c.LPush(ctx, lists[j%len(lists)], v(j)).Err()
					j++
				case 1:
					err = c.RPush(ctx, lists[j%len(lists)], v(j), v(j+1)).Err()
					j += 2
				case 2:
					_, err = c.TxPipelined(ctx, func(pl redis.Pipeliner) error {
						pl.RPush(ctx, lists[0], v(j))
						pl.LPush(ctx, lists[1], v(j+1))
						return nil
					})
					j += 2
				default:
					err = c.ZAdd(ctx, zkey, redis.Z{Score: float64(j), Member: v(j)}).Err()
					j++
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	pwg.Wait()
	want := producers * perProducer
	for deadline := time.Now().Add(hangGuard); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		moved := 0
		for i := range consumers {
			moved += int(ctl.LLen(ctx, "st:moved"+strconv.Itoa(i)).Val())
		}
		if n+moved >= want || time.Now().After(deadline) {
			break
		}
	}
	// Stop the consumers: "stop" elements wherever they wait, until all
	// are gone (one may take the stop meant for another).
	done := make(chan struct{})
	go func() { cwg.Wait(); close(done) }()
	for round := 0; ; round++ {
		for _, k := range lists {
			ctl.RPush(ctx, k, "stop-"+strconv.Itoa(round))
		}
		ctl.ZAdd(ctx, zkey, redis.Z{Score: 1e9, Member: "stop-" + strconv.Itoa(round)})
		select {
		case <-done:
		case <-time.After(20 * time.Millisecond):
			if round < 1000 {
				continue
			}
			t.Fatal("consumers never stopped")
		}
		break
	}
	for i := range consumers {
		for _, v := range ctl.LRange(ctx, "st:moved"+strconv.Itoa(i), 0, -1).Val() {
			if !strings.HasPrefix(v, "stop") {
				take(v)
			}
		}
	}
	for p := range producers {
		for j := range perProducer {
			v := "p" + strconv.Itoa(p) + "-" + strconv.Itoa(j)
			if got[v] != 1 {
				t.Errorf("%s delivered %d times", v, got[v])
			}
		}
	}
	if len(got) != want {
		t.Errorf("%d distinct elements delivered, want %d", len(got), want)
	}
	// Stops left over (a consumer got another's stop and left first)
	// are all that may remain.
	for _, k := range append(slices.Clone(lists), zkey) {
		var rest []string
		if k == zkey {
			rest = ctl.ZRange(ctx, k, 0, -1).Val()
		} else {
			rest = ctl.LRange(ctx, k, 0, -1).Val()
		}
		for _, v := range rest {
			if !strings.HasPrefix(v, "stop") {
				t.Errorf("%s left in %s", v, k)
			}
		}
	}
}

// TestBlockingRedisPy runs redis-py's blpop against MiniKV: woken by a
// push from another client, and timing out with None.
func TestBlockingRedisPy(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(py, "-c", "import redis").Run()
	}
	if err != nil {
		if os.Getenv("MINIKV_REQUIRE_PEERS") == "1" {
			t.Fatalf("python3 with redis-py not found and MINIKV_REQUIRE_PEERS=1: %v", err)
		}
		t.Skipf("python3 with redis-py not available: %v", err)
	}
	rs := startRESP(t, server.Config{}, store.Config{})
	host, port, _ := net.SplitHostPort(rs.respAddr)
	script := `
import sys, threading, time, redis
host, port = sys.argv[1], int(sys.argv[2])
for proto in (2, 3):
    r = redis.Redis(host=host, port=port, protocol=proto)
    ctl = redis.Redis(host=host, port=port, protocol=proto)
    k = "py:%d" % proto
    out = {}
    th = threading.Thread(target=lambda: out.update(v=r.blpop([k + ":other", k], timeout=0)))
    th.start()
    for _ in range(30000):
        if ctl.info("clients")["blocked_clients"] == 1:
            break
        time.sleep(0.001)
    else:
        sys.exit("never blocked")
    ctl.rpush(k, "hello")
    th.join(30)
    assert out.get("v") in ([k.encode(), b"hello"], (k.encode(), b"hello")), out
    assert r.blpop([k], timeout=0.05) is None
    assert r.bzpopmin(k + ":z", timeout=0.05) is None
    ctl.zadd(k + ":z", {"m": 1.5})
    assert r.bzpopmin(k + ":z", timeout=1) in ((k.encode() + b":z", b"m", 1.5), [k.encode() + b":z", b"m", 1.5])
    assert r.brpoplpush(k + ":none", k + ":d", timeout=0.05) is None
print("ok")
`
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", script, host, port).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("redis-py: %v\n%s", err, out)
	}
}

// TestBlockingWakersInTable: every command that can give a list or a
// sorted set elements is a write command with keys in the table, which is
// what has the pushers look for blocked clients.
func TestBlockingWakersInTable(t *testing.T) {
	for _, name := range []string{"lpush", "rpush", "lpushx", "rpushx", "linsert", "lmove", "rpoplpush", "blmove", "brpoplpush",
		"zadd", "zincrby", "zunionstore", "zinterstore", "zdiffstore", "zrangestore", "sort", "rename", "renamenx", "copy", "restore"} {
		c := respCommands[name]
		if c == nil || !c.write {
			t.Errorf("%s is missing or not a write command: its pushes would not wake blocked clients", name)
			continue
		}
		if c.firstKey <= 0 && c.keysOf == nil {
			t.Errorf("%s has no keys for the pushers' look-up", name)
		}
	}
}

// TestBlockingClientListAndKill: CLIENT LIST shows a blocked client with
// flags=b and cmd=blpop; CLIENT KILL ends its wait (also when its read
// buffer is full of pipelined commands) and nothing is popped for it.
func TestBlockingClientListAndKill(t *testing.T) {
	rs, client := goRedisPair(t, server.Config{}, false)
	ctx := context.Background()
	ctl := client()
	for _, pipelined := range []int{0, 3000} {
		nc, err := net.Dial("tcp", rs.respAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		var b strings.Builder
		b.WriteString(multibulk("CLIENT", "ID"))
		b.WriteString(multibulk("BLPOP", "kl:k", "0"))
		for range pipelined {
			b.WriteString(multibulk("INCR", "kl:counter"))
		}
		go func() { _, _ = fmt.Fprint(nc, b.String()) }()
		br := bufio.NewReader(nc)
		_ = nc.SetReadDeadline(time.Now().Add(hangGuard))
		r, err := readRESPReply(br)
		if err != nil {
			t.Fatal(err)
		}
		id := strings.TrimSpace(strings.TrimPrefix(r, ":"))
		waitBlocked(t, ctl, 1)
		list := ctl.ClientList(ctx).Val()
		var line string
		for _, l := range strings.Split(list, "\n") {
			if strings.HasPrefix(l, "id="+id+" ") {
				line = l
			}
		}
		if !strings.Contains(line, " flags=b ") || !strings.Contains(line, " cmd=blpop ") {
			t.Fatalf("blocked client's line: %q\n%s", line, list)
		}
		n, _ := strconv.ParseInt(id, 10, 64)
		if killed := ctl.ClientKillByFilter(ctx, "ID", id).Val(); killed != 1 {
			t.Fatalf("CLIENT KILL ID %d = %d", n, killed)
		}
		waitBlocked(t, ctl, 0)
		if r, err := readRESPReply(br); err == nil {
			t.Fatalf("killed blocked client got %q", r)
		}
		ctl.RPush(ctx, "kl:k", "kept")
		if v := ctl.LRange(ctx, "kl:k", 0, -1).Val(); fmt.Sprint(v) != "[kept]" {
			t.Fatalf("after the kill the list holds %v", v)
		}
		if v, _ := ctl.Get(ctx, "kl:counter").Result(); v != "" {
			t.Fatalf("commands behind the killed block ran: counter %q", v)
		}
		ctl.Del(ctx, "kl:k")
	}
}
