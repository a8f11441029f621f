package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scriptGroupKeys is how many keys one script writes: about 60 KB of
// values per script, so the memtable (256 KB in the crash server) flushes
// every few scripts and a script's batch meets flushes and compactions.
const scriptGroupKeys = 100

// scriptWriteAll sets every key it is given to ARGV[1], one redis.call
// each: a durable server must keep all of them or none after kill -9.
const scriptWriteAll = "for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[1]) end return #KEYS"

// scriptGroup is one writer's group of keys: the last script the server
// acknowledged and the last one sent (one more while a reply is awaited).
type scriptGroup struct {
	acked, sent atomic.Int64
}

func scriptKey(g, i int) string { return fmt.Sprintf("sg%d:%d", g, i) }

// scriptToken is what every key of group g holds after its nth script;
// the padding makes the script's batch large.
func scriptToken(g int, n int64) string {
	return fmt.Sprintf("g%d-n%d-", g, n) + strings.Repeat("p", 600)
}

// TestScriptKill9AllOrNothing kills a durable server (kill -9, at a random
// moment) while four clients run scripts that each write 100 keys, in
// each fsync mode, restarts it on the same directory and checks every
// group: its 100 keys hold the same script's value (a script's writes are
// one batch on disk: all or nothing), and that script is the last one
// acknowledged or the one in flight at the kill (nothing acknowledged is
// lost).
func TestScriptKill9AllOrNothing(t *testing.T) {
	cycles := 3
	if *soak {
		cycles = 20
	}
	for _, fsync := range []string{"always", "everysec", "no"} {
		t.Run(fsync, func(t *testing.T) {
			dir := t.TempDir()
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, 1))
			groups := make([]scriptGroup, 4)
			keys := make([][]string, len(groups))
			for g := range groups {
				for i := range scriptGroupKeys {
					keys[g] = append(keys[g], scriptKey(g, i))
				}
			}
			for cycle := range cycles {
				cs := startCrashServer(t, dir, fsync)
				var acks atomic.Int64
				var wg sync.WaitGroup
				for g := range groups {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rdb := newRedisClient(cs.resp)
						defer rdb.Close()
						gr := &groups[g]
						for n := gr.acked.Load() + 1; ; n++ {
							gr.sent.Store(n)
							got, err := rdb.Eval(context.Background(), scriptWriteAll, keys[g], scriptToken(g, n)).Int64()
							if err != nil {
								return // the kill
							}
							if got != scriptGroupKeys {
								t.Errorf("group %d script %d returned %d", g, n, got)
								return
							}
							gr.acked.Store(n)
							acks.Add(1)
						}
					}()
				}
				for deadline := time.Now().Add(30 * time.Second); acks.Load() < 20; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("cycle %d: fewer than 20 scripts acknowledged in 30 s", cycle)
					}
				}
				time.Sleep(time.Duration(r.IntN(300)) * time.Millisecond)
				cs.kill()
				wg.Wait()

				cs = startCrashServer(t, dir, fsync)
				rdb := newRedisClient(cs.resp)
				for g := range groups {
					vals, err := rdb.MGet(context.Background(), keys[g]...).Result()
					if err != nil {
						t.Fatal(err)
					}
					first, _ := vals[0].(string)
					for i, v := range vals {
						if s, _ := v.(string); s != first {
							t.Fatalf("cycle %d: group %d is torn: %s = %.20q, %s = %.20q", cycle, g, keys[g][0], first, keys[g][i], s)
						}
					}
					acked, sent := groups[g].acked.Load(), groups[g].sent.Load()
					var n int64
					if first != "" {
						head, _, _ := strings.Cut(first, "-p")
						n, err = strconv.ParseInt(strings.TrimPrefix(head, fmt.Sprintf("g%d-n", g)), 10, 64)
						if err != nil || first != scriptToken(g, n) {
							t.Fatalf("cycle %d: group %d holds %.40q", cycle, g, first)
						}
					}
					if n != acked && n != sent {
						t.Fatalf("cycle %d: group %d holds script %d's writes; acknowledged %d, sent %d", cycle, g, n, acked, sent)
					}
					groups[g].acked.Store(n) // the next cycle goes on from what survived
				}
				rdb.Close()
				cs.kill()
			}
		})
	}
}
