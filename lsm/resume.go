package lsm

import (
	"fmt"
	"slices"
	"strings"
)

// Err returns the error that keeps the DB from taking writes now: the
// disk error that failed it, until a Resume succeeds (writes return it,
// wrapped or as is); ErrClosed after Close; nil when the DB is healthy.
// Reads keep working while the DB is failed. It takes the DB's lock
// briefly: callers on a hot path cache it.
func (d *DB) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.bgErr != nil:
		return d.bgErr
	case d.closed:
		return ErrClosed
	}
	return nil
}

// Resume brings a DB that a disk error failed (Err) back to taking writes,
// in the spirit of RocksDB's DB::Resume. On a healthy DB it does nothing
// and returns nil; on a closed one it returns ErrClosed. It is safe to
// call at any time, repeatedly and concurrently with reads (which go on
// throughout, from the memtables and tables) and writes (which keep
// failing with the DB's error until Resume has succeeded).
//
// Resume waits until no commit is in flight (a pipelined fsync fails its
// group with the DB's error), then writes every memtable to a table,
// fsynced, leaving out the writes that failed: those above the last
// acknowledged sequence number, which no reader ever sees either (their
// sequence numbers are never used again). It starts a new log, proves it
// and the directory can be synced, and logs the tables and the new log's
// number in one manifest edit, so that no log written before it is ever
// replayed: whatever a log holds past its last good fsync (a failed
// group's bytes, pages a failed fsync may have dropped) is never trusted.
// If the DB failed writing the manifest, the edit goes into a fresh
// manifest that CURRENT then names, rather than after a record that may
// be torn; so it does after an Open that left the DB failed
// (Options.OpenFailedOnWriteError), which then removes the logs that
// Open replayed. Then the DB takes writes again.
//
// If a step fails (the disk is still full), Resume returns its error and
// the DB stays failed as it was: readable, refusing writes, and ready for
// another Resume; the tables it wrote are removed. A fault Resume does not
// touch (a log append) shows again with the next write, which fails the
// DB anew.
func (d *DB) Resume() error {
	d.resumeMu.Lock()
	defer d.resumeMu.Unlock()
	d.mu.Lock()
	switch {
	case d.closed:
		d.mu.Unlock()
		return ErrClosed
	case d.bgErr == nil:
		d.mu.Unlock()
		return nil
	}
	// New commits fail at makeRoomLocked while bgErr is set; wait for
	// the one in flight, if any, and for the pipelined fsyncs, which
	// fail with the DB's error (advanceLocked).
	d.resuming = true
	for d.committing || len(d.syncing) > 0 {
		d.bgCond.Wait()
	}
	d.resuming = false
	d.mu.Unlock()

	// No flush runs meanwhile (flushOne takes flushMu, and checks that
	// its memtable is still to be flushed once it has it).
	d.flushMu.Lock()
	defer d.flushMu.Unlock()
	return d.resume()
}

// resume is Resume's work once no commit or flush runs. flushMu and
// resumeMu are held.
func (d *DB) resume() error {
	d.mu.Lock()
	// Every write acknowledged is at or below visibleSeq, and every write
	// above it failed: in SyncAlways groups are acknowledged in order and
	// none after one that failed, and a group that failed before its
	// memtable insert left visibleSeq where it was. Hide the failed ones
	// for good, from readers that pinned these memtables too
	// (readState.capSeq) and from the tables written below.
	ack := d.visibleSeq.Load()
	mems := append(slices.Clone(d.imm), d.mem) // oldest first: L0 order is file number order
	for _, m := range mems {
		if m.maxSeq.Load() > ack {
			m.setReadLimit(ack)
		}
	}
	fresh := d.manifestBad
	d.mu.Unlock()

	var metas []*fileMeta
	for _, m := range mems {
		if m.empty() {
			continue
		}
		d.mu.Lock()
		num := d.nextFile
		d.nextFile++
		d.mu.Unlock()
		meta, err := d.writeMemTable(m, num)
		if err != nil {
			d.discardTables(metas, nil)
			return fmt.Errorf("lsm: resume: %w", err)
		}
		if meta != nil {
			metas = append(metas, meta)
		}
	}

	d.mu.Lock()
	walNum := d.nextFile
	d.nextFile++
	f, err := d.createWAL(walNum, 0)
	d.mu.Unlock()
	if err == nil && d.opts.Sync != SyncAlways {
		// createWAL syncs only in SyncAlways. A Resume that succeeded
		// while fsync still failed would fail again at the next
		// background sync.
		err = f.Sync()
		if err == nil {
			err = d.fs.SyncDir(d.dir)
		}
		if err != nil {
			_ = f.Close()
			err = fmt.Errorf("lsm: sync new WAL: %w", err)
		}
	}
	if err != nil {
		_ = d.fs.Remove(d.path(walName(walNum)))
		d.discardTables(metas, nil)
		return fmt.Errorf("lsm: resume: %w", err)
	}

	e := &versionEdit{logNum: walNum}
	for _, m := range metas {
		e.added = append(e.added, newFile{0, m})
	}
	wal := d.newWALFile(walNum, f)
	var oldWALs []*walFile
	var orphans, logs []uint64
	install := func() {
		for _, m := range d.imm {
			if m.wal != nil {
				oldWALs = append(oldWALs, m.wal)
			}
		}
		if d.wal != nil {
			oldWALs = append(oldWALs, d.wal)
		}
		d.imm = nil
		d.wal = wal
		d.mem = newMemTable(d.opts.MemTableSize, walNum)
		d.bgErr, d.pipeErr, d.manifestBad = nil, nil, false
		if fresh {
			orphans, d.orphans = d.orphans, nil
			logs, d.recoveredLogs = d.recoveredLogs, nil
		}
		d.m.flushes.Add(int64(len(metas)))
		for _, m := range metas {
			d.m.flushBytes.Add(int64(m.size))
		}
		d.m.resumes.Add(1)
	}
	if fresh {
		err = d.logAndApplyFresh(e, install)
	} else {
		err = d.logAndApply(e, install)
	}
	if err != nil {
		_ = wal.close(false)
		_ = d.fs.Remove(wal.path)
		d.discardTables(metas, err)
		return fmt.Errorf("lsm: resume: %w", err)
	}

	// The edit is durable: the old logs are not needed any more, nor,
	// after a fresh manifest, the old manifests, the orphans (tables of
	// failed edits, which only those could name) and, after an Open that
	// left the DB failed, the logs its recovery replayed.
	for _, w := range oldWALs {
		_ = w.close(false)
		_ = d.fs.Remove(w.path)
	}
	if fresh {
		for _, num := range orphans {
			_ = d.fs.Remove(d.path(tableName(num)))
		}
		for _, num := range logs {
			_ = d.fs.Remove(d.path(walName(num)))
		}
		d.manifestMu.Lock()
		keep := manifestName(d.manifestNum)
		d.manifestMu.Unlock()
		if names, err := d.fs.List(d.dir); err == nil {
			for _, n := range names {
				if (strings.HasPrefix(n, "MANIFEST-") && n != keep) || n == "CURRENT.tmp" {
					_ = d.fs.Remove(d.path(n))
				}
			}
		}
	}
	if d.recycle {
		select {
		case d.spareCh <- struct{}{}:
		default:
		}
	}
	d.maybeScheduleCompaction()
	return nil
}
