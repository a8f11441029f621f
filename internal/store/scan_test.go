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
