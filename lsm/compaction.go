package lsm

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
)

// l0FileFactor × L0CompactionTrigger L0 tables start a compaction even when
// they do not overlap (64 with the defaults).
const l0FileFactor = 16

var errAborted = errors.New("lsm: compaction aborted by Close")

// logAndApply logs an edit to the manifest (fsynced) and installs the
// resulting version. install runs under mu just before the new read state is
// published, so a flush can drop its memtable in the same step that adds its
// table.
//
// A failed manifest write fails the DB (failLocked) and makes the manifest
// suspect: the edit may or may not be in it, whole or torn, and an edit
// appended after a torn one would make it unreadable. From then on
// logAndApply refuses every edit until Resume has written a fresh manifest
// (logAndApplyFresh). The failure is a *manifestError; the tables the edit
// added stay on disk (the suspect manifest may name them) as orphans,
// which Resume removes.
func (d *DB) logAndApply(e *versionEdit, install func()) error {
	d.manifestMu.Lock()
	defer d.manifestMu.Unlock()

	d.mu.Lock()
	if d.manifestBad {
		// Wrapped: the DB's error may be another edit's manifestError,
		// and this edit's tables, in no manifest, are to be removed
		// (discardTables).
		err := fmt.Errorf("lsm: manifest suspect until Resume: %w", d.bgErr)
		d.mu.Unlock()
		return err
	}
	if e.logNum == 0 {
		e.logNum = d.logNum
	}
	e.nextFile, e.lastSeq = d.nextFile, d.lastSeq
	nv, err := d.current.apply(e)
	d.mu.Unlock()
	if err != nil {
		return err
	}
	assertVersion(nv, e.nextFile)
	if len(e.added) > 0 {
		// New tables' directory entries must be durable before the
		// manifest refers to them.
		err = d.fs.SyncDir(d.dir)
	}
	if err != nil {
		// Fall through to the failure path below.
	} else if _, err = d.manifest.Write(appendRecord(nil, e.encode())); err == nil {
		err = d.manifest.Sync()
	}
	if err != nil {
		// The edit may or may not be in the manifest; either way the
		// in-memory state can no longer be trusted to match it.
		nv.unref()
		err = &manifestError{fmt.Errorf("lsm: write manifest: %w", err)}
		d.mu.Lock()
		d.manifestBad = true
		d.orphanAddedLocked(e)
		d.failLocked(err)
		d.mu.Unlock()
		return err
	}
	d.installVersion(nv, e, install)
	return nil
}

// logAndApplyFresh applies an edit and writes the resulting version whole
// to a new manifest, which CURRENT then names (switchManifest), instead of
// appending the edit to the manifest in use: Resume's way past a manifest
// whose last write failed. On failure the tables the edit added are
// orphans, as in logAndApply: CURRENT may already name the new manifest.
func (d *DB) logAndApplyFresh(e *versionEdit, install func()) error {
	d.manifestMu.Lock()
	defer d.manifestMu.Unlock()

	d.mu.Lock()
	if e.logNum == 0 {
		e.logNum = d.logNum
	}
	num := d.nextFile
	d.nextFile++
	e.nextFile, e.lastSeq = d.nextFile, d.lastSeq
	nv, err := d.current.apply(e)
	d.mu.Unlock()
	if err != nil {
		return err
	}
	assertVersion(nv, e.nextFile)
	snap := nv.snapshotEdit()
	snap.logNum, snap.nextFile, snap.lastSeq = e.logNum, e.nextFile, e.lastSeq
	if err := d.switchManifest(num, snap); err != nil {
		nv.unref()
		d.mu.Lock()
		d.orphanAddedLocked(e)
		d.mu.Unlock()
		return &manifestError{err}
	}
	d.installVersion(nv, e, install)
	return nil
}

// manifestError is a failed manifest write (logAndApply): the tables of
// its edit are orphans, not to be removed by the caller.
type manifestError struct{ err error }

func (e *manifestError) Error() string { return e.err.Error() }
func (e *manifestError) Unwrap() error { return e.err }

