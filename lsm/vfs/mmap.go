package vfs

import "errors"

// AppendLog is a log file written by appending whole records.
type AppendLog interface {
	// Write appends p; it fails with ErrLogFull when p does not fit.
	Write(p []byte) (int, error)
	// Sync makes the appended bytes durable.
	Sync() error
	// Room reports how many more bytes Write accepts.
	Room() int64
	// Close releases the log (a mapped log is cut to its written length).
	Close() error
}

// ErrLogFull is returned by a mapped log's Write when the record does not fit
// in the space reserved for it.
var ErrLogFull = errors.New("vfs: mapped log full")

// ErrMapUnsupported is returned by MapLog where shared mappings are not
// available.
var ErrMapUnsupported = errors.New("vfs: mapped logs not supported here")

// LogMapper is implemented by filesystems that can back a log with a shared
// memory mapping of a preallocated file. A store into a MAP_SHARED mapping
// lands in the same kernel page cache that write(2) fills, so a process
// crash (kill -9) cannot lose it — without a system call per record.
type LogMapper interface {
	MapLog(name string, size int64) (AppendLog, error)
}

// FileLog adapts a File to AppendLog, with unlimited room.
type FileLog struct{ File }

// Room implements AppendLog.
func (FileLog) Room() int64 { return 1 << 62 }
