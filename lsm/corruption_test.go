package lsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minikv/minikv/lsm/vfs"
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
	o := Options{FS: base, MemTableSize: 1 << 20, WriteWAL: true}
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

// Damage at rest: each case below damages one file of a closed database on
// the real filesystem and checks that Open (or, for a data block, the read
// that reaches it) fails with ErrCorrupt naming the file and the reason,
// and that a failed Open leaves every file in place.

const damageKeys = 600

// buildDamageDB writes damageKeys keys to a new database in dir, flushing
// every 200 keys: three tables, and a manifest of four records (the
// snapshot written by Open and one edit per flush).
func buildDamageDB(t *testing.T, dir string) {
	t.Helper()
	db, err := Open(dir, Options{BlockSize: 1024, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < damageKeys; i++ {
		if err := db.Put(corruptionKey(i), corruptionValue(i)); err != nil {
			t.Fatal(err)
		}
		if i%200 == 199 {
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// copyDamageDB returns a fresh copy of the database built once per test.
func copyDamageDB(t *testing.T, golden string) string {
	t.Helper()
	dir := t.TempDir()
	names, err := os.ReadDir(golden)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(golden, n.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// dirNames lists a directory, without the LOCK file Open creates.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.Name() != "LOCK" {
			out = append(out, e.Name())
		}
	}
	return out
}

// firstFile returns the name of the lowest-numbered file with the suffix or
// prefix given.
func firstFile(t *testing.T, dir string, match func(string) bool) string {
	t.Helper()
	for _, n := range dirNames(t, dir) { // sorted
		if match(n) {
			return n
		}
	}
	t.Fatalf("no such file in %v", dirNames(t, dir))
	return ""
}

// tableFooter returns the filter and index handles of the table at path.
func tableFooter(t *testing.T, path string) (filter, index blockHandle, size int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ft := b[len(b)-footerLen:]
	filter = blockHandle{binary.LittleEndian.Uint64(ft[0:]), binary.LittleEndian.Uint64(ft[8:])}
	index = blockHandle{binary.LittleEndian.Uint64(ft[16:]), binary.LittleEndian.Uint64(ft[24:])}
	return filter, index, int64(len(b))
}

// flipByte flips the low bit of the byte at off (negative: from the end).
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordOffsets returns the offset of each record of a manifest, and the
// end of the last.
func recordOffsets(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := recordReader{buf: b}
	offs := []int{0}
	for {
		rec, err := r.next()
		if err != nil || r.torn {
			t.Fatalf("%s is not clean: %v", path, err)
		}
		if rec == nil {
			return offs
		}
		offs = append(offs, r.off)
	}
}

// wantOpenFails opens dir and checks the error wraps ErrCorrupt and
// mentions every string of want, and that no file was removed or added.
func wantOpenFails(t *testing.T, dir string, want ...string) {
	t.Helper()
	before := dirNames(t, dir)
	db, err := Open(dir, Options{})
	if err == nil {
		db.Close()
		t.Fatalf("Open succeeded on a damaged directory, want an error naming %q", want)
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("Open error %q does not wrap ErrCorrupt", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Open error %q does not mention %q", err, w)
		}
	}
	if after := dirNames(t, dir); !slices.Equal(before, after) {
		t.Errorf("a failed Open changed the directory: %v, then %v", before, after)
	}
}

// TestOpenDamagedTableNamesFile damages the footer, index and filter
// blocks of a live table, its size, or the whole file: Open must fail
// naming the table and the reason.
func TestOpenDamagedTableNamesFile(t *testing.T) {
	golden := t.TempDir()
	buildDamageDB(t, golden)
	isTable := func(n string) bool { return strings.HasSuffix(n, ".sst") }
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
		want   string
	}{
		{"footer magic", func(t *testing.T, path string) { flipByte(t, path, -1) }, "bad magic number in footer"},
		{"footer checksum", func(t *testing.T, path string) { flipByte(t, path, -footerLen+17) }, "checksum mismatch in footer"},
		{"index block", func(t *testing.T, path string) {
			_, ih, _ := tableFooter(t, path)
			flipByte(t, path, int64(ih.off+ih.n/2))
		}, "checksum mismatch in index block"},
		{"filter block", func(t *testing.T, path string) {
			fh, _, _ := tableFooter(t, path)
			if fh.n == 0 {
				t.Fatal("the table has no filter block")
			}
			flipByte(t, path, int64(fh.off+fh.n/2))
		}, "checksum mismatch in filter block"},
		{"truncated", func(t *testing.T, path string) {
			_, _, size := tableFooter(t, path)
			if err := os.Truncate(path, size-100); err != nil {
				t.Fatal(err)
			}
		}, "the manifest says"},
		{"emptied", func(t *testing.T, path string) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}, "file is 0 bytes"},
		{"grown", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Write([]byte("garbage"))
			if err = errors.Join(err, f.Close()); err != nil {
				t.Fatal(err)
			}
		}, "the manifest says"},
		{"overwritten with garbage", func(t *testing.T, path string) {
			_, _, size := tableFooter(t, path)
			b := make([]byte, size)
			r := rand.New(rand.NewPCG(5, 6))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "bad magic number in footer"},
		{"missing", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDamageDB(t, golden)
			name := firstFile(t, dir, isTable)
			tt.damage(t, filepath.Join(dir, name))
			wantOpenFails(t, dir, name, tt.want)
		})
	}
}

// TestDamagedDataBlockFailsReads flips a byte in the first data block of a
// table. Open does not read data blocks, so it succeeds; every read that
// reaches the block fails with ErrCorrupt naming the table (never "not
// found"), reads elsewhere still work, and a scan or compaction over the
// block fails instead of skipping it.
func TestDamagedDataBlockFailsReads(t *testing.T) {
	dir := t.TempDir()
	buildDamageDB(t, dir)
	name := firstFile(t, dir, func(n string) bool { return strings.HasSuffix(n, ".sst") })
	flipByte(t, filepath.Join(dir, name), 20) // key000000 lives in block 0 of the first table

	db, err := Open(dir, Options{DisableAutoCompaction: true})
	if err != nil {
		t.Fatalf("Open: %v (data blocks are verified when read, not at open)", err)
	}
	defer db.Close()
	wantCorrupt := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrNotFound) {
			t.Fatalf("%s = %v, want ErrCorrupt", what, err)
		}
		for _, w := range []string{name, "checksum mismatch in data block"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s error %q does not mention %q", what, err, w)
			}
		}
	}
	for range 2 { // the second read must not find a good copy in the cache
		_, err := db.Get(corruptionKey(0))
		wantCorrupt("Get(key000000)", err)
	}
	if v, err := db.Get(corruptionKey(damageKeys - 1)); err != nil || !bytes.Equal(v, corruptionValue(damageKeys-1)) {
		t.Errorf("Get of a key in another table = %q, %v", v, err)
	}
	it, err := db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
	}
	wantCorrupt("scan", it.Close())
	wantCorrupt("Compact", db.Compact())
}

