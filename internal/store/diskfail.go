package store

import (
	"errors"
	"fmt"
	"log/slog"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// When the disk fails (docs/durability.md, "When the disk fails").
//
// A failed write, fsync, flush or manifest update of the Disk puts the
// Store in the writes-refused state: the Disk takes no more changes, and
// the server refuses every write before it runs (WriteErr), in its
// protocol's words, while reads go on from memory and from the disk's
// tables. Nothing a reply acknowledged is lost: the server sends no reply
// before Sync, and a Sync that a lost change cuts across fails.
//
// Memory must hold what the disk holds, or a value nobody can keep would
// be read and built upon: the changes the Disk could not make durable
// (those in the failed commit, those queued behind it, and any a command
// already running made after the failure) are forgotten from memory, so
// their keys read back from disk as the last durable write left them.
// That is the watcher's first job (forgetLost). Its second is to retry:
// once a second, as Redis retries a failed AOF write, it asks the Disk to
// start again from what it holds durably (Disk.Recover), and once that
// works the Store writes its own state record again and takes writes.
// One log line says when the state is entered, one when it is left.

// diskRetryInterval is how often the watcher retries a failed disk, as
// Redis retries a failed AOF write (Config.DiskRetry).
const diskRetryInterval = time.Second

// diskFailure is the state the watcher logs and DiskStats reports.
type diskFailure struct {
	since      time.Time // when the current failure began; zero: none
	lastErr    error     // the last failure's error
	lastRetry  error     // the last failed Recover's error
	recoveries uint64    // failures left
}

// WriteErr returns the error that keeps the Store from taking writes
// (the Disk's failure), or nil. The servers refuse a write before it runs
// while it is set. It costs one atomic load.
func (s *Store) WriteErr() error {
	if s.disk == nil {
		return nil
	}
	return s.disk.Failure()
}

// DiskMark marks the start of a batch of requests, for SyncSince; the
// server takes it before the batch's first request runs. Without a Disk it
// is 0.
func (s *Store) DiskMark() uint64 {
	if s.disk == nil {
		return 0
	}
	return s.disk.Epoch()
}

// SyncSince is Sync for the replies of a batch that began at mark
// (DiskMark): besides waiting for the changes made so far, it fails if a
// disk failure cut across the batch, so a reply never carries a change
// the disk lost.
func (s *Store) SyncSince(mark uint64) error {
	if s.disk == nil {
		return nil
	}
	if err := s.disk.SyncSince(mark); err != nil {
		return fmt.Errorf("%w: %w", ErrDisk, err)
	}
	return nil
}

// SyncAllSince is SyncSince for a goroutine that never holds the store
// (an outbox's writer): it waits for every change queued so far, an open
// Exclusive section's too (Disk.HoldExclusive), since what it writes may
// reveal them (a keyspace notification of a script's write).
func (s *Store) SyncAllSince(mark uint64) error {
	if s.disk == nil {
		return nil
	}
	if err := s.disk.SyncAllSince(mark); err != nil {
		return fmt.Errorf("%w: %w", ErrDisk, err)
	}
	return nil
}

// diskWatch forgets lost changes at once and retries a failed disk every
// retry until Close.
func (s *Store) diskWatch(log *slog.Logger, retry time.Duration) {
	defer s.wg.Done()
	t := time.NewTicker(retry)
	defer t.Stop()
	for {
		tick := false
		select {
		case <-s.quit:
			return
		case <-s.disk.Lost():
		case <-t.C:
			tick = true
		}
		s.forgetLost()
		s.noteFailure(log)
		if tick && s.disk.Failure() != nil {
			if err := s.RecoverDisk(); err != nil {
				s.ds.mu.Lock()
				s.ds.fail.lastRetry = err
				s.ds.mu.Unlock()
			}
			s.noteFailure(log)
		}
	}
}

// noteFailure logs a change of the failed state, once.
func (s *Store) noteFailure(log *slog.Logger) {
	err := s.disk.Failure()
	s.ds.mu.Lock()
	defer s.ds.mu.Unlock()
	f := &s.ds.fail
	switch {
	case err != nil && f.since.IsZero():
		f.since, f.lastErr, f.lastRetry = time.Now(), err, nil
		log.Error("disk failed: writes refused, reads served; retrying every second", "err", err)
	case err == nil && !f.since.IsZero():
		log.Warn("disk writes resumed", "after", time.Since(f.since).Round(time.Millisecond).String(), "err_was", f.lastErr)
		f.since = time.Time{}
		f.recoveries++
	}
}

// forgetLost drops from memory the keys whose changes the Disk lost, so
// they read back from disk, and tells the Disk. Only the watcher calls it
// (and RecoverDisk, which it calls).
func (s *Store) forgetLost() {
	s.ds.forgetMu.Lock()
	defer s.ds.forgetMu.Unlock()
	keys, round := s.disk.TakeLost()
	for _, k := range keys {
		s.forget(k)
	}
	s.disk.Forgotten(round)
}

// forget drops key's item from memory only: the disk keeps its record.
func (s *Store) forget(key []byte) {
	h := s.hash(key)
	sh := s.shardFor(h)
	var e entry
	sh.mu.Lock()
	if sh.findLocked(h, key, &e) {
		s.dropLocked(sh, &e, dropForgotten)
	}
	sh.mu.Unlock()
}

// RecoverDisk forgets the lost changes and tries to bring a failed Disk
// back (Disk.Recover), with the state record as its first change (the one
// the failure lost, or a newer one). It returns nil when the Disk takes
// writes. The watcher calls it once a second.
func (s *Store) RecoverDisk() error {
	if s.disk == nil || s.disk.Failure() == nil {
		return nil
	}
	s.forgetLost()
	// The state record goes first: the failure may have lost one (a
	// raised CAS limit, a flush fence), and memory has gone on with it.
	// The lock keeps it from changing until the Disk takes changes.
	s.ds.mu.Lock()
	defer s.ds.mu.Unlock()
	if err := s.disk.Recover(s.stateRecordLocked()); err != nil {
		return err
	}
	s.rewriteAuxLocked() // aux.go: a failure may have lost one too
	return nil
}

// diskErrText is the reason of a disk failure as Redis words an AOF
// write error: the C library's text of the system error ("No space left
// on device"), or the error itself when it is none.
func diskErrText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return capitalize(errno.Error())
	}
	return err.Error()
}

// DiskErrText is diskErrText for the servers' replies.
func DiskErrText(err error) string { return diskErrText(err) }

// capitalize upper-cases the first letter, as strerror(3) writes it.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
