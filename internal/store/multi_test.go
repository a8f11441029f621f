package store

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestAddAll(t *testing.T) {
	s := newTestStore(t, Config{})
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	vals := [][]byte{[]byte("1"), []byte("2"), []byte("3")}
	if ok, err := s.AddAll(keys, vals); !ok || err != nil {
		t.Fatalf("AddAll on empty store = %v, %v", ok, err)
	}
	for i, k := range keys {
		if it, ok := s.Peek(k); !ok || !bytes.Equal(it.Value, vals[i]) {
			t.Fatalf("%s = %q, %v", k, it.Value, ok)
		}
	}
	// One key exists: nothing is written, the existing one is untouched.
	before := captureKey(s, "c")
	ok, err := s.AddAll([][]byte{[]byte("x"), []byte("c")}, [][]byte{[]byte("9"), []byte("9")})
	if ok || err != nil {
		t.Fatalf("AddAll over an existing key = %v, %v", ok, err)
	}
	if _, found := s.Peek([]byte("x")); found {
		t.Fatal("AddAll wrote x although c exists")
	}
	if after := captureKey(s, "c"); !after.equal(before) {
		t.Fatalf("c changed:\n%v\n%v", before, after)
	}
	// Too large: refused before anything is looked at.
	_, err = s.AddAll([][]byte{[]byte("y"), []byte("z")}, [][]byte{[]byte("1"), make([]byte, defaultMaxItemSize)})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	if _, found := s.Peek([]byte("y")); found {
		t.Fatal("a refused AddAll wrote y")
	}
	checkInvariants(t, s)
}

// TestAddAllIsAtomic races AddAll calls over the same keys, listed in
// different orders, with different values: exactly one wins each round,
// and every key holds the winner's value. A check-then-write without the
// locks held together lets two win, or mixes their values.
func TestAddAllIsAtomic(t *testing.T) {
	s := newTestStore(t, Config{})
	const writers = 4
	for round := range 300 {
		keys := roundKeys(round, 6)
		wins := make([]bool, writers)
		raceWriters(keys, writers, func(w int, ks, vs [][]byte) {
			ok, err := s.AddAll(ks, vs)
			if err != nil {
				t.Error(err)
			}
			wins[w] = ok
		})
		winner := -1
		for w, ok := range wins {
			if ok {
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, w)
				}
				winner = w
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		for _, k := range keys {
			if it, _ := s.Peek(k); string(it.Value) != fmt.Sprintf("w%d", winner) {
				t.Fatalf("round %d: %s = %q, want the winner's w%d", round, k, it.Value, winner)
			}
		}
	}
	checkInvariants(t, s)
}

// TestAddAllUnderMemoryPressure fills a small store so the writes must
// make room in other shards; afterwards every AddAll either wrote all its
// keys or none, and the accounting holds.
func TestAddAllUnderMemoryPressure(t *testing.T) {
	underPressure(t, 2000, func(s *Store, round int, keys, vals [][]byte) {
		ok, err := s.AddAll(keys, vals)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !ok {
			t.Fatalf("round %d: fresh keys refused", round)
		}
	})
}

