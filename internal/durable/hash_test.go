package durable

import (
	"fmt"
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// TestHashesSurviveRestart: small (listpack) and big (table) hashes are
// written through on every change and read back whole after a restart,
// and a big hash evicted from memory is brought back from disk.
func TestHashesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	var h store.Hash
	fill := func(s *durableStore, key string, n int) {
		t.Helper()
		if err := s.UpdateHash([]byte(key), &h, func() error {
			for i := range n {
				h.Set([]byte(fmt.Sprint("f", i)), []byte(fmt.Sprint("value-", key, "-", i)))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	fill(s, "small", 5)
	fill(s, "big", 3000)
	if err := s.UpdateHash([]byte("big"), &h, func() error { h.Delete([]byte("f7")); return nil }); err != nil {
		t.Fatal(err)
	}
	s.close(t)

	check := func(s *durableStore, key string, n int, gone string) {
		t.Helper()
		if err := s.ViewHash([]byte(key), &h, func() error {
			want := n
			if gone != "" {
				want--
			}
			if h.Len() != want {
				t.Fatalf("%s: Len = %d, want %d", key, h.Len(), want)
			}
			for i := range n {
				f := fmt.Sprint("f", i)
				v, ok := h.Get([]byte(f))
				if f == gone {
					if ok {
						t.Fatalf("%s: deleted field %s is back", key, f)
					}
					continue
				}
				if w := fmt.Sprint("value-", key, "-", i); !ok || string(v) != w {
					t.Fatalf("%s: Get(%s) = %q %v, want %q", key, f, v, ok, w)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s = openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	check(s, "small", 5, "")
	check(s, "big", 3000, "f7")
	if it, ok := s.Peek([]byte("big")); !ok || it.Kind != store.KindHash {
		t.Fatalf("Peek(big) = %+v %v", it, ok)
	}
	// Push the big hash out of memory with strings, then read it again.
	for i := range 20000 {
		mustStore(t, s, fmt.Sprint("filler", i), string(make([]byte, 400)), 0, 0)
	}
	check(s, "big", 3000, "f7")
	s.close(t)
}
