package main

// Durable mode under kill -9. The test binary re-runs itself as the
// server (TestMain, MINIKV_CRASH_CHILD), so the server is a real process
// that can be killed with SIGKILL while memcached and RESP clients write
// overlapping keys, pipelined and not. After each kill the server is
// started again on the same data directory and every key is checked
// against a model of the acknowledged writes:
//
// Every write (set, delete) gets a send stamp before its bytes leave and an
// ack stamp when its reply arrives (none if the kill came first), from one
// global counter. A write W of a key is superseded when another write of
// that key was sent after W was acknowledged and was itself acknowledged:
// then it is ordered after W in any history. After the restart a key must
// hold the value (or absence) of a write that is not superseded. Every key
// starts with an acknowledged "absent", and the value read after a restart
// becomes the key's only write for the next cycle: when every later write
// was still in flight at the kill, that earlier state is allowed too.
//
// The server runs with small memtables (engineOptionsKey), so the engine
// flushes and compacts within a cycle, and kills land at three kinds of
// points: at a random time during writes ("write"), in the middle of a
// memtable flush ("flush") and in the middle of a compaction
// ("compaction"). For the last two the server's filesystem (vfstest.StopFS) stops
// the flush or compaction before one of its file operations, chosen at
// random, and the test checks that /metrics shows the work in progress
// (memcached_disk_flushing, memcached_disk_compacting) before it kills.

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
	"github.com/minikv/minikv/lsm/vfs/vfstest"
)

var soak = flag.Bool("soak", false, "run the long kill -9 cycles (make soak)")