// TestOpenDamagedManifestNamesFile damages the manifest (or CURRENT, which
// names it): Open must fail naming the file, never start from a shorter
// history that leaves tables out.
func TestOpenDamagedManifestNamesFile(t *testing.T) {
	golden := t.TempDir()
	buildDamageDB(t, golden)
	isManifest := func(n string) bool { return strings.HasPrefix(n, "MANIFEST-") }
	rewrite := func(t *testing.T, path string, fn func(b []byte, offs []int) []byte) {
		t.Helper()
		offs := recordOffsets(t, path)
		if len(offs) < 4 {
			t.Fatalf("want a manifest of several records, got record offsets %v", offs)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, fn(b, offs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		file   string // "" = the manifest
		damage func(t *testing.T, path string)
		want   string
	}{
		{"bit flip in a middle record", "", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte, offs []int) []byte {
				b[offs[1]+recordHeaderLen+2] ^= 0x10
				return b
			})
		}, "record checksum mismatch"},
		{"record cut short in the middle", "", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte, offs []int) []byte {
				// Drop the second half of record 1; records 2.. follow.
				mid := (offs[1] + recordHeaderLen + offs[2]) / 2
				return slices.Delete(b, mid, offs[2])
			})
		}, "offset"},
		{"bit flip in the last record", "", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte, offs []int) []byte {
				b[offs[len(offs)-2]+recordHeaderLen+2] ^= 0x10
				return b
			})
		}, "checksum mismatch in the last record"},
		{"garbage", "", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte, _ []int) []byte {
				r := rand.New(rand.NewPCG(7, 8))
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				return b
			})
		}, "offset 0"},
		{"zeroed", "", func(t *testing.T, path string) {
			rewrite(t, path, func(b []byte, _ []int) []byte { return make([]byte, len(b)) })
		}, "no complete record"},
		{"emptied", "", func(t *testing.T, path string) {
			rewrite(t, path, func([]byte, []int) []byte { return nil })
		}, "no complete record"},
		{"missing", "", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "is missing"},
		{"CURRENT missing", "CURRENT", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "holds tables"},
		{"CURRENT garbage", "CURRENT", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("\x00\x17junk\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "CURRENT names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyDamageDB(t, golden)
			name := tt.file
			if name == "" {
				name = firstFile(t, dir, isManifest)
			}
			tt.damage(t, filepath.Join(dir, name))
			wantOpenFails(t, dir, name, tt.want)
		})
	}
}

