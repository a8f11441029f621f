package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestConfigRewriteRecordsReplicaOf: CONFIG REWRITE on a replica writes
// replicaof = HOST:PORT into its --config file, as Redis writes
// "replicaof host port", so the restarted process follows its primary
// again (and has the writes made while it was down); once promoted, the
// rewrite drops the line and the restarted process is a primary.
func TestConfigRewriteRecordsReplicaOf(t *testing.T) {
	primary := startChild(t)
	ctx := context.Background()
	pc := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(primary.port)), ReadTimeout: time.Minute})
	defer pc.Close()
	if err := pc.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "replica.conf")
	if err := os.WriteFile(path, []byte("# a replica\nmemory-limit = 32m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	info := func(c *redis.Client, field string) string {
		s, _ := c.Info(ctx, "replication").Result()
		for _, line := range strings.Split(s, "\r\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				return v
			}
		}
		return ""
	}
	client := func(p *rewriteProc) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: p.resp})
		t.Cleanup(func() { c.Close() })
		return c
	}
	r := startWithConfig(t, path)
	if got := r.do(t, "REPLICAOF", "127.0.0.1", strconv.Itoa(primary.port)); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF = %q", got)
	}
	pollFor(t, "the replica's link", 30*time.Second, func() bool { return info(client(r), "master_link_status") == "up" })
	if got := r.do(t, "CONFIG", "REWRITE"); got != "+OK\r\n" {
		t.Fatalf("CONFIG REWRITE = %q", got)
	}
	b, _ := os.ReadFile(path)
	want := "replicaof = 127.0.0.1:" + strconv.Itoa(primary.port)
	if !strings.Contains(string(b), want+"\n") || !strings.HasPrefix(string(b), "# a replica\nmemory-limit = 32m\n") {
		t.Fatalf("the rewritten file:\n%s\nwant its lines and %q", b, want)
	}
	r.stop(t)
	if err := pc.Set(ctx, "while-down", "2", 0).Err(); err != nil {
		t.Fatal(err)
	}

	r = startWithConfig(t, path) // no --replicaof: the file's line
	rc := client(r)
	pollFor(t, "the restarted replica to follow", 30*time.Second, func() bool {
		return info(rc, "role") == "slave" && info(rc, "master_link_status") == "up" &&
			info(rc, "slave_repl_offset") == info(pc, "master_repl_offset")
	})
	for k, v := range map[string]string{"before": "1", "while-down": "2"} {
		if got, _ := rc.Get(ctx, k).Result(); got != v {
			t.Errorf("%s = %q on the restarted replica, want %q", k, got, v)
		}
	}
	if err := rc.Set(ctx, "x", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Errorf("SET on the restarted replica: %v, want READONLY", err)
	}

	// Promoted, the rewrite drops the line.
	if got := r.do(t, "REPLICAOF", "NO", "ONE"); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF NO ONE = %q", got)
	}
	if got := r.do(t, "CONFIG", "REWRITE"); got != "+OK\r\n" {
		t.Fatalf("CONFIG REWRITE = %q", got)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "replicaof") {
		t.Fatalf("the file after the promotion still names a primary:\n%s", b)
	}
	r.stop(t)
	r = startWithConfig(t, path)
	if got := info(client(r), "role"); got != "master" {
		t.Errorf("role = %q after the restart of the promoted server, want master", got)
	}
}

// keyStateOf is what key holds on c: its type, its value in an order
// that does not depend on encoding, and whether it has a deadline.
func keyStateOf(ctx context.Context, c *redis.Client, key string) string {
	typ, _ := c.Type(ctx, key).Result()
	var v any
	switch typ {
	case "string":
		v, _ = c.Get(ctx, key).Result()
	case "hash":
		m, _ := c.HGetAll(ctx, key).Result()
		v = fmt.Sprint(m) // fmt sorts map keys
	case "list":
		v, _ = c.LRange(ctx, key, 0, -1).Result()
	case "set":
		m, _ := c.SMembers(ctx, key).Result()
		slices.Sort(m)
		v = m
	case "zset":
		v, _ = c.ZRangeWithScores(ctx, key, 0, -1).Result()
	}
	ttl, _ := c.PTTL(ctx, key).Result()
	return fmt.Sprint(typ, " ", v, " ", ttl > 0)
}

// TestDurableReplicationDataDir: a primary, its replica and a replica of
// that replica, each with --data-dir, follow writes of every type made
// while they attach and after; WAIT on the primary, and every key holds
// the same on all three. The chained replica's full resync comes from a
// durable replica's disk.
func TestDurableReplicationDataDir(t *testing.T) {
	ctx := context.Background()
	primary := startChild(t, "--data-dir", t.TempDir())
	pc := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(primary.port)), ReadTimeout: time.Minute})
	defer pc.Close()
	var keys []string
	for i := range 30 {
		keys = append(keys, fmt.Sprint("k", i))
	}
	write := func(round int) {
		for i, k := range keys {
			var err error
			switch i % 5 {
			case 0:
				err = pc.Set(ctx, k, fmt.Sprint("v", round), time.Duration(i%2)*time.Hour).Err()
			case 1:
				err = pc.HSet(ctx, k, fmt.Sprint("f", round%7), round).Err()
			case 2:
				err = pc.RPush(ctx, k, round).Err()
			case 3:
				err = pc.SAdd(ctx, k, round%11).Err()
			case 4:
				err = pc.ZIncrBy(ctx, k, 1.5, fmt.Sprint("m", round%5)).Err()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if round%7 == 0 {
			pc.Del(ctx, keys[round%len(keys)])
		}
	}
	for round := range 20 {
		write(round)
	}
	r1 := startChild(t, "--data-dir", t.TempDir(), "--replicaof", "127.0.0.1:"+strconv.Itoa(primary.port))
	for round := 20; round < 40; round++ {
		write(round)
	}
	r2 := startChild(t, "--data-dir", t.TempDir(), "--replicaof", "127.0.0.1:"+strconv.Itoa(r1.port))
	for round := 40; round < 80; round++ {
		write(round)
	}
	if n, err := pc.Do(ctx, "WAIT", 1, 30000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	off := func(c *redis.Client, field string) string {
		s, _ := c.Info(ctx, "replication").Result()
		for _, line := range strings.Split(s, "\r\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				return v
			}
		}
		return ""
	}
	for _, r := range []*childServer{r1, r2} {
		rc := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port))})
		defer rc.Close()
		pollFor(t, "the replica to catch up", 30*time.Second, func() bool {
			return off(rc, "master_link_status") == "up" && off(rc, "slave_repl_offset") == off(pc, "master_repl_offset")
		})
		for _, k := range keys {
			if got, want := keyStateOf(ctx, rc, k), keyStateOf(ctx, pc, k); got != want {
				t.Errorf("replica on port %d: %s = %s, primary %s", r.port, k, got, want)
			}
		}
	}
}
