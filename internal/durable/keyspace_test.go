package durable

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
)

// scanAll walks the keyspace from cursor 0 to 0 in steps of count keys and
// returns every key seen, and the number of steps.
func scanAll(t *testing.T, s *durableStore, count int) ([]string, int) {
	t.Helper()
	var keys []string
	cursor, steps := uint64(0), 0
	for {
		next, err := s.ScanKeys(cursor, count, func(k []byte) { keys = append(keys, string(k)) })
		if err != nil {
			t.Fatal(err)
		}
		steps++
		if next == 0 {
			return keys, steps
		}
		if steps > 100000 {
			t.Fatal("SCAN does not end")
		}
		cursor = next
	}
}

// TestKeyspaceWalksSeeTheDisk: after a restart memory is empty, yet SCAN,
// KEYS, DBSIZE and RANDOMKEY see every item on disk, and none of the
// deleted, expired or flushed ones.
func TestKeyspaceWalksSeeTheDisk(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1})
	far := time.Now().Add(time.Hour).UnixMilli()
	var want []string
	for i := range 500 {
		k := fmt.Sprintf("key:%04d", i)
		deadline := int64(0)
		if i%5 == 0 {
			deadline = far
		}
		mustStore(t, s, k, "v", 0, deadline)
		want = append(want, k)
	}
	mustStore(t, s, "gone", "v", 0, 0)
	if err := s.Delete([]byte("gone")); err != nil {
		t.Fatal(err)
	}
	mustStore(t, s, "soon", "v", 0, time.Now().Add(30*time.Millisecond).UnixMilli())
	s.close(t)
	time.Sleep(40 * time.Millisecond)

	// No warm-up: it would load the disk back into memory meanwhile.
	s = openStore(t, dir, store.Config{SweepInterval: -1, NoWarmUp: true})
	defer s.close(t)
	if st := s.Stats(); st.Items != 0 {
		t.Fatalf("memory holds %d items right after a restart; the test wants them on disk only", st.Items)
	}
	for _, count := range []int{1, 7, 10, 1000} {
		got, steps := scanAll(t, s, count)
		if !slices.Equal(got, want) {
			t.Fatalf("SCAN COUNT %d saw %d keys, want the %d on disk, in order", count, len(got), len(want))
		}
		if count < 500 && steps < 500/count {
			t.Errorf("SCAN COUNT %d took %d steps; a step returns about COUNT keys", count, steps)
		}
	}
	var keys []string
	if err := s.Keys(func(k []byte) { keys = append(keys, string(k)) }); err != nil || !slices.Equal(keys, want) {
		t.Fatalf("KEYS saw %d keys (err %v), want %d", len(keys), err, len(want))
	}
	n, exp, err := s.Count()
	if err != nil || n != 500 || exp != 100 {
		t.Fatalf("Count = %d keys, %d with a deadline, %v; want 500, 100", n, exp, err)
	}
	k, ok := s.RandomKey()
	if !ok || !slices.Contains(want, string(k)) {
		t.Fatalf("RandomKey = %q, %v; want one of the keys on disk", k, ok)
	}

	s.FlushAll(0)
	mustStore(t, s, "after", "v", 0, 0)
	got, _ := scanAll(t, s, 10)
	if n, _ := s.Len(); !slices.Equal(got, []string{"after"}) || n != 1 {
		t.Fatalf("after flush_all: SCAN %q, DBSIZE %d; want only the key written after it", got, n)
	}
}

// TestScanCursorSurvivesLostSlots: a cursor whose slot in the table was
// reused (many walks at once) or which comes from before a restart resumes
// at the key's prefix: keys may come twice, none is missed.
func TestScanCursorSurvivesLostSlots(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1})
	var want []string
	for i := range 300 {
		k := fmt.Sprintf("user:%05d", i) // shares its 6-byte prefix with every other key
		mustStore(t, s, k, "v", 0, 0)
		want = append(want, k)
	}
	for i := range 30 {
		k := fmt.Sprintf("%c%03d", 'a'+i%20, i)
		mustStore(t, s, k, "v", 0, 0)
		want = append(want, k)
	}
	slices.Sort(want)
	seen := map[string]int{}
	cursor, steps := uint64(0), 0
	for {
		next, err := s.ScanKeys(cursor, 25, func(k []byte) { seen[string(k)]++ })
		if err != nil {
			t.Fatal(err)
		}
		if next == 0 {
			break
		}
		// 1,100 other walks take every slot of the table in between.
		for range 1100 {
			if _, err := s.ScanKeys(0, 1, func([]byte) {}); err != nil {
				t.Fatal(err)
			}
		}
		if steps++; steps > 1000 {
			t.Fatal("SCAN does not end")
		}
		cursor = next
	}
	for _, k := range want {
		if seen[k] == 0 {
			t.Fatalf("key %q missed by a walk whose cursors lost their slots", k)
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("walk saw %d distinct keys, want %d", len(seen), len(want))
	}
	s.close(t)
}