// TestOpenManifestTornTailRecovers appends half a record to the manifest,
// what a crash in the middle of an append leaves: Open drops it silently
// and every key is there.
func TestOpenManifestTornTailRecovers(t *testing.T) {
	dir := t.TempDir()
	buildDamageDB(t, dir)
	path := filepath.Join(dir, firstFile(t, dir, func(n string) bool { return strings.HasPrefix(n, "MANIFEST-") }))
	e := &versionEdit{logNum: 1, nextFile: 1000}
	rec := appendRecord(nil, e.encode())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(rec[:len(rec)-3])
	if err = errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open after a torn manifest append: %v", err)
	}
	defer db.Close()
	for i := 0; i < damageKeys; i++ {
		if v, err := db.Get(corruptionKey(i)); err != nil || !bytes.Equal(v, corruptionValue(i)) {
			t.Fatalf("Get(%s) = %q, %v; want %q", corruptionKey(i), v, err, corruptionValue(i))
		}
	}
}

// walImage writes n keys and returns the filesystem as a process crash
// (kill -9) leaves it: one log, every record written, nothing flushed.
func walImage(t *testing.T, n int) (image *vfs.MemFS, log string) {
	t.Helper()
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, MemTableSize: 1 << 20, WriteWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := db.Put(corruptionKey(i), corruptionValue(i)); err != nil {
			t.Fatal(err)
		}
	}
	image = fs.CrashClone(true)
	_ = db.Close()
	logs := filesWithSuffix(image, ".log")
	if len(logs) != 1 {
		t.Fatalf("want one log, got %v", logs)
	}
	return image, logs[0]
}

// memRewrite replaces a MemFS file with fn of its contents.
func memRewrite(t *testing.T, fs *vfs.MemFS, name string, fn func([]byte) []byte) {
	t.Helper()
	b, err := readAll(fs, name)
	if err != nil {
		t.Fatal(err)
	}
	b = fn(b)
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// TestOpenWALTornTailRecovers cuts the log inside its last record, as a
// crash in the middle of an append does: Open drops that record silently
// and keeps every other one.
func TestOpenWALTornTailRecovers(t *testing.T) {
	const n = 50
	fs, log := walImage(t, n)
	memRewrite(t, fs, log, func(b []byte) []byte { return b[:len(b)-5] })
	db, err := Open("/db", Options{FS: fs, WriteWAL: true})
	if err != nil {
		t.Fatalf("Open after a torn log append: %v", err)
	}
	defer db.Close()
	for i := 0; i < n; i++ {
		v, err := db.Get(corruptionKey(i))
		if i == n-1 {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("Get of the torn last record = %q, %v; want ErrNotFound", v, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(v, corruptionValue(i)) {
			t.Fatalf("Get(%s) = %q, %v; want %q", corruptionKey(i), v, err, corruptionValue(i))
		}
	}
}

// TestOpenWALMidLogDamageNamesFile damages a record in the middle of the
// log, with valid records after it: Open must fail naming the log, not
// replay the log up to the damage and drop the rest.
func TestOpenWALMidLogDamageNamesFile(t *testing.T) {
	tests := []struct {
		name   string
		damage func(b []byte, rec int) []byte // rec: offset of record 10
		want   string
	}{
		{"payload bit flip", func(b []byte, rec int) []byte {
			b[rec+recordHeaderLen+3] ^= 4
			return b
		}, "record checksum mismatch"},
		{"length bit flip", func(b []byte, rec int) []byte {
			b[rec+4] ^= 1
			return b
		}, "inconsistent length"},
		{"zeroed header", func(b []byte, rec int) []byte {
			clear(b[rec : rec+recordHeaderLen])
			return b
		}, "short or zero header"},
		{"bytes lost", func(b []byte, rec int) []byte {
			return slices.Delete(b, rec+recordHeaderLen, rec+recordHeaderLen+5)
		}, "record checksum mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, log := walImage(t, 50)
			buf, err := readAll(fs, log)
			if err != nil {
				t.Fatal(err)
			}
			r := recordReader{buf: buf}
			for range 10 {
				if rec, err := r.next(); rec == nil || err != nil {
					t.Fatalf("the log has fewer than 10 records: %v", err)
				}
			}
			memRewrite(t, fs, log, func(b []byte) []byte { return tt.damage(b, r.off) })
			before := fs.Names()
			db, err := Open("/db", Options{FS: fs, WriteWAL: true})
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded on a log damaged in the middle")
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("Open error %q does not wrap ErrCorrupt", err)
			}
			for _, w := range []string{filepath.Base(log), tt.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open error %q does not mention %q", err, w)
				}
			}
			if after := fs.Names(); !slices.Equal(before, after) {
				t.Errorf("a failed Open changed the directory: %v, then %v", before, after)
			}
		})
	}
}
