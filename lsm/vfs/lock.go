package vfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// ErrLocked is returned by Lock when another holder has the lock.
var ErrLocked = errors.New("vfs: lock held by another process")

// Locker is implemented by filesystems that can take an exclusive lock on a
// file, so two processes never open one database.
type Locker interface {
	Lock(name string) (io.Closer, error)
}

// Lock implements Locker with flock(2); the lock dies with the process.
func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return f, nil // closing the file releases the lock
}

// Lock implements Locker for MemFS.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	name = filepath.Clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks == nil {
		m.locks = make(map[string]bool)
	}
	if m.locks[name] {
		return nil, ErrLocked
	}
	m.locks[name] = true
	return memLock{m, name}, nil
}

type memLock struct {
	m    *MemFS
	name string
}

func (l memLock) Close() error {
	l.m.mu.Lock()
	delete(l.m.locks, l.name)
	l.m.mu.Unlock()
	return nil
}
