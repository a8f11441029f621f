package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/bench"
)

// TestMain lets this test binary stand in for minikv-bench when --compare
// null re-executes it as "serve-null".
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "serve-null" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func minikvBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("MINIKV_BIN")
	if bin == "" {
		bin, _ = filepath.Abs("../../bin/minikv")
	}
	need := []string{bin}
	for _, p := range []string{"memcached", "redis-server"} {
		if _, err := exec.LookPath(p); err != nil {
			need = append(need, p+" (not on PATH)")
		}
	}
	_, err := os.Stat(bin)
	if err == nil && len(need) == 1 {
		return bin
	}
	if os.Getenv("MINIKV_REQUIRE_PEERS") != "" {
		t.Fatalf("missing %v and MINIKV_REQUIRE_PEERS is set", need)
	}
	t.Skipf("missing %v; set MINIKV_REQUIRE_PEERS=1 to make this a failure", need)
	return ""
}

func children(t *testing.T) []string {
	t.Helper()
	me := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if f := strings.Fields(s[i+1:]); i > 0 && len(f) > 1 && f[1] == me {
			out = append(out, s[:i+1])
		}
	}
	return out
}

// TestCompareEndToEnd runs the whole command against real servers and the
// null server, with every output, and checks nothing is left running.
func TestCompareEndToEnd(t *testing.T) {
	bin := minikvBin(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{
		"--compare", "minikv,memcached,redis,null", "--minikv-bin", bin,
		"-c", "4", "-P", "4", "-d", "32", "--keys", "500", "--prefill", "-n", "2000",
		"--warmup", "100ms", "--repeat", "2", "--memory", "64",
		"--json", filepath.Join(dir, "r.json"), "--csv", filepath.Join(dir, "r.csv"),
		"--sweep", "P=1,4", "--chart", filepath.Join(dir, "r.svg"),
	}
	code := run(context.Background(), args, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"minikv ÷ this", "memcached", "redis", "null", "p99.9", "×"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	var rep struct {
		Cells []struct {
			Target string
			Runs   []json.RawMessage
			Median struct {
				Ops    int64 `json:"ops"`
				Errors int64 `json:"errors"`
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Cells) != 8 {
		t.Errorf("JSON has %d cells, want 4 targets × 2 sweep points", len(rep.Cells))
	}
	for _, c := range rep.Cells {
		if len(c.Runs) != 2 || c.Median.Ops != 2000 || c.Median.Errors != 0 {
			t.Errorf("JSON cell %s: %d runs, median ops %d errors %d", c.Target, len(c.Runs), c.Median.Ops, c.Median.Errors)
		}
	}
	f, _ := os.Open(filepath.Join(dir, "r.csv"))
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != 1+8*3 {
		t.Errorf("CSV: %d records (%v), want header + 8 cells × (2 runs + median)", len(recs), err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "r.svg"))
	if !bytes.HasPrefix(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("redis")) {
		t.Errorf("chart is not an SVG naming the servers: %.200s", svg)
	}
	if c := children(t); len(c) > 0 {
		t.Errorf("orphans after the run: %v", c)
	}

	// The saved JSON re-renders the same table without measuring.
	var replayed bytes.Buffer
	if code := run(context.Background(), []string{"--from-json", filepath.Join(dir, "r.json"), "--chart", filepath.Join(dir, "r2.svg")}, &replayed, &stderr); code != exitOK {
		t.Fatalf("--from-json: exit %d: %s", code, stderr.String())
	}
	if got, want := replayed.String(), stdout.String(); got != want {
		t.Errorf("--from-json table differs from the original:\n%s\nwant:\n%s", got, want)
	}
}

func TestSeedPresetTable(t *testing.T) {
	bin := minikvBin(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--compare", "minikv,memcached", "--minikv-bin", bin, "--preset", "seed-vol1"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	for _, want := range []string{"| service | workload | conc=1 ops/s | conc=8 ops/s | scaling |", "| minikv | write |", "| memcached | read |"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	if c := children(t); len(c) > 0 {
		t.Errorf("orphans after the run: %v", c)
	}
}

// TestInterruptStopsServers cancels a long run, as Ctrl-C or SIGTERM would
// (both cancel the same context), and checks the servers are gone.
func TestInterruptStopsServers(t *testing.T) {
	bin := minikvBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{"--compare", "minikv,memcached,redis", "--minikv-bin", bin, "-c", "2", "-t", "1m", "--keys", "100"}, &stdout, &stderr)
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("interrupted run took %v", el)
	}
	if c := children(t); len(c) > 0 {
		t.Errorf("orphans after an interrupted run: %v", c)
	}
}

func TestStartErrorStopsStartedServers(t *testing.T) {
	bin := minikvBin(t)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--compare", "minikv,memcached,nosuchserver", "--minikv-bin", bin, "-n", "10"}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "nosuchserver") {
		t.Errorf("exit %d, stderr %q; want a usage error naming the target", code, stderr.String())
	}
	if c := children(t); len(c) > 0 {
		t.Errorf("orphans after a failed start: %v", c)
	}
}

func TestParseSweep(t *testing.T) {
	p, vs, err := parseSweep("c=1,8,32", 50, 4)
	if err != nil || p != "c" || len(vs) != 3 || vs[2].Conns != 32 || vs[2].Pipeline != 4 {
		t.Errorf("parseSweep(c=1,8,32) = %q %+v %v", p, vs, err)
	}
	p, vs, err = parseSweep("P=1,16", 50, 4)
	if err != nil || p != "P" || len(vs) != 2 || vs[1].Pipeline != 16 || vs[1].Conns != 50 {
		t.Errorf("parseSweep(P=1,16) = %q %+v %v", p, vs, err)
	}
	for _, bad := range []string{"x=1", "c=", "c=0", "c=a", "c1"} {
		if _, _, err := parseSweep(bad, 1, 1); err == nil {
			t.Errorf("parseSweep(%q) succeeded", bad)
		}
	}
}

// TestLoadRunningServer drives a server the bench did not start (-s), with
// the JSON report on stdout and the table on stderr.
func TestLoadRunningServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bench.ServeNull(ctx, ln, 16) }()
	defer func() { cancel(); <-done }()

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-s", ln.Addr().String(), "--name", "canned", "-c", "3", "-P", "2", "-d", "16",
		"--dist", "zipf", "--ttl", "60", "-n", "999", "--warmup", "0", "--json", "-"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout.String())
	}
	if len(rep.Cells) != 1 || rep.Cells[0].Target != "canned" || rep.Cells[0].Median.Ops != 999 || rep.Settings.Dist != "zipf" {
		t.Errorf("report: %+v", rep.Cells)
	}
	if !strings.Contains(stderr.String(), "canned") {
		t.Errorf("table not on stderr: %q", stderr.String())
	}
}
