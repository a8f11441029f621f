package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestCrashKill9Stream kills the server with SIGKILL while one client
// appends to a long stream in pipelines of 16 (XADD with an exact or an
// approximate MAXLEN, so that changes reach the stream's first node as
// well as its last), written as patches of its last whole record. After
// each restart the stream must be what the appends made up to some one
// of them: every acknowledged append, no entry out of order or with
// another value, and none that was never sent.
func TestCrashKill9Stream(t *testing.T) {
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	const capLen = 15000
	value := func(n int64) string { return fmt.Sprintf("%016x", uint64(n)*0x9E3779B97F4A7C15) }
	ctx := context.Background()
	var acked, sent int64     // appends 1..acked were acknowledged; 1..sent were sent
	var ackedNow atomic.Int64 // acked, as the appending goroutine counts it
	approx := false
	xadd := func(n int64) *redis.XAddArgs {
		return &redis.XAddArgs{Stream: "cs", MaxLen: capLen, Approx: approx, ID: strconv.FormatInt(n, 10) + "-1",
			Values: []string{"f", value(n)}}
	}
	for cycle, fsync := range []string{"always", "everysec", "no", "always"} {
		cs := startCrashServer(t, dir, fsync)
		rdb := newRedisClient(cs.resp)
		if cycle > 0 {
			checkCrashStream(t, rdb, acked, sent, capLen, value)
		}
		// The stream after the check: what it holds is the next base.
		n, err := rdb.XInfoStream(ctx, "cs").Result()
		if cycle > 0 && err != nil {
			t.Fatal(err)
		}
		last := int64(0)
		if err == nil {
			last, _ = strconv.ParseInt(n.LastGeneratedID[:len(n.LastGeneratedID)-2], 10, 64)
		}
		acked, sent = last, last
		if cycle == 0 { // a long stream first: 15 000 entries, about 200 KB
			for sent < capLen {
				pipe := rdb.Pipeline()
				for range 500 {
					sent++
					pipe.XAdd(ctx, xadd(sent))
				}
				if _, err := pipe.Exec(ctx); err != nil {
					t.Fatal(err)
				}
				acked = sent
			}
		}
		approx = cycle%2 == 1
		ackedNow.Store(acked)
		done := pipelineUntilKilled(rdb, &ackedNow, func(pipe redis.Pipeliner) {
			for range 16 {
				sent++
				pipe.XAdd(ctx, xadd(sent))
			}
		})
		killAfter(t, cs, &ackedNow, r, done)
		acked = ackedNow.Load()
		_ = rdb.Close()
		t.Logf("cycle %d (fsync %s, approx %v): killed after %d appends acknowledged, %d sent", cycle, fsync, approx, acked, sent)
	}
	cs := startCrashServer(t, dir, "always")
	rdb := newRedisClient(cs.resp)
	defer rdb.Close()
	checkCrashStream(t, rdb, acked, sent, capLen, value)
}

// pipelineUntilKilled sends pipelines that fill makes, counting each
// acknowledged command in acked, until a command fails (the server is
// killed); the channel closes then.
func pipelineUntilKilled(rdb *redis.Client, acked *atomic.Int64, fill func(redis.Pipeliner)) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			pipe := rdb.Pipeline()
			fill(pipe)
			cmds, _ := pipe.Exec(context.Background())
			for _, c := range cmds {
				if c.Err() != nil {
					return
				}
				acked.Add(1)
			}
		}
	}()
	return done
}

// killAfter kills the server of a crash test's cycle at a random moment
// once 300 more commands than at the call were acknowledged (acked, as
// the client goroutine counts them), and waits for that goroutine
// (done).
func killAfter(t *testing.T, cs *crashServer, acked *atomic.Int64, r *rand.Rand, done <-chan struct{}) {
	t.Helper()
	start := acked.Load()
	for deadline := time.Now().Add(30 * time.Second); acked.Load() < start+300; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than 300 commands acknowledged in 30 s")
		}
	}
	time.Sleep(time.Duration(r.IntN(300)) * time.Millisecond)
	cs.kill()
	<-done
}