// TestDiskLimit: over --disk-limit, expired items go first; when that is
// not enough, the least recently written ones go, counted as disk
// evictions, and the disk ends under the bound with the newest items kept.
func TestDiskLimit(t *testing.T) {
	const limit = 4 << 20
	dir := t.TempDir()
	o := lsm.Options{Sync: lsm.SyncNone, MemTableSize: 256 << 10, TargetFileSize: 256 << 10}
	cfg := store.Config{SweepInterval: -1, DiskLimit: limit, MemoryLimit: 64 << 20}
	s := openStoreWith(t, dir, cfg, o)
	defer func() { s.close(t) }()
	value := string(make([]byte, 1000))
	soon := time.Now().Add(time.Second).UnixMilli()
	// 3 MB that expire, then 2 MB that do not: over the limit, and under
	// it once the expired ones are gone.
	for i := range 3000 {
		mustStore(t, s, fmt.Sprintf("ttl:%05d", i), value, 0, soon)
	}
	for i := range 2000 {
		mustStore(t, s, fmt.Sprintf("a:%05d", i), value, 0, 0)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(time.UnixMilli(soon)) + 10*time.Millisecond)
	if err := s.TrimDisk(); err != nil {
		t.Fatal(err)
	}
	ds := s.DiskStats()
	if ds.Evictions != 0 || ds.Bytes > limit {
		t.Fatalf("after expired items went: %d evictions, %d bytes on disk; want 0 evictions and at most %d bytes",
			ds.Evictions, ds.Bytes, limit)
	}
	for i := range 2000 {
		if _, ok := s.Get(fmt.Appendf(nil, "a:%05d", i)); !ok {
			t.Fatalf("a:%05d lost although only expired items had to go", i)
		}
	}

	// 6 MB more, all live: now the oldest must go.
	for i := range 6000 {
		mustStore(t, s, fmt.Sprintf("b:%05d", i), value, 0, 0)
	}
	if err := s.TrimDisk(); err != nil {
		t.Fatal(err)
	}
	ds = s.DiskStats()
	if ds.Bytes > limit {
		t.Fatalf("disk holds %d bytes after the trim, want at most %d", ds.Bytes, limit)
	}
	n, err := s.Len()
	if err != nil {
		t.Fatal(err)
	}
	if ds.Evictions == 0 || int64(ds.Evictions) != 8000-n {
		t.Fatalf("%d disk evictions, %d items left of 8000; want every item gone counted", ds.Evictions, n)
	}
	// What is left is the newest items: the oldest ones went first.
	oldestKept := -1
	for i := range 8000 {
		k := fmt.Sprintf("a:%05d", i)
		if i >= 2000 {
			k = fmt.Sprintf("b:%05d", i-2000)
		}
		_, ok := s.Get([]byte(k))
		if ok && oldestKept < 0 {
			oldestKept = i
		}
		if !ok && oldestKept >= 0 {
			t.Fatalf("%s is gone but the older item #%d is kept", k, oldestKept)
		}
	}
	if oldestKept < 0 || int64(8000-oldestKept) != n {
		t.Fatalf("kept items from #%d on, DBSIZE %d", oldestKept, n)
	}

	// The eviction holds across a restart, and new writes go on.
	s.close(t)
	s = openStoreWith(t, dir, cfg, o)
	if n2, err := s.Len(); err != nil || n2 != n {
		t.Fatalf("DBSIZE after restart = %d, %v; want %d", n2, err, n)
	}
	if _, ok := s.Get([]byte("a:00000")); ok {
		t.Fatal("an evicted item came back after a restart")
	}
	mustStore(t, s, "new", "v", 0, 0)
	if _, ok := s.Get([]byte("new")); !ok {
		t.Fatal("a write after the trim is missing")
	}
}