// orphanAddedLocked records the tables e adds (not those it moves) as
// orphans. d.mu is held.
func (d *DB) orphanAddedLocked(e *versionEdit) {
	for _, a := range e.added {
		moved := false
		for _, del := range e.deleted {
			moved = moved || del.num == a.meta.num
		}
		if !moved {
			d.orphans = append(d.orphans, a.meta.num)
		}
	}
}

// discardTables closes the tables of a flush or compaction whose edit
// failed with err and removes their files, unless err, as logAndApply
// returned it, is a manifest failure: then they are orphans. (Not
// errors.As: logAndApply refuses an edit on a suspect manifest with an
// error wrapping the DB's, which may be an earlier edit's manifestError,
// and this edit's tables are then in no manifest.)
func (d *DB) discardTables(metas []*fileMeta, err error) {
	_, orphaned := err.(*manifestError)
	for _, m := range metas {
		if m == nil {
			continue
		}
		_ = m.t.close()
		if !orphaned {
			_ = d.fs.Remove(d.path(tableName(m.num)))
		}
	}
}

// installVersion makes nv, the result of the durable edit e, the current
// version, running install under mu before the read state is published.
// manifestMu is held.
func (d *DB) installVersion(nv *version, e *versionEdit, install func()) {
	added := make(map[uint64]bool, len(e.added))
	for _, a := range e.added {
		added[a.meta.num] = true
	}
	d.mu.Lock()
	old := d.current
	d.current = nv
	d.logNum = e.logNum
	for _, del := range e.deleted {
		if !added[del.num] {
			for _, f := range old.levels[del.level] {
				if f.num == del.num {
					f.obsolete.Store(true)
				}
			}
		}
	}
	if install != nil {
		install()
	}
	d.installReadStateLocked()
	d.bgCond.Broadcast()
	d.mu.Unlock()
	old.unref()
}

// writeMemTable writes a memtable to a new table file, keeping only the
// newest version of each key in each snapshot stripe (see stripe): an
// older one is visible to no snapshot, and the readers of the DB that
// could still see it keep reading the memtable itself. Entries above the
// memtable's read limit (writes that failed) are left out; a memtable
// with nothing else gives no table (nil).
func (d *DB) writeMemTable(m *memTable, num uint64) (*fileMeta, error) {
	// m takes no more writes, so a snapshot taken after this has a
	// sequence number at or above all of m's.
	d.mu.Lock()
	snaps := d.snapshots.seqsLocked()
	d.mu.Unlock()
	entries := m.flushEntries(snaps)
	if len(entries) == 0 {
		// Only writes that failed (Resume): there is nothing to keep.
		return nil, nil
	}
	f, err := d.fs.Create(d.path(tableName(num)))
	if err != nil {
		return nil, fmt.Errorf("lsm: create table: %w", err)
	}
	w := newTableWriter(f, num, &d.opts)
	for _, node := range entries {
		w.add(m.nodeKV(node))
	}
	meta, err := w.finish()
	if err != nil {
		_ = d.fs.Remove(d.path(tableName(num)))
		return nil, fmt.Errorf("lsm: write table %06d: %w", num, err)
	}
	t, err := openTable(d.fs, d.path(tableName(num)), num, d.cache)
	if err != nil {
		_ = d.fs.Remove(d.path(tableName(num)))
		return nil, err
	}
	meta.t = t
	return meta, nil
}

func (d *DB) flushLoop() {
	defer d.wg.Done()
	for {
		select {
		case <-d.quit:
			return
		case <-d.flushCh:
		}
		for !d.closing.Load() {
			d.mu.Lock()
			if len(d.imm) == 0 || d.bgErr != nil {
				d.mu.Unlock()
				break
			}
			m := d.imm[0]
			d.mu.Unlock()
			if err := d.flushOne(m); err != nil {
				break
			}
		}
	}
}

