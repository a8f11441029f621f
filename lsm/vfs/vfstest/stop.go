// Package vfstest holds filesystem wrappers for tests of the engine and of
// programs built on it: StopFS stops the engine's background work at a
// chosen file operation so a kill test can kill the process in the middle
// of a flush or a compaction, however fast or slow the machine is.
package vfstest

import (
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/minikv/minikv/lsm/vfs"
)

// StopFS is FS, except that once armed (Arm) it stops, for good, the
// goroutine doing the engine's next piece of work of the armed kind
// ("flush" or "compaction", as LSMWork names them) before that work's
// file operation that is the nth from then on (0: the first), and writes
// "stopped KIND OP FILE" to Out. Every later operation of that kind stops
// too; operations of other goroutines (commits, the other kind of work) go
// on, until the engine's back-pressure stalls its writers. The test then
// kills the process, knowing the work is in progress.
//
// The operations are those that change a file or the directory: create,
// open, write, sync and close of a file, remove, rename, directory sync.
type StopFS struct {
	vfs.FS
	Out io.Writer // where "stopped ..." goes

	mu      sync.Mutex // protects kind, left, stopped
	kind    string     // whose operations stop; "": none
	left    int        // operations of kind let through before one stops
	stopped bool       // one stopped: every later one of kind stops too
}

// Arm makes the nth next file operation of the engine's work of kind (and
// every one after it) stop.
func (p *StopFS) Arm(kind string, n int) {
	p.mu.Lock()
	p.kind, p.left = kind, n
	p.mu.Unlock()
}

// at runs before every operation and stops the calling goroutine for good
// when that is what Arm asked.
func (p *StopFS) at(op, name string) {
	p.mu.Lock()
	kind := p.kind
	p.mu.Unlock()
	if kind == "" || LSMWork() != kind {
		return
	}
	p.mu.Lock()
	if p.left > 0 {
		p.left--
		p.mu.Unlock()
		return
	}
	first := !p.stopped
	p.stopped = true
	p.mu.Unlock()
	if first {
		fmt.Fprintf(p.Out, "stopped %s %s %s\n", kind, op, filepath.Base(name))
	}
	select {} // until the test kills the process
}

// LSMWork names the engine's background work the calling goroutine is
// doing: "flush", "compaction" or "". It reads the goroutine's stack for
// the engine's flushOne, or its runCompaction and the merge goroutines a
// compaction starts (mergeParallel); renaming those makes the kill tests
// that rely on it fail (they check that a kill landed in the work).
func LSMWork() string {
	const db = "github.com/minikv/minikv/lsm.(*DB)."
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		switch {
		case strings.HasPrefix(f.Function, db+"flushOne"):
			return "flush"
		case strings.HasPrefix(f.Function, db+"runCompaction"), strings.HasPrefix(f.Function, db+"mergeParallel"):
			return "compaction"
		}
		if !more {
			return ""
		}
	}
}

// Create implements vfs.FS.
func (p *StopFS) Create(name string) (vfs.File, error) {
	p.at("create", name)
	f, err := p.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return stopFile{f, p, name}, nil
}

// Open implements vfs.FS.
func (p *StopFS) Open(name string) (vfs.File, error) {
	p.at("open", name)
	f, err := p.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return stopFile{f, p, name}, nil
}

// Remove implements vfs.FS.
func (p *StopFS) Remove(name string) error {
	p.at("remove", name)
	return p.FS.Remove(name)
}

// Rename implements vfs.FS.
func (p *StopFS) Rename(oldname, newname string) error {
	p.at("rename", oldname)
	return p.FS.Rename(oldname, newname)
}

// ReuseForWrite implements vfs.Reuser (the engine's recycled logs) when
// the wrapped filesystem does.
func (p *StopFS) ReuseForWrite(oldname, newname string) (vfs.File, error) {
	p.at("rename", oldname)
	r, ok := p.FS.(vfs.Reuser)
	if !ok {
		return nil, fmt.Errorf("vfstest: %T cannot reuse files", p.FS)
	}
	f, err := r.ReuseForWrite(oldname, newname)
	if err != nil {
		return nil, err
	}
	return stopFile{f, p, newname}, nil
}

// SyncDir implements vfs.FS.
func (p *StopFS) SyncDir(dir string) error {
	p.at("syncdir", dir)
	return p.FS.SyncDir(dir)
}

// Lock keeps the wrapped filesystem's lock on the data directory
// (vfs.Locker), which embedding the FS interface would hide.
func (p *StopFS) Lock(name string) (io.Closer, error) {
	return p.FS.(vfs.Locker).Lock(name)
}

// stopFile is a file of a StopFS.
type stopFile struct {
	vfs.File
	p    *StopFS
	name string
}

func (f stopFile) Write(b []byte) (int, error) {
	f.p.at("write", f.name)
	return f.File.Write(b)
}

func (f stopFile) Sync() error {
	f.p.at("sync", f.name)
	return f.File.Sync()
}

func (f stopFile) Close() error {
	f.p.at("close", f.name)
	return f.File.Close()
}
