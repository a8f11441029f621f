package lsm

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// Open opens (creating if needed) the database in dir.
//
// Recovery reads CURRENT to find the manifest, replays the manifest's edits
// to rebuild the set of tables, opens every table (checking its size, footer,
// index and filter), replays every write-ahead log at or above the
// manifest's log number into new L0 tables (a torn final record, left by a
// crash in the middle of an append, is dropped; damage anywhere else is an
// error), writes a fresh manifest and removes files nothing refers to.
//
// Damage fails Open with an error that wraps ErrCorrupt and names the file
// and the reason ("lsm: corrupt data: 000012.sst offset 8110: checksum
// mismatch in index block"): Open never starts on a tree with data silently
// missing. See "Damaged files" in the package doc.
//
// A recovery write that fails (a full or failing disk) fails Open too,
// unless Options.OpenFailedOnWriteError is set: then Open returns a DB
// that serves reads and refuses writes until Resume succeeds.
func Open(dir string, o Options) (*DB, error) {
	o = o.withDefaults()
	d := &DB{
		dir:       dir,
		fs:        o.FS,
		opts:      o,
		flushCh:   make(chan struct{}, 1),
		compactCh: make(chan struct{}, 1),
		spareCh:   make(chan struct{}, 1),
		quit:      make(chan struct{}),
	}
	if _, ok := o.FS.(vfs.Reuser); ok && o.RecycleWAL > 0 && !o.MappedWAL {
		d.recycle = true
	}
	if _, ok := o.FS.(vfs.LogMapper); d.recycle || ok && o.MappedWAL {
		// A mapped log's pages reach the disk in any order: with the
		// recyclable format an unsynced tail with holes is a torn tail.
		d.recycLogs = true
	}
	d.bgCond.L = &d.mu
	d.syncCond.L = &d.mu
	if o.BlockCacheSize > 0 {
		d.cache = newBlockCache(o.BlockCacheSize)
	}
	if err := d.fs.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("lsm: open: %w", err)
	}
	if l, ok := d.fs.(vfs.Locker); ok {
		lock, err := l.Lock(d.path("LOCK"))
		if err != nil {
			return nil, fmt.Errorf("lsm: lock %s: %w", dir, err)
		}
		d.lock = lock
	}
	if err := d.recover(); err != nil {
		if d.current != nil {
			d.current.unref()
		}
		if d.lock != nil {
			_ = d.lock.Close()
		}
		return nil, err
	}
	d.mu.Lock()
	d.installReadStateLocked()
	d.mu.Unlock()
	d.visibleSeq.Store(d.lastSeq)

	d.wg.Add(2)
	go d.flushLoop()
	go d.compactLoop()
	if o.Sync == SyncEverySecond {
		d.wg.Add(1)
		go d.syncLoop()
	}
	if d.recycle {
		d.wg.Add(1)
		go d.spareLoop()
		d.spareCh <- struct{}{}
	}
	d.maybeScheduleCompaction()
	return d, nil
}

func (d *DB) releaseFile(f *fileMeta) {
	if f.t != nil {
		_ = f.t.close()
	}
	if f.obsolete.Load() {
		if d.cache != nil {
			d.cache.evictFile(f.num)
		}
		_ = d.fs.Remove(d.path(tableName(f.num)))
	}
}

func parseNum(name, suffix string) (uint64, bool) {
	if !strings.HasSuffix(name, suffix) {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(name, suffix), 10, 64)
	return n, err == nil
}

