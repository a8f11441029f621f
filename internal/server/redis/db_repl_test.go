package redis

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/durable"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

// dbState describes databases 0 to 15 of the server at addr: each
// database's keys, sorted, with their type, value and whether they
// expire, for comparing two servers.
func dbState(t *testing.T, addr string) string {
	t.Helper()
	c := dialRESP(t, addr)
	var b strings.Builder
	for db := range 16 {
		if got := c.Do("SELECT", fmt.Sprint(db)); got != "+OK\r\n" {
			t.Fatalf("SELECT %d = %q", db, got)
		}
		var names []string
		for _, line := range strings.Split(c.Do("KEYS", "*"), "\r\n") {
			if line != "" && line[0] != '*' && line[0] != '$' {
				names = append(names, line)
			}
		}
		slicesSort(names)
		for _, k := range names {
			typ := c.Do("TYPE", k)
			var v string
			switch typ {
			case "+string\r\n":
				v = c.Do("GET", k)
			case "+hash\r\n":
				v = c.Do("HGETALL", k)
			case "+list\r\n":
				v = c.Do("LRANGE", k, "0", "-1")
			case "+set\r\n":
				v = c.Do("SORT_RO", k, "ALPHA")
			case "+zset\r\n":
				v = c.Do("ZRANGE", k, "0", "-1", "WITHSCORES")
			}
			ttl := c.Do("PTTL", k) != ":-1\r\n"
			fmt.Fprintf(&b, "db%d %q %s %q ttl=%v\n", db, k, strings.TrimSpace(typ), v, ttl)
		}
	}
	return b.String()
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// fillDBs writes keys of several kinds in databases 0, 3 and 15.
func fillDBs(c *servertest.RESPClient, tag string) {
	for _, db := range []string{"0", "3", "15"} {
		c.Do("SELECT", db)
		c.Do("SET", "s", tag+db)
		c.Do("SET", "t", "ttl"+db, "EX", "10000")
		c.Do("HSET", "h", "f", db, "g", tag)
		c.Do("RPUSH", "l", "a", db)
		c.Do("SADD", "set", "x", db)
		c.Do("ZADD", "z", "1", db)
		c.Do("SET", "only"+db, "1")
	}
	c.Do("SELECT", "0")
	c.Do("SET", "\xffraw", "ff") // a database-0 key the store escapes
	c.Do("SELECT", "3")
	c.Do("SET", "\xff\x01", "ff3")
	c.Do("SELECT", "0")
}

// TestDatabasesRDBRoundTrip: an RDB file MiniKV saves carries every
// database (SELECTDB), and redis-server loads them; a file redis-server
// saves with several databases loads into MiniKV's.
func TestDatabasesRDBRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := servertest.Start(t, server.Config{}, store.Config{})
	p := New(s.Server)
	if err := p.ConfigureRDB(RDBConfig{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	addr := s.Listen(t, p)
	c := dialRESP(t, addr)
	fillDBs(c, "m")
	if got := c.Do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("SAVE = %q", got)
	}
	want := dbState(t, addr)
	if !strings.Contains(want, "db15 \"s\"") || !strings.Contains(want, "db0 \"\\xffraw\"") {
		t.Fatalf("MiniKV's state lacks keys: %s", want)
	}
	redis := startRedisServer(t, "--dir", dir, "--dbfilename", "dump.rdb")
	if got := dbState(t, redis); got != want {
		t.Fatalf("redis-server loaded MiniKV's file as\n%s\nwant\n%s", got, want)
	}

	r := dialRESP(t, redis)
	r.Do("SELECT", "7")
	r.Do("SET", "from", "redis7")
	r.Do("SELECT", "3")
	r.Do("DEL", "s")
	if got := r.Do("SAVE"); got != "+OK\r\n" {
		t.Fatalf("redis SAVE = %q", got)
	}
	want = dbState(t, redis)
	s2 := servertest.Start(t, server.Config{}, store.Config{})
	p2 := New(s2.Server)
	stats, err := p2.LoadRDB(filepath.Join(dir, "dump.rdb"))
	if err != nil || len(stats.OtherDBs) != 0 {
		t.Fatalf("LoadRDB of redis-server's file: %+v, %v", stats, err)
	}
	addr2 := s2.Listen(t, p2)
	if got := dbState(t, addr2); got != want {
		t.Fatalf("MiniKV loaded redis-server's file as\n%s\nwant\n%s", got, want)
	}
	// With --databases 4, database 7 and 15 are past the end: skipped
	// and counted.
	s3 := servertest.Start(t, server.Config{Databases: 4}, store.Config{})
	p3 := New(s3.Server)
	stats, err = p3.LoadRDB(filepath.Join(dir, "dump.rdb"))
	if err != nil || stats.OtherDBs[7] != 1 || stats.OtherDBs[15] != 7 {
		t.Fatalf("LoadRDB with 4 databases: %+v, %v; want db7: 1 key, db15: 7 keys skipped", stats, err)
	}
}

// TestDatabasesReplication: a redis-server replica of MiniKV gets every
// database, in the snapshot and in the stream (SELECT n before each
// database's changes); a MiniKV replica of redis-server applies Redis's
// SELECTs.
func TestDatabasesReplication(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	_, port, _ := net.SplitHostPort(rs.respAddr)
	c := dialRESP(t, rs.respAddr)
	fillDBs(c, "pre")
	replica := startRedisServer(t, "--replicaof", "127.0.0.1", port)
	waitFor(t, "the replica's link", func() bool { return infoField(t, replica, "replication", "master_link_status") == "up" })
	fillDBs(c, "post")
	c.Do("SELECT", "5")
	c.Do("MSET", "a", "1", "b", "2")
	c.Send(multibulk("MULTI") + multibulk("SET", "m5", "x") + multibulk("SELECT", "6") + multibulk("SET", "m6", "y") + multibulk("EXEC"))
	for range 5 {
		c.Reply()
	}
	c.Do("SELECT", "3")
	c.Do("MOVE", "only3", "9")
	c.Do("SWAPDB", "0", "15")
	c.Do("SELECT", "15")
	c.Do("FLUSHDB")
	c.Do("SELECT", "6")
	c.Do("COPY", "m6", "c", "DB", "2")
	waitFor(t, "the replica to catch up", func() bool {
		off := infoField(t, rs.respAddr, "replication", "master_repl_offset")
		return off != "0" && infoField(t, replica, "replication", "slave_repl_offset") == off
	})
	want := dbState(t, rs.respAddr)
	if got := dbState(t, replica); got != want {
		t.Fatalf("the redis-server replica holds\n%s\nMiniKV\n%s", got, want)
	}

	// MiniKV follows redis-server.
	primary := startRedisServer(t, "--repl-diskless-sync-delay", "0")
	pc := dialRESP(t, primary)
	fillDBs(pc, "rpre")
	_, pport, _ := net.SplitHostPort(primary)
	mk := startRESP(t, server.Config{}, store.Config{})
	mc := dialRESP(t, mk.respAddr)
	if got := mc.Do("REPLICAOF", "127.0.0.1", pport); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF = %q", got)
	}
	waitFor(t, "MiniKV's link", func() bool { return infoField(t, mk.respAddr, "replication", "master_link_status") == "up" })
	fillDBs(pc, "rpost")
	pc.Do("SELECT", "8")
	pc.Do("RPUSH", "l8", "a", "b")
	pc.Do("SWAPDB", "8", "9")
	waitFor(t, "MiniKV to catch up", func() bool {
		off := infoField(t, primary, "replication", "master_repl_offset")
		return off != "0" && infoField(t, mk.respAddr, "replication", "slave_repl_offset") == off
	})
	want = dbState(t, primary)
	if got := dbState(t, mk.respAddr); got != want {
		t.Fatalf("the MiniKV replica holds\n%s\nredis-server\n%s", got, want)
	}
}

