package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/minikv/minikv/lsm/vfs"
)

// stopFS is the filesystem of the kill test's server: the OS's, except
// that when the test asks it to (a line "stop flush N" or "stop compaction
// N" on the server's stdin) it stops the engine's next flush (compaction)
// for good before the operation of that flush (compaction) that is the
// Nth from then on (0: the first), says so on stdout ("stopped flush
// write 000012.sst") and lets the test kill the server there. N spreads
// the kills over the whole of the work: before the table is created,
// while it is written or synced, before the manifest names it, before the
// old log goes.
//
// Whose operation it is comes from the goroutine's stack: the engine's
// flushOne, or its runCompaction and the merge goroutines a compaction
// starts (mergeParallel). Operations of other goroutines, commits
// included, go on, so the server keeps serving until the engine's
// back-pressure stalls its writers.
type stopFS struct {
	vfs.FS
	out io.Writer // where "stopped ..." goes

	mu      sync.Mutex // protects kind, left, stopped
	kind    string     // whose operations stop: "flush", "compaction"; "": none
	left    int        // operations of kind let through before one stops
	stopped bool       // one stopped: every later one of kind stops too
}

// listen reads the test's requests from r. The test holds the other end
// of the pipe for the server's life; when it goes away (the test binary
// died) the server goes too, instead of serving on as an orphan.
func (p *stopFS) listen(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var kind string
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "stop %s %d", &kind, &n); err == nil {
			p.mu.Lock()
			p.kind, p.left = kind, n
			p.mu.Unlock()
		}
	}
	os.Exit(3)
}

// at runs before every operation that changes a file or the directory and
// stops the calling goroutine for good when that is what the test asked.
func (p *stopFS) at(op, name string) {
	p.mu.Lock()
	kind := p.kind
	p.mu.Unlock()
	if kind == "" || engineWork() != kind {
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
		fmt.Fprintf(p.out, "stopped %s %s %s\n", kind, op, filepath.Base(name))
	}
	select {} // until the test kills the process
}

// engineWork names the engine's background work the calling goroutine is
// doing: "flush", "compaction" or "".
func engineWork() string {
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

func (p *stopFS) Create(name string) (vfs.File, error) {
	p.at("create", name)
	f, err := p.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return stopFile{f, p, name}, nil
}

func (p *stopFS) Open(name string) (vfs.File, error) {
	p.at("open", name)
	f, err := p.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return stopFile{f, p, name}, nil
}

func (p *stopFS) Remove(name string) error {
	p.at("remove", name)
	return p.FS.Remove(name)
}

func (p *stopFS) Rename(oldname, newname string) error {
	p.at("rename", oldname)
	return p.FS.Rename(oldname, newname)
}

func (p *stopFS) SyncDir(dir string) error {
	p.at("syncdir", dir)
	return p.FS.SyncDir(dir)
}

// Lock keeps the OS's lock on the data directory (vfs.Locker), which
// embedding the FS interface would hide.
func (p *stopFS) Lock(name string) (io.Closer, error) {
	return p.FS.(vfs.Locker).Lock(name)
}

// stopFile is a file of a stopFS.
type stopFile struct {
	vfs.File
	p    *stopFS
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
