package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/lsm/vfs"
)

func corruptionKey(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }
func corruptionValue(i int) []byte {
	return fmt.Appendf(nil, "value-%d-%s", i, strings.Repeat("v", i%50))
}

func filesWithSuffix(fs *vfs.MemFS, suffix string) []string {
	var out []string
	for _, n := range fs.Names() {
		if strings.HasSuffix(n, suffix) {
			out = append(out, n)
		}
	}
	return out
}

func fileSize(t *testing.T, fs *vfs.MemFS, name string) int64 {
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, _ := f.Size()
	return n
}

// TestCorruptTableNeverReturnsWrongData flips one byte at a time in the
// tables of a closed DB and checks that every read then returns the right
// value or an error — never a wrong value, never "not found" for a key that
// exists.
func TestCorruptTableNeverReturnsWrongData(t *testing.T) {
	fs := vfs.NewMem()
	o := Options{FS: fs, MemTableSize: 32 << 10, BlockSize: 1024, BlockCacheSize: -1, DisableAutoCompaction: true}
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	for i := 0; i < n; i += 2 { // odd keys stay absent
		if err := db.Put(corruptionKey(i), corruptionValue(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	tables := filesWithSuffix(fs, ".sst")
	if len(tables) < 2 {
		t.Fatalf("want several tables, got %v", tables)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	trials := 60
	if *soak {
		trials = 2000
	}
	detected := 0
	for trial := 0; trial < trials; trial++ {
		name := tables[rng.IntN(len(tables))]
		off := rng.Int64N(fileSize(t, fs, name))
		mask := byte(1 << rng.IntN(8))
		if err := fs.Corrupt(name, off, mask); err != nil {
			t.Fatal(err)
		}
		errs := checkNoWrongData(t, fs, o, n, fmt.Sprintf("%s offset %d", name, off))
		if errs > 0 {
			detected++
		}
		if err := fs.Corrupt(name, off, mask); err != nil { // restore
			t.Fatal(err)
		}
	}
	t.Logf("%d of %d flips were reported as errors (the rest hit bytes no read touched)", detected, trials)
}

// checkNoWrongData opens the DB and reads every key with Get and with an
// iterator; it returns how many reads failed with an error.
func checkNoWrongData(t *testing.T, fs vfs.FS, o Options, n int, where string) int {
	t.Helper()
	db, err := Open("/db", o)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Logf("%s: open: %v", where, err)
		}
		return 1
	}
	defer db.Close()
	errs := 0
	for i := 0; i < n; i++ {
		v, err := db.Get(corruptionKey(i))
		switch {
		case err != nil && !errors.Is(err, ErrNotFound):
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: Get(%s): error %v is not ErrCorrupt", where, corruptionKey(i), err)
			}
			errs++
		case i%2 == 1:
			if err == nil {
				t.Fatalf("%s: Get(%s) = %q for a key never written", where, corruptionKey(i), v)
			}
		case err != nil:
			t.Fatalf("%s: Get(%s) = not found for a key that exists", where, corruptionKey(i))
		case !bytes.Equal(v, corruptionValue(i)):
			t.Fatalf("%s: Get(%s) = %q, want %q", where, corruptionKey(i), v, corruptionValue(i))
		}
	}
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if !bytes.Equal(it.Key(), corruptionKey(i)) || !bytes.Equal(it.Value(), corruptionValue(i)) {
			t.Fatalf("%s: iterator at %q = %q, want %q = %q", where, it.Key(), it.Value(), corruptionKey(i), corruptionValue(i))
		}
		i += 2
	}
	if err := it.Close(); err != nil {
		errs++
	} else if i != n {
		t.Fatalf("%s: iterator ended at %d keys without an error, want %d", where, i/2, n/2)
	}
	return errs
}

// TestCorruptWALNeverReturnsWrongData flips one byte in a log that recovery
// must replay. Open must fail with ErrCorrupt, or recover every record — the
// only record it may drop is the last one, which a crash in the middle of an
// append could have torn.
func TestCorruptWALNeverReturnsWrongData(t *testing.T) {
	base := vfs.NewMem()
	o := Options{FS: base, MemTableSize: 1 << 20}
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := 0; i < n; i++ {
		if err := db.Put(corruptionKey(i), corruptionValue(i)); err != nil {
			t.Fatal(err)
		}
	}
	image := base.CrashClone(true) // the log is not flushed yet
	_ = db.Close()
	logs := filesWithSuffix(image, ".log")
	if len(logs) != 1 {
		t.Fatalf("want one log, got %v", logs)
	}
	size := fileSize(t, image, logs[0])
	rng := rand.New(rand.NewPCG(3, 4))
	trials := 60
	if *soak {
		trials = 1000
	}
	failed := 0
	for trial := 0; trial < trials; trial++ {
		fs := image.CrashClone(true)
		off := rng.Int64N(size)
		if err := fs.Corrupt(logs[0], off, byte(1<<rng.IntN(8))); err != nil {
			t.Fatal(err)
		}
		o.FS = fs
		db, err := Open("/db", o)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("offset %d: open error %v is not ErrCorrupt", off, err)
			}
			failed++
			continue
		}
		for i := 0; i < n; i++ {
			v, err := db.Get(corruptionKey(i))
			if i == n-1 && errors.Is(err, ErrNotFound) {
				continue // the torn-tail case
			}
			if err != nil || !bytes.Equal(v, corruptionValue(i)) {
				t.Fatalf("offset %d: Get(%s) = %q, %v; want %q", off, corruptionKey(i), v, err, corruptionValue(i))
			}
		}
		_ = db.Close()
	}
	t.Logf("%d of %d flips made Open fail with ErrCorrupt; the rest hit the last record", failed, trials)
}
