package store

import (
	"fmt"
	"sort"
	"testing"
)

func TestPeekDoesNotRefreshRecency(t *testing.T) {
	s := New(Config{SweepInterval: -1})
	defer s.Close()
	mustStore(t, s, ModeSet, "a", "1", 0, 0)
	if it, ok := s.Peek([]byte("a")); !ok || string(it.Value) != "1" {
		t.Fatalf("Peek(a) = %+v, %v", it, ok)
	}
	if _, ok := s.Peek([]byte("missing")); ok {
		t.Error("Peek(missing) found something")
	}
	if st := s.Stats(); st.ExpiredUnfetched != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestTakeIsGetAndDelete(t *testing.T) {
	s := New(Config{SweepInterval: -1})
	defer s.Close()
	mustStore(t, s, ModeSet, "a", "value", 0, 0)
	it, ok := s.Take([]byte("a"))
	if !ok || string(it.Value) != "value" {
		t.Fatalf("Take(a) = %+v, %v", it, ok)
	}
	if _, ok := s.Get([]byte("a")); ok {
		t.Error("a still there after Take")
	}
	if _, ok := s.Take([]byte("a")); ok {
		t.Error("second Take found a")
	}
	if st := s.Stats(); st.Items != 0 || st.Bytes != 0 {
		t.Errorf("accounting after Take: %+v", st)
	}
}

func TestScanShardsVisitEveryLiveKeyOnce(t *testing.T) {
	s := New(Config{SweepInterval: -1})
	defer s.Close()
	want := map[string]bool{}
	for i := range 1000 {
		k := fmt.Sprintf("k%d", i)
		mustStore(t, s, ModeSet, k, "v", 0, 0)
		want[k] = true
	}
	if _, err := s.Store(ModeSet, []byte("expired"), []byte("v"), 0, 1, 0); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range s.NumShards() {
		s.ScanShard(i, func(k []byte) bool { got = append(got, string(k)); return true })
	}
	sort.Strings(got)
	if len(got) != len(want) {
		t.Fatalf("scan found %d keys, want %d", len(got), len(want))
	}
	for i, k := range got {
		if !want[k] || (i > 0 && got[i-1] == k) {
			t.Fatalf("scan returned %q unexpectedly or twice", k)
		}
	}
	if k, ok := s.RandomKey(); !ok || !want[string(k)] {
		t.Errorf("RandomKey = %q, %v", k, ok)
	}
	s.FlushAll(0)
	if k, ok := s.RandomKey(); ok {
		t.Errorf("RandomKey on empty store = %q", k)
	}
}

// TestScanItemsSeesEveryLiveItem: ScanItems visits each live item once
// with its value and deadline, skips expired ones, and the string bytes
// it hands out stay as they were after the key is overwritten.
func TestScanItemsSeesEveryLiveItem(t *testing.T) {
	s := New(Config{SweepInterval: -1})
	defer s.Close()
	for i := range 500 {
		if _, err := s.Store(ModeSet, []byte(fmt.Sprint("k", i)), []byte(fmt.Sprint("v", i)), 0, int64(i)*1e12, 0); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]Item{}
	for i := range s.NumShards() {
		s.ScanItems(i, func(k []byte, it Item) bool {
			if _, dup := got[string(k)]; dup {
				t.Errorf("%q twice", k)
			}
			got[string(k)] = it
			return true
		})
	}
	// k0 has no deadline; k1's (1e12 ms, 2001) has passed.
	if len(got) != 499 || got["k0"].Deadline != 0 || got["k7"].Deadline != 7e12 || string(got["k42"].Value) != "v42" {
		t.Fatalf("ScanItems saw %d items; k0 %+v k7 %+v k42 %+v", len(got), got["k0"], got["k7"], got["k42"])
	}
	if _, ok := got["k1"]; ok {
		t.Error("an expired item was visited")
	}
	held := got["k42"].Value
	mustStore(t, s, ModeSet, "k42", "changed", 0, 0)
	if string(held) != "v42" {
		t.Errorf("a string's bytes changed under the reader: %q", held)
	}
}

// TestRandomKeyFindsTheEmptyKey: the empty key is a key like any other
// (RESP allows it); RandomKey used to take its empty copy for "none".
func TestRandomKeyFindsTheEmptyKey(t *testing.T) {
	s := New(Config{SweepInterval: -1})
	if _, err := s.Store(ModeSet, []byte{}, []byte("x"), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if k, ok := s.RandomKey(); !ok || len(k) != 0 {
			t.Fatalf("RandomKey = %q, %v; want the empty key", k, ok)
		}
	}
}
