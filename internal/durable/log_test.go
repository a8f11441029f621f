package durable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

// durableStore is a Store over a Log over an lsm.DB in dir.
type durableStore struct {
	*store.Store
	log *Log
	db  *lsm.DB
}

func openStore(t testing.TB, dir string, cfg store.Config) *durableStore {
	t.Helper()
	return openStoreWith(t, dir, cfg, lsm.Options{Sync: lsm.SyncNone})
}

// openStoreWith opens the Log with Open, as cmd/minikv does, so the
// engine's compactions follow the store's rule.
func openStoreWith(t testing.TB, dir string, cfg store.Config, o lsm.Options) *durableStore {
	t.Helper()
	l, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(cfg, l)
	if err != nil {
		t.Fatal(err)
	}
	return &durableStore{Store: s, log: l, db: l.DB()}
}

func (d *durableStore) close(t testing.TB) {
	t.Helper()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	d.Store.Close()
	if err := d.log.Close(); err != nil { // closes the DB too
		t.Fatal(err)
	}
}

func mustStore(t testing.TB, s *durableStore, key, value string, flags uint32, deadline int64) uint64 {
	t.Helper()
	cas, err := s.Store.Store(store.ModeSet, []byte(key), []byte(value), flags, deadline, 0)
	if err != nil {
		t.Fatalf("Store(%q): %v", key, err)
	}
	return cas
}

// TestRestartKeepsItems: values, flags, deadlines and CAS tokens survive a
// close and reopen; expired and deleted keys stay gone; every token issued
// after the restart is above every token issued before it.
func TestRestartKeepsItems(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1})
	far := time.Now().Add(time.Hour).UnixMilli()
	casA := mustStore(t, s, "a", "alpha", 7, 0)
	mustStore(t, s, "b", "beta", 0, far)
	mustStore(t, s, "gone", "x", 0, 0)
	mustStore(t, s, "soon", "x", 0, time.Now().Add(50*time.Millisecond).UnixMilli())
	if err := s.Delete([]byte("gone")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Incr([]byte("n"), 1, false); err != store.ErrNotFound {
		t.Fatalf("Incr of a missing key: %v", err)
	}
	mustStore(t, s, "n", "41", 0, 0)
	if v, _, err := s.Incr([]byte("n"), 1, false); err != nil || v != 42 {
		t.Fatalf("Incr = %d, %v", v, err)
	}
	lastCAS := mustStore(t, s, "last", "z", 0, 0)
	s.close(t)
	time.Sleep(60 * time.Millisecond) // "soon" expires while the server is down

	s = openStore(t, dir, store.Config{SweepInterval: -1})
	defer s.close(t)
	it, ok := s.Get([]byte("a"))
	if !ok || string(it.Value) != "alpha" || it.Flags != 7 || it.CAS != casA || it.Deadline != 0 {
		t.Errorf("a after restart = %+v, %v; want alpha, flags 7, cas %d", it, ok, casA)
	}
	if it, ok := s.Get([]byte("b")); !ok || string(it.Value) != "beta" || it.Deadline != far {
		t.Errorf("b after restart = %+v, %v; want beta with deadline %d", it, ok, far)
	}
	if it, ok := s.Get([]byte("n")); !ok || string(it.Value) != "42" {
		t.Errorf("n after restart = %q, %v", it.Value, ok)
	}
	for _, k := range []string{"gone", "soon", "never"} {
		if it, ok := s.Get([]byte(k)); ok {
			t.Errorf("%s after restart = %q, want missing", k, it.Value)
		}
	}
	if cas := mustStore(t, s, "new", "v", 0, 0); cas <= lastCAS {
		t.Errorf("first CAS after restart %d, not above the last before it %d", cas, lastCAS)
	}
	if _, err := s.Store.Store(store.ModeCAS, []byte("a"), []byte("A"), 0, 0, casA); err != nil {
		t.Errorf("cas with a token read before the restart: %v", err)
	}
	if _, err := s.Store.Store(store.ModeAdd, []byte("b"), []byte("x"), 0, 0, 0); err != store.ErrNotStored {
		t.Errorf("add over a key only on disk = %v, want ErrNotStored", err)
	}
}

