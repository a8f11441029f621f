package lsm

import (
	"slices"
	"sync/atomic"
	"time"
)

// Snapshot is a consistent, read-only view of a DB as of the moment it was
// taken: its reads see every write committed before NewSnapshot returned
// and none after, however long it lives, while the DB goes on taking
// writes, flushing and compacting.
//
// A snapshot is a sequence number, not a copy: it costs nothing to take,
// but while it lives compactions keep, for each key, the newest version at
// or below its sequence number (and the tombstones that hide older ones),
// so a long-lived snapshot under heavy overwriting holds on to space.
// Close it when done. Two things are not frozen, because they depend on
// the clock or on a rule rather than on the order of writes: a key whose
// expiry (PutExpiring) passes after the snapshot was taken reads as absent
// in the snapshot too, and a version that Options.Drop rejects is deleted
// from the snapshot as from the DB.
//
// A Snapshot is safe for concurrent use by many goroutines. It does not
// survive Close of the DB (its reads then return ErrClosed) nor a
// restart.
type Snapshot struct {
	db     *DB
	seq    uint64
	closed atomic.Bool

	// prev and next link the DB's live snapshots (DB.snapshots); guarded
	// by DB.mu.
	prev, next *Snapshot
}

// snapshotList holds a DB's live snapshots, oldest first: a circular
// doubly-linked list through a sentinel, as LevelDB's SnapshotList, so
// taking and closing a snapshot are O(1). Sequence numbers only grow, so
// appending keeps the list sorted. The zero value is an empty list.
type snapshotList struct {
	root Snapshot
}

func (l *snapshotList) pushLocked(s *Snapshot) {
	if l.root.next == nil {
		l.root.next, l.root.prev = &l.root, &l.root
	}
	s.prev, s.next = l.root.prev, &l.root
	s.prev.next = s
	l.root.prev = s
}

func (l *snapshotList) removeLocked(s *Snapshot) {
	s.prev.next = s.next
	s.next.prev = s.prev
	s.prev, s.next = nil, nil
}

// seqsLocked returns the sequence numbers of the live snapshots,
// ascending and without repeats (nil if there are none). A compaction
// takes them when it starts; a snapshot taken later has a sequence number
// at or above every entry of the compaction's inputs, so it needs no
// version that the compaction drops.
func (l *snapshotList) seqsLocked() []uint64 {
	var seqs []uint64
	if l.root.next == nil {
		return nil
	}
	for s := l.root.next; s != &l.root; s = s.next {
		if n := len(seqs); n == 0 || seqs[n-1] != s.seq {
			seqs = append(seqs, s.seq)
		}
	}
	return seqs
}

// stripe returns the snapshot stripe of sequence number seq: the number of
// snapshots (seqs, ascending) below it. Two versions of a key in the same
// stripe are seen by the same snapshots, so the older one is needed by
// none of them and a compaction may drop it; stripe 0 is seen by every
// snapshot and by the DB (LevelDB's and Pebble's rule).
func stripe(seqs []uint64, seq uint64) int {
	if len(seqs) == 0 {
		return 0
	}
	i, _ := slices.BinarySearch(seqs, seq)
	return i
}

// NewSnapshot returns a snapshot of the DB: reads through it see the DB
// as it is now. It is safe for concurrent use. On a closed DB it returns
// a snapshot whose reads return ErrClosed.
func (d *DB) NewSnapshot() *Snapshot {
	s := &Snapshot{db: d}
	d.mu.Lock()
	defer d.mu.Unlock()
	// Taken under mu, which compactions and flushes hold while they read
	// the snapshot list: either one sees this snapshot, or it started
	// before it and all of its input lies at or below this seq.
	s.seq = d.visibleSeq.Load()
	if !d.closed {
		d.snapshots.pushLocked(s)
	}
	return s
}

// Get returns the value key had when the snapshot was taken, or
// ErrNotFound. It is safe for concurrent use; the returned slice must not
// be modified. After Close of the snapshot or of the DB it returns
// ErrClosed.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	v, _, err := s.GetEntry(key)
	return v, err
}

// GetEntry is Get that also returns the key's expiry (zero if none). It is
// safe for concurrent use.
func (s *Snapshot) GetEntry(key []byte) ([]byte, time.Time, error) {
	rs, err := s.db.acquireReadState()
	if err != nil {
		return nil, time.Time{}, err
	}
	defer rs.release()
	// Checked after the read state is pinned: a compaction that dropped
	// a version this snapshot needs started after Close, so it finished
	// after this check, and its output is not in rs.
	if s.closed.Load() {
		return nil, time.Time{}, ErrClosed
	}
	return s.db.entryAt(rs, key, s.seq)
}

// NewIter returns an iterator over the snapshot, bounded as o says (nil:
// unbounded). It is safe for concurrent use; the returned Iterator is not.
// The iterator stays usable after the snapshot's Close, until its own.
// After Close of the snapshot or of the DB it returns ErrClosed.
func (s *Snapshot) NewIter(o *IterOptions) (*Iterator, error) {
	rs, err := s.db.acquireReadState()
	if err != nil {
		return nil, err
	}
	if s.closed.Load() { // after the pin, as in GetEntry
		rs.release()
		return nil, ErrClosed
	}
	return newIterator(rs, s.seq, o), nil
}

// Close releases the snapshot: compactions may drop the versions only it
// needed. Reads through it then return ErrClosed; closing it again does
// nothing. It is safe for concurrent use.
func (s *Snapshot) Close() error {
	d := s.db
	d.mu.Lock()
	defer d.mu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	if s.next != nil {
		d.snapshots.removeLocked(s)
	}
	return nil
}
