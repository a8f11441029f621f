package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
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
	var acked, sent int64 // appends 1..acked were acknowledged; 1..sent were sent
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
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				pipe := rdb.Pipeline()
				for range 16 {
					sent++
					pipe.XAdd(ctx, xadd(sent))
				}
				cmds, _ := pipe.Exec(ctx)
				for _, c := range cmds {
					if c.Err() != nil {
						return
					}
					acked++
				}
			}
		}()
		start := acked
		for deadline := time.Now().Add(30 * time.Second); acked < start+300; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("cycle %d: fewer than 300 appends acknowledged in 30 s", cycle)
			}
		}
		time.Sleep(time.Duration(r.IntN(300)) * time.Millisecond)
		cs.kill()
		<-done
		_ = rdb.Close()
		t.Logf("cycle %d (fsync %s, approx %v): killed after %d appends acknowledged, %d sent", cycle, fsync, approx, acked, sent)
	}
	cs := startCrashServer(t, dir, "always")
	rdb := newRedisClient(cs.resp)
	defer rdb.Close()
	checkCrashStream(t, rdb, acked, sent, capLen, value)
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
