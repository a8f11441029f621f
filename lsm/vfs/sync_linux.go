package vfs

import (
	"io/fs"
	"syscall"
)

// Sync makes the file's data durable with fdatasync(2), as Redis's AOF
// and Pebble's WAL do on Linux: it flushes the data and the metadata
// needed to read it back (the size), not the timestamps that fsync(2)
// also writes, which costs the write-ahead log a second journal commit
// per sync on ext4.
func (f osFile) Sync() error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &fs.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