func (d *DB) recover() error {
	names, err := d.fs.List(d.dir)
	if err != nil {
		return fmt.Errorf("lsm: open: %w", err)
	}
	base := &version{release: d.releaseFile}
	base.refs.Store(1)
	d.current = base
	var maxNum uint64
	var wals []uint64
	var someTable string
	for _, n := range names {
		if num, ok := parseNum(n, ".log"); ok {
			wals = append(wals, num)
			maxNum = max(maxNum, num)
		} else if num, ok := parseNum(n, ".sst"); ok {
			maxNum = max(maxNum, num)
			someTable = n
		} else if strings.HasPrefix(n, "MANIFEST-") {
			if num, err := strconv.ParseUint(strings.TrimPrefix(n, "MANIFEST-"), 10, 64); err == nil {
				maxNum = max(maxNum, num)
			}
		}
	}
	slices.Sort(wals)

	cur, err := readAll(d.fs, d.path("CURRENT"))
	manifest := ""
	switch {
	case errors.Is(err, fs.ErrNotExist) && someTable != "":
		// Tables are written only after a manifest is in place, so this
		// is a directory that lost CURRENT. Starting empty would delete
		// every table as obsolete.
		return fmt.Errorf("%w: CURRENT is missing but the directory holds tables (%s)", ErrCorrupt, someTable)
	case errors.Is(err, fs.ErrNotExist):
		// A new database (or one whose first Open crashed before it
		// wrote CURRENT: its logs, if any, are replayed below).
	case err != nil:
		return fmt.Errorf("lsm: read CURRENT: %w", err)
	default:
		manifest = strings.TrimSpace(string(cur))
		if err := d.replayManifest(manifest); err != nil {
			return err
		}
	}
	d.nextFile = max(d.nextFile, maxNum+1, 1)

	// Open every table of the recovered version.
	for _, files := range d.current.levels {
		for _, f := range files {
			t, err := openTableSized(d.fs, d.path(tableName(f.num)), f.num, f.size, d.cache)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return fmt.Errorf("%w: %s is missing (%s lists it): %w", ErrCorrupt, tableName(f.num), manifest, err)
			case errors.Is(err, ErrCorrupt):
				return err
			case err != nil:
				return fmt.Errorf("lsm: open %s: %w", tableName(f.num), err)
			}
			f.t = t
		}
	}

	// Replay the logs that hold writes not yet in tables. With
	// OpenFailedOnWriteError, once a write fails the memtables replayed
	// from then on stay in memory (kept), for Resume to write.
	edit := &versionEdit{}
	var mem *memTable
	var kept []*memTable
	var werr error
	flush := func(m *memTable) error {
		if werr == nil {
			num := d.nextFile
			err := d.flushRecovered(m, edit)
			if err == nil {
				return nil
			}
			if !d.canOpenFailed(err) {
				return err
			}
			werr = err
			// A partial table whose removal failed: not in any manifest.
			d.orphans = append(d.orphans, num)
		}
		kept = append(kept, m)
		return nil
	}
	for _, num := range wals {
		if num < d.logNum {
			continue
		}
		buf, err := readAll(d.fs, d.path(walName(num)))
		if err != nil {
			return fmt.Errorf("lsm: read WAL %06d: %w", num, err)
		}
		r := recordReader{buf: buf, name: walName(num), recyclable: d.walRecyclable, logNum: num}
		for {
			rec, err := r.next()
			if err != nil {
				return err
			}
			if rec == nil {
				break
			}
			it, err := newBatchIter(rec)
			if err != nil {
				return fmt.Errorf("%w: %s offset %d: %v", ErrCorrupt, walName(num), r.validEnd, err)
			}
			for {
				k, key, value, seq, ok, err := it.next()
				if err != nil {
					return fmt.Errorf("%w: %s: %v", ErrCorrupt, walName(num), err)
				}
				if !ok {
					break
				}
				if mem == nil {
					mem = newMemTable(d.opts.MemTableSize, num)
				}
				if mem.add(key, seq, k, value) == errMemFull {
					if err := flush(mem); err != nil {
						return err
					}
					mem = newMemTable(max(d.opts.MemTableSize, len(key)+len(value)+4096), num)
					if err := mem.add(key, seq, k, value); err != nil {
						return err
					}
				}
				d.lastSeq = max(d.lastSeq, seq)
			}
		}
	}
	if mem != nil && !mem.empty() {
		if err := flush(mem); err != nil {
			return err
		}
	}
	nv, err := d.current.apply(edit)
	if err != nil {
		return err
	}
	d.current.unref()
	d.current = nv

	// Start a new log and a new manifest that describes the whole tree.
	walNum := d.nextFile
	d.nextFile++
	if werr == nil {
		f, err := d.createWAL(walNum, 0)
		if err == nil {
			oldLogNum := d.logNum
			d.logNum = walNum
			if err = d.writeNewManifest(); err != nil {
				d.logNum = oldLogNum
				_ = f.Close()
			} else {
				d.wal = d.newWALFile(walNum, f)
				d.mem = newMemTable(d.opts.MemTableSize, walNum)
			}
		}
		if err != nil && !d.canOpenFailed(err) {
			return err
		}
		werr = err
	}
	if werr != nil {
		d.openFailed(werr, names, wals, walNum, kept)
		return nil
	}
	d.removeObsolete()
	return nil
}

// canOpenFailed reports whether recovery's write error err lets Open
// return a failed DB instead (Options.OpenFailedOnWriteError): damage
// never does.
func (d *DB) canOpenFailed(err error) bool {
	return d.opts.OpenFailedOnWriteError && !errors.Is(err, ErrCorrupt)
}

