package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// tableEntryCount is the number of entries in the DB's tables.
func tableEntryCount(d *DB) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var n uint64
	for _, files := range d.current.levels {
		for _, f := range files {
			n += f.entries
		}
	}
	return n
}

// TestSnapshotReads takes snapshots between writes and checks Get and a
// scan through each of them after the writes went on, with the data moved
// to tables in four ways after every write.
func TestSnapshotReads(t *testing.T) {
	type step struct {
		key, value string // value "": delete; key "": take a snapshot
	}
	steps := []step{
		{"a", "a1"}, {"b", "b1"}, {"c", "c1"},
		{"", ""}, // snapshot 0
		{"a", "a2"}, {"b", ""}, {"d", "d1"},
		{"", ""}, // snapshot 1
		{"a", "a3"}, {"c", ""}, {"b", "b3"},
		{"", ""}, // snapshot 2
		{"a", ""}, {"d", "d4"},
	}
	want := []string{ // each snapshot's scan, then the DB's
		"a=a1 b=b1 c=c1",
		"a=a2 c=c1 d=d1",
		"a=a3 b=b3 d=d1",
		"b=b3 d=d4",
	}
	shapes := map[string]struct {
		each, end func(db *DB) error // after each write, after the last
	}{
		"memtable":         {},
		"l0":               {each: (*DB).Flush},
		"compacted":        {each: (*DB).Compact},
		"compacted-at-end": {end: (*DB).Compact},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			db, err := Open("/db", Options{FS: vfs.NewMem(), DisableAutoCompaction: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var snaps []*Snapshot
			for _, s := range steps {
				switch {
				case s.key == "":
					snaps = append(snaps, db.NewSnapshot())
				case s.value == "":
					err = db.Delete([]byte(s.key))
				default:
					err = db.Put([]byte(s.key), []byte(s.value))
				}
				if err == nil && shape.each != nil {
					err = shape.each(db)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if shape.end != nil {
				if err := shape.end(db); err != nil {
					t.Fatal(err)
				}
			}
			for i, s := range snaps {
				it, err := s.NewIter(nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := scanString(it); got != want[i] {
					t.Errorf("snapshot %d scan = %q, want %q", i, got, want[i])
				}
				if got := reverseScanString(it); got != want[i] {
					t.Errorf("snapshot %d reverse scan = %q, want %q", i, got, want[i])
				}
				_ = it.Close()
				for _, k := range []string{"a", "b", "c", "d", "e"} {
					v, err := s.Get([]byte(k))
					got := k + "=" + string(v)
					if errors.Is(err, ErrNotFound) {
						got = ""
					} else if err != nil {
						t.Fatalf("snapshot %d Get(%s): %v", i, k, err)
					}
					if wantKV := findKV(want[i], k); got != wantKV {
						t.Errorf("snapshot %d Get(%s) = %q, want %q", i, k, got, wantKV)
					}
				}
			}
			it, _ := db.NewIter(nil)
			if got := scanString(it); got != want[3] {
				t.Errorf("DB scan = %q, want %q", got, want[3])
			}
			_ = it.Close()
			for _, s := range snaps {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func scanString(it *Iterator) string {
	var out []string
	for ok := it.First(); ok; ok = it.Next() {
		out = append(out, string(it.Key())+"="+string(it.Value()))
	}
	return strings.Join(out, " ")
}

func reverseScanString(it *Iterator) string {
	var out []string
	for ok := it.Last(); ok; ok = it.Prev() {
		out = append([]string{string(it.Key()) + "=" + string(it.Value())}, out...)
	}
	return strings.Join(out, " ")
}

// findKV returns the "k=v" field of scan for key k, or "".
func findKV(scan, k string) string {
	for _, f := range strings.Fields(scan) {
		if strings.HasPrefix(f, k+"=") {
			return f
		}
	}
	return ""
}

// TestSnapshotKeepsVersionsUntilClosed: while a snapshot lives,
// compactions keep the versions and the tombstone it reads; once it is
// closed, the next compaction drops them.
func TestSnapshotKeepsVersionsUntilClosed(t *testing.T) {
	db, err := Open("/db", Options{FS: vfs.NewMem(), DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(k, v string) {
		t.Helper()
		if err := db.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	put("k", "v1")
	put("gone", "g1")
	s1 := db.NewSnapshot()
	put("k", "v2")
	put("k", "v3") // v2 is in the same stripe as v3: dropped even now
	if err := db.Delete([]byte("gone")); err != nil {
		t.Fatal(err)
	}
	s2 := db.NewSnapshot()
	put("k", "v4")
	for range 2 { // a flush, then a compaction over the flushed table
		if err := db.Compact(); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			s    *Snapshot
			key  string
			want string
		}{
			{s1, "k", "v1"}, {s1, "gone", "g1"},
			{s2, "k", "v3"}, {s2, "gone", ""},
			{nil, "k", "v4"}, {nil, "gone", ""},
		} {
			var v []byte
			var err error
			if c.s != nil {
				v, err = c.s.Get([]byte(c.key))
			} else {
				v, err = db.Get([]byte(c.key))
			}
			if c.want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("Get(%s) at %v = %q, %v; want ErrNotFound", c.key, c.s, v, err)
				}
			} else if err != nil || string(v) != c.want {
				t.Errorf("Get(%s) at %v = %q, %v; want %q", c.key, c.s, v, err, c.want)
			}
		}
	}
	// k: v4, v3 (s2), v1 (s1); gone: its tombstone (s2) and g1 (s1).
	if n := tableEntryCount(db); n != 5 {
		t.Errorf("with two snapshots the tables hold %d entries, want 5", n)
	}
	_ = s1.Close()
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	// k: v4, v3; gone: nothing (its tombstone is the oldest version).
	if n := tableEntryCount(db); n != 2 {
		t.Errorf("with one snapshot the tables hold %d entries, want 2", n)
	}
	_ = s2.Close()
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	if n := tableEntryCount(db); n != 1 {
		t.Errorf("without snapshots the tables hold %d entries, want 1", n)
	}
}

// TestSnapshotFlushKeepsVersions: a flush keeps a memtable's older
// versions that a snapshot reads, and only those.
func TestSnapshotFlushKeepsVersions(t *testing.T) {
	db, err := Open("/db", Options{FS: vfs.NewMem(), DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 3 {
		_ = db.Put([]byte("k"), fmt.Appendf(nil, "v%d", i))
	}
	s := db.NewSnapshot()
	defer s.Close()
	for i := 3; i < 6; i++ {
		_ = db.Put([]byte("k"), fmt.Appendf(nil, "v%d", i))
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := tableEntryCount(db); n != 2 {
		t.Errorf("flushed table holds %d entries, want 2 (v5, and v2 for the snapshot)", n)
	}
	if v, err := s.Get([]byte("k")); err != nil || string(v) != "v2" {
		t.Errorf("snapshot Get(k) = %q, %v; want v2", v, err)
	}
}

// TestSnapshotClosed: reads through a closed snapshot, or through any
// snapshot of a closed DB, return ErrClosed; an iterator made before the
// snapshot's Close keeps working; Close twice is harmless.
func TestSnapshotClosed(t *testing.T) {
	db, err := Open("/db", Options{FS: vfs.NewMem(), DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Put([]byte("k"), []byte("v1"))
	s := db.NewSnapshot()
	it, err := s.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Put([]byte("k"), []byte("v2"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, err := s.Get([]byte("k")); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close = %v, want ErrClosed", err)
	}
	if _, err := s.NewIter(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("NewIter after Close = %v, want ErrClosed", err)
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	// The iterator pins its tables: the compaction did not touch them.
	if got := scanString(it); got != "k=v1" {
		t.Errorf("iterator of a closed snapshot scans %q, want k=v1", got)
	}
	_ = it.Close()

	s2 := db.NewSnapshot()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get([]byte("k")); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after DB Close = %v, want ErrClosed", err)
	}
	if _, err := s2.NewIter(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("NewIter after DB Close = %v, want ErrClosed", err)
	}
	if err := s2.Close(); err != nil {
		t.Errorf("Close after DB Close = %v, want nil", err)
	}
	s3 := db.NewSnapshot()
	if _, err := s3.Get([]byte("k")); !errors.Is(err, ErrClosed) {
		t.Errorf("Get on a snapshot of a closed DB = %v, want ErrClosed", err)
	}
}

// TestSnapshotExpiryAndDrop: what a snapshot does not freeze, as its doc
// says: a key that expires after the snapshot was taken, and a value
// Options.Drop rejects, are gone from the snapshot too.
func TestSnapshotExpiryAndDrop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, err := Open("/db", Options{FS: vfs.NewMem(), DisableAutoCompaction: true,
			Drop: func(key, value []byte) bool { return bytes.HasPrefix(value, []byte("x")) }})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_ = db.PutExpiring([]byte("ttl"), []byte("t1"), time.Now().Add(time.Minute))
		_ = db.Put([]byte("drop"), []byte("x1"))
		_ = db.Put([]byte("keep"), []byte("k1"))
		s := db.NewSnapshot()
		defer s.Close()
		_ = db.Put([]byte("drop"), []byte("d2"))
		_ = db.Put([]byte("keep"), []byte("k2"))
		if v, exp, err := s.GetEntry([]byte("ttl")); err != nil || string(v) != "t1" || exp.IsZero() {
			t.Errorf("snapshot GetEntry(ttl) = %q, %v, %v; want t1 with its expiry", v, exp, err)
		}
		time.Sleep(2 * time.Minute)
		if err := db.Compact(); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ key, want string }{{"ttl", ""}, {"drop", ""}, {"keep", "k1"}} {
			v, err := s.Get([]byte(c.key))
			if c.want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("snapshot Get(%s) = %q, %v; want ErrNotFound", c.key, v, err)
				}
			} else if err != nil || string(v) != c.want {
				t.Errorf("snapshot Get(%s) = %q, %v; want %q", c.key, v, err, c.want)
			}
		}
		if v, err := db.Get([]byte("drop")); err != nil || string(v) != "d2" {
			t.Errorf("Get(drop) = %q, %v; want d2", v, err)
		}
	})
}

// TestSnapshotConcurrent: writers commit batches that set every key of a
// group to one generation, while background flushes and compactions run
// and readers take snapshots: every snapshot must see one generation in
// every group, through Get and through an iterator, whatever the
// compactions did meanwhile. Run it with -race.
func TestSnapshotConcurrent(t *testing.T) {
	db, err := Open("/db", Options{FS: vfs.NewMem(), MemTableSize: 32 << 10, L0CompactionTrigger: 2,
		LBaseMaxBytes: 64 << 10, TargetFileSize: 16 << 10, BlockSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const groups, perGroup = 8, 16
	key := func(g, i int) []byte { return fmt.Appendf(nil, "g%d/k%02d", g, i) }
	gens := 1500
	if raceEnabled {
		gens = 400
	}
	var wg sync.WaitGroup
	for g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for gen := range gens {
				b := NewBatch()
				for i := range perGroup {
					if gen%7 == 6 && i%3 == 0 {
						b.Delete(key(g, i))
					} else {
						b.Put(key(g, i), fmt.Appendf(nil, "%06d-%s", gen, bytes.Repeat([]byte{'v'}, 40)))
					}
				}
				if err := db.Apply(b); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	var rwg sync.WaitGroup
	for r := range 2 {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for {
				select {
				case <-done:
					return
				default:
				}
				s := db.NewSnapshot()
				g := rng.IntN(groups)
				// Let the writers and compactions move on first.
				for range 1 + rng.IntN(20) {
					_, _ = db.Get(key(g, 0))
				}
				gen := ""
				for i := range perGroup {
					v, err := s.Get(key(g, i))
					if errors.Is(err, ErrNotFound) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					if gen == "" {
						gen = string(v[:6])
					} else if string(v[:6]) != gen {
						t.Errorf("snapshot Get: group %d mixes generations %s and %s", g, gen, v[:6])
						return
					}
				}
				it, err := s.NewIter(&IterOptions{LowerBound: key(g, 0), UpperBound: key(g+1, 0)})
				if err != nil {
					t.Error(err)
					return
				}
				ok := it.First()
				if rng.IntN(2) == 0 {
					ok = it.Last()
				}
				for ; ok; ok = it.Prev() {
					if gen == "" || string(it.Value()[:6]) != gen {
						t.Errorf("snapshot iterator: group %d at %s has generation %s, Get saw %q", g, it.Key(), it.Value()[:6], gen)
						break
					}
				}
				if err := it.Close(); err != nil {
					t.Error(err)
				}
				_ = s.Close()
			}
		}()
	}
	wg.Wait()
	close(done)
	rwg.Wait()
	if m := db.Metrics(); m.Compactions == 0 {
		t.Logf("no compaction ran: %v", m)
	}
}

// TestSnapshotModel runs random writes, flushes, compactions, snapshots
// and snapshot closes against the engine and a model that keeps a copy of
// the map for each live snapshot, and checks Get, forward and reverse
// scans and random walks (seeks and direction changes) through the DB and
// through every snapshot. Tables are small, so background flushes and
// compactions run between the steps.
func TestSnapshotModel(t *testing.T) {
	ops := 20_000
	if raceEnabled {
		ops = 6_000
	}
	if *soak {
		ops = 1_000_000
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	opts := modelOptions(vfs.NewMem(), SyncNone, rng)
	db, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type view struct {
		s *Snapshot
		m model
	}
	var views []view
	defer func() {
		for _, v := range views {
			_ = v.s.Close()
		}
	}()
	m := model{}
	nkeys := 200 + rng.IntN(1500)
	key := func() []byte { return fmt.Appendf(nil, "k%05d", rng.IntN(nkeys)) }
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	// pick returns the DB's view (nil snapshot) or a live snapshot's.
	pick := func() (*Snapshot, model) {
		if len(views) == 0 || rng.IntN(3) == 0 {
			return nil, m
		}
		v := views[rng.IntN(len(views))]
		return v.s, v.m
	}
	newIter := func(s *Snapshot, o *IterOptions) *Iterator {
		var it *Iterator
		var err error
		if s != nil {
			it, err = s.NewIter(o)
		} else {
			it, err = db.NewIter(o)
		}
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	for i := 0; i < ops; i++ {
		switch r := rng.IntN(1000); {
		case r < 450:
			k, v := key(), fmt.Appendf(nil, "%d-%s", i, bytes.Repeat([]byte{'v'}, rng.IntN(60)))
			switch rng.IntN(10) {
			case 0:
				err = db.PutExpiring(k, v, past)
				delete(m, string(k))
			case 1:
				err = db.PutExpiring(k, v, future)
				m[string(k)] = v
			default:
				err = db.Put(k, v)
				m[string(k)] = v
			}
			if err != nil {
				t.Fatalf("op %d: Put: %v", i, err)
			}
		case r < 550:
			k := key()
			if err := db.Delete(k); err != nil {
				t.Fatalf("op %d: Delete: %v", i, err)
			}
			delete(m, string(k))
		case r < 800:
			s, vm := pick()
			k := key()
			var got []byte
			var err error
			if s != nil {
				got, err = s.Get(k)
			} else {
				got, err = db.Get(k)
			}
			want, ok := vm[string(k)]
			if !ok {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("op %d: Get(%s) at %p = %q, %v; want ErrNotFound", i, k, s, got, err)
				}
			} else if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("op %d: Get(%s) at %p = %q, %v; want %q", i, k, s, got, err, want)
			}
		case r < 830:
			s, vm := pick()
			var lo, hi []byte
			if rng.IntN(2) == 0 {
				lo, hi = key(), key()
				if bytes.Compare(lo, hi) > 0 {
					lo, hi = hi, lo
				}
			}
			it := newIter(s, &IterOptions{LowerBound: lo, UpperBound: hi})
			checkScans(t, i, it, vm, lo, hi)
		case r < 900:
			s, vm := pick()
			var lo, hi []byte
			if rng.IntN(2) == 0 {
				lo, hi = key(), key()
				if bytes.Compare(lo, hi) > 0 {
					lo, hi = hi, lo
				}
			}
			it := newIter(s, &IterOptions{LowerBound: lo, UpperBound: hi})
			checkWalk(t, i, it, vm, lo, hi, rng, 40, func() []byte {
				return append(key(), "\x00"[:rng.IntN(2)]...)
			})
			if err := it.Close(); err != nil {
				t.Fatalf("op %d: iter: %v", i, err)
			}
		case r < 940:
			if len(views) < 8 {
				views = append(views, view{db.NewSnapshot(), maps.Clone(m)})
			}
		case r < 975:
			if len(views) > 0 {
				j := rng.IntN(len(views))
				if err := views[j].s.Close(); err != nil {
					t.Fatalf("op %d: Snapshot.Close: %v", i, err)
				}
				views = append(views[:j], views[j+1:]...)
			}
		case r < 997:
			if err := db.Flush(); err != nil {
				t.Fatalf("op %d: Flush: %v", i, err)
			}
		default:
			if err := db.Compact(); err != nil {
				t.Fatalf("op %d: Compact: %v", i, err)
			}
		}
	}
	for _, v := range views {
		checkScans(t, ops, newIter(v.s, nil), v.m, nil, nil)
	}
	checkScans(t, ops, newIter(nil, nil), m, nil, nil)
	t.Logf("final: %d keys, %d snapshots\n%v", len(m), len(views), db.Metrics())
}

// checkScans scans it forward and backward against m restricted to
// [lo, hi), and closes it.
func checkScans(t *testing.T, op int, it *Iterator, m model, lo, hi []byte) {
	t.Helper()
	var want []string
	for k, v := range m {
		if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
			want = append(want, k+"="+string(v))
		}
	}
	slices.Sort(want)
	wantS := strings.Join(want, " ")
	if got := scanString(it); got != wantS {
		t.Fatalf("op %d: scan [%q,%q):\n got %.300s\nwant %.300s", op, lo, hi, got, wantS)
	}
	if got := reverseScanString(it); got != wantS {
		t.Fatalf("op %d: reverse scan [%q,%q):\n got %.300s\nwant %.300s", op, lo, hi, got, wantS)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("op %d: iter: %v", op, err)
	}
}