// TestFlushAllIsDurable: a flush hides every older record after a restart
// too, and items written after it stay.
func TestFlushAllIsDurable(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1})
	mustStore(t, s, "old", "1", 0, 0)
	s.FlushAll(0)
	mustStore(t, s, "new", "2", 0, 0)
	s.FlushAll(time.Now().Add(time.Hour).UnixMilli()) // armed, not yet due
	s.close(t)

	s = openStore(t, dir, store.Config{SweepInterval: -1})
	if _, ok := s.Get([]byte("old")); ok {
		t.Error("old survived flush_all and a restart")
	}
	if it, ok := s.Get([]byte("new")); !ok || string(it.Value) != "2" {
		t.Errorf("new = %q, %v; want 2", it.Value, ok)
	}
	s.close(t)
}

// TestEvictedItemsStayOnDisk: with memory for a fraction of the items,
// every item is still readable (from disk, brought back into memory), and
// memory stays within the limit but for the one-item overdraft per shard.
func TestEvictedItemsStayOnDisk(t *testing.T) {
	dir := t.TempDir()
	const limit = 1 << 20
	s := openStore(t, dir, store.Config{MemoryLimit: limit, Shards: 16, SweepInterval: -1})
	defer s.close(t)
	value := bytes.Repeat([]byte("v"), 4000)
	const n = 2000 // 8 MB of values for 1 MiB of memory
	for i := range n {
		if _, err := s.Store.Store(store.ModeSet, fmt.Appendf(nil, "key%d", i), value, uint32(i), 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Evictions == 0 || st.Bytes > limit {
		t.Fatalf("Evictions %d Bytes %d: want evictions and bytes <= %d", st.Evictions, st.Bytes, limit)
	}
	for i := range n {
		it, ok := s.Get(fmt.Appendf(nil, "key%d", i))
		if !ok || !bytes.Equal(it.Value, value) || it.Flags != uint32(i) {
			t.Fatalf("key%d = %d bytes, flags %d, %v", i, len(it.Value), it.Flags, ok)
		}
	}
	if st := s.Stats(); st.Bytes > limit+16*(4000+200) {
		t.Errorf("Bytes %d after reading everything back, limit %d", st.Bytes, limit)
	}
}

// TestPowerLoss cuts the power (the engine's MemFS drops everything not
// fsynced) while writers store and Sync (acknowledge) increasing counters
// under their own keys. With SyncAlways every write acknowledged before
// the cut is there after reopening; with SyncEverySecond every write
// acknowledged more than 2 s before it is (the promise is about one
// second; the margin is for a loaded machine's late timer). The recycled
// cases reuse logs (lsm.Options.RecycleWAL, small memtables so they rotate)
// and cut the power with part of the unsynced sectors on the disk, in any
// order (vfs.MemFS.CrashCloneTorn).
func TestPowerLoss(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    lsm.SyncMode
		run     time.Duration
		grace   time.Duration
		recycle bool
	}{
		{"always", lsm.SyncAlways, 300 * time.Millisecond, 0, false},
		{"everysec", lsm.SyncEverySecond, 3 * time.Second, 2 * time.Second, false},
		{"always-recycled", lsm.SyncAlways, 300 * time.Millisecond, 0, true},
		{"everysec-recycled", lsm.SyncEverySecond, 3 * time.Second, 2 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			o := lsm.Options{FS: fs, Sync: tc.mode}
			if tc.recycle {
				o.RecycleWAL, o.MemTableSize = 2, 32<<10
			}
			db, err := lsm.Open("/data", o)
			if err != nil {
				t.Fatal(err)
			}
			l := New(db)
			s, err := store.Open(store.Config{SweepInterval: -1}, l)
			if err != nil {
				t.Fatal(err)
			}
			const writers = 4
			type ack struct {
				at time.Time
				n  int
			}
			var mu sync.Mutex
			acks := make([][]ack, writers)
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
						if _, err := s.Store(store.ModeSet, key, strconv.AppendInt(nil, int64(n), 10), 0, 0, 0); err != nil {
							return
						}
						if s.Sync() != nil {
							return
						}
						mu.Lock()
						acks[w] = append(acks[w], ack{time.Now(), n})
						mu.Unlock()
					}
				}()
			}
			time.Sleep(tc.run)
			mu.Lock() // nothing is acknowledged while the power goes
			cut := time.Now()
			crashed := fs.CrashClone(false)
			if tc.recycle {
				crashed = fs.CrashCloneTorn(rand.New(rand.NewPCG(uint64(cut.UnixNano()), 1)))
			}
			want := make([]int, writers)
			for w := range writers {
				for _, a := range acks[w] {
					if !a.at.After(cut.Add(-tc.grace)) {
						want[w] = a.n
					}
				}
			}
			mu.Unlock()
			close(stop)
			wg.Wait()
			if tc.recycle {
				t.Logf("%d logs recycled, %d preallocated before the cut", db.Metrics().LogsRecycled, db.Metrics().LogsPreallocated)
			}
			s.Close()
			_ = l.Close()
			_ = db.Close()

			o.FS = crashed
			db, err = lsm.Open("/data", o)
			if err != nil {
				t.Fatalf("reopen after the power cut: %v", err)
			}
			defer db.Close()
			l = New(db)
			defer l.Close()
			s, err = store.Open(store.Config{SweepInterval: -1}, l)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for w := range writers {
				it, ok := s.Get(fmt.Appendf(nil, "w%d", w))
				got := 0
				if ok {
					got, _ = strconv.Atoi(string(it.Value))
				}
				if got < want[w] {
					t.Errorf("w%d = %d after the power cut, but %d was acknowledged%s before it", w, got, want[w], map[bool]string{true: " " + tc.grace.String(), false: ""}[tc.grace > 0])
				}
				if want[w] == 0 {
					t.Errorf("w%d: nothing acknowledged in %v", w, tc.run)
				}
			}
		})
	}
}

