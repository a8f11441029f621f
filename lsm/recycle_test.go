package lsm

import (
	"bytes"
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

// recycOptions makes logs rotate often, so that most are recycled ones.
func recycOptions(fs vfs.FS, mode SyncMode) Options {
	return Options{FS: fs, Sync: mode, RecycleWAL: 2, MemTableSize: 48 << 10, TargetFileSize: 32 << 10, LBaseMaxBytes: 128 << 10}
}

// readRecords reads every record of a recyclable log buf of log num.
func readRecyclable(buf []byte, num uint64) ([][]byte, *recordReader, error) {
	r := &recordReader{buf: buf, name: walName(num), recyclable: true, logNum: num}
	var out [][]byte
	for {
		rec, err := r.next()
		if err != nil || rec == nil {
			return out, r, err
		}
		out = append(out, rec)
	}
}

// logLife appends n recyclable records of log num to dst, each written
// after the log was synced up to its own start when synced is set (as in
// SyncAlways), or never synced.
func logLife(dst []byte, num uint64, n int, synced bool) ([]byte, []int) {
	var offs []int
	for i := range n {
		offs = append(offs, len(dst))
		s := int64(0)
		if synced {
			s = int64(len(dst))
		}
		dst = appendLogRecord(dst, fmt.Appendf(nil, "log %d record %d %s", num, i, strings.Repeat("p", 7*i%50)), num, s)
	}
	return dst, offs
}

// TestRecyclableRecordsStopAtPreviousUse: a recycled log holds its
// previous use's records after its own; they are never read, whether the
// new records end on one of their boundaries or in the middle of one, and
// neither are legacy records.
func TestRecyclableRecordsStopAtPreviousUse(t *testing.T) {
	old, oldOffs := logLife(nil, 7, 40, true)
	for _, cut := range []int{0, 1, 3} {
		// The new use's records end exactly where a previous record
		// starts (cut 0), or inside one.
		buf := bytes.Clone(old)
		fresh, _ := logLife(nil, 12, 9, true)
		end := oldOffs[20] + cut
		pad := end - len(fresh) - recycHeaderLen - len("log 12 record 9 ")
		if pad < 0 {
			t.Fatalf("test setup: %d new bytes do not fit before %d", len(fresh), end)
		}
		fresh = appendLogRecord(fresh, fmt.Appendf(nil, "log 12 record 9 %s", strings.Repeat("f", pad)), 12, int64(len(fresh)))
		if len(fresh) != end {
			t.Fatalf("test setup: the new records end at %d, not %d", len(fresh), end)
		}
		copy(buf, fresh)
		recs, r, err := readRecyclable(buf, 12)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if len(recs) != 10 {
			t.Fatalf("cut %d: read %d records, want the 10 of log 12", cut, len(recs))
		}
		for _, rec := range recs {
			if !bytes.HasPrefix(rec, []byte("log 12 ")) {
				t.Fatalf("cut %d: read a record of the previous use: %q", cut, rec)
			}
		}
		if !r.torn || !r.clean {
			t.Errorf("cut %d: torn %v clean %v, want a clean end", cut, r.torn, r.clean)
		}
	}
	// A recyclable reader never takes a legacy record, nor a zero-filled
	// log's zeros.
	legacy := appendRecord(nil, []byte("legacy"))
	if recs, _, err := readRecyclable(legacy, 3); err != nil || len(recs) != 0 {
		t.Errorf("legacy record in a recyclable log: %q, %v", recs, err)
	}
	zeroFilled := make([]byte, 8192)
	fresh, _ := logLife(nil, 5, 8, true)
	copy(zeroFilled, fresh)
	if recs, r, err := readRecyclable(zeroFilled, 5); err != nil || len(recs) != 8 || !r.clean {
		t.Errorf("zero-filled log: %d records, clean %v, %v; want 8, a clean end", len(recs), r.clean, err)
	}
	if recs, r, err := readRecyclable(make([]byte, 4096), 5); err != nil || len(recs) != 0 || !r.clean {
		t.Errorf("unused zero-filled log: %d records, clean %v, %v", len(recs), r.clean, err)
	}
}

// TestRecyclableDamageOrTornTail: a bad record followed by a record of the
// same log written after the log was synced past it is damage; followed
// only by records written before that (an unsynced tail that reached the
// disk out of order), it is a torn tail.
func TestRecyclableDamageOrTornTail(t *testing.T) {
	for _, synced := range []bool{true, false} {
		for _, damage := range []struct {
			name string
			fn   func(b []byte, off int)
			want string
		}{
			{"payload bit flip", func(b []byte, off int) { b[off+recycHeaderLen+2] ^= 8 }, "record checksum mismatch"},
			{"length bit flip", func(b []byte, off int) { b[off+4] ^= 1 }, "inconsistent length"},
			{"zeroed sector", func(b []byte, off int) { clear(b[off : off+recycHeaderLen+5]) }, "short or zero header"},
			{"log number flip", func(b []byte, off int) { b[off+12] ^= 2 }, "record checksum mismatch"},
		} {
			buf, offs := logLife(nil, 9, 12, synced)
			buf = append(buf, make([]byte, 300)...)
			damage.fn(buf, offs[4])
			recs, r, err := readRecyclable(buf, 9)
			if synced {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), damage.want) ||
					!strings.Contains(err.Error(), fmt.Sprintf("%s offset %d", walName(9), offs[4])) {
					t.Errorf("%s, synced: err = %v; want ErrCorrupt at offset %d: %s", damage.name, err, offs[4], damage.want)
				}
				continue
			}
			if err != nil || len(recs) != 4 || !r.torn || r.clean || r.validEnd != offs[4] {
				t.Errorf("%s, never synced: %d records, torn %v clean %v end %d, %v; want 4, a torn tail at %d",
					damage.name, len(recs), r.torn, r.clean, r.validEnd, err, offs[4])
			}
		}
	}
	// The last record's damage cannot be told from a torn write.
	buf, offs := logLife(nil, 9, 12, true)
	buf[offs[11]+recycHeaderLen] ^= 1
	if recs, r, err := readRecyclable(buf, 9); err != nil || len(recs) != 11 || !r.torn {
		t.Errorf("damaged last record: %d records, %v; want 11 and a torn tail", len(recs), err)
	}
}