// flushOne writes the oldest immutable memtable, m, to L0. A failure
// fails the DB: writes cannot make room without flushes, and Resume
// writes the memtable itself.
func (d *DB) flushOne(m *memTable) error {
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	d.mu.Lock()
	if err := d.bgErr; err != nil || len(d.imm) == 0 || d.imm[0] != m {
		// Failed meanwhile (Resume will write m), or a Resume already
		// wrote it while this flush waited for flushMu.
		d.mu.Unlock()
		return err
	}
	// Running until its very end (its log removed), when a Flush
	// waiting for m may return (d.flushMem), and counted so in Metrics.
	d.flushMem = m
	d.mu.Unlock()
	d.m.flushing.Add(1)
	defer func() {
		d.m.flushing.Add(-1)
		d.mu.Lock()
		d.flushMem = nil
		d.bgCond.Broadcast()
		d.mu.Unlock()
	}()
	if m.wal != nil {
		if err := m.wal.close(d.opts.Sync == SyncEverySecond); err != nil {
			d.setBgErr(fmt.Errorf("lsm: close WAL: %w", err))
			return err
		}
	}
	d.mu.Lock()
	num := d.nextFile
	d.nextFile++
	d.mu.Unlock()
	meta, err := d.writeMemTable(m, num)
	if err != nil {
		d.setBgErr(err)
		return err
	}
	e := &versionEdit{}
	if meta != nil {
		e.added = []newFile{{0, meta}}
	}
	d.mu.Lock()
	// After this edit the oldest log still needed is the next memtable's.
	if len(d.imm) > 1 {
		e.logNum = d.imm[1].logNum
	} else {
		e.logNum = d.mem.logNum
	}
	d.mu.Unlock()
	err = d.logAndApply(e, func() {
		d.imm = d.imm[1:]
		// Counted before Flush's waiters can wake, so a Flush that
		// returned is counted.
		d.m.flushes.Add(1)
		if meta != nil {
			d.m.flushBytes.Add(int64(meta.size))
		}
	})
	if err != nil {
		d.discardTables([]*fileMeta{meta}, err)
		return err
	}
	if m.wal != nil {
		d.mu.Lock()
		kept := d.keepSpareLocked(m.wal)
		d.mu.Unlock()
		if !kept {
			_ = d.fs.Remove(m.wal.path)
		}
	} else {
		_ = d.fs.Remove(d.path(walName(m.logNum)))
	}
	d.maybeScheduleCompaction()
	return nil
}

func (d *DB) setBgErr(err error) {
	d.mu.Lock()
	d.failLocked(err)
	d.mu.Unlock()
}

func (d *DB) maybeScheduleCompaction() {
	if d.opts.DisableAutoCompaction {
		return
	}
	select {
	case d.compactCh <- struct{}{}:
	default:
	}
}

// compactLoop runs background compactions while the DB is healthy. A
// compaction that fails does not fail the DB: its outputs are removed,
// its inputs stay as they were, and it is tried again after a delay that
// grows with each failure in a row (a full disk is not hammered), while
// writes go on until L0 stalls them. Only a failed manifest write fails
// the DB, in logAndApply.
func (d *DB) compactLoop() {
	defer d.wg.Done()
	delay := time.Duration(0)
	for {
		select {
		case <-d.quit:
			return
		case <-d.compactCh:
		}
		for !d.closing.Load() {
			d.compactMu.Lock()
			d.mu.Lock()
			var c *compaction
			if d.bgErr == nil {
				// A failed DB compacts nothing until Resume, which
				// schedules a compaction when it is done.
				c = d.pickCompactionLocked()
			}
			d.mu.Unlock()
			if c == nil {
				d.compactMu.Unlock()
				break
			}
			err := d.runCompaction(c)
			d.compactMu.Unlock()
			if err == nil {
				delay = 0
				continue
			}
			if errors.Is(err, errAborted) {
				break
			}
			// The first retry waits a second (Options.compactRetry in
			// tests); each failure in a row doubles the wait, up to 32×.
			d.m.compactionErrors.Add(1)
			base := cmp.Or(d.opts.compactRetry, time.Second)
			delay = min(max(2*delay, base), 32*base)
			t := time.NewTimer(delay)
			select {
			case <-d.quit:
				t.Stop()
				return
			case <-t.C:
			}
			d.maybeScheduleCompaction()
			break
		}
	}
}

