package store

import "testing"

// TestRestoreAccess: RestoreAccess undoes a read's marks (the eviction
// walk's count and the fetched flag) on the same record, and leaves a
// record a write replaced alone.
func TestRestoreAccess(t *testing.T) {
	s := newTestStore(t, Config{})
	if _, ok := s.AccessOf([]byte("none")); ok {
		t.Fatal("AccessOf a missing key reports one")
	}
	if _, err := s.Store(ModeSet, []byte("k"), []byte("v"), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	before, ok := s.AccessOf([]byte("k"))
	if !ok {
		t.Fatal("AccessOf k: missing")
	}
	for range 3 {
		s.Get([]byte("k"))
	}
	read, _ := s.AccessOf([]byte("k"))
	if read.bits == before.bits {
		t.Fatalf("reads changed no access bits (%#x)", read.bits)
	}
	s.RestoreAccess([]byte("k"), before)
	if after, _ := s.AccessOf([]byte("k")); after != before {
		t.Errorf("after RestoreAccess %+v, want %+v", after, before)
	}

	s.Get([]byte("k"))
	if _, err := s.Store(ModeSet, []byte("k"), []byte("w"), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	written, _ := s.AccessOf([]byte("k"))
	s.RestoreAccess([]byte("k"), before)
	if after, _ := s.AccessOf([]byte("k")); after != written {
		t.Errorf("RestoreAccess changed a rewritten record: %+v, want %+v", after, written)
	}
}