func TestMain(m *testing.M) {
	if args := os.Getenv("MINIKV_CRASH_CHILD"); args != "" {
		ctx := context.Background()
		if os.Getenv("MINIKV_CRASH_STOP") != "" { // TestCrashKill9Durable's server
			fs := &vfstest.StopFS{FS: vfs.Default, Out: os.Stdout}
			go listenStops(fs, os.Stdin)
			ctx = context.WithValue(ctx, engineOptionsKey{}, func(o *lsm.Options) {
				// Small enough that 64 keys of up to 3 KB flush a
				// memtable every few hundred writes and compact every
				// few flushes, L0 into L1 and L1 into L2, in parallel
				// key ranges too.
				o.FS = fs
				o.MemTableSize = 256 << 10
				o.TargetFileSize = 64 << 10
				o.LBaseMaxBytes = 128 << 10
			})
		}
		err := run(ctx, strings.Fields(args), func(string) string { return "" }, os.Stdout, os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "minikv:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashServer is the server process of one cycle.
type crashServer struct {
	cmd             *exec.Cmd
	mc, resp, admin string
	stdin           io.Writer     // requests to its StopFS
	stopped         chan string   // what its StopFS stopped before
	out             *serverOutput // its output
	exited          chan struct{}
}

func startCrashServer(t *testing.T, dir, fsync string) *crashServer {
	t.Helper()
	for attempt := 0; ; attempt++ {
		mcPort, respPort, adminPort := freePort(t), freePort(t), freePort(t)
		args := fmt.Sprintf("-l 127.0.0.1 -p %d --resp-port %d --admin-addr 127.0.0.1:%d --data-dir %s --fsync %s -m 8",
			mcPort, respPort, adminPort, dir, fsync)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MINIKV_CRASH_CHILD="+args, "MINIKV_CRASH_STOP=1")
		cs := &crashServer{cmd: cmd, mc: fmt.Sprintf("127.0.0.1:%d", mcPort), resp: fmt.Sprintf("127.0.0.1:%d", respPort),
			admin: fmt.Sprintf("127.0.0.1:%d", adminPort), stopped: make(chan string, 1), exited: make(chan struct{})}
		cs.out = &serverOutput{stopped: cs.stopped}
		cmd.Stdout, cmd.Stderr = cs.out, cs.out
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		cs.stdin = stdin
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = cmd.Wait(); close(cs.exited) }()
		up := false
		for range 3000 {
			if cs.out.listening(cs.resp) {
				up = true
				break
			}
			select {
			case <-cs.exited:
			case <-time.After(10 * time.Millisecond):
				continue
			}
			break
		}
		if up {
			t.Cleanup(cs.kill) // a failing test leaves no server behind
			return cs
		}
		cs.kill()
		if attempt == 2 {
			t.Fatalf("server did not start: %s", cs.out)
		}
	}
}

func (cs *crashServer) kill() {
	_ = cs.cmd.Process.Kill() // by PID: only the process this test started
	<-cs.exited
}

// serverOutput collects a server's output and passes on the line its
// StopFS prints when it stopped the engine.
type serverOutput struct {
	mu      sync.Mutex // protects b
	b       strings.Builder
	stopped chan<- string
}

func (o *serverOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	start := o.b.Len()
	o.b.Write(p)
	// A line may come in pieces: look from the start of the line p
	// began in.
	from := strings.LastIndexByte(o.b.String()[:start], '\n') + 1
	for _, line := range strings.SplitAfter(o.b.String()[from:], "\n") {
		if rest, ok := strings.CutPrefix(line, "stopped "); ok && strings.HasSuffix(rest, "\n") {
			select {
			case o.stopped <- strings.TrimSpace(rest):
			default:
			}
		}
	}
	return len(p), nil
}

// listening says whether the server logged that it listens on the RESP
// port addr: it binds every port before it logs that line, while a dial
// could reach another process that took a port freePort gave out.
func (o *serverOutput) listening(addr string) bool {
	return strings.Contains(o.String(), "protocol=resp addr="+addr+" ")
}

func (o *serverOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// stopWait bounds the wait for the server to reach the flush or compaction
// it is asked to stop in; past it the cycle kills anyway. Writers flush a
// memtable every few hundred writes, so only a stuck server takes this
// long.
const stopWait = 20 * time.Second

// killIn asks the server to stop in its next flush or compaction (kind),
// before the nth file operation of that kind from now, waits for it to
// stop there, checks that /metrics shows that work in progress, and kills
// the server. It reports what the work stopped before, or "" when the
// server did not get there within stopWait (it is killed all the same).
func (cs *crashServer) killIn(t *testing.T, kind string, n int) string {
	t.Helper()
	defer cs.kill()
	if _, err := fmt.Fprintf(cs.stdin, "stop %s %d\n", kind, n); err != nil {
		t.Fatalf("asking the server to stop in a %s: %v", kind, err)
	}
	var at string
	select {
	case at = <-cs.stopped:
		at = strings.TrimPrefix(at, kind+" ")
	case <-cs.exited:
		t.Fatalf("the server exited before it reached a %s: %s", kind, cs.out)
	case <-time.After(stopWait):
		return ""
	}
	// The flush or compaction is stopped for good: nothing here depends
	// on timing. /metrics, not stats: every memcached reply waits for the
	// writes queued before it, which wait for this very flush.
	gauge := map[string]string{"flush": "memcached_disk_flushing", "compaction": "memcached_disk_compacting"}[kind]
	if v, err := cs.metric(gauge); err != nil {
		t.Errorf("stopped in a %s (before %s): %v", kind, at, err)
	} else if v != "1" {
		t.Errorf("stopped in a %s (before %s), but %s = %s", kind, at, gauge, v)
	}
	return at
}

// metric reads one series from the server's /metrics.
func (cs *crashServer) metric(name string) (string, error) {
	c := &http.Client{Timeout: 30 * time.Second}
	res, err := c.Get("http://" + cs.admin + "/metrics")
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("/metrics has no %s", name)
}

// crashOp is one write of the model.
type crashOp struct {
	key   int
	value string // "" = delete
	send  int64
	ack   atomic.Int64 // 0: never acknowledged
}

type crashModel struct {
	mu    sync.Mutex
	ops   map[int][]*crashOp
	clock atomic.Int64
	acks  atomic.Int64 // acknowledged writes this cycle
}

func (m *crashModel) add(key int, value string) *crashOp {
	op := &crashOp{key: key, value: value, send: m.clock.Add(1)}
	m.mu.Lock()
	m.ops[key] = append(m.ops[key], op)
	m.mu.Unlock()
	return op
}

func (m *crashModel) acked(op *crashOp) {
	op.ack.Store(m.clock.Add(1))
	m.acks.Add(1)
}

// settled makes value the only write of key, acknowledged: the state
// before any write of the next cycle, which a write still in flight at the
// kill may or may not replace.
func (m *crashModel) settled(key int, value string) {
	op := &crashOp{key: key, value: value, send: m.clock.Add(1)}
	op.ack.Store(m.clock.Add(1))
	m.ops[key] = []*crashOp{op}
}

// ackCount is the number of writes acknowledged in this cycle.
func (m *crashModel) ackCount() int64 { return m.acks.Load() }

// allowed is the set of values key may hold after the crash.
func (m *crashModel) allowed(key int) map[string]bool {
	ops := m.ops[key]
	ok := map[string]bool{}
	for _, w := range ops {
		// An unacknowledged write may have landed last, whatever else
		// happened; an acknowledged one is out once a later write (sent
		// after its ack) was acknowledged too.
		superseded := false
		if a := w.ack.Load(); a != 0 {
			for _, w2 := range ops {
				if w2 != w && w2.send > a && w2.ack.Load() != 0 {
					superseded = true
					break
				}
			}
		}
		if !superseded {
			ok[w.value] = true
		}
	}
	return ok
}

const crashKeys = 64

func crashKeyName(k int) string { return "ck" + strconv.Itoa(k) }

// crashValue is a value unique to this write, of a size that makes the
// engine rotate and flush memtables within a cycle.
func crashValue(r *rand.Rand, worker int, n int64) string {
	head := fmt.Sprintf("w%d-%d-", worker, n)
	return head + strings.Repeat("x", r.IntN(3000))
}

// crashWorker writes random keys through one connection until it breaks.
func crashWorker(m *crashModel, addr string, resp bool, pipeline int, worker int, seed uint64) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	r := rand.New(rand.NewPCG(seed, uint64(worker)))
	var n int64
	for {
		var buf strings.Builder
		batch := make([]*crashOp, 0, pipeline)
		for range pipeline {
			k := r.IntN(crashKeys)
			n++
			v := ""
			if r.IntN(8) != 0 {
				v = crashValue(r, worker, n)
			}
			switch {
			case resp && v == "":
				fmt.Fprintf(&buf, "*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n", len(crashKeyName(k)), crashKeyName(k))
			case resp:
				fmt.Fprintf(&buf, "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(crashKeyName(k)), crashKeyName(k), len(v), v)
			case v == "":
				fmt.Fprintf(&buf, "delete %s\r\n", crashKeyName(k))
			default:
				fmt.Fprintf(&buf, "set %s 0 0 %d\r\n%s\r\n", crashKeyName(k), len(v), v)
			}
			batch = append(batch, m.add(k, v))
		}
		if _, err := io.WriteString(nc, buf.String()); err != nil {
			return
		}
		for _, op := range batch {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			switch line {
			case "+OK\r\n", ":0\r\n", ":1\r\n", "STORED\r\n", "DELETED\r\n", "NOT_FOUND\r\n":
				m.acked(op)
			default:
				return // an error reply: not acknowledged
			}
		}
	}
}

// readKey reads key from the restarted server over the memcached port;
// "" is absent.
func readKey(t *testing.T, rw *bufio.ReadWriter, k int) string {
	t.Helper()
	fmt.Fprintf(rw, "get %s\r\n", crashKeyName(k))
	if err := rw.Flush(); err != nil {
		t.Fatal(err)
	}
	line, err := rw.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if line == "END\r\n" {
		return ""
	}
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "VALUE" {
		t.Fatalf("get %s: %q", crashKeyName(k), line)
	}
	size, _ := strconv.Atoi(f[3])
	data := make([]byte, size+2)
	if _, err := io.ReadFull(rw, data); err != nil {
		t.Fatal(err)
	}
	if end, _ := rw.ReadString('\n'); end != "END\r\n" {
		t.Fatalf("get %s: %q after the value", crashKeyName(k), end)
	}
	return string(data[:size])
}

// TestCrashKill9Durable kills the server with SIGKILL under load from both
// ports, in each fsync mode, once the first 50 writes were acknowledged,
// restarts it on the same directory and checks every key against the
// model. The kill lands at a random time ("write": sometimes during a
// SIGTERM shutdown), or in the middle of a memtable flush ("flush") or of
// a compaction ("compaction"), at a random step of it; each of those
// subtests fails unless at least one of its cycles really killed there.
func TestCrashKill9Durable(t *testing.T) {
	cycles := 3
	if *soak {
		cycles = 25
	}
	for _, fsync := range []string{"always", "everysec", "no"} {
		for _, point := range []string{"write", "flush", "compaction"} {
			t.Run(fsync+"/"+point, func(t *testing.T) {
				crashCycles(t, fsync, point, cycles)
			})
		}
	}
}

// crashCycles runs the kill cycles of one subtest of TestCrashKill9Durable.
func crashCycles(t *testing.T, fsync, point string, cycles int) {
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	m := &crashModel{ops: map[int][]*crashOp{}}
	for k := range crashKeys {
		m.settled(k, "") // every key starts absent
	}
	hit := 0 // cycles killed where point says
	for cycle := range cycles {
		cs := startCrashServer(t, dir, fsync)
		var wg sync.WaitGroup
		for w, c := range []struct {
			resp     bool
			pipeline int
		}{{false, 1}, {false, 16}, {true, 1}, {true, 16}} {
			addr := cs.mc
			if c.resp {
				addr = cs.resp
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				crashWorker(m, addr, c.resp, c.pipeline, cycle*10+w, seed)
			}()
		}
		// Kill after some writes went through, so every cycle tests
		// something however slow the machine is.
		for deadline := time.Now().Add(30 * time.Second); m.ackCount() < 50; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("cycle %d: fewer than 50 writes acknowledged in 30 s", cycle)
			}
		}
		switch point {
		case "write":
			time.Sleep(time.Duration(r.IntN(500)) * time.Millisecond)
			if r.IntN(4) == 0 {
				_ = cs.cmd.Process.Signal(syscall.SIGTERM) // killed while shutting down
				time.Sleep(time.Duration(r.IntN(30)) * time.Millisecond)
			}
			cs.kill()
			hit++
		default:
			// A flush makes 10 or 11 file operations, a compaction of
			// four L0 tables about 26; n past the end stops the next one,
			// so any step of one may be hit.
			steps := map[string]int{"flush": 12, "compaction": 30}[point]
			time.Sleep(time.Duration(r.IntN(200)) * time.Millisecond)
			if at := cs.killIn(t, point, r.IntN(steps)); at != "" {
				t.Logf("cycle %d: killed in a %s, before %s", cycle, point, at)
				hit++
			} else {
				t.Logf("cycle %d: no %s within %v; killed during writes", cycle, point, stopWait)
			}
		}
		wg.Wait()

		cs = startCrashServer(t, dir, fsync)
		nc, err := net.Dial("tcp", cs.mc)
		if err != nil {
			t.Fatalf("%v; the server's output:\n%s", err, cs.out)
		}
		rw := bufio.NewReadWriter(bufio.NewReader(nc), bufio.NewWriter(nc))
		for k := range crashKeys {
			got := readKey(t, rw, k)
			if ok := m.allowed(k); !ok[got] {
				t.Fatalf("cycle %d: %s = %.40q after the restart; allowed: %d values (%.60v)", cycle, crashKeyName(k), got, len(ok), ok)
			}
			m.settled(k, got)
		}
		nc.Close()
		m.acks.Store(0)
		cs.kill()
	}
	if hit == 0 {
		t.Errorf("none of %d cycles killed the server in a %s", cycles, point)
	}
}
