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

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var soak = flag.Bool("soak", false, "run the long kill -9 cycles (make soak)")

func TestMain(m *testing.M) {
	if args := os.Getenv("MINIKV_CRASH_CHILD"); args != "" {
		err := run(context.Background(), strings.Fields(args), func(string) string { return "" }, os.Stdout, os.Stderr)
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
	cmd      *exec.Cmd
	mc, resp string
	exited   chan struct{}
}

func startCrashServer(t *testing.T, dir, fsync string) *crashServer {
	t.Helper()
	for attempt := 0; ; attempt++ {
		mcPort, respPort := freePort(t), freePort(t)
		args := fmt.Sprintf("-l 127.0.0.1 -p %d --resp-port %d --admin-addr= --data-dir %s --fsync %s -m 8",
			mcPort, respPort, dir, fsync)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MINIKV_CRASH_CHILD="+args)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cs := &crashServer{cmd: cmd, mc: fmt.Sprintf("127.0.0.1:%d", mcPort), resp: fmt.Sprintf("127.0.0.1:%d", respPort),
			exited: make(chan struct{})}
		go func() { _ = cmd.Wait(); close(cs.exited) }()
		up := false
		for range 500 {
			if c, err := net.Dial("tcp", cs.resp); err == nil {
				c.Close()
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
			t.Fatalf("server did not start: %s", out.String())
		}
	}
}

func (cs *crashServer) kill() {
	_ = cs.cmd.Process.Kill() // by PID: only the process this test started
	<-cs.exited
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
// ports, in each fsync mode, at a random time after the first 50 writes
// were acknowledged (sometimes during a SIGTERM shutdown), restarts it on the same directory and checks every key
// against the model.
func TestCrashKill9Durable(t *testing.T) {
	cycles := 3
	if *soak {
		cycles = 25
	}
	for _, fsync := range []string{"always", "everysec", "no"} {
		t.Run(fsync, func(t *testing.T) {
			dir := t.TempDir()
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, 0))
			m := &crashModel{ops: map[int][]*crashOp{}}
			for k := range crashKeys {
				m.settled(k, "") // every key starts absent
			}
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
				// Kill at a random time after some writes went through, so
				// every cycle tests something however slow the machine is.
				for deadline := time.Now().Add(30 * time.Second); m.ackCount() < 50; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("cycle %d: fewer than 50 writes acknowledged in 30 s", cycle)
					}
				}
				time.Sleep(time.Duration(r.IntN(500)) * time.Millisecond)
				if r.IntN(4) == 0 {
					_ = cs.cmd.Process.Signal(syscall.SIGTERM) // killed while shutting down
					time.Sleep(time.Duration(r.IntN(30)) * time.Millisecond)
				}
				cs.kill()
				wg.Wait()

				cs = startCrashServer(t, dir, fsync)
				nc, err := net.Dial("tcp", cs.mc)
				if err != nil {
					t.Fatal(err)
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
		})
	}
}
