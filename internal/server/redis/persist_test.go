package redis

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/rdb"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// startRDB is a RESP server whose RDB files go to dir, with the RDB
// flags of c (Dir is set to dir); its ticker is stopped at the end.
func startRDB(t *testing.T, dir string, c RDBConfig) (*respServer, *Protocol) {
	t.Helper()
	var p *Protocol
	rs := startRESPWith(t, server.Config{}, store.Config{}, func(sp server.Protocol) server.Protocol {
		p = sp.(*Protocol)
		c.Dir = dir
		if err := p.ConfigureRDB(c); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return sp
	})
	return rs, p
}

// persistField is one field of INFO persistence.
func persistField(t *testing.T, c interface{ Do(...string) string }, name string) string {
	t.Helper()
	info := c.Do("INFO", "persistence")
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO persistence has no %s:\n%s", name, info)
	return ""
}

// waitBGSave waits for rdb_bgsave_in_progress:0.
func waitBGSave(t *testing.T, c interface{ Do(...string) string }) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); persistField(t, c, "rdb_bgsave_in_progress") != "0"; {
		if time.Now().After(deadline) {
			t.Fatal("BGSAVE did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSaveBGSaveLastSave: SAVE and BGSAVE write dir/dbfilename, a file
// MiniKV reads back; LASTSAVE, INFO persistence and the save counters
// follow them; a failed save answers Redis's words and sets the status;
// dir, dbfilename and save answer CONFIG as Redis 7.0 does.
func TestSaveBGSaveLastSave(t *testing.T) {
	dir := t.TempDir()
	rs, _ := startRDB(t, dir, RDBConfig{})
	c := dialRESP(t, rs.respAddr)
	started := c.Do("LASTSAVE")
	c.Expect(mb("SET", "a", "1"), "+OK\r\n")
	c.Expect(mb("HSET", "h", "f", "v"), ":1\r\n")
	c.Expect(mb("SET", "t", "x", "EX", "1000"), "+OK\r\n")
	if got := persistField(t, c, "rdb_changes_since_last_save"); got != "3" {
		t.Errorf("rdb_changes_since_last_save = %s, want 3", got)
	}
	time.Sleep(1100 * time.Millisecond) // LASTSAVE counts seconds
	c.Expect(mb("SAVE"), "+OK\r\n")
	if got := c.Do("LASTSAVE"); got <= started {
		t.Errorf("LASTSAVE %q after SAVE, %q before", got, started)
	}
	st := store.New(store.Config{MemoryLimit: 8 << 20})
	defer st.Close()
	if stats, err := rdb.LoadFile(filepath.Join(dir, "dump.rdb"), st, rdb.LoadOptions{}); err != nil || stats.Keys != 3 {
		t.Fatalf("SAVE's file: %+v %v", stats, err)
	}
	for name, want := range map[string]string{"rdb_saves": "1", "rdb_changes_since_last_save": "0", "rdb_last_bgsave_status": "ok"} {
		if got := persistField(t, c, name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
	c.Expect(mb("BGSAVE", "NOW"), "-ERR syntax error\r\n")
	c.Expect(mb("BGSAVE"), "+Background saving started\r\n")
	waitBGSave(t, c)
	c.Expect(mb("BGSAVE", "SCHEDULE"), "+Background saving started\r\n")
	waitBGSave(t, c)
	c.Expect(mb("MULTI"), "+OK\r\n")
	c.Expect(mb("BGSAVE"), "+QUEUED\r\n")
	c.Expect(mb("EXEC"), "*1\r\n+Background saving scheduled\r\n")
	waitBGSave(t, c)
	if got := persistField(t, c, "rdb_saves"); got != "4" {
		t.Errorf("rdb_saves = %s after SAVE and three BGSAVEs", got)
	}

	c.Expect(mb("CONFIG", "GET", "dir"), "*2\r\n$3\r\ndir\r\n$"+strconv.Itoa(len(dir))+"\r\n"+dir+"\r\n")
	c.Expect(mb("CONFIG", "GET", "dbfilename"), "*2\r\n$10\r\ndbfilename\r\n$8\r\ndump.rdb\r\n")
	c.Expect(mb("CONFIG", "SET", "dir", "/tmp"), "-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config\r\n")
	c.Expect(mb("CONFIG", "SET", "dbfilename", "x.rdb"), "-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config\r\n")
	for _, bad := range []string{"100", "0 1", "abc 1", "10 -1"} {
		c.Expect(mb("CONFIG", "SET", "save", bad), "-ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters\r\n")
	}
	c.Expect(mb("CONFIG", "SET", "save", "3600 1 300 100"), "+OK\r\n")
	c.Expect(mb("CONFIG", "GET", "save"), "*2\r\n$4\r\nsave\r\n$14\r\n3600 1 300 100\r\n")
	c.Expect(mb("CONFIG", "SET", "save", ""), "+OK\r\n")

	// A directory that is gone: SAVE answers Redis's bare error, BGSAVE
	// starts and fails, and the status says so.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	c.Expect(mb("SAVE"), "-ERR\r\n")
	c.Expect(mb("BGSAVE"), "+Background saving started\r\n")
	waitBGSave(t, c)
	if got := persistField(t, c, "rdb_last_bgsave_status"); got != "err" {
		t.Errorf("rdb_last_bgsave_status = %s after a failed BGSAVE", got)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c.Expect(mb("SAVE"), "+OK\r\n")
	if got := persistField(t, c, "rdb_last_bgsave_status"); got != "ok" {
		t.Errorf("rdb_last_bgsave_status = %s after a good SAVE (Redis's rdbSave clears it)", got)
	}
}

// TestProtectedConfigsLocal: with enable-protected-configs local, a
// loopback client sets dir (an existing directory only) and dbfilename
// (a name, not a path), and SAVE writes there.
func TestProtectedConfigsLocal(t *testing.T) {
	rs, _ := startRDB(t, t.TempDir(), RDBConfig{ProtectedConfigs: "local"})
	c := dialRESP(t, rs.respAddr)
	other := t.TempDir()
	c.Expect(mb("CONFIG", "GET", "enable-protected-configs"), "*2\r\n$24\r\nenable-protected-configs\r\n$5\r\nlocal\r\n")
	c.Expect(mb("CONFIG", "SET", "dir", filepath.Join(other, "nope")),
		"-ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory\r\n")
	c.Expect(mb("CONFIG", "SET", "dbfilename", "a/b.rdb"),
		"-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, just a filename\r\n")
	c.Expect(mb("CONFIG", "SET", "dir", other, "dbfilename", "other.rdb"), "+OK\r\n")
	c.Expect(mb("SET", "k", "v"), "+OK\r\n")
	c.Expect(mb("SAVE"), "+OK\r\n")
	if _, err := os.Stat(filepath.Join(other, "other.rdb")); err != nil {
		t.Errorf("SAVE after CONFIG SET dir, dbfilename: %v", err)
	}
}

// TestSavePoints: with "save 1 1" a write is saved by a BGSAVE within
// about two seconds, without a command.
func TestSavePoints(t *testing.T) {
	dir := t.TempDir()
	rs, _ := startRDB(t, dir, RDBConfig{Save: "1 1"})
	c := dialRESP(t, rs.respAddr)
	c.Expect(mb("SET", "k", "v"), "+OK\r\n")
	for deadline := time.Now().Add(10 * time.Second); persistField(t, c, "rdb_saves") == "0"; {
		if time.Now().After(deadline) {
			t.Fatal("no save within 10 s of a write with save 1 1")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Error(err)
	}
}

// TestBGSaveWhileClientsWrite: BGSAVEs while go-redis clients write
// pairs of keys with MSET (one step for every other client), single keys
// and hashes that grow big: every file loads, and holds each pair equal, since a file is the
// store at one instant.
func TestBGSaveWhileClientsWrite(t *testing.T) {
	dir := t.TempDir()
	rs, _ := startRDB(t, dir, RDBConfig{})
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: rs.respAddr})
			defer c.Close()
			a, b := "pair:"+strconv.Itoa(w)+":a", "pair:"+strconv.Itoa(w)+":b"
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				v := strconv.Itoa(i)
				if err := c.MSet(ctx, a, v, b, v).Err(); err != nil {
					t.Error(err)
					return
				}
				c.HSet(ctx, "h:"+strconv.Itoa(i%300), "f"+v, v)
				c.HSet(ctx, "hbig:"+strconv.Itoa(w), "f"+v, v) // grows into a table of its own
				c.Set(ctx, "k:"+strconv.Itoa(w)+":"+strconv.Itoa(i%2000), v, 0)
			}
		}()
	}
	c := dialRESP(t, rs.respAddr)
	for range 8 {
		time.Sleep(20 * time.Millisecond)
		c.Expect(mb("BGSAVE"), "+Background saving started\r\n")
		waitBGSave(t, c)
		if got := persistField(t, c, "rdb_last_bgsave_status"); got != "ok" {
			t.Fatalf("BGSAVE under writes: status %s", got)
		}
		st := store.New(store.Config{MemoryLimit: 64 << 20})
		if _, err := rdb.LoadFile(filepath.Join(dir, "dump.rdb"), st, rdb.LoadOptions{}); err != nil {
			t.Fatalf("loading a BGSAVE made under writes: %v", err)
		}
		for w := range 4 {
			a, _ := st.Peek([]byte("pair:" + strconv.Itoa(w) + ":a"))
			b, _ := st.Peek([]byte("pair:" + strconv.Itoa(w) + ":b"))
			if string(a.Value) != string(b.Value) {
				t.Errorf("a file holds writer %d's pair as %q and %q", w, a.Value, b.Value)
			}
		}
		st.Close()
	}
	close(stop)
	wg.Wait()
}
