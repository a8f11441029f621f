//go:build linux

package vfs

import (
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// MapLog implements LogMapper for the OS: it creates name, reserves size
// bytes with fallocate (so a full disk fails here rather than with SIGBUS on
// a later store) and maps them shared.
func (osFS) MapLog(name string, size int64) (AppendLog, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		f.Close()
		os.Remove(name)
		return nil, err
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		f.Close()
		os.Remove(name)
		return nil, err
	}
	return &mappedLog{f: f, b: b}, nil
}

type mappedLog struct {
	f *os.File
	b []byte

	mu     sync.Mutex // protects off and synced: one writer, a background syncer
	off    int
	synced int
}

func (l *mappedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(p) > len(l.b)-l.off {
		return 0, ErrLogFull
	}
	copyForward(l.b[l.off:], p)
	l.off += len(p)
	return len(p), nil
}

// copyForward copies p to the start of dst in address order, eight bytes
// at a time. The runtime's copy stores the head and the last 128 bytes of
// a long copy after its middle (runtime/memmove_amd64.s), so a kill -9
// during a group commit could leave the first record's header unwritten
// with later records already in the file, which recovery cannot tell from
// corruption. Stored in order (the compiler keeps the order of stores, and
// a signal stops the thread between two instructions, so every store before
// that point lands in the page cache and none after it), what a kill leaves
// is always a prefix of p followed by the zeros the log was preallocated
// with: a torn tail.
func copyForward(dst, p []byte) {
	dst = dst[:len(p)]
	i := 0
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(p[i:]))
	}
	for ; i < len(p); i++ {
		dst[i] = p[i]
	}
}

func (l *mappedLog) Room() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.b) - l.off)
}

func (l *mappedLog) Sync() error {
	l.mu.Lock()
	if l.b == nil {
		l.mu.Unlock()
		return errors.New("vfs: mapped log closed")
	}
	// msync the pages written since the last sync (page-aligned start),
	// without holding the lock, so the writer is not blocked meanwhile.
	start := l.synced &^ (os.Getpagesize() - 1)
	end := l.off
	b := l.b
	l.mu.Unlock()
	if end > start {
		_, _, errno := syscall.Syscall(syscall.SYS_MSYNC,
			uintptr(unsafe.Pointer(&b[start])), uintptr(end-start), syscall.MS_SYNC)
		if errno != 0 {
			return errno
		}
	}
	l.mu.Lock()
	l.synced = max(l.synced, end)
	l.mu.Unlock()
	return nil
}

func (l *mappedLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b == nil {
		return nil
	}
	err := syscall.Munmap(l.b)
	l.b = nil
	if terr := l.f.Truncate(int64(l.off)); err == nil {
		err = terr
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}
