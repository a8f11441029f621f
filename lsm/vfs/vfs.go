// Package vfs is the filesystem seam under the LSM engine: the engine reaches
// files only through FS, so tests can run it on an in-memory filesystem that
// simulates a crash (keeping only what was synced) and injects I/O errors.
//
// Two implementations exist: Default (the operating system) and MemFS.
package vfs

import (
	"io"
	"os"
	"path/filepath"
	"sort"
)

// File is an open file. Each Write goes on where the last one ended, from
// offset 0 for a file from Create (which truncates it) or from
// Reuser.ReuseForWrite (which does not: writes then overwrite the file's
// old bytes; the engine does so only to recycle a write-ahead log). ReadAt
// reads anywhere, Sync makes the written bytes durable.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync flushes the file's data to stable storage (fsync or fdatasync).
	Sync() error
	// Size reports the current length of the file in bytes.
	Size() (int64, error)
}

// FS is the subset of a filesystem the engine uses.
type FS interface {
	// Create creates or truncates the named file for writing.
	Create(name string) (File, error)
	// Open opens the named file for reading.
	Open(name string) (File, error)
	// Remove removes the named file.
	Remove(name string) error
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and its parents.
	MkdirAll(dir string) error
	// List returns the names (not paths) of the entries in dir, sorted.
	List(dir string) ([]string, error)
	// SyncDir makes the directory's entries (creations, renames, removals)
	// durable.
	SyncDir(dir string) error
}

// Default is the operating system's filesystem.
var Default FS = osFS{}

type osFS struct{}

type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (osFS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Remove(name string) error             { return os.Remove(name) }
func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(dir string) error            { return os.MkdirAll(dir, 0o755) }

func (osFS) List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Reuser is implemented by filesystems that can reuse a file in place: the
// engine recycles an obsolete write-ahead log as a new one, so that its
// appends overwrite blocks the file already has and an fdatasync needs no
// journal commit for the file's size (Options.RecycleWAL).
type Reuser interface {
	// ReuseForWrite renames oldname to newname and opens it for writing
	// from offset 0 without truncating it: writes overwrite its old bytes
	// in place. The rename is durable once the directory is synced.
	ReuseForWrite(oldname, newname string) (File, error)
}

// ReuseForWrite implements Reuser.
func (osFS) ReuseForWrite(oldname, newname string) (File, error) {
	if err := os.Rename(oldname, newname); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(newname, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}
