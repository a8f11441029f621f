package durable

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

// TestOverlappingCommits: with --fsync always and a slow disk (every log
// fsync takes 2 ms), the next commit is taken while the previous one is
// still fsyncing. Writers store increasing numbers under their own key
// and under one key they all share. After a power cut nothing
// acknowledged is missing; after a clean close every key holds the last
// value stored, so batches reached the engine in the order they were
// taken.
func TestOverlappingCommits(t *testing.T) {
	fs := vfs.NewMem()
	fs.SetInjector(func(op vfs.Op, name string) error {
		if op == vfs.OpSync && strings.HasSuffix(name, ".log") {
			time.Sleep(2 * time.Millisecond)
		}
		return nil
	})
	o := lsm.Options{FS: fs, Sync: lsm.SyncAlways, PipelinedSync: true}
	db, err := lsm.Open("/data", o)
	if err != nil {
		t.Fatal(err)
	}
	l := New(db)
	s, err := store.Open(store.Config{SweepInterval: -1}, l)
	if err != nil {
		t.Fatal(err)
	}
	const writers = 16
	var mu sync.Mutex
	acked := make([]int, writers)  // the last acknowledged number of each writer
	stored := make([]int, writers) // the last stored number (acknowledged or not)
	var shared struct {
		sync.Mutex
		last int // the last number stored under "shared"
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Appendf(nil, "w%d", w)
			for n := 1; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				v := strconv.AppendInt(nil, int64(n), 10)
				if _, err := s.Store(store.ModeSet, key, v, 0, 0, 0); err != nil {
					return
				}
				mu.Lock()
				stored[w] = n
				mu.Unlock()
				// The shared key's writes are ordered by this lock, as
				// a client's pipelined writes are by its connection.
				shared.Lock()
				shared.last++
				_, err := s.Store(store.ModeSet, []byte("shared"), fmt.Appendf(nil, "v%d", shared.last), 0, 0, 0)
				shared.Unlock()
				if err != nil || s.Sync() != nil {
					return
				}
				mu.Lock()
				acked[w] = n
				mu.Unlock()
			}
		}()
	}
	// The engine's value of the shared key never goes back: a batch
	// applied after a newer one would take it back.
	wg.Add(1)
	go func() {
		defer wg.Done()
		seen := 0
		for {
			select {
			case <-stop:
				return
			default:
			}
			rec, err := db.Get([]byte("kshared"))
			if err != nil {
				continue
			}
			i := bytes.LastIndexByte(rec, 'v')
			n, _ := strconv.Atoi(string(rec[i+1:]))
			if n < seen {
				t.Errorf("the engine's shared value went back from %d to %d", seen, n)
				return
			}
			seen = n
			time.Sleep(50 * time.Microsecond)
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for l.overlapped.Load() < 20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock() // nothing is acknowledged while the power goes
	crashed := fs.CrashClone(false)
	want := append([]int(nil), acked...)
	mu.Unlock()
	close(stop)
	wg.Wait()
	if n := l.overlapped.Load(); n < 20 {
		t.Fatalf("only %d commits overlapped the one before", n)
	}
	s.Close()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	check := func(what string, fs *vfs.MemFS, ok func(w, got int) bool) {
		t.Helper()
		fs.SetInjector(nil)
		db, err := lsm.Open("/data", lsm.Options{FS: fs, Sync: lsm.SyncAlways})
		if err != nil {
			t.Fatalf("%s: reopen: %v", what, err)
		}
		defer db.Close()
		l := New(db)
		defer l.Close()
		s, err := store.Open(store.Config{SweepInterval: -1}, l)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		value := func(key string) int {
			it, found := s.Get([]byte(key))
			if !found {
				return 0
			}
			n, _ := strconv.Atoi(strings.TrimPrefix(string(it.Value), "v"))
			return n
		}
		for w := range writers {
			if got := value(fmt.Sprintf("w%d", w)); !ok(w, got) {
				t.Errorf("%s: w%d = %d (acknowledged %d, stored %d)", what, w, got, want[w], stored[w])
			}
		}
		if what == "clean close" && value("shared") != shared.last {
			t.Errorf("clean close: shared = %d, the last stored is %d", value("shared"), shared.last)
		}
	}
	check("power cut", crashed, func(w, got int) bool { return got >= want[w] })
	check("clean close", fs, func(w, got int) bool { return got == stored[w] })
}
