package store

import (
	"fmt"
	"strings"
	"testing"
)

// TestInvariantsCatchCorruption breaks a shard's byte count behind the
// store's back. verify (checkInvariants) must name it in every build; with
// -tags invariants the next operation on the shard must panic with the
// same message, and without the tag it must not check at all.
func TestInvariantsCatchCorruption(t *testing.T) {
	s := newTestStore(t, Config{})
	mustStore(t, s, ModeSet, "k", "v", 0, 0)
	checkInvariants(t, s)
	sh := s.shardFor(s.hash([]byte("k")))
	sh.mu.Lock()
	sh.bytes++
	sh.mu.Unlock()
	err := s.verify()
	if err == nil || !strings.Contains(err.Error(), "bytes = ") {
		t.Fatalf("verify() = %v, want the shard's byte count named", err)
	}
	got := func() (p any) {
		defer func() { p = recover() }()
		mustStore(t, s, ModeSet, "k", "w", 0, 0)
		return nil
	}()
	if !invariantsOn {
		if got != nil {
			t.Fatalf("without the invariants tag, Store panicked: %v", got)
		}
		return
	}
	// The panic left the shard locked: the store is not used again.
	want := "store: invariant broken (write): " + err.Error()
	if msg := fmt.Sprint(got); !strings.HasPrefix(msg, "store: invariant broken (write): shard ") || !strings.Contains(msg, "bytes = ") {
		t.Fatalf("panic = %q, want like %q", msg, want)
	}
}
