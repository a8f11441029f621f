package lsm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// externalProgram uses the public API the way a program outside this
// module does. It prints "ok" when every check holds.
const externalProgram = `package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

func check(ok bool, what string) {
	if !ok {
		fmt.Println("FAIL:", what)
		os.Exit(1)
	}
}

func main() {
	dir, err := os.MkdirTemp("", "lsm-external-")
	check(err == nil, "MkdirTemp")
	defer os.RemoveAll(dir)

	o := lsm.Options{Sync: lsm.SyncAlways, MemTableSize: 64 << 10, FS: vfs.Default}
	db, err := lsm.Open(dir, o)
	check(err == nil, fmt.Sprint("Open: ", err))

	check(db.Put([]byte("a"), []byte("1")) == nil, "Put")
	check(db.PutExpiring([]byte("t"), []byte("ttl"), time.Now().Add(time.Hour)) == nil, "PutExpiring")
	check(db.PutExpiring([]byte("x"), []byte("gone"), time.Now().Add(-time.Second)) == nil, "PutExpiring past")
	v, err := db.Get([]byte("a"))
	check(err == nil && string(v) == "1", "Get")
	_, exp, err := db.GetEntry([]byte("t"))
	check(err == nil && exp.After(time.Now()), "GetEntry expiry")
	_, err = db.Get([]byte("x"))
	check(errors.Is(err, lsm.ErrNotFound), "expired key is ErrNotFound")

	b := lsm.NewBatch()
	for i := range 100 {
		b.Put(fmt.Appendf(nil, "k%03d", i), []byte("v"))
	}
	b.Delete([]byte("a"))
	check(db.Apply(b) == nil, "Apply")
	_, err = db.Get([]byte("a"))
	check(errors.Is(err, lsm.ErrNotFound), "Delete in batch")

	check(db.DeleteRange([]byte("k050"), []byte("k060")) == nil, "DeleteRange")
	it, err := db.NewIter(&lsm.IterOptions{LowerBound: []byte("k"), UpperBound: []byte("l")})
	check(err == nil, "NewIter")
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	check(n == 90, fmt.Sprint("iterated ", n, " keys, want 90"))
	check(it.SeekGE([]byte("k055")) && string(it.Key()) == "k060", "SeekGE over the deleted range")
	check(it.Prev() && string(it.Key()) == "k049", "Prev over the deleted range")
	check(it.SeekLT([]byte("k060")) && string(it.Key()) == "k049", "SeekLT over the deleted range")
	check(it.Last() && string(it.Key()) == "k099", "Last")
	n = 0
	for ok := it.Last(); ok; ok = it.Prev() {
		n++
	}
	check(n == 90, fmt.Sprint("iterated ", n, " keys backward, want 90"))
	check(it.Last() && string(it.Key()) == "k099", "Last")
	check(it.Prev() && string(it.Key()) == "k098", "Prev")
	check(it.SeekLT([]byte("k060")) && string(it.Key()) == "k049", "SeekLT over the deleted range")
	check(it.Next() && string(it.Key()) == "k060", "Next after Prev")
	check(it.Error() == nil && it.Close() == nil, "iterator Close")

	report, err := lsm.Check(dir, lsm.InspectOptions{})
	check(errors.Is(err, lsm.ErrInUse) || err == nil && report != nil, fmt.Sprint("Check of an open directory: ", err))

	snap := db.NewSnapshot()
	check(db.Put([]byte("k000"), []byte("new")) == nil, "Put after NewSnapshot")
	v, err = snap.Get([]byte("k000"))
	check(err == nil && string(v) == "v", "Snapshot.Get reads the old value")
	_, _, err = snap.GetEntry([]byte("k055"))
	check(errors.Is(err, lsm.ErrNotFound), "Snapshot.GetEntry of a deleted key")
	sit, err := snap.NewIter(nil)
	check(err == nil && sit.First() && string(sit.Value()) == "v" && sit.Close() == nil, "Snapshot.NewIter")
	check(snap.Close() == nil, "Snapshot.Close")
	_, err = snap.Get([]byte("k000"))
	check(errors.Is(err, lsm.ErrClosed), "Snapshot.Get after Close is ErrClosed")

	check(db.Flush() == nil, "Flush")
	check(db.Compact() == nil, "Compact")
	m := db.Metrics()
	check(m.Flushes >= 1, "Metrics")
	_ = m.String()

	_, err = lsm.Open(dir, o)
	check(err != nil, "a second Open of a held directory is refused")
	check(db.Close() == nil, "Close")
	_, err = db.Get([]byte("k000"))
	check(errors.Is(err, lsm.ErrClosed), "Get after Close is ErrClosed")

	db, err = lsm.Open(dir, lsm.Options{})
	check(err == nil, "reopen")
	v, err = db.Get([]byte("k099"))
	check(err == nil && string(v) == "v", "data survives reopen")
	check(db.Close() == nil, "Close")
	report, err = lsm.Check(dir, lsm.InspectOptions{})
	check(err == nil && len(report.Damage) == 0, fmt.Sprint("Check of a healthy closed directory: ", err))
	_ = lsm.ErrCorrupt
	fmt.Println("ok")
}
`

// TestExternalModule builds and runs a program in a separate module that
// imports the package through a replace directive: the public API
// (point operations, TTLs, batches, DeleteRange, iterators both ways,
// snapshots, Flush, Compact, Metrics, Check, the sentinels) is usable from
// outside this module (issue 19's acceptance).
func TestExternalModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a separate module")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/lsmuser\n\ngo 1.26\n\nrequire github.com/minikv/minikv v0.0.0\n\nreplace github.com/minikv/minikv => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(externalProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("mod", "tidy")
	if out := run("run", "."); strings.TrimSpace(out) != "ok" {
		t.Fatalf("external program: %s", out)
	}
}