// openMemLog returns a Log over an engine on an in-memory filesystem,
// both closed when the test ends.
func openMemLog(t *testing.T) *Log {
	t.Helper()
	db, err := lsm.Open("/data", lsm.Options{FS: vfs.NewMem(), Sync: lsm.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	l := New(db)
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// TestLogCopiesRecords checks the record sets' arenas: Write copies the
// caller's buffers (the store reuses them), a record Read took from a
// queued batch stays as it was after that batch is in and its arena is
// reused for later batches, and reads of queued, committed and reused
// records all see the last write of each key.
func TestLogCopiesRecords(t *testing.T) {
	l := openMemLog(t)
	read := func(key string) string {
		t.Helper()
		rec, _, err := l.Read([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return string(rec)
	}
	model := map[string]string{}
	var kbuf, rbuf []byte
	write := func(key, rec string) {
		kbuf = append(kbuf[:0], key...)
		rbuf = append(rbuf[:0], rec...)
		l.Write(kbuf, rbuf, 0)
		// The caller's buffers are its own again.
		for i := range kbuf {
			kbuf[i] = '#'
		}
		for i := range rbuf {
			rbuf[i] = '#'
		}
		model[key] = rec
	}
	write("a", "first value of a")
	queued, _, err := l.Read([]byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if got := read("a"); got != "first value of a" {
		t.Fatalf("queued read: %q", got)
	}
	// Alone in its batch, a's record stays in the first array of that
	// batch's arena, which the next batches but one write over.
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		for i := range 1 + rng.IntN(40) {
			key := fmt.Sprintf("k%03d", rng.IntN(300))
			write(key, fmt.Sprintf("%s round %d write %d %s", key, round, i, strings.Repeat("x", rng.IntN(300))))
		}
		if round%3 == 0 {
			for key, want := range model {
				if got := read(key); got != want {
					t.Fatalf("round %d, queued: %s = %q, want %q", round, key, got, want)
				}
			}
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if string(queued) != "first value of a" {
		t.Fatalf("a record read while queued changed after its arena was reused: %q", queued)
	}
	for key, want := range model {
		if got := read(key); got != want {
			t.Fatalf("after the last commit: %s = %q, want %q", key, got, want)
		}
	}
}

// TestLogReadsTheLastQueuedChange interleaves writes, deletes and reads
// of a few keys within batches of every size around maxScan, so that
// reads find queued changes both by scanning a small batch and through
// the map a larger one builds on its first read, which the changes
// queued after that read must keep up to date.
func TestLogReadsTheLastQueuedChange(t *testing.T) {
	l := openMemLog(t)
	model := map[string]string{} // "" is deleted or never written
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 300 {
		size := 1 + rng.IntN(3*maxScan)
		for i := range size {
			key := fmt.Sprintf("k%02d", rng.IntN(24))
			switch op := rng.IntN(10); {
			case op < 2:
				l.Write([]byte(key), nil, 0)
				model[key] = ""
			case op < 7:
				rec := fmt.Sprintf("%s round %d change %d", key, round, i)
				l.Write([]byte(key), []byte(rec), 0)
				model[key] = rec
			default:
				rec, _, err := l.Read([]byte(key))
				if err != nil {
					t.Fatal(err)
				}
				if string(rec) != model[key] {
					t.Fatalf("round %d, change %d of %d: %s = %q, want %q", round, i, size, key, rec, model[key])
				}
			}
		}
		if err := l.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range model {
		rec, _, err := l.Read([]byte(key))
		if err != nil {
			t.Fatal(err)
		}
		if string(rec) != want {
			t.Fatalf("committed: %s = %q, want %q", key, rec, want)
		}
	}
}

// BenchmarkDurableSet is the durable write path of a SET as the server
// runs it: Store of a 100-byte value under one of 100,000 keys, and a
// SyncPass after every third write (an event loop's pass at P=1 holds
// about that many), with the engine in its write(2) log mode. It reports
// the path's allocations, which should be none: the store builds the
// record in its shard's buffer and the Log copies it into an arena.
func BenchmarkDurableSet(b *testing.B) {
	s := openStoreWith(b, b.TempDir(), store.Config{MemoryLimit: 1 << 30}, lsm.Options{Sync: lsm.SyncNone, WriteWAL: true})
	defer s.close(b)
	keys := make([][]byte, 100_000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%012d", i)
	}
	value := bytes.Repeat([]byte("v"), 100)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := s.Store.Store(store.ModeSet, keys[rng.IntN(len(keys))], value, 0, 0, 0); err != nil {
			b.Fatal(err)
		}
		if i++; i%3 == 0 {
			if err := s.SyncPass(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestDeadlinesKeptInMilliseconds: the store's deadlines are Unix
// milliseconds; the engine keeps them exactly, past 2262 too, across a
// restart, and a record whose expiry an older version wrote in Unix
// nanoseconds (any nanosecond, not a whole millisecond) reads back as the
// millisecond it falls in.
func TestDeadlinesKeptInMilliseconds(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1})
	const y3021 = 33177117420000
	hour := time.Now().Add(time.Hour).UnixMilli()
	mustStore(t, s, "y3021", "v", 0, y3021)
	mustStore(t, s, "max", "v", 0, 1<<63-1)
	mustStore(t, s, "old", "v", 0, hour)
	s.close(t)

	// Rewrite "old" as the nanosecond version of the store wrote it.
	db, err := lsm.Open(dir, lsm.Options{Sync: lsm.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	k := []byte{prefixKey, 'o', 'l', 'd'}
	rec, exp, err := db.GetEntry(k)
	if err != nil || exp.UnixMilli() != hour {
		t.Fatalf("engine's expiry of old = %v, %v; want %d ms", exp, err, hour)
	}
	oldNs := hour*1e6 + 654321
	if err := db.PutExpiring(k, rec, time.Unix(0, oldNs)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, dir, store.Config{SweepInterval: -1})
	defer s.close(t)
	for key, want := range map[string]int64{"y3021": y3021, "max": 1<<63 - 1, "old": hour} {
		if it, ok := s.Get([]byte(key)); !ok || it.Deadline != want {
			t.Errorf("%s after restart: deadline %d, %v; want %d", key, it.Deadline, ok, want)
		}
	}
	n := 0
	if err := s.log.Scan(nil, func(key, _ []byte, deadline int64) bool {
		n++
		if key := string(key); key == "y3021" && deadline != y3021 || key == "old" && deadline != hour {
			t.Errorf("Scan: %s has deadline %d", key, deadline)
		}
		return true
	}); err != nil || n != 3 {
		t.Errorf("Scan saw %d records, %v; want 3", n, err)
	}
}

// TestLogSplitsLargeBatches: a change that would take the queued ones past
// maxBatch commits them first, so no batch handed to the engine outgrows
// it (lsm refuses batches past lsm.MaxBatchSize), and every change is in
// after the last Sync (maxBatch lowered for the test: the real one is
// 1 GiB).
func TestLogSplitsLargeBatches(t *testing.T) {
	defer func(old int) { maxBatch = old }(maxBatch)
	maxBatch = 1000
	l := openMemLog(t)
	rec := bytes.Repeat([]byte("r"), 300)
	for i := range 20 {
		l.Write(fmt.Appendf(nil, "k%02d", i), rec, 0)
		l.mu.Lock()
		size := l.pending.Size()
		l.mu.Unlock()
		if size > maxBatch {
			t.Fatalf("after write %d the queued batch is %d bytes, over maxBatch %d", i, size, maxBatch)
		}
	}
	if l.synced.Load() == 0 {
		t.Fatal("20 changes of 300 bytes queued with maxBatch 1000 and none committed")
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		got, err := l.db.Get(append([]byte{prefixKey}, fmt.Appendf(nil, "k%02d", i)...))
		if err != nil || !bytes.Equal(got, rec) {
			t.Fatalf("k%02d in the engine: %d bytes, %v", i, len(got), err)
		}
	}
}