// openFailed leaves a recovery whose write failed with err as a failed DB
// (Options.OpenFailedOnWriteError): the memtables it could not write to
// tables (kept) wait for Resume in d.imm, no log is live, and nothing
// that the next Open may need is removed. CURRENT names the manifest it
// named before (or, if only the directory sync after the switch failed,
// the new one, which names the tables recovery wrote and no log it
// replayed). Resume writes a fresh manifest (manifestBad: none is open
// for appending) and then removes the logs recovery read, its partial
// log walNum, the old manifests, and the tables no manifest needs then:
// those the directory held outside the recovered version (names, as Open
// listed it), and partial ones recovery left.
func (d *DB) openFailed(err error, names []string, wals []uint64, walNum uint64, kept []*memTable) {
	_ = d.fs.Remove(d.path(walName(walNum))) // if createWAL made it
	d.bgErr = fmt.Errorf("lsm: open: opened failed, recovery could not write: %w", err)
	d.m.backgroundErrors.Add(1)
	d.manifestBad = true
	d.imm = kept
	d.mem = newMemTable(4096, walNum)
	d.recoveredLogs = append(slices.Clone(wals), walNum)
	live := make(map[uint64]bool)
	for _, files := range d.current.levels {
		for _, f := range files {
			live[f.num] = true
		}
	}
	for _, n := range names {
		if num, ok := parseNum(n, ".sst"); ok && !live[num] {
			d.orphans = append(d.orphans, num)
		}
	}
}

// flushRecovered writes a memtable rebuilt from a log straight to L0.
func (d *DB) flushRecovered(mem *memTable, edit *versionEdit) error {
	num := d.nextFile
	d.nextFile++
	meta, err := d.writeMemTable(mem, num)
	if err != nil {
		return err
	}
	edit.added = append(edit.added, newFile{0, meta})
	return nil
}

