package durable

import (
	"fmt"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// TestRewriteDropsOverwrittenVersions: BGREWRITEAOF's store.Rewrite
// compacts the engine in the background, leaving about the live bytes on
// disk, and every live value reads back afterwards.
func TestRewriteDropsOverwrittenVersions(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 256 << 20})
	defer s.close(t)
	value := string(make([]byte, 200))
	for round := range 5 {
		for i := range 5000 {
			mustStore(t, s, fmt.Sprint("key", i), fmt.Sprint(round, value), 0, 0)
		}
		if err := s.Save(); err != nil { // each round's versions into tables
			t.Fatal(err)
		}
	}
	before := s.DiskStats().Bytes
	started, err := s.Rewrite()
	if err != nil || !started {
		t.Fatalf("Rewrite() = %v, %v", started, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for s.DiskStats().Rewriting {
		if time.Now().After(deadline) {
			t.Fatal("the rewrite did not finish in 2 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ds := s.DiskStats()
	if ds.RewriteErr != nil {
		t.Fatal(ds.RewriteErr)
	}
	live := int64(5000 * (len(value) + 10))
	t.Logf("disk bytes: %d before the rewrite, %d after; live payload %d", before, ds.Bytes, live)
	if ds.Bytes >= before || ds.Bytes > 2*live {
		t.Errorf("after the rewrite the disk holds %d bytes (before %d, live %d)", ds.Bytes, before, live)
	}
	for i := range 5000 {
		if it, ok := s.Get([]byte(fmt.Sprint("key", i))); !ok || string(it.Value) != fmt.Sprint(4, value) {
			t.Fatalf("key%d after the rewrite: %v", i, ok)
		}
	}
}
