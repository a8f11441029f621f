package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// TestConcurrentReadersWritersCompactions runs writers, point readers,
// iterators, flushes and compactions at once (meant for -race). Each writer
// owns its keys, so readers can check that a value, once seen, only moves
// forward, and iterators check that keys come out in order.
func TestConcurrentReadersWritersCompactions(t *testing.T) {
	// It once failed about 1 run in 15-30 under -race (a memtable seek
	// returning a node linked during the seek, see memTable.seekUser); the
	// default run is short, -soak writes four times as many rounds.
	rounds := 15
	if *soak {
		rounds = 60
	}
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, Sync: SyncAlways, MemTableSize: 32 << 10,
		TargetFileSize: 16 << 10, LBaseMaxBytes: 64 << 10, BlockCacheSize: 32 << 10})
	if err != nil {
		t.Fatal(err)
	}
	const writers, keys = 4, 200
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				for k := 0; k < keys; k++ {
					key := fmt.Appendf(nil, "w%d/k%04d", w, k)
					if k%7 == 0 && r%2 == 1 {
						var b Batch
						b.Put(key, fmt.Appendf(nil, "%04d", r))
						b.Delete(fmt.Appendf(nil, "w%d/tmp%d", w, k))
						if err := db.Apply(&b); err != nil {
							errc <- err
							return
						}
						continue
					}
					if err := db.Put(key, fmt.Appendf(nil, "%04d", r)); err != nil {
						errc <- err
						return
					}
				}
			}
		}()
	}
	done := make(chan struct{})
	var bg sync.WaitGroup
	for g := 0; g < 2; g++ {
		bg.Add(1)
		go func() {
			defer bg.Done()
			seen := map[string][]byte{}
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				key := fmt.Appendf(nil, "w%d/k%04d", i%writers, i%keys)
				v, err := db.Get(key)
				if errors.Is(err, ErrNotFound) {
					if seen[string(key)] != nil {
						errc <- fmt.Errorf("Get(%s) went from %q to not found", key, seen[string(key)])
						return
					}
					continue
				}
				if err != nil {
					errc <- err
					return
				}
				if bytes.Compare(v, seen[string(key)]) < 0 {
					errc <- fmt.Errorf("Get(%s) went back from %q to %q", key, seen[string(key)], v)
					return
				}
				seen[string(key)] = append([]byte(nil), v...)
			}
		}()
	}
	bg.Add(1)
	go func() {
		defer bg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			it, err := db.NewIter(&IterOptions{LowerBound: []byte("w1/"), UpperBound: []byte("w3/")})
			if err != nil {
				errc <- err
				return
			}
			var prev []byte
			for ok := it.First(); ok; ok = it.Next() {
				if prev != nil && bytes.Compare(prev, it.Key()) >= 0 {
					errc <- fmt.Errorf("iterator out of order: %q then %q", prev, it.Key())
				}
				if bytes.Compare(it.Key(), []byte("w1/")) < 0 || bytes.Compare(it.Key(), []byte("w3/")) >= 0 {
					errc <- fmt.Errorf("iterator key %q outside [w1/, w3/)", it.Key())
				}
				prev = append(prev[:0], it.Key()...)
			}
			if err := it.Close(); err != nil {
				errc <- err
				return
			}
			switch i % 10 {
			case 3:
				if err := db.Flush(); err != nil {
					errc <- err
					return
				}
			case 7:
				if err := db.Compact(); err != nil {
					errc <- err
					return
				}
			}
		}
	}()
	wg.Wait()
	close(done)
	bg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for w := 0; w < writers; w++ {
		for k := 0; k < keys; k++ {
			key := fmt.Appendf(nil, "w%d/k%04d", w, k)
			if v, err := db.Get(key); err != nil || string(v) != fmt.Sprintf("%04d", rounds-1) {
				t.Fatalf("Get(%s) = %q, %v", key, v, err)
			}
		}
	}
	t.Logf("%v", db.Metrics())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseDuringCompact closes the DB while a manual compaction runs in
// another goroutine: the compaction must stop with ErrClosed (or finish),
// and nothing may touch closed tables.
func TestCloseDuringCompact(t *testing.T) {
	db, err := Open("/db", Options{FS: vfs.NewMem(), MemTableSize: 32 << 10, TargetFileSize: 16 << 10, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20000; i++ {
		if err := db.Put(fmt.Appendf(nil, "k%06d", i*7919%20000), make([]byte, 50)); err != nil {
			t.Fatal(err)
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- db.Compact() }()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil && !errors.Is(err, ErrClosed) {
		t.Fatalf("Compact during Close = %v, want nil or ErrClosed", err)
	}
}

// TestGroupCommitSharesFsync checks that SyncAlways with concurrent writers
// commits several batches per fsync. Each fsync of the in-memory log takes
// 2 ms, as on a real disk, so the other writers queue up behind it.
func TestGroupCommitSharesFsync(t *testing.T) {
	fs := vfs.NewMem()
	fs.SetInjector(func(op vfs.Op, name string) error {
		if op == vfs.OpSync && strings.HasSuffix(name, ".log") {
			time.Sleep(2 * time.Millisecond)
		}
		return nil
	})
	db, err := Open("/db", Options{FS: fs, Sync: SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				if err := db.Put(fmt.Appendf(nil, "w%d-%d", w, i), []byte("v")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	m := db.Metrics()
	t.Logf("%d commits, %d fsyncs", m.Commits, m.WALSyncs)
	if m.Commits != 320 || m.WALSyncs >= m.Commits {
		t.Errorf("commits %d, fsyncs %d: want 320 commits sharing fewer fsyncs", m.Commits, m.WALSyncs)
	}
}
