package lsm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// buildCheckDB writes a small tree in dir: several L0 tables, a compaction
// into deeper levels, overwrites, deletions and expiring values, then closes
// it (Close flushes the memtable, so the tree is all in tables).
func buildCheckDB(t *testing.T, dir string, o Options) {
	t.Helper()
	o.MemTableSize = 16 << 10
	o.BlockSize = 512
	o.DisableAutoCompaction = true
	db, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	put := func(k, v string) {
		if err := db.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 600 {
		put(fmt.Sprintf("key%04d", i), fmt.Sprintf("value-%d", i))
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 600; i += 3 {
		put(fmt.Sprintf("key%04d", i), fmt.Sprintf("new-%d", i))
	}
	for i := 1; i < 600; i += 10 {
		if err := db.Delete(fmt.Appendf(nil, "key%04d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.PutExpiring([]byte("ttl-live"), []byte("x"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.PutExpiring([]byte("ttl-gone"), []byte("x"), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func mustCheck(t *testing.T, dir string, o InspectOptions) *CheckReport {
	t.Helper()
	r, err := Check(dir, o)
	if r == nil {
		t.Fatalf("Check(%s): no report: %v", dir, err)
	}
	if (err == nil) != r.OK() || (err != nil && !errors.Is(err, ErrCorrupt)) {
		t.Fatalf("Check(%s): err %v with %d damaged files", dir, err, len(r.Damage))
	}
	return r
}

// damagedFiles returns the names Check reported.
func damagedFiles(r *CheckReport) []string {
	var out []string
	for _, d := range r.Damage {
		out = append(out, d.File)
		if !errors.Is(d.Err, ErrCorrupt) {
			panic(fmt.Sprintf("damage %v does not wrap ErrCorrupt", d))
		}
	}
	return out
}

func TestCheckHealthyDirectory(t *testing.T) {
	dir := t.TempDir()
	buildCheckDB(t, dir, Options{})
	r := mustCheck(t, dir, InspectOptions{})
	if !r.OK() {
		t.Fatalf("healthy directory: damage %v", r.Damage)
	}
	if r.Tables < 2 || r.Blocks < r.Tables || r.Entries < 600 || !strings.HasPrefix(r.Manifest, "MANIFEST-") {
		t.Errorf("report %+v: want several tables, blocks and entries", r)
	}
	if len(r.Notes) != 0 {
		t.Errorf("clean shutdown: notes %q, want none", r.Notes)
	}
	// Check wrote nothing: Open would then find the same files.
	names, _ := vfs.Default.List(dir)
	if slices.Contains(names, "CURRENT.tmp") {
		t.Errorf("Check left files behind: %v", names)
	}
}

// TestCheckAfterProcessCrash checks a directory a kill -9 left: writes in
// the live log, not in tables, are checked too, and it is healthy.
func TestCheckAfterProcessCrash(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, MemTableSize: 16 << 10, MappedWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 1000 {
		if err := db.Put(fmt.Appendf(nil, "k%05d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	crashed := fs.CrashClone(true)
	r := mustCheck(t, "/db", InspectOptions{FS: crashed})
	if !r.OK() || r.Logs == 0 || r.Records == 0 {
		t.Fatalf("after a crash: %+v, want healthy with its live log checked", r)
	}
}

// TestCheckDetectsEveryFlippedTableByte flips one bit at a random offset of
// a random table, many times: every byte of a table is under a checksum,
// so Check must report that table, and only it, each time.
func TestCheckDetectsEveryFlippedTableByte(t *testing.T) {
	fs := vfs.NewMem()
	buildCheckDB(t, "/db", Options{FS: fs})
	tables := filesWithSuffix(fs, ".sst")
	rng := rand.New(rand.NewPCG(3, 4))
	trials := 150
	if *soak {
		trials = 3000
	}
	for range trials {
		name := tables[rng.IntN(len(tables))]
		off := rng.Int64N(fileSize(t, fs, name))
		mask := byte(1 << rng.IntN(8))
		if err := fs.Corrupt(name, off, mask); err != nil {
			t.Fatal(err)
		}
		r := mustCheck(t, "/db", InspectOptions{FS: fs})
		if got, want := damagedFiles(r), []string{filepath.Base(name)}; !slices.Equal(got, want) {
			t.Fatalf("%s offset %d mask %#x: damaged %v (%v), want %v", name, off, mask, got, r.Damage, want)
		}
		_ = fs.Corrupt(name, off, mask) // flip it back
	}
	if r := mustCheck(t, "/db", InspectOptions{FS: fs}); !r.OK() {
		t.Fatalf("after restoring every byte: %v", r.Damage)
	}
}

func TestCheckTruncatedManifest(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  func(records []int, size int) int // the new size
	}{
		{"inside the first record", func(recs []int, size int) int { return recs[0] + 20 }},
		{"inside the last record", func(recs []int, size int) int { return size - 5 }},
		{"at the last record's start", func(recs []int, size int) int { return recs[len(recs)-1] }},
		{"in the middle", func(recs []int, size int) int { return size / 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			buildCheckDB(t, dir, Options{})
			dump, err := ReadManifest(dir, "", InspectOptions{})
			if err != nil || len(dump.Edits) < 3 {
				t.Fatalf("ReadManifest: %d edits, %v; want several", len(dump.Edits), err)
			}
			var offs []int
			for _, e := range dump.Edits {
				offs = append(offs, int(e.Offset))
			}
			path := filepath.Join(dir, dump.Name)
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, int64(tc.cut(offs, int(st.Size())))); err != nil {
				t.Fatal(err)
			}
			r := mustCheck(t, dir, InspectOptions{})
			if got := damagedFiles(r); !slices.Contains(got, dump.Name) {
				t.Fatalf("manifest cut %s: damaged %v, notes %q; want %s named", tc.name, r.Damage, r.Notes, dump.Name)
			}
		})
	}
}

// TestCheckTornManifestAfterCrashIsANote appends half a record to the
// manifest of a directory a crash left (its log still in place): that is
// what a crash in the middle of an append leaves, and recovery handles it.
func TestCheckTornManifestAfterCrashIsANote(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, MemTableSize: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 2000 {
		if err := db.Put(fmt.Appendf(nil, "k%05d", i), []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	crashed := fs.CrashClone(true)
	var manifest string
	for _, n := range crashed.Names() {
		if strings.Contains(n, "MANIFEST-") {
			manifest = n
		}
	}
	f, err := crashed.Open(manifest)
	if err != nil {
		t.Fatal(err)
	}
	size, _ := f.Size()
	f.Close()
	rec := appendRecord(nil, (&versionEdit{logNum: 99, nextFile: 100}).encode())
	w, err := appendTo(crashed, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(rec[:len(rec)-3]); err != nil {
		t.Fatal(err)
	}
	r := mustCheck(t, "/db", InspectOptions{FS: crashed})
	if !r.OK() {
		t.Fatalf("torn manifest tail after a crash: damage %v", r.Damage)
	}
	want := fmt.Sprintf("%s: last record cut short at offset %d", filepath.Base(manifest), size)
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
		t.Errorf("notes %q, want one starting %q", r.Notes, want)
	}
}

// appendTo reopens a MemFS file for appending: Create truncates, so it
// copies the old bytes into the new file first.
func appendTo(fs *vfs.MemFS, name string) (vfs.File, error) {
	old, err := readAll(fs, name)
	if err != nil {
		return nil, err
	}
	f, err := fs.Create(name)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(old)
	return f, err
}

func TestCheckMissingTable(t *testing.T) {
	dir := t.TempDir()
	buildCheckDB(t, dir, Options{})
	names, _ := vfs.Default.List(dir)
	var victim string
	for _, n := range names {
		if strings.HasSuffix(n, ".sst") {
			victim = n
		}
	}
	if err := os.Remove(filepath.Join(dir, victim)); err != nil {
		t.Fatal(err)
	}
	r := mustCheck(t, dir, InspectOptions{})
	if got := damagedFiles(r); !slices.Equal(got, []string{victim}) {
		t.Fatalf("damaged %v, want [%s]", r.Damage, victim)
	}
	if msg := r.Damage[0].Err.Error(); !strings.Contains(msg, "missing") {
		t.Errorf("damage %q does not say missing", msg)
	}
}

// TestCheckOlderVersionAboveNewer rewrites the manifest so that the table
// holding a key's older value sits in L0 above the table holding the newer
// one: every checksum holds, but reads would return the older value.
func TestCheckOlderVersionAboveNewer(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"old", "new"} {
		if err := db.Put([]byte("k"), []byte(v)); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	off, err := newOffline(fs, "/db")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := off.replay(); err != nil {
		t.Fatal(err)
	}
	l0 := off.d.current.levels[0] // newest first
	if len(l0) != 2 {
		t.Fatalf("L0 holds %d tables, want 2", len(l0))
	}
	e := &versionEdit{logNum: off.d.logNum, nextFile: 1000, lastSeq: off.d.lastSeq,
		added: []newFile{{0, l0[1]}, {1, l0[0]}}} // the old value's table above the new one's
	f, err := fs.Create("/db/MANIFEST-000999")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(appendRecord(nil, e.encode()))
	f.Close()
	off.release()
	c, _ := fs.Create("/db/CURRENT")
	c.Write([]byte("MANIFEST-000999\n"))
	c.Close()

	r := mustCheck(t, "/db", InspectOptions{FS: fs})
	if got, want := damagedFiles(r), []string{tableName(l0[1].num)}; !slices.Equal(got, want) {
		t.Fatalf("damaged %v, want %v", r.Damage, want)
	}
	if msg := r.Damage[0].Err.Error(); !strings.Contains(msg, "older version") {
		t.Errorf("damage %q does not explain the order", msg)
	}
}

// TestCheckRefusesALockedDirectory holds the directory open in this
// process. flock(2) locks belong to the open file description, so Check's
// own open of LOCK conflicts with Open's as it would in another process
// (cmd/minikv-lsm tests that case with a child process).
func TestCheckRefusesALockedDirectory(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   vfs.FS
		dir  string
	}{{"os", vfs.Default, t.TempDir()}, {"mem", vfs.NewMem(), "/db"}} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(tc.dir, Options{FS: tc.fs})
			if err != nil {
				t.Fatal(err)
			}
			o := InspectOptions{FS: tc.fs}
			if _, err := Check(tc.dir, o); !errors.Is(err, ErrInUse) {
				t.Errorf("Check of an open directory: %v, want ErrInUse", err)
			}
			if _, err := Inspect(tc.dir, o); !errors.Is(err, ErrInUse) {
				t.Errorf("Inspect of an open directory: %v, want ErrInUse", err)
			}
			if _, err := ReadManifest(tc.dir, "", o); !errors.Is(err, ErrInUse) {
				t.Errorf("ReadManifest of an open directory: %v, want ErrInUse", err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if r, err := Check(tc.dir, o); err != nil || !r.OK() {
				t.Errorf("Check after Close: %v", err)
			}
			// While an Inspector holds the directory, Open waits its turn.
			in, err := Inspect(tc.dir, o)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "os" { // MemFS does not record shared locks
				if _, err := Open(tc.dir, Options{FS: tc.fs}); !errors.Is(err, vfs.ErrLocked) {
					t.Errorf("Open while inspected: %v, want vfs.ErrLocked", err)
				}
			}
			in.Close()
		})
	}
}

func TestInspectScanGetStats(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, kv := range [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}} {
		db.Put([]byte(kv[0]), []byte(kv[1]))
	}
	db.Flush()
	db.Put([]byte("b"), []byte("2b")) // in the log only, after the crash below
	db.Delete([]byte("c"))
	db.PutExpiring([]byte("d"), []byte("4"), time.Now().Add(time.Hour))
	db.PutExpiring([]byte("e"), []byte("5"), time.Now().Add(-time.Hour))
	crashed := fs.CrashClone(true)

	in, err := Inspect("/db", InspectOptions{FS: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	it, _ := in.NewIter(nil)
	var got []string
	for ok := it.First(); ok; ok = it.Next() {
		got = append(got, string(it.Key())+"="+string(it.Value()))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a=1", "b=2b", "d=4"}; !slices.Equal(got, want) {
		t.Errorf("scan = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		key, want string
		err       error
	}{{"a", "1", nil}, {"b", "2b", nil}, {"c", "", ErrNotFound}, {"d", "4", nil}, {"e", "", ErrNotFound}, {"z", "", ErrNotFound}} {
		v, _, err := in.Get([]byte(tc.key))
		if string(v) != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("Get(%q) = %q, %v; want %q, %v", tc.key, v, err, tc.want, tc.err)
		}
	}
	if _, exp, _ := in.Get([]byte("d")); exp.IsZero() {
		t.Errorf("Get(d): no expiry")
	}
	s, err := in.Stats()
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{LiveKeys: 3, LastSeq: 7}
	want.Levels[0] = LevelStats{Files: 1, Bytes: s.Levels[0].Bytes, Entries: 3}
	want.Logs = LevelStats{Files: 1, Bytes: s.Logs.Bytes, Entries: 4, Tombstones: 1, Expiring: 2, Expired: 1}
	s.LogFiles = nil
	if fmt.Sprint(*s) != fmt.Sprint(want) {
		t.Errorf("Stats = %+v\nwant    %+v", *s, want)
	}
	if tables := in.Tables(); len(tables) != 1 || tables[0].Entries != 3 || string(tables[0].Smallest.Key) != "a" {
		t.Errorf("Tables = %v", tables)
	}
}

func TestReadManifest(t *testing.T) {
	dir := t.TempDir()
	buildCheckDB(t, dir, Options{})
	d, err := ReadManifest(dir, "", InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.TornAt != -1 || len(d.Edits) < 2 {
		t.Fatalf("ReadManifest = %+v", d)
	}
	// The first edit is the snapshot Open wrote; the later ones flushes.
	for i, e := range d.Edits {
		s := e.String()
		if !strings.HasPrefix(s, fmt.Sprintf("@%d log=", e.Offset)) || strings.Contains(s, "\n") {
			t.Errorf("edit %d: %q", i, s)
		}
	}
	last := d.Edits[len(d.Edits)-1]
	if len(last.Added) != 1 || last.Added[0].Level != 0 || !strings.Contains(last.String(), " add L0 ") {
		t.Errorf("last edit (Close's flush) = %v", last)
	}
}

// TestCheckDamagedLogRecordAndTheCut flips a byte in a log record that
// valid records follow: damage, naming the log and the record's offset.
// Cutting the log there (the operator's decision docs/durability.md
// describes) leaves a healthy directory that keeps the records before it.
func TestCheckDamagedLogRecordAndTheCut(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, WriteWAL: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 100 {
		if err := db.Put(fmt.Appendf(nil, "k%03d", i), []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	crashed := fs.CrashClone(true)
	logs := filesWithSuffix(crashed, ".log")
	if len(logs) != 1 {
		t.Fatalf("logs %v, want one", logs)
	}
	const victim = 40 // the record of the 41st Put
	buf, _ := readAll(crashed, logs[0])
	r := recordReader{buf: buf}
	for range victim {
		r.next()
	}
	recOff := r.off
	if err := crashed.Corrupt(logs[0], int64(recOff+recordHeaderLen+2), 0x01); err != nil {
		t.Fatal(err)
	}
	rep := mustCheck(t, "/db", InspectOptions{FS: crashed})
	name := filepath.Base(logs[0])
	if got := damagedFiles(rep); !slices.Equal(got, []string{name}) {
		t.Fatalf("damaged %v, want [%s]", rep.Damage, name)
	}
	if want := fmt.Sprintf("%s offset %d: ", name, recOff); !strings.Contains(rep.Damage[0].Err.Error(), want) {
		t.Fatalf("damage %q, want it to say %q", rep.Damage[0].Err, want)
	}

	f, err := crashed.Create(logs[0]) // truncate -s OFFSET
	if err != nil {
		t.Fatal(err)
	}
	f.Write(buf[:recOff])
	f.Close()
	if rep := mustCheck(t, "/db", InspectOptions{FS: crashed}); !rep.OK() {
		t.Fatalf("after cutting the log at offset %d: %v", recOff, rep.Damage)
	}
	in, err := Inspect("/db", InspectOptions{FS: crashed})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	s, err := in.Stats()
	if err != nil || s.LiveKeys != victim {
		t.Fatalf("after the cut: %d live keys (%v), want the %d written before the damaged record", s.LiveKeys, err, victim)
	}
}

// TestCheckHealthyAfterPowerLoss cuts the power (only synced bytes and
// directory entries survive) at many moments of a workload whose
// memtables flush and compact in the background: every state left is one
// Open recovers, and Check must find it healthy, notes aside.
func TestCheckHealthyAfterPowerLoss(t *testing.T) {
	for _, mode := range []SyncMode{SyncNone, SyncAlways} {
		t.Run(mode.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			o := Options{FS: fs, Sync: mode, MemTableSize: 32 << 10, TargetFileSize: 16 << 10, LBaseMaxBytes: 64 << 10}
			db, err := Open("/db", o)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rng := rand.New(rand.NewPCG(5, uint64(mode)))
			cuts := 0
			for i := range 6000 {
				k := fmt.Appendf(nil, "k%05d", rng.IntN(3000))
				if i%7 == 0 {
					err = db.Delete(k)
				} else {
					err = db.Put(k, corruptionValue(i))
				}
				if err != nil {
					t.Fatal(err)
				}
				if i%200 != 199 {
					continue
				}
				for _, keep := range []bool{false, true} {
					crashed := fs.CrashClone(keep)
					r := mustCheck(t, "/db", InspectOptions{FS: crashed})
					if !r.OK() {
						t.Fatalf("write %d, power loss %v: damage %v", i, !keep, r.Damage)
					}
					reopened, err := Open("/db", Options{FS: crashed})
					if err != nil {
						t.Fatalf("write %d: Check found it healthy but Open: %v", i, err)
					}
					reopened.Close()
					cuts++
				}
			}
			if m := db.Metrics(); m.Flushes == 0 || m.Compactions+m.Moves == 0 {
				t.Errorf("no background work ran: %+v", m)
			}
			t.Logf("%d crash states checked", cuts)
		})
	}
}
