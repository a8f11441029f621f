package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// childServer is a MiniKV process this test started (TestMain runs it
// from the test binary); kill stops it with SIGKILL, by PID.
type childServer struct {
	cmd    *exec.Cmd
	port   int
	exited chan struct{}
}

func startChild(t *testing.T, args ...string) *childServer {
	t.Helper()
	port := freePort(t)
	all := append([]string{"-l", "127.0.0.1", "-p", "0", "--resp-port", strconv.Itoa(port), "--admin-addr="}, args...)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MINIKV_CRASH_CHILD="+joinArgs(all))
	out, err := os.Create(filepath.Join(t.TempDir(), "minikv.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cs := &childServer{cmd: cmd, port: port, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(cs.exited) }()
	t.Cleanup(func() {
		cs.kill()
		if t.Failed() { // the server's side of a failure
			b, _ := os.ReadFile(out.Name())
			t.Logf("server on port %d (%s):\n%s", port, joinArgs(args), b)
		}
	})
	waitUp(t, port)
	return cs
}

func joinArgs(a []string) string {
	s := ""
	for i, x := range a {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}

func (cs *childServer) kill() {
	_ = cs.cmd.Process.Kill() // by PID: only the process this test started
	<-cs.exited
}

// waitUp waits for a port to accept connections.
func waitUp(t *testing.T, port int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("port %d did not open within 10 s", port)
		}
	}
}

// pollFor polls cond every 20 ms until it holds, failing after limit: a
// bound only a broken server reaches, not a timing assertion.
func pollFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
	}
}

// startSentinel starts redis-server --sentinel monitoring the primary at
// port, on a free port of its own.
func startSentinel(t *testing.T, primary int) int {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skipf("redis-server not installed: %v", err)
	}
	port := freePort(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor mymaster 127.0.0.1 %d 2\n"+
		"sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 10000\n", port, dir, primary)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, conf, "--sentinel")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	waitUp(t, port)
	return port
}

// TestSentinelFailoverGoRedis: three unmodified sentinels watch a MiniKV
// primary and two MiniKV replicas; go-redis's failover client writes,
// confirming with WAIT 2; the primary is killed with SIGKILL; a replica
// is promoted, the client writes through it by itself, and every write
// WAIT 2 confirmed is there.
func TestSentinelFailoverGoRedis(t *testing.T) {
	primary := startChild(t)
	r1 := startChild(t, "--replicaof", "127.0.0.1:"+strconv.Itoa(primary.port))
	r2 := startChild(t, "--replicaof", "127.0.0.1:"+strconv.Itoa(primary.port))
	ctx := context.Background()
	pc := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(primary.port))})
	defer pc.Close()
	pollFor(t, "both replicas", 30*time.Second, func() bool { n, _ := pc.Do(ctx, "WAIT", 2, 100).Int(); return n == 2 })
	var sentinels []string
	for range 3 {
		sentinels = append(sentinels, net.JoinHostPort("127.0.0.1", strconv.Itoa(startSentinel(t, primary.port))))
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: sentinels[0]})
	defer sc.Close()
	pollFor(t, "the sentinels to see the replicas and each other", 30*time.Second, func() bool {
		reps, err1 := sc.Replicas(ctx, "mymaster").Result()
		sens, err2 := sc.Sentinels(ctx, "mymaster").Result()
		return err1 == nil && err2 == nil && len(reps) == 2 && len(sens) == 2
	})

	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: sentinels,
		DialTimeout: 2 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second, MaxRetries: -1})
	defer fc.Close()
	confirmed := map[string]string{}
	for i := 0; len(confirmed) < 300; {
		batch := map[string]string{}
		for range 30 {
			k, v := fmt.Sprint("g", i), fmt.Sprint("v", i)
			if err := fc.Set(ctx, k, v, 0).Err(); err != nil {
				t.Fatal(err)
			}
			batch[k] = v
			i++
		}
		if n, err := fc.Do(ctx, "WAIT", 2, 5000).Int(); err == nil && n == 2 {
			for k, v := range batch {
				confirmed[k] = v
			}
		}
	}
	primary.kill()

	pollFor(t, "a new primary", 60*time.Second, func() bool {
		addr, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
		return err == nil && addr[1] != strconv.Itoa(primary.port)
	})
	addr, _ := sc.GetMasterAddrByName(ctx, "mymaster").Result()
	if addr[1] != strconv.Itoa(r1.port) && addr[1] != strconv.Itoa(r2.port) {
		t.Fatalf("sentinels name %v, not one of the replicas", addr)
	}
	pollFor(t, "the failover client to write through the new primary", 60*time.Second, func() bool {
		return fc.Set(ctx, "after", "1", 0).Err() == nil
	})
	for k, v := range confirmed {
		got, err := fc.Get(ctx, k).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		if got != v {
			t.Fatalf("%s = %q on the new primary, want %q (confirmed by WAIT 2 before the kill)", k, got, v)
		}
	}
}