// rotateUntilRecycled writes through db until its current log is a
// recycled one (holding a previous use's bytes), and returns its number.
func rotateUntilRecycled(t *testing.T, db *DB, fs *vfs.MemFS, key func(i int) []byte) uint64 {
	t.Helper()
	for i := 0; i < 100000; i++ {
		if err := db.Put(key(i), bytes.Repeat([]byte{'v'}, 100)); err != nil {
			t.Fatal(err)
		}
		if i%500 != 499 {
			continue
		}
		db.mu.Lock()
		num, off := db.wal.num, db.wal.off
		db.mu.Unlock()
		buf, err := readAll(fs, db.path(walName(num)))
		if err != nil {
			t.Fatal(err)
		}
		if len(buf) > int(off) && !allZero(buf[off:]) {
			return num
		}
	}
	t.Fatal("no log was recycled")
	return 0
}

// TestRecycleWALReusesLogs: with RecycleWAL, logs are preallocated and
// then reused, and every write survives a kill -9 and a power loss.
func TestRecycleWALReusesLogs(t *testing.T) {
	fs := vfs.NewMem()
	o := recycOptions(fs, SyncAlways)
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte { return fmt.Appendf(nil, "key%07d", i) }
	// The first spare is written in the background.
	for deadline := time.Now().Add(time.Minute); db.Metrics().LogsPreallocated == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no log was preallocated")
		}
		time.Sleep(time.Millisecond)
	}
	num := rotateUntilRecycled(t, db, fs, key)
	for i := range 200 {
		if err := db.Put(fmt.Appendf(nil, "last%03d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	m := db.Metrics()
	if m.LogsRecycled == 0 || m.LogsPreallocated == 0 {
		t.Errorf("LogsRecycled %d, LogsPreallocated %d; want both > 0", m.LogsRecycled, m.LogsPreallocated)
	}
	if logs := filesWithSuffix(fs, ".log"); len(logs) > 2+o.MaxImmutableMemTables+o.RecycleWAL {
		t.Errorf("%d logs in the directory: %v", len(logs), logs)
	}
	n := 0
	for ; ; n++ {
		if _, err := db.Get(key(n)); err != nil {
			break
		}
	}
	for _, image := range []*vfs.MemFS{fs.CrashClone(true), fs.CrashClone(false)} {
		o.FS = image
		db2, err := Open("/db", o)
		if err != nil {
			t.Fatalf("reopen with log %s recycled: %v", walName(num), err)
		}
		for i := range n {
			if _, err := db2.Get(key(i)); err != nil {
				t.Fatalf("Get(%s) after a crash: %v", key(i), err)
			}
		}
		for i := range 200 {
			if _, err := db2.Get(fmt.Appendf(nil, "last%03d", i)); err != nil {
				t.Fatalf("write to the recycled log lost: %v", err)
			}
		}
		if err := db2.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if logs := filesWithSuffix(fs, ".log"); len(logs) != 0 {
		t.Errorf("Close left logs behind: %v", logs)
	}
}

// TestRecycledLogStaleRecordsNeverReplayed writes keys, flushes them,
// deletes them and compacts them away, so that only the logs that held
// them remember them, and reuses those logs: after a crash, no deleted key
// comes back from a previous use's records.
func TestRecycledLogStaleRecordsNeverReplayed(t *testing.T) {
	fs := vfs.NewMem()
	o := recycOptions(fs, SyncAlways)
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	stale := func(i int) []byte { return fmt.Appendf(nil, "stale%05d", i) }
	n := 0
	exercised := false
	for round := 0; round < 12 && !exercised; round++ {
		for range 300 {
			if err := db.Put(stale(n), bytes.Repeat([]byte{'s'}, 100)); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := db.Delete(stale(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := db.Compact(); err != nil {
			t.Fatal(err)
		}
		if err := db.Put([]byte("fresh"), []byte("after")); err != nil {
			t.Fatal(err)
		}
		db.mu.Lock()
		num, off := db.wal.num, db.wal.off
		db.mu.Unlock()
		buf, _ := readAll(fs, db.path(walName(num)))
		exercised = bytes.Contains(buf[off:], []byte("stale"))
	}
	if !exercised {
		t.Fatal("the current log never held a previous use's records")
	}
	for _, image := range []*vfs.MemFS{fs.CrashClone(true), fs.CrashClone(false)} {
		o.FS = image
		db2, err := Open("/db", o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if v, err := db2.Get(stale(i)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("deleted key %s came back from a recycled log: %q, %v", stale(i), v, err)
			}
		}
		if v, err := db2.Get([]byte("fresh")); err != nil || string(v) != "after" {
			t.Fatalf("Get(fresh) = %q, %v", v, err)
		}
		if err := db2.Close(); err != nil {
			t.Fatal(err)
		}
	}
	_ = db.Close()
}

// TestRecycledLogDamageNamesFile: a record damaged in the middle of a
// recycled log of SyncAlways, with later records, fails Open naming the
// log; damage to its last record is a torn tail.
func TestRecycledLogDamageNamesFile(t *testing.T) {
	fs := vfs.NewMem()
	o := recycOptions(fs, SyncAlways)
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	num := rotateUntilRecycled(t, db, fs, func(i int) []byte { return fmt.Appendf(nil, "fill%07d", i) })
	db.mu.Lock()
	start := db.wal.off
	db.mu.Unlock()
	const n = 30
	for i := range n {
		if err := db.Put(corruptionKey(i), corruptionValue(i)); err != nil {
			t.Fatal(err)
		}
	}
	image := fs.CrashClone(true)
	_ = db.Close()
	buf, _ := readAll(image, "/db/"+walName(num))
	r := recordReader{buf: buf, recyclable: true, logNum: num, off: int(start)}
	var offs []int
	for {
		off := r.off
		rec, err := r.next()
		if err != nil || rec == nil {
			break
		}
		offs = append(offs, off)
	}
	if len(offs) != n {
		t.Fatalf("%d records after offset %d, want %d", len(offs), start, n)
	}
	mid := image.CrashClone(true)
	if err := mid.Corrupt("/db/"+walName(num), int64(offs[n/2]+recycHeaderLen+1), 0x10); err != nil {
		t.Fatal(err)
	}
	o.FS = mid
	if db, err := Open("/db", o); err == nil {
		db.Close()
		t.Fatal("Open succeeded on a recycled log damaged in the middle")
	} else if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), walName(num)) {
		t.Fatalf("Open error %v: want ErrCorrupt naming %s", err, walName(num))
	}
	last := image.CrashClone(true)
	if err := last.Corrupt("/db/"+walName(num), int64(offs[n-1]+recycHeaderLen+1), 0x10); err != nil {
		t.Fatal(err)
	}
	o.FS = last
	db, err = Open("/db", o)
	if err != nil {
		t.Fatalf("Open with the last record damaged (a torn tail): %v", err)
	}
	defer db.Close()
	for i := range n - 1 {
		if v, err := db.Get(corruptionKey(i)); err != nil || !bytes.Equal(v, corruptionValue(i)) {
			t.Fatalf("Get(%s) = %q, %v", corruptionKey(i), v, err)
		}
	}
}

// TestPowerLossRecycledLogs runs writers that put and delete a small set of
// keys each, in SyncAlways with recycled logs rotating every few
// milliseconds, cuts the power while they run with part of the unsynced
// sectors reaching the disk in any order (vfs.MemFS.CrashCloneTorn), and
// checks what Open finds: for each writer, exactly the effect of a prefix
// of its operations that holds every acknowledged one. So nothing
// acknowledged is lost, and nothing stale (a previous use's record, an
// older value) comes back.
func TestPowerLossRecycledLogs(t *testing.T) {
	rounds := 4
	if *soak {
		rounds = 60
	}
	for round := 0; round < rounds; round++ {
		for _, pipelined := range []bool{false, true} {
			fs := slowLogSyncs()
			o := recycOptions(fs, SyncAlways)
			o.MemTableSize = 16 << 10
			o.PipelinedSync = pipelined
			powerLossCuts(t, fs, o, round, fmt.Sprintf("round %d (pipelined %v)", round, pipelined), true, func(db *DB) bool {
				return db.Metrics().LogsRecycled >= 3+int64(round%4) // a few logs recycled first
			})
		}
	}
}

// TestPowerLossMappedLogs is TestPowerLossRecycledLogs for mapped logs
// (Options.MappedWAL, on MemFS's mapping model: preallocated zeros
// durable at once, pages reaching the disk in any order) in each sync
// mode. In SyncAlways each writer's keys are the effect of a prefix of its
// operations holding every acknowledged one; in the other modes, whose
// power loss loses what was not synced, Open must still succeed (a hole in
// a log's unsynced part is a torn tail, not damage) and every key must hold
// a value written to it.
func TestPowerLossMappedLogs(t *testing.T) {
	rounds := 3
	if *soak {
		rounds = 40
	}
	for round := 0; round < rounds; round++ {
		for _, mode := range []SyncMode{SyncNone, SyncEverySecond, SyncAlways} {
			fs := slowLogSyncs()
			o := Options{FS: fs, Sync: mode, MappedWAL: true, MemTableSize: 16 << 10, TargetFileSize: 32 << 10, LBaseMaxBytes: 128 << 10}
			var m0 int64
			powerLossCuts(t, fs, o, round, fmt.Sprintf("round %d (%s)", round, mode), mode == SyncAlways, func(db *DB) bool {
				if m0 == 0 {
					m0 = db.Metrics().Flushes + 1
				}
				return db.Metrics().Flushes >= m0+int64(round%3) // a few logs rotated first
			})
		}
	}
}

// slowLogSyncs returns a MemFS whose log fsyncs take a little time, which
// keeps a written, unsynced group in the log most of the time, for the
// power cut to tear.
func slowLogSyncs() *vfs.MemFS {
	fs := vfs.NewMem()
	fs.SetInjector(func(op vfs.Op, name string) error {
		if op == vfs.OpSync && strings.HasSuffix(name, ".log") {
			time.Sleep(50 * time.Microsecond)
		}
		return nil
	})
	return fs
}

// powerLossCuts runs 4 writers on a DB over fs with o, each putting and
// deleting its own 40 keys, waits until ready, then cuts the power 8 times
// while they run (CrashCloneTorn) and opens each image. With prefix, each
// writer's keys must be the effect of a prefix of its operations holding
// every one acknowledged before the cut; otherwise each key must hold
// nothing or a value written to it.
func powerLossCuts(t *testing.T, fs *vfs.MemFS, o Options, seed int, what string, prefix bool, ready func(*DB) bool) {
	t.Helper()
	const writers, keys = 4, 40
	key := func(w, j int) []byte { return fmt.Appendf(nil, "w%d-k%02d", w, j) }
	value := func(w, c int) []byte { return fmt.Appendf(nil, "w%d-c%d-%s", w, c, strings.Repeat("v", 100+c%900)) }
	isDelete := func(c int) bool { return c%5 == 4 }
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	var acked [writers]atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := 0; !stop.Load(); c++ {
				var err error
				if isDelete(c) {
					err = db.Delete(key(w, c%keys))
				} else {
					err = db.Put(key(w, c%keys), value(w, c))
				}
				if err != nil {
					return
				}
				acked[w].Store(int64(c + 1))
			}
		}()
	}
	for deadline := time.Now().Add(time.Minute); !ready(db); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the writers did not get far enough", what)
		}
		time.Sleep(time.Millisecond)
	}
	type cut struct {
		image         *vfs.MemFS
		before, after [writers]int
	}
	var cuts []cut
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	for i := range 8 {
		if i > 0 {
			time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		}
		var c cut
		for w := range acked {
			c.before[w] = int(acked[w].Load())
		}
		c.image = fs.CrashCloneTorn(rng)
		for w := range acked {
			c.after[w] = int(acked[w].Load())
		}
		cuts = append(cuts, c)
	}
	stop.Store(true)
	wg.Wait()
	m := db.Metrics()
	_ = db.Close()

	for i, c := range cuts {
		o.FS = c.image
		db, err = Open("/db", o)
		if err != nil {
			t.Fatalf("%s cut %d: open after power loss: %v", what, i, err)
		}
		for w := range writers {
			got := make([][]byte, keys)
			for j := range keys {
				v, err := db.Get(key(w, j))
				if err != nil && !errors.Is(err, ErrNotFound) {
					t.Fatal(err)
				}
				got[j] = v
			}
			if !prefix {
				for j, v := range got {
					var gw, gc int
					if v != nil && (func() bool { _, err := fmt.Sscanf(string(v), "w%d-c%d-", &gw, &gc); return err != nil }() ||
						gw != w || gc%keys != j || isDelete(gc) || gc > c.after[w] || !bytes.Equal(v, value(w, gc))) {
						t.Fatalf("%s cut %d: %s holds %.30q, which was never written to it", what, i, key(w, j), v)
					}
				}
				continue
			}
			state := make([][]byte, keys) // after the first p operations
			matches := func() bool {
				for j := range keys {
					if !bytes.Equal(state[j], got[j]) {
						return false
					}
				}
				return true
			}
			ok := false
			for p := 0; p <= c.after[w]+1; p++ {
				if p >= c.before[w] && matches() {
					ok = true
					break
				}
				if isDelete(p) {
					state[p%keys] = nil
				} else {
					state[p%keys] = value(w, p)
				}
			}
			if !ok {
				t.Fatalf("%s cut %d: writer %d: the keys are not the effect of a prefix of at least its %d acknowledged operations (at most %d)",
					what, i, w, c.before[w], c.after[w]+1)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%s: %v operations acknowledged at the last cut, %d logs recycled, %d flushes", what, cuts[len(cuts)-1].before, m.LogsRecycled, m.Flushes)
}

// TestLogFormatChangesAcrossRestarts switches recycling on and off between
// crashes (a server restarted with another --fsync): each Open replays the
// logs in the format the manifest recorded, and writes its own.
func TestLogFormatChangesAcrossRestarts(t *testing.T) {
	fs := vfs.NewMem()
	key := func(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }
	n := 0
	for step, recycle := range []int{2, 0, 2, 0} {
		o := recycOptions(fs, SyncAlways)
		o.RecycleWAL = recycle
		db, err := Open("/db", o)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for i := range n {
			if _, err := db.Get(key(i)); err != nil {
				t.Fatalf("step %d (RecycleWAL %d): Get(%s): %v", step, recycle, key(i), err)
			}
		}
		for range 1500 {
			if err := db.Put(key(n), bytes.Repeat([]byte{'v'}, 100)); err != nil {
				t.Fatal(err)
			}
			n++
		}
		fs = fs.CrashClone(true) // kill -9 with the last log unflushed
		_ = db.Close()
	}
	db, err := Open("/db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range n {
		if _, err := db.Get(key(i)); err != nil {
			t.Fatalf("last Open: Get(%s): %v", key(i), err)
		}
	}
}

// TestSyncNoneDefaultsToMappedLog: with no options, SyncNone's log is a
// mapping of a preallocated file (its size is the reservation, not the
// bytes written); WriteWAL, RecycleWAL and the syncing modes keep write(2)
// logs, which grow with what is written. A directory changes format both
// ways across restarts and keeps every write (a crash between each).
func TestSyncNoneDefaultsToMappedLog(t *testing.T) {
	const mem = 64 << 10
	reserve := int64(2*mem + 1<<20)
	key := func(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }
	fs := vfs.NewMem()
	n := 0
	for step, c := range []struct {
		name   string
		o      Options
		mapped bool
	}{
		{"default", Options{}, true},
		{"WriteWAL", Options{WriteWAL: true}, false},
		{"MappedWAL+SyncNone", Options{MappedWAL: true}, true},
		{"RecycleWAL", Options{RecycleWAL: 2}, false},
		{"SyncEverySecond", Options{Sync: SyncEverySecond}, false},
		{"default again", Options{}, true},
		{"SyncAlways", Options{Sync: SyncAlways}, false},
	} {
		o := c.o
		o.FS, o.MemTableSize = fs, mem
		db, err := Open("/db", o)
		if err != nil {
			t.Fatalf("step %d (%s): %v", step, c.name, err)
		}
		for i := range n {
			if _, err := db.Get(key(i)); err != nil {
				t.Fatalf("step %d (%s): Get(%s): %v", step, c.name, key(i), err)
			}
		}
		for range 100 {
			if err := db.Put(key(n), bytes.Repeat([]byte{'v'}, 100)); err != nil {
				t.Fatal(err)
			}
			n++
		}
		logs := filesWithSuffix(fs, ".log")
		if len(logs) == 0 {
			t.Fatalf("step %d (%s): no log", step, c.name)
		}
		size := fileSize(t, fs, logs[len(logs)-1])
		if mapped := size == reserve; mapped != c.mapped {
			t.Errorf("step %d (%s): live log %s is %d bytes (mapped logs reserve %d): mapped %v, want %v",
				step, c.name, logs[len(logs)-1], size, reserve, mapped, c.mapped)
		}
		fs = fs.CrashClone(true)
		_ = db.Close()
	}
}