func (d *DB) replayManifest(name string) error {
	num, err := strconv.ParseUint(strings.TrimPrefix(name, "MANIFEST-"), 10, 64)
	if err != nil || !strings.HasPrefix(name, "MANIFEST-") {
		return fmt.Errorf("%w: CURRENT names %q", ErrCorrupt, name)
	}
	buf, err := readAll(d.fs, d.path(name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s is missing (CURRENT names it): %w", ErrCorrupt, name, err)
	case err != nil:
		return fmt.Errorf("lsm: read %s: %w", name, err)
	}
	r := recordReader{buf: buf, name: name}
	for i := 0; ; i++ {
		off := r.off
		rec, err := r.next()
		if err != nil {
			return err
		}
		if rec == nil {
			if i == 0 {
				// A manifest starts with a snapshot of the whole tree
				// and is synced before CURRENT names it: an empty or
				// torn first record is damage, not a crash.
				return fmt.Errorf("%w: %s offset 0: no complete record (empty, zeroed or cut short)", ErrCorrupt, name)
			}
			if r.torn && rottedRecord(buf, r.validEnd) {
				// An edit is appended with one write(2) and fsynced
				// before anything acts on it. Unlike a mapped log, the
				// manifest is never preallocated, so a whole last
				// record with wrong bytes is not what a crash leaves;
				// dropping it could drop a table whose log is gone.
				return fmt.Errorf("%w: %s offset %d: checksum mismatch in the last record", ErrCorrupt, name, r.validEnd)
			}
			break
		}
		e, err := decodeEdit(rec)
		if err != nil {
			return fmt.Errorf("%w: %s offset %d: malformed version edit", ErrCorrupt, name, off)
		}
		nv, err := d.current.apply(e)
		if err != nil {
			return fmt.Errorf("%w: %s offset %d: %v", ErrCorrupt, name, off, err)
		}
		d.current.unref()
		d.current = nv
		d.logNum = max(d.logNum, e.logNum)
		d.nextFile = max(d.nextFile, e.nextFile)
		d.walRecyclable = d.walRecyclable || e.recyclableLogs
		d.lastSeq = max(d.lastSeq, e.lastSeq)
	}
	d.nextFile = max(d.nextFile, num+1)
	return nil
}

// rottedRecord reports whether the bytes at off hold a whole record — the
// length words agree and the full payload is present — in which no 512-byte
// sector is all zeros. A crash in the middle of an append leaves the record
// cut short, or sectors that never reached the disk reading as zeros;
// wrong bytes in a whole record are damage (the checksum already failed).
func rottedRecord(buf []byte, off int) bool {
	b := buf[off:]
	if len(b) < recordHeaderLen {
		return false
	}
	n := binary.LittleEndian.Uint32(b[4:])
	if ^n != binary.LittleEndian.Uint32(b[8:]) || uint64(n) > uint64(len(b)-recordHeaderLen) {
		return false
	}
	end := off + recordHeaderLen + int(n)
	for s := off &^ 511; s < end; s += 512 {
		if allZero(buf[max(s, off):min(s+512, end)]) {
			return false
		}
	}
	return true
}

// writeNewManifest starts a manifest holding a snapshot of the current
// version and points CURRENT at it (switchManifest).
func (d *DB) writeNewManifest() error {
	num := d.nextFile
	d.nextFile++
	e := d.current.snapshotEdit()
	e.logNum, e.nextFile, e.lastSeq = d.logNum, d.nextFile, d.lastSeq
	return d.switchManifest(num, e)
}

// switchManifest writes manifest num holding the snapshot edit e, and
// points CURRENT at it (write a temporary file, sync, rename, sync the
// directory: the switch is atomic), closing the manifest in use. On an
// error the manifest in use stays d's; CURRENT may name either (if the
// rename succeeded but the directory sync failed), so the new manifest is
// left in place. Called from Open, or with manifestMu held.
func (d *DB) switchManifest(num uint64, e *versionEdit) error {
	f, err := d.fs.Create(d.path(manifestName(num)))
	if err != nil {
		return fmt.Errorf("lsm: create manifest: %w", err)
	}
	e.recyclableLogs = d.recycLogs
	if _, err := f.Write(appendRecord(nil, e.encode())); err != nil {
		_ = f.Close()
		return fmt.Errorf("lsm: write manifest: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("lsm: sync manifest: %w", err)
	}
	tmp := d.path("CURRENT.tmp")
	cf, err := d.fs.Create(tmp)
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("lsm: write CURRENT: %w", err)
	}
	_, err = cf.Write([]byte(manifestName(num) + "\n"))
	if err == nil {
		err = cf.Sync()
	}
	err = errors.Join(err, cf.Close())
	if err == nil {
		err = d.fs.Rename(tmp, d.path("CURRENT"))
	}
	if err == nil {
		err = d.fs.SyncDir(d.dir)
	}
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("lsm: write CURRENT: %w", err)
	}
	if d.manifest != nil {
		_ = d.manifest.Close()
	}
	d.manifest, d.manifestNum = f, num
	return nil
}

// removeObsolete deletes logs, tables and manifests nothing refers to.
// Called only from Open, before any background work starts.
func (d *DB) removeObsolete() {
	live := make(map[uint64]bool)
	for _, files := range d.current.levels {
		for _, f := range files {
			live[f.num] = true
		}
	}
	names, err := d.fs.List(d.dir)
	if err != nil {
		return
	}
	for _, n := range names {
		remove := false
		if num, ok := parseNum(n, ".log"); ok {
			remove = num < d.logNum
		} else if num, ok := parseNum(n, ".sst"); ok {
			remove = !live[num]
		} else if strings.HasPrefix(n, "MANIFEST-") {
			remove = n != manifestName(d.manifestNum)
		} else if n == "CURRENT.tmp" {
			remove = true
		}
		if remove {
			_ = d.fs.Remove(d.path(n))
		}
	}
}

func (d *DB) syncLoop() {
	defer d.wg.Done()
	t := time.NewTicker(cmp.Or(d.opts.syncPeriod, time.Second))
	defer t.Stop()
	for {
		select {
		case <-d.quit:
			return
		case <-t.C:
		}
		d.syncWAL()
	}
}

// syncWAL is a tick of SyncEverySecond: it fsyncs the live log and the
// directory. A failure fails the DB. After a failed fsync the kernel may
// have dropped the dirty pages and marked them clean, so a later fsync
// that succeeds proves nothing about them (PostgreSQL's "fsyncgate"):
// the log's bytes past its last good sync are never trusted again. The
// writes they hold are acknowledged and in the memtables; Resume writes
// those to tables and starts a new log, so no replay ever needs them.
func (d *DB) syncWAL() {
	d.mu.Lock()
	w := d.wal
	d.mu.Unlock()
	if w == nil {
		return
	}
	t0 := time.Now()
	err := w.sync()
	d.m.noteSync(time.Since(t0))
	if err == nil {
		// The log's directory entry must be durable too.
		err = d.fs.SyncDir(d.dir)
	}
	if err != nil {
		d.mu.Lock()
		// A log rotated out meanwhile goes to a table with its memtable
		// (the flush syncs the table, not the log), and one a Resume
		// replaced is not needed at all: only the live log's failure
		// leaves acknowledged writes without a durable home.
		if d.wal == w && !d.closed {
			d.failLocked(fmt.Errorf("lsm: sync write-ahead log: %w", err))
		}
		d.mu.Unlock()
	}
}