// compaction is one unit of compaction work.
type compaction struct {
	outLevel int
	// inputs lists the input tables by level.
	inputs [numLevels][]*fileMeta
	// move is set for a trivial move: the single input moves to outLevel
	// without being rewritten.
	move bool
	// bottom is set when no level below outLevel can hold older data for
	// any key (full compaction), so tombstones always drop.
	bottom bool
	v      *version
	// snaps are the sequence numbers of the snapshots live when the
	// compaction was picked (ascending): the compaction keeps the newest
	// version of each key in each stripe between them.
	snaps []uint64
}

func (c *compaction) files() []*fileMeta {
	var out []*fileMeta
	for _, lvl := range c.inputs {
		out = append(out, lvl...)
	}
	return out
}

func (d *DB) maxBytes(level int) int64 {
	n := d.opts.LBaseMaxBytes
	for i := 1; i < level; i++ {
		n *= 10
	}
	return n
}

func levelBytes(files []*fileMeta) int64 {
	var n int64
	for _, f := range files {
		n += int64(f.size)
	}
	return n
}

// pickCompactionLocked chooses the level with the highest score (L0: file
// count over its trigger; Ln: bytes over its target) and the tables to
// merge, or returns nil when every score is below 1.
func (d *DB) pickCompactionLocked() *compaction {
	v := d.current
	best, bestScore := -1, 1.0
	for level := 0; level < numLevels-1; level++ {
		var score float64
		if level == 0 {
			score = float64(v.l0Depth) / float64(d.opts.L0CompactionTrigger)
			// Non-overlapping tables (a sequential load) keep the depth
			// low, but the file count must stay bounded too: every Get
			// range-checks each L0 table.
			score = max(score, float64(len(v.levels[0]))/float64(l0FileFactor*d.opts.L0CompactionTrigger))
		} else {
			score = float64(levelBytes(v.levels[level])) / float64(d.maxBytes(level))
		}
		if score >= bestScore {
			best, bestScore = level, score
		}
	}
	if best < 0 {
		return nil
	}
	c := &compaction{outLevel: best + 1, v: v, snaps: d.snapshots.seqsLocked()}
	if best == 0 {
		// Start from the oldest L0 table and take every L0 table that
		// overlaps the growing range, so no older version of a key is left
		// above a newer one.
		l0 := v.levels[0]
		seed := l0[len(l0)-1]
		lo, hi := seed.smallestUser(), seed.largestUser()
		in := map[*fileMeta]bool{seed: true}
		for changed := true; changed; {
			changed = false
			for _, f := range l0 {
				if !in[f] && f.overlaps(lo, hi) {
					in[f] = true
					changed = true
					lo, hi = minKey(lo, f.smallestUser()), maxKey(hi, f.largestUser())
				}
			}
		}
		for _, f := range l0 {
			if in[f] {
				c.inputs[0] = append(c.inputs[0], f)
			}
		}
		c.inputs[1] = v.overlapping(1, lo, hi)
	} else {
		files := v.levels[best]
		i := 0
		if p := d.compactPointer[best]; p != nil {
			for i < len(files) && bytes.Compare(files[i].smallestUser(), p) <= 0 {
				i++
			}
			if i == len(files) {
				i = 0
			}
		}
		f := files[i]
		d.compactPointer[best] = append([]byte(nil), f.largestUser()...)
		c.inputs[best] = []*fileMeta{f}
		c.inputs[best+1] = v.overlapping(best+1, f.smallestUser(), f.largestUser())
	}
	if len(c.inputs[c.outLevel]) == 0 && len(c.files()) == 1 {
		c.move = true
	}
	v.ref()
	return c
}

func minKey(a, b []byte) []byte {
	if bytes.Compare(a, b) <= 0 {
		return a
	}
	return b
}

func maxKey(a, b []byte) []byte {
	if bytes.Compare(a, b) >= 0 {
		return a
	}
	return b
}