// checkCrashStream checks that stream cs holds the last entries (at most
// capLen, at least what an approximate trim leaves) of the appends 1..k,
// for some k from acked to sent, each with its value.
func checkCrashStream(t *testing.T, rdb *redis.Client, acked, sent int64, capLen int, value func(int64) string) {
	t.Helper()
	msgs, err := rdb.XRange(context.Background(), "cs", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 || len(msgs) > capLen+100 {
		t.Fatalf("%d entries back (acknowledged %d)", len(msgs), acked)
	}
	first, err := strconv.ParseInt(msgs[0].ID[:len(msgs[0].ID)-2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	k := first + int64(len(msgs)) - 1
	if k < acked || k > sent {
		t.Fatalf("the stream ends at append %d: acknowledged %d, sent %d", k, acked, sent)
	}
	if len(msgs) < capLen && first != 1 {
		t.Fatalf("%d entries from %d: fewer than the cap, not from the first", len(msgs), first)
	}
	for i, m := range msgs {
		n := first + int64(i)
		if m.ID != strconv.FormatInt(n, 10)+"-1" || m.Values["f"] != value(n) {
			t.Fatalf("entry %d: %s %v, want append %d", i, m.ID, m.Values, n)
		}
	}
}

// TestCrashKill9List is TestCrashKill9Stream for a queue on a long list:
// pipelines of 16 LPUSHes then 8 RPOPs on a list of 20 000 elements.
func TestCrashKill9List(t *testing.T) {
	ctx := context.Background()
	elem := func(n int64) string { return fmt.Sprintf("job:%010d:%016x", n, uint64(n)*0x9E3779B97F4A7C15) }
	crashQueueCycles(t, crashQueue{
		push: func(pipe redis.Pipeliner, n int64) { pipe.LPush(ctx, "cq", elem(n)) },
		pop:  func(pipe redis.Pipeliner, _ int64) { pipe.RPop(ctx, "cq") },
		read: func(rdb *redis.Client) ([]string, error) {
			got, err := rdb.LRange(ctx, "cq", 0, -1).Result()
			slices.Reverse(got) // LPUSH: the newest first
			return got, err
		},
		elem: elem,
	})
}

// TestCrashKill9ZSet is TestCrashKill9List for a schedule on a big sorted
// set: pipelines of 16 ZADDs of later and later jobs, then 8 ZPOPMINs of
// the earliest, on a set of 20 000 members.
func TestCrashKill9ZSet(t *testing.T) {
	ctx := context.Background()
	job := func(n int64) string { return fmt.Sprintf("job:%010d", n) }
	crashQueueCycles(t, crashQueue{
		push: func(pipe redis.Pipeliner, n int64) { pipe.ZAdd(ctx, "cz", redis.Z{Score: float64(n), Member: job(n)}) },
		pop:  func(pipe redis.Pipeliner, _ int64) { pipe.ZPopMin(ctx, "cz") },
		read: func(rdb *redis.Client) ([]string, error) {
			zs, err := rdb.ZRangeWithScores(ctx, "cz", 0, -1).Result()
			got := make([]string, len(zs))
			for i, z := range zs {
				got[i] = fmt.Sprint(z.Member, "@", z.Score)
			}
			return got, err
		},
		elem: func(n int64) string { return fmt.Sprint(job(n), "@", float64(n)) },
	})
}

// TestCrashKill9Hash is TestCrashKill9List for a big hash written as
// deltas (internal/store/delta.go): pipelines of 16 HSETs of new fields,
// then 8 HDELs of the oldest, on a hash of 20 000 fields.
func TestCrashKill9Hash(t *testing.T) {
	ctx := context.Background()
	field := func(n int64) string { return fmt.Sprintf("job:%010d", n) }
	value := func(n int64) string { return fmt.Sprintf("%016x", uint64(n)*0x9E3779B97F4A7C15) }
	crashQueueCycles(t, crashQueue{
		push: func(pipe redis.Pipeliner, n int64) { pipe.HSet(ctx, "ch", field(n), value(n)) },
		pop:  func(pipe redis.Pipeliner, n int64) { pipe.HDel(ctx, "ch", field(n)) },
		read: func(rdb *redis.Client) ([]string, error) {
			m, err := rdb.HGetAll(ctx, "ch").Result()
			got := make([]string, 0, len(m))
			for f, v := range m {
				got = append(got, f+"="+v)
			}
			slices.Sort(got) // the fields' numbers are fixed-width: oldest first
			return got, err
		},
		elem: func(n int64) string { return field(n) + "=" + value(n) },
	})
}

// TestCrashKill9Set is TestCrashKill9Hash for a big set: SADDs of new
// members, SREMs of the oldest.
func TestCrashKill9Set(t *testing.T) {
	ctx := context.Background()
	member := func(n int64) string { return fmt.Sprintf("member:%010d", n) }
	crashQueueCycles(t, crashQueue{
		push: func(pipe redis.Pipeliner, n int64) { pipe.SAdd(ctx, "cs", member(n)) },
		pop:  func(pipe redis.Pipeliner, n int64) { pipe.SRem(ctx, "cs", member(n)) },
		read: func(rdb *redis.Client) ([]string, error) {
			got, err := rdb.SMembers(ctx, "cs").Result()
			slices.Sort(got)
			return got, err
		},
		elem: member,
	})
}

// crashQueue is a queue for crashQueueCycles: push queues element n's
// push, pop the pop of element n, the oldest, read returns the elements
// oldest first as elem writes them.
type crashQueue struct {
	push func(pipe redis.Pipeliner, n int64)
	pop  func(pipe redis.Pipeliner, n int64)
	read func(rdb *redis.Client) ([]string, error)
	elem func(n int64) string
}

// crashQueueCycles fills q with 20 000 elements, then kills the server
// at a random time in each fsync mode while one client sends pipelines
// of 16 pushes and 8 pops. After each restart the queue must be what
// some prefix of the commands made, at least as long as the acknowledged
// ones: elements R+1..P in order, for the P pushed and R popped by that
// prefix.
func crashQueueCycles(t *testing.T, q crashQueue) {
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	pushed, popped := []int64{0}, []int64{0} // after the first c commands
	var acked int                            // commands acknowledged
	var ackedNow atomic.Int64                // acked, as the client goroutine counts it
	for cycle, fsync := range []string{"always", "everysec", "no", "always"} {
		cs := startCrashServer(t, dir, fsync)
		rdb := newRedisClient(cs.resp)
		if cycle == 0 {
			for len(pushed) <= 20000 {
				pipe := rdb.Pipeline()
				for range 1000 {
					n := pushed[len(pushed)-1] + 1
					q.push(pipe, n)
					pushed, popped = append(pushed, n), append(popped, 0)
				}
				if _, err := pipe.Exec(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		} else {
			c := checkCrashQueue(t, rdb, q, pushed, popped, acked)
			pushed, popped = pushed[:c+1], popped[:c+1] // what the queue holds: go on from there
		}
		acked = len(pushed) - 1
		ackedNow.Store(int64(acked))
		done := pipelineUntilKilled(rdb, &ackedNow, func(pipe redis.Pipeliner) {
			for i := range 24 {
				p, o := pushed[len(pushed)-1], popped[len(popped)-1]
				if i < 16 {
					p++
					q.push(pipe, p)
				} else {
					o++
					q.pop(pipe, o)
				}
				pushed, popped = append(pushed, p), append(popped, o)
			}
		})
		killAfter(t, cs, &ackedNow, r, done)
		acked = int(ackedNow.Load())
		_ = rdb.Close()
		t.Logf("cycle %d (fsync %s): killed after %d commands acknowledged, %d sent", cycle, fsync, acked, len(pushed)-1)
	}
	cs := startCrashServer(t, dir, "always")
	rdb := newRedisClient(cs.resp)
	defer rdb.Close()
	checkCrashQueue(t, rdb, q, pushed, popped, acked)
}

// checkCrashQueue checks that q holds what the first c commands made,
// for some c from acked on, and returns c.
func checkCrashQueue(t *testing.T, rdb *redis.Client, q crashQueue, pushed, popped []int64, acked int) int {
	t.Helper()
	got, err := q.read(rdb)
	if err != nil {
		t.Fatal(err)
	}
	for c := acked; c < len(pushed); c++ {
		if int64(len(got)) != pushed[c]-popped[c] {
			continue
		}
		ok := true
		for i, v := range got {
			if v != q.elem(popped[c]+1+int64(i)) {
				ok = false
				break
			}
		}
		if ok {
			return c
		}
	}
	t.Fatalf("%d elements back (first %q) match no prefix of the commands from the %d acknowledged to the %d sent", len(got), got[:min(1, len(got))], acked, len(pushed)-1)
	return 0
}
