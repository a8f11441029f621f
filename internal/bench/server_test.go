package bench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// peerBins returns the minikv, memcached and redis-server binaries. A
// missing one skips the test, or fails it under MINIKV_REQUIRE_PEERS (make
// test sets it, so CI never passes by skipping).
func peerBins(t *testing.T) (minikv, memcached, redis string) {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		if os.Getenv("MINIKV_REQUIRE_PEERS") != "" {
			t.Fatalf("%s not found and MINIKV_REQUIRE_PEERS is set (run make build / make deps)", what)
		}
		t.Skipf("%s not found; set MINIKV_REQUIRE_PEERS=1 to make this a failure", what)
	}
	minikv = os.Getenv("MINIKV_BIN")
	if minikv == "" {
		minikv, _ = filepath.Abs("../../bin/minikv")
	}
	if _, err := os.Stat(minikv); err != nil {
		missing("minikv binary " + minikv)
	}
	var err error
	if memcached, err = exec.LookPath("memcached"); err != nil {
		missing("memcached")
	}
	if redis, err = exec.LookPath("redis-server"); err != nil {
		missing("redis-server")
	}
	return minikv, memcached, redis
}

// children lists the live child processes of this test process.
func children(t *testing.T) []string {
	t.Helper()
	me := strconv.Itoa(os.Getpid())
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == me {
			out = append(out, e.Name()+" "+s[:i+1])
		}
	}
	return out
}

func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestCompareLifecycle(t *testing.T) {
	minikv, memcached, redis := peerBins(t)
	if c := children(t); len(c) > 0 {
		t.Fatalf("children before the test: %v", c)
	}
	f := NewFleet(ServerOptions{MemoryMB: 64, Threads: 2, MinikvBin: minikv, MemcachedBin: memcached, RedisBin: redis})
	defer f.Close()
	ctx := context.Background()
	var targets []Target
	names := []string{NameMinikv, NameMemcached, NameRedis}
	if f.minikvHas(minikv, "resp-port") {
		names = append(names, NameMinikvRESP)
	}
	for _, n := range names {
		s, err := f.Start(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, s.Target())
	}
	if got := len(children(t)); got != len(names) {
		t.Errorf("%d child processes after starting %d servers", got, len(names))
	}
	w := &Workload{Keys: 500, Ratio: Ratio{1, 9}, ValueSize: 32}
	if err := w.Init(); err != nil {
		t.Fatal(err)
	}
	p := &Plan{
		Job:      &Mixed{Workload: w, Requests: 2000, Prefill: true, Timeout: 5 * time.Second},
		Targets:  targets,
		Variants: []Variant{{Conns: 4, Pipeline: 1}, {Conns: 4, Pipeline: 8}},
		Repeat:   2,
	}
	rep := &Report{Targets: names, Protocols: map[string]string{}}
	for _, tg := range targets {
		rep.Protocols[tg.Name] = tg.Proto.Name()
	}
	if err := p.Execute(ctx, rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Cells) != 2*len(names) || len(rep.Prefill) != len(names) {
		t.Fatalf("%d cells and %d prefills, want %d and %d", len(rep.Cells), len(rep.Prefill), 2*len(names), len(names))
	}
	for _, c := range rep.Cells {
		if len(c.Runs) != 2 || c.Median.Errors != 0 || c.Median.Ops != 2000 || c.Median.Misses != 0 {
			t.Errorf("%s %+v: %d runs, median %+v", c.Target, c.Variant, len(c.Runs), c.Median)
		}
		// The server's CPU comes from /proc in clock ticks (10 ms), which a
		// short run may not reach: check the figure where there is one.
		for _, r := range c.Runs {
			if want := float64(r.ServerCPU.Nanoseconds()) / 1e3 / float64(r.Ops); r.ServerCPU > 0 && r.ServerCPUPerOp != want {
				t.Errorf("%s %+v: server CPU per request %v µs, want %v (%v over %d requests)", c.Target, c.Variant, r.ServerCPUPerOp, want, r.ServerCPU, r.Ops)
			}
		}
		if (c.Target == NameMinikv || c.Target == NameMinikvRESP) != (c.Ratio == 0) {
			t.Errorf("%s %+v: ratio %v; want one for each peer only", c.Target, c.Variant, c.Ratio)
		}
	}
	// Multi-key gets against every real server: memcached's get k1 k2 ...
	// and Redis's MGET find every prefilled key.
	mw := &Workload{Keys: 500, Ratio: Ratio{0, 1}, ValueSize: 32, MultiGet: 4}
	if err := mw.Init(); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		s, err := Connect(ctx, tg, mw, 2, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r := s.Run(ctx, Phase{Label: "mget", Pipeline: 2, Requests: 50})
		s.Close()
		if r.Ops != 50 || r.Hits != 200 || r.Errors != 0 {
			t.Errorf("%s multiget 4: ops %d hits %d misses %d errors %d (%s); want 50 requests, 200 hits", tg.Name, r.Ops, r.Hits, r.Misses, r.Errors, r.FirstErr)
		}
	}

	var sb strings.Builder
	if err := rep.WriteTable(&sb); err != nil || !strings.Contains(sb.String(), "minikv ÷ this") || !strings.Contains(sb.String(), "srv µs/req") {
		t.Errorf("WriteTable: %v\n%s", err, sb.String())
	}
	f.Close()
	for _, s := range f.Servers() {
		if !gone(s.PID()) {
			t.Errorf("%s (pid %d) still exists after Close", s.Name, s.PID())
		}
	}
	if c := children(t); len(c) > 0 {
		t.Errorf("orphans after Close: %v", c)
	}
}

func TestCancelStopsRun(t *testing.T) {
	minikv, _, _ := peerBins(t)
	f := NewFleet(ServerOptions{MinikvBin: minikv})
	defer f.Close()
	s, err := f.Start(context.Background(), NameMinikv)
	if err != nil {
		t.Fatal(err)
	}
	w := &Workload{Keys: 100}
	_ = w.Init()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	p := &Plan{
		Job:      &Mixed{Workload: w, Duration: time.Minute, Timeout: time.Second},
		Targets:  []Target{s.Target()},
		Variants: []Variant{{Conns: 2, Pipeline: 1}},
	}
	start := time.Now()
	if err := p.Execute(ctx, &Report{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Execute = %v, want the context's error", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("cancelled run took %v", el)
	}
	f.Close()
	if !gone(s.PID()) {
		t.Errorf("minikv (pid %d) survived Close", s.PID())
	}
}

func TestStartFailures(t *testing.T) {
	f := NewFleet(ServerOptions{MemcachedBin: "false", StartTimeout: 2 * time.Second})
	defer f.Close()
	if _, err := f.Start(context.Background(), "mongodb"); !errors.Is(err, ErrUnknownTarget) {
		t.Errorf("Start(mongodb) = %v, want ErrUnknownTarget", err)
	}
	if _, err := f.Start(context.Background(), NameMemcached); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("Start of a server that exits at once = %v, want an 'exited' error", err)
	}
	if _, err := f.Start(context.Background(), NameMinikv); err == nil {
		t.Errorf("Start(minikv) without a binary succeeded")
	}
	f.Close()
	if c := children(t); len(c) > 0 {
		t.Errorf("orphans after failed starts: %v", c)
	}
}
