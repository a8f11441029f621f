package vfs

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
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
// of the last SyncDir of that directory. A file's bytes are durable as of its
// last Sync; a file reused with ReuseForWrite is overwritten in place, and
// the bytes it held before stay on disk until a Sync replaces them.
// CrashClone returns the filesystem a machine would see after power loss
// (durable names, synced bytes) or after a process crash (everything);
// CrashCloneTorn a power loss in which the disk had written some of the
// unsynced sectors, in any order.
type MemFS struct {
	mu      sync.Mutex // protects live, durable, dirs, inject
	live    map[string]*memNode
	durable map[string]*memNode
	dirs    map[string]bool
	inject  Injector
	locks   map[string]bool
}

type memNode struct {
	mu    sync.Mutex // protects data, disk, dirty
	data  []byte     // the live contents
	disk  []byte     // the contents as of the last Sync: what power loss leaves
	dirty []span     // the byte ranges written since the last Sync
}

// span is a byte range [off, end) of a file.
type span struct{ off, end int }

// sync makes the live contents durable. n.mu is held.
func (n *memNode) sync() {
	for _, s := range n.dirty {
		if s.end > len(n.disk) {
			n.disk = append(n.disk, make([]byte, s.end-len(n.disk))...)
		}
		copy(n.disk[s.off:s.end], n.data[s.off:s.end])
	}
	n.dirty = n.dirty[:0]
	if len(n.disk) > len(n.data) {
		n.disk = n.disk[:len(n.data)]
	}
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
	src := m.durable
	if keepUnsynced {
		src = m.live
	}
	return m.cloneLocked(src, func(n *memNode) []byte {
		if keepUnsynced {
			return append([]byte(nil), n.data...)
		}
		return append([]byte(nil), n.disk...)
	})
}

// cloneLocked copies the files of src into a new MemFS, each holding the
// bytes contents returns. m.mu is held.
func (m *MemFS) cloneLocked(src map[string]*memNode, contents func(n *memNode) []byte) *MemFS {
	c := NewMem()
	for d := range m.dirs {
		c.dirs[d] = true
	}
	copies := make(map[*memNode]*memNode)
	for name, n := range src {
		cn, ok := copies[n]
		if !ok {
			n.mu.Lock()
			b := contents(n)
			n.mu.Unlock()
			cn = &memNode{data: b, disk: append([]byte(nil), b...)}
			copies[n] = cn
		}
		c.live[name] = cn
		c.durable[name] = cn
	}
	return c
}

// SectorSize is the unit in which CrashCloneTorn lands unsynced writes.
const SectorSize = 512

// CrashCloneTorn returns the filesystem as power loss could leave it when
// the disk had written back part of what was not yet synced: of each file
// (durable entries only, as CrashClone(false)), every 512-byte sector
// written since the last Sync inside the synced length holds its new bytes
// or its old ones, independently and in any combination, as overwrites in
// place reach a disk in no particular order; bytes appended past the synced
// length survive as a prefix of random length (the file's new size reaches
// the disk after the data it covers, as ext4's ordered mode does).
func (m *MemFS) CrashCloneTorn(rng *rand.Rand) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cloneLocked(m.durable, func(n *memNode) []byte {
		b := append([]byte(nil), n.disk...)
		size := len(b)
		grow := size
		for _, s := range n.dirty {
			for sec := s.off &^ (SectorSize - 1); sec < s.end; sec += SectorSize {
				lo, hi := max(sec, s.off), min(sec+SectorSize, s.end)
				if hi <= size {
					if rng.IntN(2) == 0 {
						copy(b[lo:hi], n.data[lo:hi])
					}
				} else {
					grow = max(grow, hi)
				}
			}
		}
		if grow > size {
			// A prefix of the appended bytes, cut at a sector boundary
			// or at the end.
			cut := size + rng.IntN(grow-size+1)
			if cut < grow {
				cut = max(size, cut&^(SectorSize-1))
			}
			b = append(b, make([]byte, cut-size)...)
			for _, s := range n.dirty {
				if lo, hi := max(s.off, size), min(s.end, cut); lo < hi {
					copy(b[lo:hi], n.data[lo:hi])
				}
			}
		}
		return b
	})
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
	if off < int64(len(n.disk)) {
		n.disk[off] ^= mask
	}
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

// ReuseForWrite implements Reuser: it renames oldname to newname and opens
// it for writing from offset 0, keeping its bytes (live and durable).
func (m *MemFS) ReuseForWrite(oldname, newname string) (File, error) {
	oldname, newname = filepath.Clean(oldname), filepath.Clean(newname)
	if err := m.check(OpRename, oldname); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.live[oldname]
	if !ok {
		return nil, &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	delete(m.live, oldname)
	m.live[newname] = n
	return &memFile{fs: m, n: n, name: newname, write: true}, nil
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
	off    int64 // where Read reads next
	woff   int   // where Write writes next
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
	n := f.n
	n.mu.Lock()
	off, end := f.woff, f.woff+len(p)
	if end > len(n.data) {
		n.data = append(n.data, make([]byte, end-len(n.data))...)
	}
	copy(n.data[off:end], p)
	if k := len(n.dirty); k > 0 && n.dirty[k-1].end == off {
		n.dirty[k-1].end = end
	} else {
		n.dirty = append(n.dirty, span{off, end})
	}
	n.mu.Unlock()
	f.woff = end
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
	f.n.sync()
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

// MapLog implements LogMapper: the log is preallocated with size zero bytes
// and written in place from offset 0. As with fallocate, the file's new
// size can reach the disk before any of its data (any journal commit
// carries it), so the zeros count as durable at once, and what Write stores
// after the last Sync reaches the disk sector by sector in any order under
// CrashCloneTorn, as a shared mapping's dirty pages do.
func (m *MemFS) MapLog(name string, size int64) (AppendLog, error) {
	f, err := m.Create(name)
	if err != nil {
		return nil, err
	}
	mf := f.(*memFile)
	n := mf.n
	n.mu.Lock()
	n.data = make([]byte, size)
	n.disk = make([]byte, size)
	n.mu.Unlock()
	return &memMappedLog{f: mf, size: int(size)}, nil
}

// memMappedLog is a MemFS log from MapLog.
type memMappedLog struct {
	mu   sync.Mutex // protects f's write offset: one writer, a background syncer
	f    *memFile
	size int
}

func (l *memMappedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(p) > l.size-l.f.woff {
		return 0, ErrLogFull
	}
	return l.f.Write(p)
}

func (l *memMappedLog) Sync() error { return l.f.Sync() }

func (l *memMappedLog) Room() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(l.size - l.f.woff)
}

// Close cuts the live file to its written length, as the OS's mapped log
// does (the cut is not synced).
func (l *memMappedLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.f.n
	n.mu.Lock()
	end := l.f.woff
	n.data = n.data[:end]
	spans := n.dirty[:0]
	for _, s := range n.dirty {
		if s.off < end {
			spans = append(spans, span{s.off, min(s.end, end)})
		}
	}
	n.dirty = spans
	n.mu.Unlock()
	return l.f.Close()
}
