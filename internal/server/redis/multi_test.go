package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
	"github.com/redis/go-redis/v9"
)

// TestWatchMultiExecCountsExactly: clients increment one counter with
// go-redis's optimistic transaction (WATCH, GET, MULTI, SET, EXEC, retry
// on a null EXEC) while others INCR it directly and write a hash in
// pipelined MULTIs: the final count is exact, so EXEC was atomic and every
// conflicting write was noticed.
func TestWatchMultiExecCountsExactly(t *testing.T) {
	rdb, _ := newGoRedis(t, false)
	ctx := context.Background()
	const watchers, plain, each = 4, 2, 100
	done := make(chan error, watchers+plain)
	retries := make(chan int, watchers)
	for range watchers {
		go func() {
			n := 0
			for range each {
				for {
					err := rdb.Watch(ctx, func(tx *redis.Tx) error {
						v, err := tx.Get(ctx, "ctr").Int()
						if err != nil && !errors.Is(err, redis.Nil) {
							return err
						}
						_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.Set(ctx, "ctr", strconv.Itoa(v+1), 0)
							p.HIncrBy(ctx, "h", "watched", 1)
							return nil
						})
						return err
					}, "ctr")
					if errors.Is(err, redis.TxFailedErr) {
						n++
						continue
					}
					if err != nil {
						done <- err
						return
					}
					break
				}
			}
			retries <- n
			done <- nil
		}()
	}
	for range plain {
		go func() {
			for range each {
				if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.Incr(ctx, "ctr")
					p.HIncrBy(ctx, "h", "plain", 1)
					return nil
				}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range watchers + plain {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for range watchers {
		total += <-retries
	}
	want := (watchers + plain) * each
	if got, _ := rdb.Get(ctx, "ctr").Int(); got != want {
		t.Fatalf("counter = %d, want %d (%d EXECs retried)", got, want, total)
	}
	h := rdb.HGetAll(ctx, "h").Val()
	if h["watched"] != fmt.Sprint(watchers*each) || h["plain"] != fmt.Sprint(plain*each) {
		t.Fatalf("hash = %v", h)
	}
	t.Logf("%d EXECs found their watched key changed and were retried", total)
}

// TestWatchSeesTheMemcachedPort: a write, touch or delete of a watched key
// through the memcached port makes EXEC answer a null array.
func TestWatchSeesTheMemcachedPort(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	r := dialRESP(t, rs.respAddr)
	c := dial(t, rs.addr)
	c.Expect("set k 0 0 1\r\na\r\n", "STORED")
	for _, mc := range []struct{ req, reply string }{
		{"set k 0 0 1\r\nb\r\n", "STORED"},
		{"touch k 1000\r\n", "TOUCHED"},
		{"incr k 1\r\n", "CLIENT_ERROR cannot increment or decrement non-numeric value"},
		{"delete k\r\n", "DELETED"},
	} {
		r.Expect(multibulk("WATCH", "k"), "+OK\r\n")
		c.Expect(mc.req, mc.reply)
		r.Expect(multibulk("MULTI"), "+OK\r\n")
		r.Expect(multibulk("SET", "k", "x"), "+QUEUED\r\n")
		want := "*-1\r\n"
		if mc.req == "incr k 1\r\n" {
			want = "*1\r\n+OK\r\n" // a failed incr changed nothing
		}
		r.Expect(multibulk("EXEC"), want)
		c.Expect("set k 0 0 1\r\na\r\n", "STORED")
	}
}

// TestTimeStandsStillInExecAndScripts: TIME inside EXEC, and inside a
// script (there or on its own), answers the instant its command began, as
// Redis 7.2 does, though a loop of 10^5 steps runs between the readings;
// pipelined scripts each get their own instant, never an earlier one.
func TestTimeStandsStillInExecAndScripts(t *testing.T) {
	rdb, _ := newGoRedis(t, false)
	ctx := context.Background()
	const slowTime = "for i = 1, 100000 do end return redis.call('time')"
	var tm, ev, tm2 *redis.Cmd
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		tm = p.Do(ctx, "TIME")
		ev = p.Do(ctx, "EVAL", slowTime, "0")
		tm2 = p.Do(ctx, "TIME")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	a, b, c := fmt.Sprint(tm.Val()), fmt.Sprint(ev.Val()), fmt.Sprint(tm2.Val())
	if a != b || b != c {
		t.Errorf("TIME in one EXEC: %s, then in a script %s, then %s", a, b, c)
	}
	same, err := rdb.Eval(ctx, "local t = redis.call('time') "+slowTime+"[2] == t[2] and 1 or 0", nil).Result()
	if err != nil || same != int64(1) {
		t.Errorf("TIME moved inside a script: %v, %v", same, err)
	}
	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for range 3 {
			p.Eval(ctx, slowTime, nil)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for i, cmd := range cmds {
		v := cmd.(*redis.Cmd).Val().([]any)
		s, _ := strconv.ParseInt(v[0].(string), 10, 64)
		us, _ := strconv.ParseInt(v[1].(string), 10, 64)
		now := s*1e6 + us
		if now <= last {
			t.Errorf("pipelined script %d: TIME %d µs, not after the previous script's %d", i, now, last)
		}
		last = now
	}
}