// TestSetAll: SetAll writes every key as SET does (over a string with
// flags and a deadline, over a hash), reports which keys were new, and a
// value too large writes nothing.
func TestSetAll(t *testing.T) {
	s := newTestStore(t, Config{})
	mustStore(t, s, ModeSet, "old", "x", 7, Deadline(3600, time.Now()))
	var h Hash
	if err := s.UpdateHash([]byte("hash"), &h, func() error { h.Set([]byte("f"), []byte("v")); return nil }); err != nil {
		t.Fatal(err)
	}
	keys := [][]byte{[]byte("old"), []byte("new"), []byte("hash")}
	values := [][]byte{[]byte("1"), []byte("2"), []byte("3")}
	created := make([]bool, 3)
	if err := s.SetAll(keys, values, created); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(created) != "[false true false]" {
		t.Fatalf("created = %v", created)
	}
	for i, k := range keys {
		it, ok := s.Peek(k)
		if !ok || it.Kind != KindString || string(it.Value) != string(values[i]) || it.Flags != 0 || it.Deadline != 0 {
			t.Fatalf("%s = %+v, %v; want %q with no flags or deadline", k, it, ok, values[i])
		}
	}
	before := captureKey(s, "old")
	big := make([]byte, s.MaxValueLen(3)+1)
	if err := s.SetAll([][]byte{[]byte("old"), []byte("big")}, [][]byte{[]byte("9"), big}, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("SetAll with a value too large = %v", err)
	}
	if after := captureKey(s, "old"); !after.equal(before) {
		t.Fatalf("a refused SetAll changed old: %v -> %v", before, after)
	}
	checkInvariants(t, s)
}

// TestSetAllIsAtomic: writers SetAll the same keys (each listing them in
// its own order) at once; afterwards every key holds the same writer's
// value, the one whose call was last, as if each call were one step.
func TestSetAllIsAtomic(t *testing.T) {
	s := newTestStore(t, Config{})
	for round := range 300 {
		keys := roundKeys(round, 6)
		raceWriters(keys, 4, func(_ int, ks, vs [][]byte) {
			for range 20 {
				if err := s.SetAll(ks, vs, nil); err != nil {
					t.Error(err)
				}
			}
		})
		first, _ := s.Peek(keys[0])
		for _, k := range keys[1:] {
			if it, _ := s.Peek(k); string(it.Value) != string(first.Value) {
				t.Fatalf("round %d: %s = %q but %s = %q: the calls interleaved", round, keys[0], first.Value, k, it.Value)
			}
		}
	}
	checkInvariants(t, s)
}

// TestSetAllUnderMemoryPressure: writes that must make room in other
// shards still write every key, and the accounting holds.
func TestSetAllUnderMemoryPressure(t *testing.T) {
	underPressure(t, 300, func(s *Store, round int, keys, vals [][]byte) {
		if err := s.SetAll(keys, vals, nil); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	})
}

// underPressure runs 2000 rounds of write over five 3000-byte values in a
// 1 MiB store, the keys of round r named for r modulo distinct (so rounds
// past distinct write keys again), and checks after each that every key
// is there; at the end, that evictions happened and the accounting holds.
func underPressure(t *testing.T, distinct int, write func(s *Store, round int, keys, vals [][]byte)) {
	t.Helper()
	s := newTestStore(t, Config{MemoryLimit: 1 << 20})
	value := bytes.Repeat([]byte("v"), 3000)
	for round := range 2000 {
		keys := make([][]byte, 5)
		vals := make([][]byte, 5)
		for i := range keys {
			keys[i] = fmt.Appendf(nil, "p%d-%d", round%distinct, i)
			vals[i] = value
		}
		write(s, round, keys, vals)
		for _, k := range keys {
			if _, found := s.Peek(k); !found {
				t.Fatalf("round %d: %s missing right after the write", round, k)
			}
		}
	}
	if s.Stats().Evictions == 0 {
		t.Fatal("no evictions: the test did not test pressure")
	}
	checkInvariants(t, s)
}

// roundKeys returns n keys named for a round of a test.
func roundKeys(round, n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "r%d-k%d", round, i)
	}
	return keys
}

// raceWriters runs write in writers goroutines at once, each with keys
// listed in its own order (rotated by its number) and values "w<number>",
// and waits for them.
func raceWriters(keys [][]byte, writers int, write func(w int, ks, vs [][]byte)) {
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ks := make([][]byte, len(keys))
			vs := make([][]byte, len(keys))
			for i := range keys {
				ks[i], vs[i] = keys[(i+w)%len(keys)], fmt.Appendf(nil, "w%d", w)
			}
			write(w, ks, vs)
		}()
	}
	wg.Wait()
}
