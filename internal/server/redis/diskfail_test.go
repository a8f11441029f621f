package redis

import (
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/durable"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/memcache"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

// startDurableOnMem is a server over a durable store whose engine writes
// to mem, lsm's in-memory filesystem, so a test can make the disk fail;
// it returns the memcached and RESP addresses.
func startDurableOnMem(t *testing.T, mem *vfs.MemFS) (st *store.Store, mcAddr, respAddr string) {
	t.Helper()
	l, err := durable.Open("/data", lsm.Options{FS: mem, Sync: lsm.SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() }) // after the server's Stop (cleanups run last first)
	st, err = store.Open(store.Config{MaxItemSize: 1 << 20}, l)
	if err != nil {
		t.Fatal(err)
	}
	s := servertest.StartOn(t, server.Config{}, st)
	return st, s.Listen(t, memcache.New(s.Server)), s.Listen(t, newClosed(t, s))
}

// diskFull makes every write and fsync of mem's files fail with ENOSPC
// (nil: none).
func diskFull(mem *vfs.MemFS, full bool) {
	if !full {
		mem.SetInjector(nil)
		return
	}
	mem.SetInjector(func(op vfs.Op, name string) error {
		if op == vfs.OpWrite || op == vfs.OpSync || op == vfs.OpCreate {
			return &fs.PathError{Op: "write", Path: name, Err: syscall.ENOSPC}
		}
		return nil
	})
}

// waitFor polls cond until it holds; the bound only keeps a broken build
// from hanging (nothing here is timed).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 30 s", what)
		}
	}
}

const misconf = "-MISCONF Errors writing to the AOF file: No space left on device\r\n"

// TestDiskFailureRefusesWrites: when the data directory's disk fails
// (ENOSPC), MiniKV refuses writes on both ports in each protocol's form,
// goes on serving reads, PING, INFO and transactions without writes,
// rolls back the write that met the failure, closes only the connection
// whose batch it cut across (not the idle ones), and takes writes again
// once the disk does, without a restart.
func TestDiskFailureRefusesWrites(t *testing.T) {
	mem := vfs.NewMem()
	st, mcAddr, respAddr := startDurableOnMem(t, mem)
	idle := dialRESP(t, respAddr)
	idle.Expect(multibulk("SET", "a", "1"), "+OK\r\n")
	idle.Expect(multibulk("RPUSH", "l", "x", "y"), ":2\r\n")
	mc := dial(t, mcAddr)
	mc.Expect("set m 5 0 2\r\nmv\r\n", "STORED")
	queued := dialRESP(t, respAddr)
	queued.Expect(multibulk("MULTI"), "+OK\r\n")
	queued.Expect(multibulk("SET", "q", "1"), "+QUEUED\r\n")

	diskFull(mem, true)
	trigger := dialRESP(t, respAddr)
	trigger.Send(multibulk("SET", "a", "lost"))
	if !trigger.Closed(10 * time.Second) {
		t.Fatal("the connection whose write met the failure got a reply")
	}
	waitFor(t, "the lost change forgotten", func() bool { return st.WriteErr() != nil && st.DiskMark()%2 == 0 })

	// The idle connection is served; the write that failed is rolled back.
	idle.Expect(multibulk("GET", "a"), "$1\r\n1\r\n")
	idle.Expect(multibulk("LRANGE", "l", "0", "-1"), "*2\r\n$1\r\nx\r\n$1\r\ny\r\n")
	idle.Expect(multibulk("PING"), "+PONG\r\n")
	c := dialRESP(t, respAddr)
	for _, cmd := range [][]string{{"SET", "a", "2"}, {"INCR", "n"}, {"DEL", "a"}, {"EXPIRE", "a", "10"}, {"LPUSH", "l", "z"}, {"FLUSHALL"}} {
		c.Expect(multibulk(cmd...), misconf)
	}
	c.Expect(multibulk("GET", "a"), "$1\r\n1\r\n")
	c.Expect(multibulk("EXISTS", "a", "l"), ":2\r\n")
	c.Expect(multibulk("MULTI"), "+OK\r\n")
	c.Expect(multibulk("GET", "a"), "+QUEUED\r\n")
	c.Expect(multibulk("EXEC"), "*1\r\n$1\r\n1\r\n")
	c.Expect(multibulk("MULTI"), "+OK\r\n")
	c.Expect(multibulk("SET", "a", "3"), misconf)
	c.Expect(multibulk("EXEC"), "-EXECABORT Transaction discarded because of previous errors.\r\n")
	queued.Expect(multibulk("EXEC"), "-EXECABORT Transaction discarded because of: "+strings.TrimPrefix(misconf, "-"))
	queued.Expect(multibulk("GET", "q"), "$-1\r\n")
	info := c.Do("INFO", "persistence")
	for _, want := range []string{"aof_last_write_status:err\r\n", "minikv_disk_writes_refused:1\r\n", "minikv_disk_failures:1\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO persistence lacks %q:\n%s", want, info)
		}
	}

	// memcached: the same reason; noreply counted; reads served.
	mc.Expect("get m\r\n", "VALUE m 5 2", "mv", "END")
	mc.Expect("set m 0 0 1\r\nx\r\n", "SERVER_ERROR writes refused: errors writing to the data directory: No space left on device")
	mc.Expect("set m 0 0 1 noreply\r\nx\r\nmn\r\n", "MN")
	mc.Expect("ms m 1 q\r\nx\r\nmn\r\n", "SERVER_ERROR writes refused: errors writing to the data directory: No space left on device", "MN")
	mc.Expect("mg m v\r\n", "VA 2", "mv")
	mc.Send("stats\r\n")
	refused := ""
	for line := mc.Line(); line != "END"; line = mc.Line() {
		if v, ok := strings.CutPrefix(line, "STAT disk_refused_writes "); ok {
			refused = v
		}
	}
	if refused != "11" { // 7 on RESP (6 + SET in MULTI) and EXEC, 3 on memcached
		t.Errorf("disk_refused_writes = %q, want 11", refused)
	}

	// The disk is back: writes resume without a restart.
	diskFull(mem, false)
	waitFor(t, "writes resumed", func() bool { return st.WriteErr() == nil })
	c.Expect(multibulk("SET", "a", "4"), "+OK\r\n")
	idle.Expect(multibulk("GET", "a"), "$1\r\n4\r\n")
	mc.Expect("set m 0 0 1\r\nz\r\n", "STORED")
	if !strings.Contains(c.Do("INFO", "persistence"), "aof_last_write_status:ok\r\n") {
		t.Error("INFO persistence: aof_last_write_status not ok after recovery")
	}
}
