package store

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// BenchmarkZSetBig: ZADD of new members, ZSCORE, ZRANK and a short
// ZRANGE on a sorted set of a million members.
func BenchmarkZSetBig(b *testing.B) {
	s := newTestStore(b, Config{MemoryLimit: 1 << 30})
	key := []byte("z")
	var z ZSet
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	_ = s.UpdateZSet(key, &z, func() error {
		for i := range n {
			z.Set([]byte("member:"+strconv.Itoa(i)), float64(rng.IntN(1_000_000)))
		}
		return nil
	})
	m := make([][]byte, 1024)
	for i := range m {
		m[i] = []byte(fmt.Sprint("member:", rng.IntN(n)))
	}
	b.Run("zadd-update", func(b *testing.B) {
		for i := range b.N {
			_ = s.UpdateZSet(key, &z, func() error { z.Set(m[i%len(m)], float64(i%1_000_000)); return nil })
		}
	})
	b.Run("zscore", func(b *testing.B) {
		for i := range b.N {
			_ = s.ViewZSet(key, &z, func() error { z.Score(m[i%len(m)]); return nil })
		}
	})
	b.Run("zrank", func(b *testing.B) {
		for i := range b.N {
			_ = s.ViewZSet(key, &z, func() error { z.Rank(m[i%len(m)]); return nil })
		}
	})
	b.Run("zrange-10", func(b *testing.B) {
		for i := range b.N {
			_ = s.ViewZSet(key, &z, func() error {
				r := (i * 7919) % (n - 10)
				z.Range(r, r+9, false, func([]byte, float64) bool { return true })
				return nil
			})
		}
	})
}
