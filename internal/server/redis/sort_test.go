package redis

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestSortRandomDifferential sends the same random SORT and SORT_RO
// commands, over random lists and sorted sets with weight strings and
// hashes for BY and GET, to redis-server and MiniKV and compares every
// reply byte for byte. Cases whose order Redis leaves undefined (ALPHA BY
// with equal or missing BY values: qsort is not stable) are not made:
// with ALPHA, every BY value exists and differs.
func TestSortRandomDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MemoryLimit: 64 << 20})
	rcl, mcl := dialRESP(t, redisAddr), dialRESP(t, rs.respAddr)
	do := func(args ...string) {
		t.Helper()
		want, got := rcl.Do(args...), mcl.Do(args...)
		if want != got {
			t.Fatalf("%q:\nredis  %q\nminikv %q", args, want, got)
		}
	}
	r := rand.New(rand.NewPCG(15, 0))
	words := []string{"a", "b", "ab", "B", "10", "9", "-1", "1.5", "1e3", " 7", "inf", "x y", "", "0x1A", "-0", "007"}
	elem := func() string {
		if r.IntN(3) == 0 {
			return words[r.IntN(len(words))]
		}
		return strconv.Itoa(r.IntN(40) - 10)
	}
	for round := range 150 {
		do("FLUSHALL")
		n := r.IntN(12)
		var elems []string
		push := []string{"RPUSH", "l"}
		zadd := []string{"ZADD", "z"}
		seen := map[string]bool{}
		for range n {
			e := elem()
			push = append(push, e)
			elems = append(elems, e)
			if !seen[e] {
				seen[e] = true
				zadd = append(zadd, strconv.Itoa(r.IntN(5)), e)
			}
		}
		if n > 0 {
			do(push...)
			do(zadd...)
		}
		// Weights: numeric for some, all distinct for ALPHA BY.
		allWeights := r.IntN(2) == 0
		for i, e := range elems {
			if allWeights || r.IntN(2) == 0 {
				do("SET", "w_"+e, strconv.Itoa(r.IntN(6)))
			}
			do("SET", "u_"+e, "u"+strconv.Itoa(1000+i*7919%997))
			do("HSET", "h_"+e, "f", strconv.Itoa(r.IntN(9)), "g", "g"+e)
		}
		for range 8 {
			cmd := "SORT"
			if r.IntN(3) == 0 {
				cmd = "SORT_RO"
			}
			key := "l"
			if r.IntN(3) == 0 {
				key = "z"
			}
			args := []string{cmd, key}
			alpha := r.IntN(3) == 0
			switch r.IntN(5) {
			case 0:
				args = append(args, "BY", "nosort")
			case 1:
				if alpha {
					args = append(args, "BY", "u_*")
				} else {
					args = append(args, "BY", "w_*")
				}
			case 2:
				if !alpha {
					args = append(args, "BY", "h_*->f")
				}
			}
			if alpha {
				args = append(args, "ALPHA")
			}
			if r.IntN(2) == 0 {
				args = append(args, []string{"ASC", "DESC"}[r.IntN(2)])
			}
			if r.IntN(3) == 0 {
				args = append(args, "LIMIT", strconv.Itoa(r.IntN(8)-2), strconv.Itoa(r.IntN(8)-2))
			}
			for range r.IntN(3) {
				args = append(args, "GET", []string{"#", "w_*", "h_*->g", "nope_*", "h_*->nope"}[r.IntN(5)])
			}
			if cmd == "SORT" && r.IntN(4) == 0 {
				args = append(args, "STORE", "dst")
				do(args...)
				do("LRANGE", "dst", "0", "-1")
				do("EXISTS", "dst")
				continue
			}
			do(args...)
		}
		if t.Failed() {
			t.Fatalf("round %d", round)
		}
	}
}
