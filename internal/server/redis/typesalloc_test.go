package redis

import (
	"fmt"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestTypesDispatchZeroAllocs: the data-type commands redis-benchmark
// drives, and the reads beside them, allocate nothing in the server once
// warm: a push and a pop, an add and a pop, a field set and read (a
// string and an integer value), on a small collection (one listpack) and
// a big one (a table, a quicklist), and a pop on a missing key
// (redis-benchmark's SPOP and ZPOPMIN run on one), and MSET.
func TestTypesDispatchZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector; checked in the runs without it")
	}
	rs := startRESP(t, server.Config{}, store.Config{})
	rc := dispatchConn(New(rs.srv))
	b := func(args ...string) [][]byte {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		return argv
	}
	for _, n := range []int{10, 5000} {
		h, l, s, z := fmt.Sprint("h", n), fmt.Sprint("l", n), fmt.Sprint("s", n), fmt.Sprint("z", n)
		for i := range n {
			rc.dispatch(b("HSET", h, fmt.Sprint("f", i), fmt.Sprint("value", i)))
			rc.dispatch(b("RPUSH", l, fmt.Sprint("e", i)))
			rc.dispatch(b("SADD", s, fmt.Sprint("member", i)))
			rc.dispatch(b("ZADD", z, fmt.Sprint(i), fmt.Sprint("member", i)))
		}
		rc.dispatch(b("HSET", h, "counter", "12345"))
		for _, seq := range [][][][]byte{
			{b("HSET", h, "f3", "another"), b("HGET", h, "f3"), b("HGET", h, "counter"), b("HMGET", h, "f1", "counter", "nope")},
			{b("LPUSH", l, "x"), b("RPOP", l)},
			{b("RPUSH", l, "y"), b("LPOP", l)},
			{b("LPUSH", l, "12"), b("LPOP", l)},
			{b("SPOP", s), b("SADD", s, "member77")},
			{b("ZPOPMIN", z), b("ZADD", z, "-1", "member0")},
			{b("ZPOPMAX", z), b("ZADD", z, "1e9", "top")},
			{b("SPOP", "nokey"), b("ZPOPMIN", "nokey"), b("RPOP", "nokey"), b("LPOP", "nokey")},
			{b("MSET", "k1", "v1", "k2", "v2", "k1", "v3", "k3", "value")}, // redis-benchmark's repeats one key
		} {
			for range 10 {
				for _, argv := range seq {
					rc.dispatch(argv)
				}
			}
			// Up to three tries: AllocsPerRun counts the whole process's
			// allocations, so a background goroutine (the sweeper, a
			// timer) running during a slow try on a loaded machine adds
			// to it; one made by the commands shows in every try.
			var allocs float64
			for range 3 {
				allocs = testing.AllocsPerRun(500, func() {
					for _, argv := range seq {
						rc.dispatch(argv)
					}
				})
				if allocs == 0 {
					break
				}
			}
			if allocs != 0 {
				t.Errorf("n=%d %s ...: %v allocs per round", n, seq[0][0], allocs)
			}
		}
	}
}