// runCompaction executes c and installs the result.
func (d *DB) runCompaction(c *compaction) error {
	d.m.compacting.Add(1)
	defer d.m.compacting.Add(-1) // after unref, which may remove the inputs
	defer c.v.unref()
	e := &versionEdit{}
	for level, files := range c.inputs {
		for _, f := range files {
			e.deleted = append(e.deleted, deletedFile{level, f.num})
		}
	}
	if c.move {
		f := c.files()[0]
		e.added = append(e.added, newFile{c.outLevel, f})
		if err := d.logAndApply(e, nil); err != nil {
			return err
		}
		d.m.moves.Add(1)
		return nil
	}
	for _, files := range c.inputs {
		d.m.compactRead.Add(levelBytes(files))
	}
	outputs, err := d.mergeParallel(c)
	if err != nil {
		d.discardTables(outputs, err)
		return err
	}
	for _, o := range outputs {
		e.added = append(e.added, newFile{c.outLevel, o})
	}
	if err := d.logAndApply(e, nil); err != nil {
		d.discardTables(outputs, err)
		return err
	}
	d.m.compactions.Add(1)
	return nil
}

// mergeParallel splits a large compaction into key ranges of about equal
// input size and merges them concurrently, one goroutine per core (at most
// 4): each range writes its own tables, and the ranges are disjoint, so the
// outputs of all of them form one sorted run.
func (d *DB) mergeParallel(c *compaction) ([]*fileMeta, error) {
	var all []*fileMeta
	var total uint64
	for _, files := range c.inputs {
		for _, f := range files {
			all = append(all, f)
			total += f.size
		}
	}
	parts := min(runtime.GOMAXPROCS(0), 4)
	if total < 4*d.opts.TargetFileSize || parts < 2 {
		return d.mergeTables(c, nil, nil)
	}
	// Split points: largest keys of input tables, in order, where the
	// running input size crosses each 1/parts of the total.
	slices.SortFunc(all, func(a, b *fileMeta) int { return bytes.Compare(a.largestUser(), b.largestUser()) })
	var splits [][]byte
	var run uint64
	for _, f := range all {
		run += f.size
		if len(splits) < parts-1 && run >= total*uint64(len(splits)+1)/uint64(parts) {
			if len(splits) == 0 || bytes.Compare(f.largestUser(), splits[len(splits)-1]) > 0 {
				// Upper bounds are exclusive: split just after this key.
				splits = append(splits, append(append([]byte(nil), f.largestUser()...), 0))
			}
		}
	}
	bounds := append([][]byte{nil}, splits...)
	bounds = append(bounds, nil)
	results := make([][]*fileMeta, len(bounds)-1)
	errs := make([]error, len(bounds)-1)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = d.mergeTables(c, bounds[i], bounds[i+1])
		}()
	}
	wg.Wait()
	var outputs []*fileMeta
	for _, r := range results {
		outputs = append(outputs, r...)
	}
	return outputs, errors.Join(errs...)
}

