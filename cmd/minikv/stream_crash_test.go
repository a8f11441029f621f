package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestStreamKill9 kills a durable server (kill -9, at a random moment)
// while three clients XADD to streams of their own (trimmed with MAXLEN ~
// 300) and a fourth reads one of them through a consumer group and
// acknowledges what it read, in each fsync mode; after the restart every
// stream ends at the last entry acknowledged or the one in flight, holds
// its last 300 entries without a gap, and the group's pending entries
// are entries it was delivered.
func TestStreamKill9(t *testing.T) {
	cycles := 2
	if *soak {
		cycles = 10
	}
	const keep = 300
	for _, fsync := range []string{"always", "everysec", "no"} {
		t.Run(fsync, func(t *testing.T) {
			dir := t.TempDir()
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, 2))
			const writers = 3
			var acked, sent [writers]atomic.Int64
			created := false
			for cycle := range cycles {
				cs := startCrashServer(t, dir, fsync)
				ctx := context.Background()
				if !created {
					admin := newRedisClient(cs.resp)
					if err := admin.XGroupCreateMkStream(ctx, "st0", "g", "0").Err(); err != nil {
						t.Fatal(err)
					}
					admin.Close()
					created = true
				}
				var acks atomic.Int64
				var wg sync.WaitGroup
				for w := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rdb := newRedisClient(cs.resp)
						defer rdb.Close()
						for n := acked[w].Load() + 1; ; n++ {
							sent[w].Store(n)
							_, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: fmt.Sprint("st", w), MaxLen: keep, Approx: true,
								ID: fmt.Sprintf("%d-1", n), Values: []string{"n", fmt.Sprint(n)}}).Result()
							if err != nil {
								return // the kill
							}
							acked[w].Store(n)
							acks.Add(1)
						}
					}()
				}
				wg.Add(1)
				go func() { // a consumer of st0
					defer wg.Done()
					rdb := newRedisClient(cs.resp)
					defer rdb.Close()
					for {
						res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"st0", ">"}, Count: 10, Block: -1}).Result()
						if err != nil && err != redis.Nil {
							return
						}
						for _, s := range res {
							for _, m := range s.Messages {
								if err := rdb.XAck(ctx, "st0", "g", m.ID).Err(); err != nil {
									return
								}
							}
						}
					}
				}()
				for deadline := time.Now().Add(30 * time.Second); acks.Load() < 2000; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("cycle %d: fewer than 2000 XADDs acknowledged in 30 s", cycle)
					}
				}
				time.Sleep(time.Duration(r.IntN(300)) * time.Millisecond)
				cs.kill()
				wg.Wait()

				cs = startCrashServer(t, dir, fsync)
				rdb := newRedisClient(cs.resp)
				for w := range writers {
					key := fmt.Sprint("st", w)
					msgs, err := rdb.XRange(ctx, key, "-", "+").Result()
					if err != nil {
						t.Fatal(err)
					}
					if len(msgs) == 0 {
						t.Fatalf("cycle %d: %s is empty; acknowledged %d", cycle, key, acked[w].Load())
					}
					var last int64
					fmt.Sscanf(msgs[len(msgs)-1].ID, "%d-1", &last)
					if a, s := acked[w].Load(), sent[w].Load(); last != a && last != s {
						t.Fatalf("cycle %d: %s ends at %d; acknowledged %d, sent %d", cycle, key, last, a, s)
					}
					// The last entries, without a gap: an approximate trim
					// keeps at least the last `keep`.
					for i := range min(int64(len(msgs)), keep, last) {
						m := msgs[len(msgs)-1-int(i)]
						if want := fmt.Sprintf("%d-1", last-i); m.ID != want || m.Values["n"] != fmt.Sprint(last-i) {
							t.Fatalf("cycle %d: %s's entry %d from the end is %s %v, want %s", cycle, key, i, m.ID, m.Values, want)
						}
					}
					acked[w].Store(last) // the next cycle goes on from what survived
				}
				pend, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "st0", Group: "g", Start: "-", End: "+", Count: 1000}).Result()
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range pend {
					if p.Consumer != "c" || p.RetryCount < 1 {
						t.Fatalf("cycle %d: a pending entry %+v the group never delivered so", cycle, p)
					}
				}
				rdb.Close()
				cs.kill()
			}
		})
	}
}
