package durable

import (
	"fmt"
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// TestZSetsSurviveRestart: small (listpack) and big sorted sets are
// written through on every change and read back whole, in order, after
// a restart, and a big one evicted from memory comes back from disk.
func TestZSetsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	var z store.ZSet
	score := func(i int) float64 { return float64(i%17) / 4 }
	fill := func(s *durableStore, key string, n int) {
		t.Helper()
		if err := s.UpdateZSet([]byte(key), &z, func() error {
			for i := range n {
				z.Set([]byte(fmt.Sprint("m", i)), score(i))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	fill(s, "small", 5)
	fill(s, "big", 3000)
	if err := s.UpdateZSet([]byte("big"), &z, func() error { z.Delete([]byte("m7")); z.Set([]byte("m8"), -1); return nil }); err != nil {
		t.Fatal(err)
	}
	s.close(t)

	check := func(s *durableStore, key string, n int, enc string) {
		t.Helper()
		if err := s.ViewZSet([]byte(key), &z, func() error {
			want := n
			if key == "big" {
				want--
			}
			if z.Len() != want || z.Encoding() != enc {
				t.Fatalf("%s: Len = %d %s, want %d %s", key, z.Len(), z.Encoding(), want, enc)
			}
			for i := range n {
				m := fmt.Sprint("m", i)
				got, ok := z.Score([]byte(m))
				w := score(i)
				switch {
				case key == "big" && i == 7:
					if ok {
						t.Fatalf("%s: deleted member %s is back", key, m)
					}
					continue
				case key == "big" && i == 8:
					w = -1
				}
				if !ok || got != w {
					t.Fatalf("%s: Score(%s) = %v %v, want %v", key, m, got, ok, w)
				}
			}
			prev := -2.0
			z.Range(0, z.Len()-1, false, func(_ []byte, s float64) bool {
				if s < prev {
					t.Fatalf("%s: out of order after restart", key)
				}
				prev = s
				return true
			})
			if r, _, _ := z.Rank([]byte("m8")); key == "big" && r != 0 {
				t.Fatalf("rank of m8 = %d", r)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s = openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	check(s, "small", 5, "listpack")
	check(s, "big", 3000, "skiplist")
	for i := range 20000 {
		mustStore(t, s, fmt.Sprint("filler", i), string(make([]byte, 400)), 0, 0)
	}
	check(s, "big", 3000, "skiplist")
	s.close(t)
}