// TestDatabasesDurable: in durable mode each database's keys survive a
// restart (the store's keys carry their database), and DBSIZE, KEYS,
// SCAN, FLUSHDB and SWAPDB work over the disk.
func TestDatabasesDurable(t *testing.T) {
	fs := vfs.NewMem()
	open := func() (string, func()) {
		l, err := durable.Open("/data", lsm.Options{FS: fs, Sync: lsm.SyncAlways})
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(store.Config{MaxItemSize: 1 << 20}, l)
		if err != nil {
			t.Fatal(err)
		}
		s := servertest.StartOn(t, server.Config{}, st)
		return s.Listen(t, New(s.Server)), func() { s.Stop(t); _ = l.Close() }
	}
	addr, stop := open()
	c := dialRESP(t, addr)
	fillDBs(c, "d")
	c.Do("SELECT", "4")
	c.Do("SET", "gone", "1")
	c.Do("SWAPDB", "4", "5")
	c.Do("SELECT", "5")
	c.Do("SET", "gone2", "1")
	c.Do("FLUSHDB")
	c.Do("SELECT", "6")
	c.Do("SET", "six", "6")
	want := dbState(t, addr)
	if !strings.Contains(want, "db6 \"six\"") || strings.Contains(want, "gone") {
		t.Fatalf("state before the restart: %s", want)
	}
	if got := c.Do("DBSIZE"); got != ":1\r\n" {
		t.Errorf("DBSIZE of database 6 = %q, want :1", got)
	}
	stop()
	addr, stop = open()
	defer stop()
	if got := dbState(t, addr); got != want {
		t.Fatalf("after the restart\n%s\nwant\n%s", got, want)
	}
	c = dialRESP(t, addr)
	c.Do("SELECT", "3")
	if got := c.Do("DBSIZE"); got != ":8\r\n" {
		t.Errorf("DBSIZE of database 3 after the restart = %q, want :8", got)
	}
	if got := c.Do("INFO", "keyspace"); !strings.Contains(got, "db3:keys=8,expires=1,avg_ttl=0\r\n") || !strings.Contains(got, "db15:keys=7,expires=1,") {
		t.Errorf("INFO keyspace = %q", got)
	}
}
