package lsm

import "bytes"

// DeleteRange deletes every key k with start <= k < end (a nil end: no
// upper bound), atomically: readers see all of the range's keys or none of
// them deleted, and no write of another goroutine lands between the
// deletion's scan and its commit.
//
// The engine has no range tombstones (Pebble's DeleteRange costs O(1)
// whatever the range holds): DeleteRange scans the range and writes a point
// tombstone for each live key, all in one batch, so its cost, the WAL
// record and the memtable space it takes grow with the keys in the range.
// The scan and the commit run at the head of the commit queue, as one
// commit: other writers wait behind it meanwhile. Keys that have expired
// need no tombstone and get none. It is safe for concurrent use; with
// SyncAlways it returns after the fsync, as Apply does.
func (d *DB) DeleteRange(start, end []byte) error {
	if end != nil && bytes.Compare(start, end) >= 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// At the head of the queue: no other commit runs until this one has,
	// and every commit before it is visible to the scan.
	err := d.headLocked()
	var b *Batch
	if err == nil {
		d.mu.Unlock() // the scan reads tables; background work goes on
		b, err = d.rangeTombstones(start, end)
		d.mu.Lock()
	}
	if err == nil && b.count > 0 {
		w := d.writers[0]
		w.batch = b
		return d.commitLocked(w)
	}
	d.leaveHeadLocked() // nothing to commit
	return err
}

// headLocked queues a writer without a batch and waits until it is at the
// head of the commit queue, where no commit runs but its own (Flush and
// DeleteRange work there). It returns ErrClosed or the background error
// that makes working there pointless. Every call is followed by
// leaveHeadLocked or commitLocked. d.mu is held.
func (d *DB) headLocked() error {
	w := &writer{}
	w.cond.L = &d.mu
	d.writers = append(d.writers, w)
	for d.writers[0] != w {
		w.cond.Wait()
	}
	// Every commit before this one is acknowledged and visible.
	d.drainSyncsLocked()
	switch {
	case d.closed:
		return ErrClosed
	case d.bgErr != nil:
		return d.bgErr
	}
	return nil
}

// leaveHeadLocked leaves the head of the commit queue to the next writer.
func (d *DB) leaveHeadLocked() { d.popLocked(1) }

// rangeTombstones returns a batch deleting every live key in [start, end).
func (d *DB) rangeTombstones(start, end []byte) (*Batch, error) {
	it, err := d.NewIter(&IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return nil, err
	}
	b := NewBatch()
	for ok := it.First(); ok; ok = it.Next() {
		b.Delete(it.Key())
	}
	err = it.Error()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return b, err
}
