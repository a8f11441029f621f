package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// SharedLocker is implemented by filesystems that can lock a database for a
// reader that writes nothing (an offline checker or dump tool). LockShared
// fails with ErrLocked while a process holds the exclusive lock that Lock
// takes, and while it holds the shared lock, Lock fails: a database cannot be
// opened for writing in the middle of a check. Unlike Lock it never creates
// the file: a directory without a LOCK file was never opened, so nothing can
// hold it, and the returned Closer then does nothing.
type SharedLocker interface {
	LockShared(name string) (io.Closer, error)
}

// LockShared implements SharedLocker with flock(2) LOCK_SH. The lock belongs
// to the open file description, as Lock's does: it conflicts with a Lock in
// the same process too.
func (osFS) LockShared(name string) (io.Closer, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nopCloser{}, nil
	}
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return f, nil // closing the file releases the lock
}

// LockShared implements SharedLocker for MemFS. A reader's lock is not
// recorded, so it only tests the exclusive lock: tests of the offline tools
// run one reader at a time.
func (m *MemFS) LockShared(name string) (io.Closer, error) {
	name = filepath.Clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks[name] {
		return nil, ErrLocked
	}
	return nopCloser{}, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
