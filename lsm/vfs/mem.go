package vfs

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"sync"
)

// Op names a filesystem operation, for error injection.
type Op int

// The operations an Injector sees.
const (
	OpCreate Op = iota
	OpOpen
	OpRead
	OpWrite
	OpSync
	OpRemove
	OpRename
	OpSyncDir
	OpList
)

// Injector is consulted before every operation on a MemFS; a non-nil result
// fails the operation with that error.
type Injector func(op Op, name string) error

// ErrInjected is a convenient error for injectors to return.
var ErrInjected = errors.New("vfs: injected error")

// MemFS is an in-memory FS that models what survives a crash.
//
// It keeps two views of every directory: the live one, and the durable one as
// of the last SyncDir of that directory. A file's bytes are durable up to its
// last Sync. CrashClone returns the filesystem a machine would see after power
// loss (durable names, synced bytes) or after a process crash (everything).
type MemFS struct {
	mu      sync.Mutex // protects live, durable, dirs, inject
	live    map[string]*memNode
	durable map[string]*memNode
	dirs    map[string]bool
	inject  Injector
	locks   map[string]bool
}

type memNode struct {
	mu     sync.Mutex // protects data, synced
	data   []byte
	synced int
}

// NewMem returns an empty in-memory filesystem.
func NewMem() *MemFS {
	return &MemFS{
		live:    make(map[string]*memNode),
		durable: make(map[string]*memNode),
		dirs:    map[string]bool{"/": true, ".": true},
	}
}

// SetInjector installs (or, with nil, removes) an error injector.
func (m *MemFS) SetInjector(fn Injector) {
	m.mu.Lock()
	m.inject = fn
	m.mu.Unlock()
}

func (m *MemFS) check(op Op, name string) error {
	m.mu.Lock()
	fn := m.inject
	m.mu.Unlock()
	if fn != nil {
		return fn(op, name)
	}
	return nil
}

// CrashClone returns a copy of the filesystem as it would be found after a
// crash. With keepUnsynced false it models power loss: only directory entries
// made durable by SyncDir survive, each holding only the bytes its file had
// synced. With keepUnsynced true it models a process crash (kill -9): the
// kernel still holds every byte that was written.
func (m *MemFS) CrashClone(keepUnsynced bool) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	for d := range m.dirs {
		c.dirs[d] = true
	}
	src := m.durable
	if keepUnsynced {
		src = m.live
	}
	copies := make(map[*memNode]*memNode)
	for name, n := range src {
		cn, ok := copies[n]
		if !ok {
			n.mu.Lock()
			keep := n.synced
			if keepUnsynced {
				keep = len(n.data)
			}
			cn = &memNode{data: append([]byte(nil), n.data[:keep]...), synced: keep}
			n.mu.Unlock()
			copies[n] = cn
		}
		c.live[name] = cn
		c.durable[name] = cn
	}
	return c
}

// Corrupt flips the bits of mask in the byte at off of the named file (in
// place, synced or not), for corruption tests.
func (m *MemFS) Corrupt(name string, off int64, mask byte) error {
	m.mu.Lock()
	n, ok := m.live[filepath.Clean(name)]
	m.mu.Unlock()
	if !ok {
		return fs.ErrNotExist
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if off < 0 || off >= int64(len(n.data)) {
		return errors.New("vfs: corrupt offset out of range")
	}
	n.data[off] ^= mask
	return nil
}

// Create implements FS.
func (m *MemFS) Create(name string) (File, error) {
	name = filepath.Clean(name)
	if err := m.check(OpCreate, name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[filepath.Dir(name)] {
		return nil, &fs.PathError{Op: "create", Path: name, Err: fs.ErrNotExist}
	}
	n := &memNode{}
	m.live[name] = n
	return &memFile{fs: m, n: n, name: name, write: true}, nil
}

// Open implements FS.
func (m *MemFS) Open(name string) (File, error) {
	name = filepath.Clean(name)
	if err := m.check(OpOpen, name); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.live[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &memFile{fs: m, n: n, name: name}, nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	name = filepath.Clean(name)
	if err := m.check(OpRemove, name); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.live[name]; !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	delete(m.live, name)
	return nil
}

// Rename implements FS.
func (m *MemFS) Rename(oldname, newname string) error {
	oldname, newname = filepath.Clean(oldname), filepath.Clean(newname)
	if err := m.check(OpRename, oldname); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.live[oldname]
	if !ok {
		return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	delete(m.live, oldname)
	m.live[newname] = n
	return nil
}

// MkdirAll implements FS. Directories themselves are always durable.
func (m *MemFS) MkdirAll(dir string) error {
	dir = filepath.Clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := dir; !m.dirs[d]; d = filepath.Dir(d) {
		m.dirs[d] = true
	}
	return nil
}

// List implements FS.
func (m *MemFS) List(dir string) ([]string, error) {
	dir = filepath.Clean(dir)
	if err := m.check(OpList, dir); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[dir] {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: fs.ErrNotExist}
	}
	var names []string
	for name := range m.live {
		if filepath.Dir(name) == dir {
			names = append(names, filepath.Base(name))
		}
	}
	sort.Strings(names)
	return names, nil
}

// SyncDir implements FS: the live entries of dir become its durable entries.
func (m *MemFS) SyncDir(dir string) error {
	dir = filepath.Clean(dir)
	if err := m.check(OpSyncDir, dir); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for name := range m.durable {
		if filepath.Dir(name) == dir {
			delete(m.durable, name)
		}
	}
	for name, n := range m.live {
		if filepath.Dir(name) == dir {
			m.durable[name] = n
		}
	}
	return nil
}

// Names lists every live file path, for debugging tests.
func (m *MemFS) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for name := range m.live {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

type memFile struct {
	fs     *MemFS
	n      *memNode
	name   string
	off    int64
	write  bool
	closed bool
}

var errClosed = errors.New("vfs: file already closed")

func (f *memFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	return n, err
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.closed {
		return 0, errClosed
	}
	if err := f.fs.check(OpRead, f.name); err != nil {
		return 0, err
	}
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	if f.closed {
		return 0, errClosed
	}
	if !f.write {
		return 0, errors.New("vfs: file not open for writing")
	}
	if err := f.fs.check(OpWrite, f.name); err != nil {
		return 0, err
	}
	f.n.mu.Lock()
	f.n.data = append(f.n.data, p...)
	f.n.mu.Unlock()
	return len(p), nil
}

func (f *memFile) Sync() error {
	if f.closed {
		return errClosed
	}
	if err := f.fs.check(OpSync, f.name); err != nil {
		return err
	}
	f.n.mu.Lock()
	f.n.synced = len(f.n.data)
	f.n.mu.Unlock()
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	return int64(len(f.n.data)), nil
}

func (f *memFile) Close() error {
	if f.closed {
		return errClosed
	}
	f.closed = true
	return nil
}