// mergeTables merges the inputs of c into new tables of at most
// TargetFileSize, keeping only the newest version of each key in each
// snapshot stripe (without snapshots, the newest version). An expired
// value, or one Options.Drop rejects, becomes a tombstone; a tombstone is
// dropped when no deeper level can hold an older version of its key and no
// snapshot is older than it (then every older version is in its stripe).
func (d *DB) mergeTables(c *compaction, lo, hi []byte) (outputs []*fileMeta, err error) {
	var mi mergingIter
	for level, files := range c.inputs {
		var in []*fileMeta
		for _, f := range files {
			if (lo == nil || bytes.Compare(f.largestUser(), lo) >= 0) &&
				(hi == nil || bytes.Compare(f.smallestUser(), hi) < 0) {
				in = append(in, f)
			}
		}
		if len(in) == 0 {
			continue
		}
		if level == 0 {
			for _, f := range in {
				mi.children = append(mi.children, newTableIter(f.t, false))
			}
		} else {
			mi.children = append(mi.children, &levelIter{files: in})
		}
	}
	// For each deeper level, the index of the first table that may hold
	// the current key; keys only grow, so the indexes only move forward.
	var ptrs [numLevels]int
	baseLevelFor := func(ukey []byte) bool {
		if c.bottom {
			return true
		}
		for level := c.outLevel + 1; level < numLevels; level++ {
			files := c.v.levels[level]
			for ptrs[level] < len(files) && bytes.Compare(files[ptrs[level]].largestUser(), ukey) < 0 {
				ptrs[level]++
			}
			if ptrs[level] < len(files) && bytes.Compare(files[ptrs[level]].smallestUser(), ukey) <= 0 {
				return false
			}
		}
		return true
	}

	now := time.Now().UnixNano()
	var w *tableWriter
	var wnum uint64
	finishOutput := func() error {
		meta, err := w.finish()
		w = nil
		if err != nil {
			_ = d.fs.Remove(d.path(tableName(wnum)))
			return fmt.Errorf("lsm: write table %06d: %w", wnum, err)
		}
		t, err := openTable(d.fs, d.path(tableName(wnum)), wnum, d.cache)
		if err != nil {
			_ = d.fs.Remove(d.path(tableName(wnum)))
			return err
		}
		meta.t = t
		outputs = append(outputs, meta)
		d.m.compactWritten.Add(int64(meta.size))
		return nil
	}
	var last []byte
	lastStripe := 0
	var tomb []byte
	n := 0
	var ok bool
	if lo != nil {
		ok = mi.seekGE(appendInternalKey(nil, lo, maxSeq, kindMax))
	} else {
		ok = mi.first()
	}
	for ; ok; ok = mi.next() {
		if n++; n&1023 == 0 && d.closing.Load() {
			if w != nil {
				w.abandon()
				_ = d.fs.Remove(d.path(tableName(wnum)))
			}
			return outputs, errAborted
		}
		ik := mi.key()
		uk := userKey(ik)
		if hi != nil && bytes.Compare(uk, hi) >= 0 {
			break
		}
		t := trailer(ik)
		s := stripe(c.snaps, seqOf(t))
		newKey := last == nil || !bytes.Equal(uk, last)
		if !newKey && s == lastStripe {
			continue // hidden by a newer version from every snapshot
		}
		if newKey {
			last = append(last[:0], uk...)
		}
		lastStripe = s
		k, val := kindOf(t), mi.value()
		if expired(k, val, now) {
			d.m.expiredDropped.Add(1)
			tomb = appendInternalKey(tomb[:0], uk, seqOf(t), kindDelete)
			ik, k, val = tomb, kindDelete, nil
		} else if k != kindDelete && d.opts.Drop != nil && d.opts.Drop(uk, userValue(k, val)) {
			d.m.filterDropped.Add(1)
			tomb = appendInternalKey(tomb[:0], uk, seqOf(t), kindDelete)
			ik, k, val = tomb, kindDelete, nil
		}
		if k == kindDelete && s == 0 && baseLevelFor(uk) {
			continue
		}
		if w != nil && newKey && w.size() >= d.opts.TargetFileSize {
			// Cut between user keys only: the versions of a key a
			// snapshot keeps stay in one table, so the tables of a level
			// never share a user key.
			if err := finishOutput(); err != nil {
				return outputs, err
			}
		}
		if w == nil {
			d.mu.Lock()
			wnum = d.nextFile
			d.nextFile++
			d.mu.Unlock()
			f, err := d.fs.Create(d.path(tableName(wnum)))
			if err != nil {
				return outputs, fmt.Errorf("lsm: create table: %w", err)
			}
			w = newTableWriter(f, wnum, &d.opts)
		}
		w.add(ik, val)
	}
	if err := mi.error(); err != nil {
		if w != nil {
			w.abandon()
			_ = d.fs.Remove(d.path(tableName(wnum)))
		}
		return outputs, err
	}
	if w != nil {
		if err := finishOutput(); err != nil {
			return outputs, err
		}
	}
	return outputs, nil
}

// Compact flushes the memtable and merges every table into the last level,
// discarding overwritten values, tombstones and expired keys.
func (d *DB) Compact() error {
	if err := d.Flush(); err != nil {
		return err
	}
	d.compactMu.Lock()
	defer d.compactMu.Unlock()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrClosed
	}
	v := d.current
	c := &compaction{outLevel: numLevels - 1, bottom: true, v: v, snaps: d.snapshots.seqsLocked()}
	total := 0
	for level, files := range v.levels {
		c.inputs[level] = files
		total += len(files)
	}
	v.ref()
	d.mu.Unlock()
	if total == 0 {
		v.unref()
		return nil
	}
	err := d.runCompaction(c)
	if errors.Is(err, errAborted) {
		err = ErrClosed
	}
	return err
}
