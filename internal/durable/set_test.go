package durable

import (
	"fmt"
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// TestSetsSurviveRestart: intset, listpack and table sets are written
// through on every change and read back whole, in their encodings, after
// a restart, and a big set evicted from memory is brought back from disk.
func TestSetsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := store.Config{SweepInterval: -1, MemoryLimit: 8 << 20}
	s := openStore(t, dir, cfg)
	var st store.Set
	members := map[string][]string{
		"ints":  {"1", "-70000", "5000000000", "3"},
		"small": {"a", "1", "b", "-2"},
	}
	for i := range 3000 {
		members["big"] = append(members["big"], fmt.Sprint("member-", i))
	}
	for i := range 600 {
		members["manyints"] = append(members["manyints"], fmt.Sprint(i*7))
	}
	for key, ms := range members {
		if err := s.UpdateSet([]byte(key), &st, func() error {
			for _, m := range ms {
				st.Add([]byte(m))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for key, gone := range map[string]string{"big": "member-7", "ints": "3", "small": "a", "manyints": "0"} {
		if err := s.UpdateSet([]byte(key), &st, func() error { st.Remove([]byte(gone)); return nil }); err != nil {
			t.Fatal(err)
		}
		ms := members[key]
		for i, m := range ms {
			if m == gone {
				members[key] = append(ms[:i:i], ms[i+1:]...)
				break
			}
		}
	}
	s.close(t)

	encodings := map[string]string{"ints": "intset", "small": "listpack", "big": "hashtable", "manyints": "hashtable"}
	check := func(s *durableStore, key string) {
		t.Helper()
		if err := s.ViewSet([]byte(key), &st, func() error {
			if st.Len() != len(members[key]) {
				t.Fatalf("%s: Len = %d, want %d", key, st.Len(), len(members[key]))
			}
			for _, m := range members[key] {
				if !st.Has([]byte(m)) {
					t.Fatalf("%s: lost %q", key, m)
				}
			}
			if e := st.Encoding(); e != encodings[key] {
				t.Fatalf("%s: encoding %s, want %s", key, e, encodings[key])
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	s = openStore(t, dir, cfg)
	for key := range members {
		check(s, key)
	}
	if it, ok := s.Peek([]byte("big")); !ok || it.Kind != store.KindSet {
		t.Fatalf("Peek(big) = %+v %v", it, ok)
	}
	// Push the sets out of memory with strings, then read them again.
	for i := range 20000 {
		mustStore(t, s, fmt.Sprint("filler", i), string(make([]byte, 400)), 0, 0)
	}
	for key := range members {
		check(s, key)
	}
	s.close(t)
}