// SyncLog makes every write applied before the call durable now, whatever
// Options.Sync says (Redis's WAITAOF asks this of an everysec server): it
// fsyncs the live write-ahead log and its directory, as a SyncEverySecond
// tick does. Logs rotated out were fsynced as they closed, except under
// SyncNone, where SyncLog writes the memtables to tables instead (Flush).
func (d *DB) SyncLog() error {
	if d.opts.Sync == SyncNone {
		return d.Flush()
	}
	d.syncWAL()
	return d.Err()
}

// Flush writes the memtable to an L0 table and waits until every memtable
// written before the call is in a table.
func (d *DB) Flush() error {
	// Rotating the memtable needs the commit lead, or a leader could still
	// be inserting into the memtable being handed to the flush.
	d.mu.Lock()
	defer d.mu.Unlock()
	err := d.headLocked()
	if err == nil && !d.mem.empty() {
		err = d.rotateMemLocked(0)
	}
	d.leaveHeadLocked()
	if err != nil {
		return err
	}
	target := len(d.imm)
	if target == 0 {
		return d.bgErr
	}
	last := d.imm[target-1]
	for d.bgErr == nil && !d.closed && (slices.Contains(d.imm, last) || d.flushMem == last) {
		d.bgCond.Wait()
	}
	if d.bgErr != nil {
		return d.bgErr
	}
	if d.closed {
		return ErrClosed
	}
	return nil
}

// Close flushes the memtable to a table, stops background work and closes
// every file. It waits for a running compaction to reach a safe point.
func (d *DB) Close() error {
	d.resumeMu.Lock() // not in the middle of a Resume
	defer d.resumeMu.Unlock()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	// Let queued writers finish, and the fsyncs in flight.
	for len(d.writers) > 0 || len(d.syncing) > 0 {
		d.bgCond.Wait()
	}
	d.closed = true
	d.bgCond.Broadcast()
	d.mu.Unlock()

	d.closing.Store(true)
	close(d.quit)
	d.wg.Wait()
	// A manual Compact running in another goroutine sees closing and
	// stops at its next check; wait for it before closing its tables.
	d.compactMu.Lock()
	d.compactMu.Unlock()

	// Flush what is left in memory so the next Open has no log to replay.
	var err error
	d.mu.Lock()
	if d.bgErr == nil && (!d.mem.empty() || len(d.imm) > 0) {
		d.mu.Unlock()
		err = d.flushAllForClose()
		d.mu.Lock()
	}
	if err == nil {
		err = d.bgErr
	}
	if d.wal != nil {
		err = errors.Join(err, d.wal.close(d.opts.Sync != SyncNone))
	}
	for _, num := range d.spares {
		_ = d.fs.Remove(d.path(walName(num)))
	}
	d.spares = nil
	if d.manifest != nil {
		err = errors.Join(err, d.manifest.Close())
	}
	rs := d.rs.Swap(nil)
	cur := d.current
	d.mu.Unlock()
	if rs != nil {
		rs.release()
	}
	cur.unref()
	if d.lock != nil {
		err = errors.Join(err, d.lock.Close())
	}
	if errors.Is(err, ErrClosed) {
		err = nil
	}
	return err
}

func (d *DB) flushAllForClose() error {
	d.mu.Lock()
	if !d.mem.empty() {
		old := d.mem
		old.wal = d.wal
		d.imm = append(d.imm, old)
		// A memtable with no log: after this flush the manifest's log
		// number is past every existing log.
		num := d.nextFile
		d.nextFile++
		d.mem = newMemTable(4096, num)
		d.wal = nil
		d.installReadStateLocked()
	}
	d.mu.Unlock()
	for {
		d.mu.Lock()
		if len(d.imm) == 0 || d.bgErr != nil {
			err := d.bgErr
			d.mu.Unlock()
			return err
		}
		m := d.imm[0]
		d.mu.Unlock()
		if err := d.flushOne(m); err != nil {
			return err
		}
	}
}
