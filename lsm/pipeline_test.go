package lsm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// heldSyncs is a MemFS injector that, once armed, stops every fsync of a
// log until the test releases it, with the error the test chooses.
type heldSyncs struct {
	armed   atomic.Bool
	mu      sync.Mutex
	waiting []chan error // one per held fsync, in arrival order
	started chan struct{}
}

func newHeldSyncs() *heldSyncs { return &heldSyncs{started: make(chan struct{}, 64)} }

func (h *heldSyncs) inject(op vfs.Op, name string) error {
	if op != vfs.OpSync || !strings.HasSuffix(name, ".log") || !h.armed.Load() {
		return nil
	}
	ch := make(chan error)
	h.mu.Lock()
	h.waiting = append(h.waiting, ch)
	h.mu.Unlock()
	h.started <- struct{}{}
	return <-ch
}

// wait returns once n fsyncs are held in all.
func (h *heldSyncs) wait(t *testing.T, n int) {
	t.Helper()
	for {
		h.mu.Lock()
		got := len(h.waiting)
		h.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-h.started:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d fsyncs held, want %d", got, n)
		}
	}
}

// release lets the i-th held fsync return err.
func (h *heldSyncs) release(i int, err error) {
	h.mu.Lock()
	ch := h.waiting[i]
	h.mu.Unlock()
	ch <- err
}

// putAsync runs db.Put(k, v) in a goroutine; the channel gets its result.
func putAsync(db *DB, k, v string) chan error {
	done := make(chan error, 1)
	go func() { done <- db.Put([]byte(k), []byte(v)) }()
	return done
}

func returned(c chan error) bool {
	select {
	case err := <-c:
		c <- err // keep it for the caller
		return true
	default:
		return false
	}
}

func waitResult(t *testing.T, c chan error) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Put did not return")
		return nil
	}
}

// settle waits until the DB has taken in the return of the fsync of the
// i-th group in flight.
func settle(t *testing.T, db *DB, i int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		db.mu.Lock()
		ok := len(db.syncing) > i && db.syncing[i].synced
		db.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %d's fsync never returned", i)
		}
		time.Sleep(time.Millisecond)
	}
}

// openHeld opens a SyncAlways DB on a MemFS whose log fsyncs the test holds.
func openHeld(t *testing.T) (*DB, *heldSyncs, *vfs.MemFS) {
	t.Helper()
	fs := vfs.NewMem()
	h := newHeldSyncs()
	fs.SetInjector(h.inject)
	db, err := Open("/db", Options{FS: fs, Sync: SyncAlways, PipelinedSync: true})
	if err != nil {
		t.Fatal(err)
	}
	h.armed.Store(true)
	return db, h, fs
}

