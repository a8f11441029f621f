package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/rdb"
	"github.com/minikv/minikv/internal/store"
)

// writeRDB writes an RDB file of a few keys (one with a TTL, a hash)
// with MiniKV's writer.
func writeRDB(t *testing.T, path string) {
	t.Helper()
	st := store.New(store.Config{MemoryLimit: 8 << 20})
	defer st.Close()
	_, _ = st.Store(store.ModeSet, []byte("plain"), []byte("value"), 0, 0, 0)
	_, _ = st.Store(store.ModeSet, []byte("ttl"), []byte("v"), 0, 33177117420000, 0)
	v, err := rdb.DecodeValue([]byte("\x04\x02\x01a\x01b\x01c\x01d")) // a hash a=b, c=d
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Tx([][]byte{[]byte("h")}, func(tx *store.Tx) error { return v.Build(tx, []byte("h")) })
	if _, err := rdb.SaveFile(path, st, rdb.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
}

// startWith runs minikv with args and returns a RESP client.
func startWith(t *testing.T, args ...string) (*lineConn, func()) {
	t.Helper()
	respPort := freePort(t)
	args = append([]string{"-p", "0", "--resp-port", strconv.Itoa(respPort)}, args...)
	stop := startRun(t, args, nil)
	addr := "127.0.0.1:" + strconv.Itoa(respPort)
	waitDial(t, addr)
	return dialLines(t, addr), stop
}

// TestRDBLoadAtStart: --rdb-load imports a file before the port opens (a
// missing file stops the start); with --data-dir the import is in the
// data directory, there after a restart without the flag, and SAVE
// writes it back out from the disk.
func TestRDBLoadAtStart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.rdb")
	writeRDB(t, file)
	r, stop := startWith(t, "--rdb-load", file)
	check := func(r *lineConn) {
		t.Helper()
		for _, c := range []struct{ req, want string }{
			{respArgs("GET", "plain"), "$5 value"},
			{respArgs("PEXPIRETIME", "ttl"), ":33177117420000"},
			{respArgs("HGET", "h", "c"), "$1 d"},
			{respArgs("DBSIZE"), ":3"},
			{respArgs("GET", "no-such-key-loaded"), "$-1"},
		} {
			if got := strings.Join(r.do(c.req, strings.Count(c.want, " ")+1), " "); got != c.want {
				t.Errorf("%q: %q, want %q", c.req, got, c.want)
			}
		}
	}
	check(r)
	stop()

	err := run(context.Background(), []string{"-p", "0", "--resp-port", "0", "--admin-addr", "", "--rdb-load", filepath.Join(dir, "missing.rdb")},
		func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "missing.rdb") {
		t.Errorf("--rdb-load of a missing file: %v", err)
	}

	data := filepath.Join(dir, "data")
	r, stop = startWith(t, "--data-dir", data, "--rdb-load", file)
	check(r)
	stop()
	// SAVE in durable mode: the disk walked key by key into dir/dump.rdb.
	out := t.TempDir()
	r, stop = startWith(t, "--data-dir", data, "--dir", out)
	check(r)
	if got := r.do(respArgs("SAVE"), 1); got[0] != "+OK" {
		t.Fatalf("SAVE: %q", got)
	}
	stop()
	st := store.New(store.Config{MemoryLimit: 8 << 20})
	defer st.Close()
	if stats, err := rdb.LoadFile(filepath.Join(out, "dump.rdb"), st, rdb.LoadOptions{}); err != nil || stats.Keys != 3 {
		t.Fatalf("durable SAVE's file: %+v, %v", stats, err)
	}
	if it, ok := st.Peek([]byte("ttl")); !ok || it.Deadline != 33177117420000 {
		t.Errorf("durable SAVE's file: ttl = %+v, %v", it, ok)
	}
}

// TestSavePointsRestart: with --save, SIGTERM saves dir/dbfilename and
// the next start loads it; without --save nothing is read.
func TestSavePointsRestart(t *testing.T) {
	dir := t.TempDir()
	r, stop := startWith(t, "--save", "3600 1", "--dir", dir, "--dbfilename", "my.rdb")
	if got := r.do(respArgs("SET", "k", "kept"), 1); got[0] != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	stop() // cancel: the graceful shutdown, which saves
	if _, err := os.Stat(filepath.Join(dir, "my.rdb")); err != nil {
		t.Fatalf("no file saved at shutdown: %v", err)
	}
	r, stop = startWith(t, "--save", "3600 1", "--dir", dir, "--dbfilename", "my.rdb")
	if got := r.do(respArgs("GET", "k"), 2); got[1] != "kept" {
		t.Errorf("GET after a restart with save points: %q", got)
	}
	stop()
	r, stop = startWith(t, "--dir", dir, "--dbfilename", "my.rdb")
	if got := r.do(respArgs("GET", "k"), 1); got[0] != "$-1" {
		t.Errorf("GET after a restart without save points: %q (the file is read only when RDB persistence is on)", got)
	}
	stop()
}
