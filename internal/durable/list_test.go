package durable

import (
	"fmt"
	"slices"
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// TestListsSurviveRestart: small (listpack) and big (quicklist) lists are
// written through on every change and read back whole, in order, after a
// restart; a big list evicted from memory is brought back from disk, and
// one emptied before the restart stays gone.
func TestListsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	var l store.List
	models := map[string][]string{}
	update := func(s *durableStore, key string, fn func(model []string) []string) {
		t.Helper()
		if err := s.UpdateList([]byte(key), &l, func() error { models[key] = fn(models[key]); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	push := func(s *durableStore, key string, n int) {
		update(s, key, func(m []string) []string {
			for i := range n {
				v := fmt.Sprint("value-", key, "-", i)
				if i%3 == 0 {
					v = fmt.Sprint(i * 1000) // an integer entry
				}
				if i%2 == 0 {
					l.Push(true, []byte(v))
					m = append([]string{v}, m...)
				} else {
					l.Push(false, []byte(v))
					m = append(m, v)
				}
			}
			return m
		})
	}
	push(s, "small", 5)
	push(s, "big", 5000)
	update(s, "big", func(m []string) []string {
		l.Pop(true, nil)
		l.Set(100, []byte("changed"))
		l.Delete(2000, 10)
		m = m[1:]
		m[100] = "changed"
		return slices.Delete(m, 2000, 2010)
	})
	push(s, "gone", 3000)
	update(s, "gone", func([]string) []string { l.Delete(0, l.Len()); return nil })
	s.close(t)

	check := func(s *durableStore, key string) {
		t.Helper()
		want := models[key]
		if err := s.ViewList([]byte(key), &l, func() error {
			var got []string
			l.Each(0, false, func(_ int, v []byte) bool { got = append(got, string(v)); return true })
			if !slices.Equal(got, want) {
				t.Fatalf("%s: %d elements back, want %d (equal: %v)", key, len(got), len(want), slices.Equal(got, want))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s = openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	check(s, "small")
	check(s, "big")
	if _, ok := s.Peek([]byte("gone")); ok {
		t.Fatal("a list emptied before the restart is back")
	}
	if oi, ok := s.Object([]byte("big")); !ok || oi.Kind != store.KindList || oi.Encoding != "quicklist" {
		t.Fatalf("Object(big) = %+v %v", oi, ok)
	}
	// Push the big list out of memory with strings, then read and change
	// it again.
	for i := range 20000 {
		mustStore(t, s, fmt.Sprint("filler", i), string(make([]byte, 400)), 0, 0)
	}
	check(s, "big")
	push(s, "big", 10)
	s.close(t)
	s = openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	check(s, "big")
	s.close(t)
}

// TestCompressedListsSurviveRestart: a big list with compressed nodes
// (list-compress-depth) is written plain to disk and read back whole
// under another depth after a restart (compressed then to that depth),
// and changed in the middle again.
func TestCompressedListsSurviveRestart(t *testing.T) {
	for _, tc := range []struct{ write, read int64 }{{1, 0}, {0, 1}, {2, 1}, {1, 1}} {
		t.Run(fmt.Sprintf("depth%d-then-%d", tc.write, tc.read), func(t *testing.T) {
			dir := t.TempDir()
			open := func(depth int64) *durableStore {
				s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 64 << 20})
				lim := s.Limits()
				lim.ListPackSize, lim.ListCompressDepth = 32, depth // small nodes: many compressed
				s.SetLimits(lim)
				return s
			}
			var l store.List
			var model []string
			update := func(s *durableStore, fn func()) {
				t.Helper()
				if err := s.UpdateList([]byte("l"), &l, func() error { fn(); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			check := func(s *durableStore) {
				t.Helper()
				if err := s.ViewList([]byte("l"), &l, func() error {
					var got []string
					l.Each(0, false, func(_ int, v []byte) bool { got = append(got, string(v)); return true })
					if !slices.Equal(got, model) {
						t.Fatalf("%d elements back, want %d (equal: %v)", len(got), len(model), slices.Equal(got, model))
					}
					if v, _ := l.Index(len(model) / 2); string(v) != model[len(model)/2] {
						t.Fatalf("Index(middle) = %q, want %q", v, model[len(model)/2])
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			s := open(tc.write)
			update(s, func() {
				for i := range 5000 {
					v := fmt.Sprintf("element:%07d", i)
					l.Push(false, []byte(v))
					model = append(model, v)
				}
			})
			update(s, func() {
				l.Set(2500, []byte("changed"))
				l.InsertAt(1000, []byte("inserted"))
				l.Delete(3000, 40)
			})
			model[2500] = "changed"
			model = slices.Insert(model, 1000, "inserted")
			model = slices.Delete(model, 3000, 3040)
			check(s)
			s.close(t)

			s = open(tc.read)
			check(s)
			update(s, func() {
				l.Set(100, []byte("again"))
				l.Remove([]byte("inserted"), 0)
			})
			model[100] = "again"
			model = slices.DeleteFunc(model, func(v string) bool { return v == "inserted" })
			check(s)
			s.close(t)

			s = open(tc.write)
			check(s)
			s.close(t)
		})
	}
}