// TestPipelinedSyncsAcknowledgeInOrder: while the first group's fsync is
// in flight the next group is written and fsynced, and when the second
// fsync returns first, its writer still waits for the first group and its
// write stays invisible; both return once the first fsync does.
func TestPipelinedSyncsAcknowledgeInOrder(t *testing.T) {
	db, h, fs := openHeld(t)
	a := putAsync(db, "a", "1")
	h.wait(t, 1) // a's group is written and fsyncing
	b := putAsync(db, "b", "2")
	h.wait(t, 2) // b's group too: the fsyncs overlap

	h.release(1, nil) // b's fsync returns first
	settle(t, db, 1)
	if returned(b) {
		t.Fatal("Put(b) returned before the earlier group's fsync")
	}
	if _, err := db.Get([]byte("b")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(b) before its acknowledgement: %v, want ErrNotFound", err)
	}
	// Power loss now: a's group is durable only because b's fsync covered
	// it, and nothing acknowledged may be missing (nothing is).
	image := fs.CrashClone(false)

	h.release(0, nil)
	if err := waitResult(t, a); err != nil {
		t.Fatal(err)
	}
	if err := waitResult(t, b); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if _, err := db.Get([]byte(k)); err != nil {
			t.Fatalf("Get(%s) after the acknowledgement: %v", k, err)
		}
	}
	h.armed.Store(false)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open("/db", Options{FS: image, Sync: SyncAlways, PipelinedSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	for _, k := range []string{"a", "b"} {
		if _, err := db2.Get([]byte(k)); err != nil {
			t.Errorf("after power loss with b's fsync done: Get(%s): %v", k, err)
		}
	}
}

// TestPipelinedSyncFailureFailsLaterGroups: a failed fsync fails its
// group and every group after it, even one whose own fsync succeeded, and
// every write after them; in either order of return.
func TestPipelinedSyncFailureFailsLaterGroups(t *testing.T) {
	for _, order := range []string{"failed first", "failed last"} {
		t.Run(order, func(t *testing.T) {
			db, h, _ := openHeld(t)
			defer func() {
				h.armed.Store(false)
				_ = db.Close()
			}()
			a := putAsync(db, "a", "1")
			h.wait(t, 1)
			b := putAsync(db, "b", "2")
			h.wait(t, 2)
			injected := errors.New("injected fsync failure")
			if order == "failed first" {
				h.release(0, injected)
				h.release(1, nil)
			} else {
				h.release(1, nil)
				h.release(0, injected)
			}
			for name, c := range map[string]chan error{"a": a, "b": b} {
				if err := waitResult(t, c); !errors.Is(err, injected) {
					t.Errorf("Put(%s): %v, want the fsync error", name, err)
				}
			}
			if err := db.Put([]byte("c"), []byte("3")); err == nil {
				t.Error("Put after a failed fsync succeeded")
			}
			for _, k := range []string{"a", "b"} {
				if _, err := db.Get([]byte(k)); !errors.Is(err, ErrNotFound) {
					t.Errorf("Get(%s) of a failed write: %v, want ErrNotFound", k, err)
				}
			}
		})
	}
}

// TestPipelinedSyncsBounded: with maxSyncing fsyncs in flight the next
// leader waits, and the writers that queue meanwhile share its fsync.
func TestPipelinedSyncsBounded(t *testing.T) {
	db, h, _ := openHeld(t)
	var first []chan error
	for i := 0; i < maxSyncing; i++ {
		first = append(first, putAsync(db, fmt.Sprint("first", i), "v"))
		h.wait(t, i+1)
	}
	var later []chan error
	for i := 0; i < 5; i++ {
		later = append(later, putAsync(db, fmt.Sprint("later", i), "v"))
	}
	// Let the later writers queue behind the waiting leader.
	for {
		db.mu.Lock()
		n := len(db.writers)
		db.mu.Unlock()
		if n == len(later) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	h.mu.Lock()
	held := len(h.waiting)
	h.mu.Unlock()
	if held != maxSyncing {
		t.Fatalf("%d fsyncs in flight, want at most %d", held, maxSyncing)
	}
	for i := 0; i < maxSyncing; i++ {
		h.release(i, nil)
	}
	h.wait(t, maxSyncing+1)
	h.release(maxSyncing, nil) // one fsync for all five
	for _, c := range append(first, later...) {
		if err := waitResult(t, c); err != nil {
			t.Fatal(err)
		}
	}
	h.mu.Lock()
	held = len(h.waiting)
	h.mu.Unlock()
	if held != maxSyncing+1 {
		t.Errorf("%d fsyncs, want %d", held, maxSyncing+1)
	}
	h.armed.Store(false)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPowerLossOverlappingSyncs: writers in SyncAlways whose fsyncs take
// random times, so that they overlap and return out of order; at a random
// moment the power goes. Every write acknowledged before it is there
// after recovery, and the writes of each writer survive as a prefix (a
// later write never survives an earlier one's loss).
func TestPowerLossOverlappingSyncs(t *testing.T) {
	rounds := 4
	if *soak {
		rounds = 40
	}
	for round := 0; round < rounds; round++ {
		fs := vfs.NewMem()
		rng := rand.New(rand.NewPCG(uint64(round), 99))
		var rngMu sync.Mutex
		fs.SetInjector(func(op vfs.Op, name string) error {
			if op == vfs.OpSync && strings.HasSuffix(name, ".log") {
				rngMu.Lock()
				d := time.Duration(rng.IntN(400)) * time.Microsecond
				rngMu.Unlock()
				time.Sleep(d)
			}
			return nil
		})
		o := crashOptions(SyncAlways, false)
		o.FS = fs
		o.PipelinedSync = true
		db, err := Open("/db", o)
		if err != nil {
			t.Fatal(err)
		}
		const writers = 8
		var acked [writers]atomic.Int64
		var stop atomic.Bool
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for c := 0; !stop.Load(); c++ {
					if err := db.Put(crashKey(w, c), crashValue(w, c)); err != nil {
						return
					}
					acked[w].Store(int64(c + 1))
				}
			}()
		}
		time.Sleep(time.Duration(30+round*13%90) * time.Millisecond)
		var snapshot [writers]int64
		for w := range acked {
			snapshot[w] = acked[w].Load()
		}
		image := fs.CrashClone(false)
		stop.Store(true)
		wg.Wait()
		syncs := db.Metrics().WALSyncs
		_ = db.Close()

		o.FS = image
		db, err = Open("/db", o)
		if err != nil {
			t.Fatalf("round %d: open after power loss: %v", round, err)
		}
		total := int64(0)
		for w := 0; w < writers; w++ {
			lost := false
			for c := 0; ; c++ {
				v, err := db.Get(crashKey(w, c))
				switch {
				case err == nil && string(v) == string(crashValue(w, c)):
					if lost {
						t.Fatalf("round %d: %s survived but an earlier write of its writer did not", round, crashKey(w, c))
					}
				case errors.Is(err, ErrNotFound):
					if c < int(snapshot[w]) {
						t.Fatalf("round %d: acknowledged Put(%s) lost in power loss", round, crashKey(w, c))
					}
					lost = true
				default:
					t.Fatalf("round %d: Get(%s): %q, %v", round, crashKey(w, c), v, err)
				}
				if lost && c > int(snapshot[w])+1000 {
					break
				}
			}
			total += snapshot[w]
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d acknowledged writes survived, %d fsyncs", round, total, syncs)
	}
}