// TestDurableReplicaResumes: a durable MiniKV replica (--data-dir) killed
// with SIGKILL and restarted continues from the offset its data is at
// (PSYNC +CONTINUE: the primary counts a partial resync, no second full
// one) and ends with every key the primary has.
func TestDurableReplicaResumes(t *testing.T) {
	primary := startChild(t)
	dir := t.TempDir()
	replicaArgs := []string{"--replicaof", "127.0.0.1:" + strconv.Itoa(primary.port), "--data-dir", dir}
	replica := startChild(t, replicaArgs...)
	ctx := context.Background()
	// WAIT may block long on a loaded machine: the client waits as long.
	pc := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(primary.port)), ReadTimeout: time.Minute})
	defer pc.Close()
	info := func(c *redis.Client, field string) string {
		s, _ := c.Info(ctx, "all").Result()
		for _, line := range strings.Split(s, "\r\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				return v
			}
		}
		return ""
	}
	write := func(from, to int) {
		for i := from; i < to; i++ {
			if err := pc.Set(ctx, fmt.Sprint("d", i), fmt.Sprint("v", i), 0).Err(); err != nil {
				t.Fatal(err)
			}
			pc.Incr(ctx, "counter")
		}
	}
	write(0, 300)
	if n, err := pc.Do(ctx, "WAIT", 1, 30000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	replica.kill()
	write(300, 400) // while the replica is down: in the primary's backlog
	replica = startChild(t, replicaArgs...)
	rc := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(replica.port))})
	defer rc.Close()
	pollFor(t, "the replica to catch up", 30*time.Second, func() bool {
		return info(rc, "master_link_status") == "up" && info(rc, "slave_repl_offset") == info(pc, "master_repl_offset")
	})
	if full, partial := info(pc, "sync_full"), info(pc, "sync_partial_ok"); full != "1" || partial != "1" {
		t.Errorf("primary counts sync_full %s, sync_partial_ok %s; want 1 and 1 (the restart continued)", full, partial)
	}
	for i := range 400 {
		if got, _ := rc.Get(ctx, fmt.Sprint("d", i)).Result(); got != fmt.Sprint("v", i) {
			t.Fatalf("d%d = %q on the restarted replica", i, got)
		}
	}
	if got, _ := rc.Get(ctx, "counter").Result(); got != "400" {
		t.Errorf("counter = %q on the restarted replica, want 400 (each INCR applied once)", got)
	}
}

// TestShutdownCommand: SHUTDOWN NOSAVE stops the process with status 0;
// while a script runs past busy-reply-threshold, SHUTDOWN without NOSAVE
// gets -BUSY, as in Redis, and SHUTDOWN NOSAVE exits at once.
func TestShutdownCommand(t *testing.T) {
	ctx := context.Background()
	exitedOK := func(cs *childServer) {
		t.Helper()
		select {
		case <-cs.exited:
		case <-time.After(30 * time.Second):
			t.Fatal("the server did not exit within 30 s of SHUTDOWN")
		}
		if code := cs.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("exit status %d after SHUTDOWN, want 0", code)
		}
	}
	plain := startChild(t)
	pc := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(plain.port)), MaxRetries: -1})
	defer pc.Close()
	_ = pc.Do(ctx, "SHUTDOWN", "NOSAVE").Err() // no reply: the connection closes
	exitedOK(plain)

	busy := startChild(t)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(busy.port))
	a := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: -1})
	defer a.Close()
	b := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer b.Close()
	if err := b.ConfigSet(ctx, "busy-reply-threshold", "50").Err(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Eval(ctx, "redis.call('SET', 'during', '1') while true do end", nil).Err() }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if err := b.Ping(ctx).Err(); err != nil && strings.HasPrefix(err.Error(), "BUSY") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the script never made the server BUSY")
		}
	}
	if err := b.Do(ctx, "SHUTDOWN").Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSY") {
		t.Errorf("SHUTDOWN during a busy script = %v, want -BUSY", err)
	}
	_ = b.Do(ctx, "SHUTDOWN", "NOSAVE").Err()
	exitedOK(busy)
}
