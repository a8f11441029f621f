package store

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func hashFields(t *testing.T, s *Store, key string) map[string]string {
	t.Helper()
	var h Hash
	out := map[string]string{}
	if err := s.ViewHash([]byte(key), &h, func() error {
		h.Each(func(f, v []byte) bool { out[string(f)] = string(v); return true })
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func fillHash(t *testing.T, s *Store, key string, n int) {
	t.Helper()
	var h Hash
	if err := s.UpdateHash([]byte(key), &h, func() error {
		for i := range n {
			h.Set([]byte(fmt.Sprint("f", i)), []byte(fmt.Sprint("v", i)))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestTxRenameAndCopy: RENAME moves any kind with its deadline (a big
// hash's object moves without a copy), COPY duplicates it, NX and
// replace rules hold, and the accounting stays exact.
func TestTxRenameAndCopy(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	far := time.Now().Add(time.Hour).UnixMilli()
	mustStore(t, s, ModeSet, "str", "value", 9, far)
	fillHash(t, s, "small", 3)
	fillHash(t, s, "big", 1000)
	tx := func(keys []string, fn func(tx *Tx) bool) bool {
		var bk [][]byte
		for _, k := range keys {
			bk = append(bk, []byte(k))
		}
		var ok bool
		if err := s.Tx(bk, func(tx *Tx) error { ok = fn(tx); return nil }); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !tx([]string{"str", "str2"}, func(tx *Tx) bool { return tx.Rename([]byte("str"), []byte("str2"), false) }) {
		t.Fatal("Rename(str) failed")
	}
	if it, ok := s.Peek([]byte("str2")); !ok || string(it.Value) != "value" || it.Flags != 9 || it.Deadline != far {
		t.Fatalf("renamed string = %+v %v", it, ok)
	}
	if _, ok := s.Peek([]byte("str")); ok {
		t.Fatal("source of a rename still exists")
	}
	if tx([]string{"small", "str2"}, func(tx *Tx) bool { return tx.Rename([]byte("small"), []byte("str2"), true) }) {
		t.Fatal("RENAMENX over an existing key succeeded")
	}
	if !tx([]string{"big", "big2"}, func(tx *Tx) bool { return tx.Rename([]byte("big"), []byte("big2"), false) }) {
		t.Fatal("Rename(big) failed")
	}
	if !tx([]string{"big2", "big3"}, func(tx *Tx) bool { return tx.Copy([]byte("big2"), []byte("big3"), false) }) {
		t.Fatal("Copy(big2) failed")
	}
	if tx([]string{"small", "big3"}, func(tx *Tx) bool { return tx.Copy([]byte("small"), []byte("big3"), false) }) {
		t.Fatal("Copy over an existing key without replace succeeded")
	}
	a, b := hashFields(t, s, "big2"), hashFields(t, s, "big3")
	if len(a) != 1000 || len(b) != 1000 || a["f999"] != "v999" || b["f999"] != "v999" {
		t.Fatalf("after rename and copy: %d and %d fields", len(a), len(b))
	}
	// The copy is independent of its source.
	var h Hash
	if err := s.UpdateHash([]byte("big3"), &h, func() error { h.Delete([]byte("f1")); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(hashFields(t, s, "big2")) != 1000 {
		t.Fatal("deleting from a copy changed its source")
	}
	if !tx([]string{"small", "big2"}, func(tx *Tx) bool { return tx.Copy([]byte("small"), []byte("big2"), true) }) {
		t.Fatal("Copy with replace failed")
	}
	if got := hashFields(t, s, "big2"); len(got) != 3 {
		t.Fatalf("replaced copy has %d fields", len(got))
	}
	checkInvariants(t, s)
}

// TestTxHandlesAndClear: handles on keys of one shard, changed together,
// settle correctly (no record moves under an open handle), Clear drops any
// kind, and an emptied collection is deleted.
func TestTxHandlesAndClear(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	keys := sameShardKeys(s, "k", 3)
	for _, k := range keys {
		fillHash(t, s, k, 200)
	}
	mustStore(t, s, ModeSet, "other", "x", 0, 0)
	var bk [][]byte
	for _, k := range append(keys, "other") {
		bk = append(bk, []byte(k))
	}
	err := s.Tx(bk, func(tx *Tx) error {
		var a, b, c Hash
		if err := tx.Hash(bk[0], &a, true); err != nil {
			return err
		}
		if err := tx.Hash(bk[1], &b, true); err != nil {
			return err
		}
		if err := tx.Hash(bk[3], &c, false); err != ErrWrongType {
			t.Errorf("Hash(other) = %v, want ErrWrongType", err)
		}
		// Move every field of a into b, in small steps.
		var moved [][2][]byte
		a.Each(func(f, v []byte) bool {
			moved = append(moved, [2][]byte{append([]byte(nil), f...), append([]byte(nil), v...)})
			return true
		})
		for _, fv := range moved {
			b.Set(append([]byte("a-"), fv[0]...), fv[1])
			a.Delete(fv[0])
		}
		tx.DoneHash(&a)
		if k, ok := tx.Kind(bk[0]); ok {
			t.Errorf("emptied hash is still there as a %v", k)
		}
		if !tx.Clear(bk[2]) || !tx.Clear(bk[3]) || tx.Clear([]byte(keys[0])) {
			t.Error("Clear reported wrongly")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := hashFields(t, s, keys[1]); len(got) != 400 {
		t.Fatalf("b has %d fields, want 400", len(got))
	}
	for _, k := range []string{keys[0], keys[2], "other"} {
		if _, ok := s.Peek([]byte(k)); ok {
			t.Errorf("%s still exists", k)
		}
	}
	checkInvariants(t, s)
}

// TestTxNoDeadlock: Tx calls over the same keys named in opposite orders,
// with single-key writes between, all finish (shards are locked in order).
func TestTxNoDeadlock(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d")}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h Hash
			for i := range 300 {
				order := keys
				if (w+i)%2 == 1 {
					order = [][]byte{keys[3], keys[2], keys[1], keys[0]}
				}
				_ = s.Tx(order, func(tx *Tx) error {
					for _, k := range order[:2] {
						if err := tx.Hash(k, &h, true); err == nil {
							h.Set([]byte(fmt.Sprint(w)), []byte(fmt.Sprint(i)))
							tx.DoneHash(&h)
						}
					}
					return nil
				})
				_ = s.UpdateHash(keys[i%4], &h, func() error { h.Set([]byte("x"), []byte("y")); return nil })
			}
		}()
	}
	wg.Wait()
	checkInvariants(t, s)
}

// TestExclusiveIsAtomic: increments done as read-then-write inside
// Exclusive never lose an update to concurrent plain writers of other
// keys and to each other, and every store call (strings, hashes, a nested
// Tx) works inside without deadlock.
func TestExclusiveIsAtomic(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20})
	const workers, rounds = 4, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h Hash
			for i := range rounds {
				err := s.Exclusive(func(v *Store) error {
					it, _ := v.Get([]byte("counter"))
					n := 0
					fmt.Sscan(string(it.Value), &n)
					if _, err := v.Store(ModeSet, []byte("counter"), []byte(fmt.Sprint(n+1)), 0, 0, 0); err != nil {
						return err
					}
					if err := v.UpdateHash([]byte("h"), &h, func() error {
						h.Set([]byte(fmt.Sprint(w)), []byte(fmt.Sprint(i)))
						return nil
					}); err != nil {
						return err
					}
					return v.Tx([][]byte{[]byte("h"), []byte("h2")}, func(tx *Tx) error {
						tx.Copy([]byte("h"), []byte("h2"), true)
						return nil
					})
				})
				if err != nil {
					t.Error(err)
					return
				}
				// A plain writer between transactions, on its own key.
				mustStore(t, s, ModeSet, fmt.Sprint("w", w), "x", 0, 0)
			}
		}()
	}
	wg.Wait()
	if it, _ := s.Get([]byte("counter")); string(it.Value) != fmt.Sprint(workers*rounds) {
		t.Fatalf("counter = %q, want %d", it.Value, workers*rounds)
	}
	if got := hashFields(t, s, "h2"); len(got) != workers {
		t.Fatalf("h2 has %d fields, want %d", len(got), workers)
	}
	checkInvariants(t, s)
}
