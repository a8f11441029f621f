package main

// Larger than memory (issue 13): in durable mode -m bounds item memory
// only; the data set lives on disk and a read of an item evicted from
// memory brings it back. TestTieredLargerThanMemory writes many times -m
// of 100 KB values through a real server process, reads every one back
// byte for byte, restarts the server and reads them all again, and checks
// that the server's peak RSS stayed within tieredRSSBound of -m.
//
// The server is a non-race build of this package (go build, or
// MINIKV_BIN): the race detector multiplies a process's memory, so the
// RSS of the race-built test binary re-executed as the server (as
// crash_test.go does) would say nothing about MiniKV's.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const tieredValueSize = 100 << 10

// tieredRSSBound is the documented bound on the peak RSS of a durable
// server with item memory m, however much data is on disk: the Go heap's
// soft limit that MiniKV sets from -m in durable mode (softMemoryLimit:
// 1.5 m + 32 MiB + 24 MiB for the engine, when GOMEMLIMIT is not in the
// environment) plus 64 MiB.
//
// The soft limit covers the Go heap: items (m, and the dead bytes of
// segments not yet compacted), the engine's memtables (3 x 4 MiB) and
// block cache (8 MiB), the durable log's queued and committing batches,
// connection buffers. The 64 MiB are for what it does not cover or cannot
// hold back: file pages in RSS (the binary's text, and the write-ahead
// logs when the engine maps them: up to 3 live logs of 9 MiB), the heap
// running past the soft limit while 100 KB records are allocated faster
// than a collection completes, and the runtime outside the heap.
//
// Measured on 2 cores (4 writers of 8 pipelined 100 KB sets, then the
// read-back), over 20 runs with mapped logs: -m 16 (soft limit 56 MiB)
// peaked at 74-78 MiB, once 94 MiB (anonymous 75 MiB, file pages 22 MiB);
// -m 64 (128 MiB) at 146-147 MiB, also with 32 writers of 16; -m 256
// (416 MiB) at 433 MiB. With write(2) logs, about 11 MiB less. So at most
// 38 MiB above the soft limit, whatever the data on disk; 64 MiB leaves
// a margin of two thirds of that again.
func tieredRSSBound(m int64) int64 { return softMemoryLimit(m, true) + 64<<20 }

// tieredBinary returns a non-race minikv binary: MINIKV_BIN if set, else
// one built from this package into a temporary directory (a second or two
// with the build cache that make build leaves).
func tieredBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("MINIKV_BIN"); bin != "" {
		return bin
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "minikv")
	cmd := exec.Command(gobin, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building a non-race server (or set MINIKV_BIN): %v\n%s", err, out)
	}
	return bin
}

// tieredServer is one run of the server process.
type tieredServer struct {
	cmd    *exec.Cmd
	addr   string
	out    *lockedBuffer
	exited chan struct{}
	up     time.Duration // from exec to accepting connections

	mu   sync.Mutex       // protects most
	most map[string]int64 // the largest sample of each /proc/PID/status field
	quit chan struct{}
	done chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startTiered(t *testing.T, bin, dir string, memMB int) *tieredServer {
	t.Helper()
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		ts := &tieredServer{
			addr: fmt.Sprintf("127.0.0.1:%d", port), out: &lockedBuffer{}, exited: make(chan struct{}),
			quit: make(chan struct{}), done: make(chan struct{}), most: map[string]int64{},
		}
		ts.cmd = exec.Command(bin, "-l", "127.0.0.1", "-p", strconv.Itoa(port), "--resp-port", "0", "--admin-addr", "",
			"--data-dir", dir, "--fsync", "everysec", "-m", strconv.Itoa(memMB))
		ts.cmd.Stdout, ts.cmd.Stderr = ts.out, ts.out
		// The bound assumes MiniKV's own Go memory limit.
		ts.cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "GOMEMLIMIT=") || strings.HasPrefix(kv, "GOGC=")
		})
		start := time.Now()
		if err := ts.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = ts.cmd.Wait(); close(ts.exited) }()
		go ts.sample()
		up := false
	wait:
		for range 6000 { // recovery of a large directory takes a while
			if c, err := net.Dial("tcp", ts.addr); err == nil {
				c.Close()
				up = true
				break
			}
			select {
			case <-ts.exited:
				break wait
			case <-time.After(10 * time.Millisecond):
			}
		}
		if up {
			ts.up = time.Since(start)
			t.Cleanup(ts.kill) // a failing test leaves no server behind
			return ts
		}
		ts.kill()
		if attempt == 2 {
			t.Fatalf("server did not start: %s", ts.out.String())
		}
	}
}

// sample records the largest VmRSS (and its parts) every 20 ms; VmHWM
// (the kernel's own peak) is read at the end as well and catches what
// falls between samples.
func (ts *tieredServer) sample() {
	defer close(ts.done)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		st := ts.status()
		ts.mu.Lock()
		for k, v := range st {
			ts.most[k] = max(ts.most[k], v)
		}
		ts.mu.Unlock()
		select {
		case <-ts.quit:
			return
		case <-ts.exited:
			return
		case <-tick.C:
		}
	}
}

// status returns the memory fields of the server's /proc/PID/status
// (VmRSS, VmHWM, RssAnon, RssFile, RssShmem) in bytes.
func (ts *tieredServer) status() map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", ts.cmd.Process.Pid))
	if err != nil {
		return out
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == "kB" && (strings.HasPrefix(f[0], "Vm") || strings.HasPrefix(f[0], "Rss")) {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			out[strings.TrimSuffix(f[0], ":")] = n << 10
		}
	}
	return out
}

// io returns a field of the server's /proc/PID/io (wchar, write_bytes,
// ...), or -1 when it cannot be read.
func (ts *tieredServer) io(field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", ts.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ": "); ok && k == field {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// cpu returns the server's user+system CPU time so far (USER_HZ 100).
func (ts *tieredServer) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", ts.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	_, rest, _ := bytes.Cut(b, []byte(") "))
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// peak returns the largest RSS so far, VmHWM (or the largest VmRSS
// sampled, if larger or VmHWM is missing), and the largest samples of its
// parts: anonymous memory (the Go runtime), file pages mapped (the
// engine's mapped write-ahead logs) and shared memory.
func (ts *tieredServer) peak() (int64, string) {
	hwm := ts.status()["VmHWM"]
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return max(hwm, ts.most["VmRSS"]), fmt.Sprintf("largest samples: anon %.1f MiB, file %.1f MiB, shmem %.1f MiB",
		mib(ts.most["RssAnon"]), mib(ts.most["RssFile"]), mib(ts.most["RssShmem"]))
}

// stop sends SIGTERM and waits for a clean exit.
func (ts *tieredServer) stop(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	_ = ts.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-ts.exited:
	case <-time.After(60 * time.Second):
		ts.kill()
		t.Fatalf("server did not stop within 60 s of SIGTERM: %s", ts.out.String())
	}
	took := time.Since(start)
	if !ts.cmd.ProcessState.Success() {
		t.Fatalf("server exited with %v: %s", ts.cmd.ProcessState, ts.out.String())
	}
	return took
}

func (ts *tieredServer) kill() {
	_ = ts.cmd.Process.Kill() // by PID: only the process this test started
	<-ts.exited
	select {
	case <-ts.quit:
	default:
		close(ts.quit)
	}
	<-ts.done
}

func tieredKey(i int) string { return fmt.Sprintf("tier:%07d", i) }

// tieredNoise is 1 MiB of pseudo-random bytes, the same in every run.
var tieredNoise = sync.OnceValue(func() []byte {
	r := rand.New(rand.NewPCG(0x7e1ed, 13))
	b := make([]byte, 1<<20)
	for j := 0; j < len(b); j += 8 {
		binary.LittleEndian.PutUint64(b[j:], r.Uint64())
	}
	return b
})

// tieredValue returns the value of key i in two parts: the index (8
// bytes), then a window of tieredNoise at an offset drawn from i. Every
// value differs, none compresses, the test holds none of them, and making
// or checking one costs a copy, not a generator run per byte (which the
// race detector would make the slowest part of the test).
func tieredValue(i int) (head [8]byte, body []byte) {
	binary.LittleEndian.PutUint64(head[:], uint64(i))
	noise := tieredNoise()
	span := len(noise) - (tieredValueSize - len(head))
	off := int(uint64(i) * 0x9e3779b97f4a7c15 % uint64(span))
	return head, noise[off : off+tieredValueSize-len(head)]
}

// tieredParallel runs f on conns connections to addr, each over its own
// share of the keys [0, n), and returns the bytes the server sent.
func tieredParallel(t *testing.T, addr string, n, conns int, f func(rw *bufio.ReadWriter, lo, hi int) error) int64 {
	t.Helper()
	var wg sync.WaitGroup
	var received atomic.Int64
	errs := make(chan error, conns)
	for c := range conns {
		lo, hi := c*n/conns, (c+1)*n/conns
		wg.Go(func() {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(10 * time.Minute))
			cr := &countingReader{r: nc}
			rw := bufio.NewReadWriter(bufio.NewReaderSize(cr, 64<<10), bufio.NewWriterSize(nc, 64<<10))
			if err := f(rw, lo, hi); err != nil {
				errs <- err
			}
			received.Add(cr.n)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return received.Load()
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// tieredDepth is how many requests a connection sends before it reads
// their replies.
const tieredDepth = 8

// tieredWrite sets keys [lo, hi), tieredDepth at a time.
func tieredWrite(rw *bufio.ReadWriter, lo, hi int) error {
	for i := lo; i < hi; i += tieredDepth {
		end := min(i+tieredDepth, hi)
		for j := i; j < end; j++ {
			head, body := tieredValue(j)
			fmt.Fprintf(rw, "set %s 0 0 %d\r\n", tieredKey(j), tieredValueSize)
			rw.Write(head[:])
			rw.Write(body)
			rw.WriteString("\r\n")
		}
		if err := rw.Flush(); err != nil {
			return err
		}
		for j := i; j < end; j++ {
			line, err := rw.ReadString('\n')
			if err != nil {
				return fmt.Errorf("set %s: %w", tieredKey(j), err)
			}
			if line != "STORED\r\n" {
				return fmt.Errorf("set %s: %q", tieredKey(j), line)
			}
		}
	}
	return nil
}

// tieredRead gets keys [lo, hi), tieredDepth at a time, and compares each
// value with what tieredValue wrote.
func tieredRead(rw *bufio.ReadWriter, lo, hi int) error {
	got := make([]byte, tieredValueSize+2)
	for i := lo; i < hi; i += tieredDepth {
		end := min(i+tieredDepth, hi)
		for j := i; j < end; j++ {
			fmt.Fprintf(rw, "get %s\r\n", tieredKey(j))
		}
		if err := rw.Flush(); err != nil {
			return err
		}
		for j := i; j < end; j++ {
			line, err := rw.ReadString('\n')
			if err != nil {
				return fmt.Errorf("get %s: %w", tieredKey(j), err)
			}
			if head := fmt.Sprintf("VALUE %s 0 %d\r\n", tieredKey(j), tieredValueSize); line != head {
				return fmt.Errorf("get %s: %q, want %q", tieredKey(j), line, head)
			}
			if _, err := io.ReadFull(rw, got); err != nil {
				return fmt.Errorf("get %s: %w", tieredKey(j), err)
			}
			head, body := tieredValue(j)
			if !bytes.Equal(got[:len(head)], head[:]) || !bytes.Equal(got[len(head):tieredValueSize], body) ||
				string(got[tieredValueSize:]) != "\r\n" {
				return fmt.Errorf("get %s: the value read differs from the value written", tieredKey(j))
			}
			if end, err := rw.ReadString('\n'); err != nil || end != "END\r\n" {
				return fmt.Errorf("get %s: %q after the value (%v)", tieredKey(j), end, err)
			}
		}
	}
	return nil
}

// tieredStats returns the server's memcached stats.
func tieredStats(t *testing.T, addr string) map[string]int64 {
	t.Helper()
	c := dialLines(t, addr)
	out := map[string]int64{}
	for _, line := range c.until("stats\r\n", "END") {
		if f := strings.Fields(line); len(f) == 3 {
			out[f[1]], _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
	return out
}

// dirBytes returns the apparent size of the files under dir and the disk
// space they take.
func dirBytes(t *testing.T, dir string) (size, used int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		size += fi.Size()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			used += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return size, used
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// TestTieredLargerThanMemory: with item memory far below the data set, a
// durable server takes every write, serves every value back byte for byte
// (almost all from disk), does so again after a restart, and its peak RSS
// stays within tieredRSSBound. The short version writes 256 MiB with -m 16;
// with -soak (make soak), 1 GiB with -m 64 as issue 13 asks. The log gives
// the figures behind the bound and the engine's costs: load throughput,
// bytes written to files per byte of payload, data directory size,
// restart time.
func TestTieredLargerThanMemory(t *testing.T) {
	total, memMB := int64(256<<20), 16
	if *soak {
		total, memMB = 1<<30, 64
	}
	if testing.Short() {
		t.Skip("writes hundreds of MiB to disk")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to measure the server's RSS")
	}
	n := int(total / tieredValueSize)
	payload := int64(n) * tieredValueSize
	bound := tieredRSSBound(int64(memMB) << 20)
	bin := tieredBinary(t)
	dir := filepath.Join(t.TempDir(), "data")
	const conns = 4

	ts := startTiered(t, bin, dir, memMB)
	start, cpu0 := time.Now(), ts.cpu()
	tieredParallel(t, ts.addr, n, conns, tieredWrite)
	load, loadCPU := time.Since(start), ts.cpu()-cpu0
	loadWchar := ts.io("wchar")
	peak, parts := ts.peak()
	t.Logf("load: %d values of %d B (%.0f MiB) with -m %d in %v: %.1f MiB/s, server CPU %v; peak RSS so far %.1f MiB (%s)",
		n, tieredValueSize, mib(payload), memMB, load.Round(time.Millisecond), mib(payload)/load.Seconds(),
		loadCPU.Round(10*time.Millisecond), mib(peak), parts)

	start = time.Now()
	sent := tieredParallel(t, ts.addr, n, conns, tieredRead)
	t.Logf("read back: %v", time.Since(start).Round(time.Millisecond))
	st := tieredStats(t, ts.addr)
	inMemory := int64(memMB) << 20 / tieredValueSize
	if hits := st["disk_hits"]; hits < int64(n)-inMemory {
		t.Errorf("disk_hits = %d after reading %d values with room for at most %d in memory: reads did not come from disk",
			hits, n, inMemory)
	}
	if got := st["get_hits"]; got != int64(n) {
		t.Errorf("get_hits = %d, want %d", got, n)
	}
	var disk []string
	for k, v := range st {
		if strings.HasPrefix(k, "disk_") {
			disk = append(disk, fmt.Sprintf("%s %d", k, v))
		}
	}
	slices.Sort(disk)
	wchar, dirtied, cancelled := ts.io("wchar"), ts.io("write_bytes"), ts.io("cancelled_write_bytes")
	peak1, parts := ts.peak()
	stopTook := ts.stop(t)
	size, used := dirBytes(t, dir)
	t.Logf("first run: peak RSS %.1f MiB (bound %.0f MiB; %s); curr_items %d; %s; stop took %v",
		mib(peak1), mib(bound), parts, st["curr_items"], strings.Join(disk, ", "), stopTook.Round(time.Millisecond))
	if wchar >= 0 {
		// wchar counts every write(2), replies too: take away what the
		// clients received to leave what went to files (the set replies
		// and log lines are a few KiB). A mapped write-ahead log is written
		// by memcpy, not write(2): then wchar leaves it out (about 1 x the
		// payload), and write_bytes, the page cache pages the process
		// dirtied, counts it. cancelled_write_bytes are dirtied pages of
		// files deleted before the kernel wrote them back.
		files := wchar - sent
		t.Logf("write(2) to files: %.0f MiB by the end of the load (%.2f x the payload), %.0f MiB by the stop (%.2f x); "+
			"write_bytes %.0f MiB (%.2f x), cancelled_write_bytes %.0f MiB", mib(loadWchar),
			float64(loadWchar)/float64(payload), mib(files), float64(files)/float64(payload), mib(dirtied),
			float64(dirtied)/float64(payload), mib(cancelled))
	}
	t.Logf("data directory: %.0f MiB (%.0f MiB of blocks) for %.0f MiB of values: %.3f x",
		mib(size), mib(used), mib(payload), float64(size)/float64(payload))
	if peak1 > bound {
		t.Errorf("peak RSS %.1f MiB with -m %d and %.0f MiB on disk; the documented bound is %.0f MiB",
			mib(peak1), memMB, mib(payload), mib(bound))
	}

	ts = startTiered(t, bin, dir, memMB)
	t.Logf("restart: accepting after %v (%s)", ts.up.Round(time.Millisecond), recoveredLine(ts.out.String()))
	start = time.Now()
	tieredParallel(t, ts.addr, n, conns, tieredRead)
	t.Logf("read back after the restart: %v", time.Since(start).Round(time.Millisecond))
	peak2, parts := ts.peak()
	ts.stop(t)
	t.Logf("second run: peak RSS %.1f MiB (%s)", mib(peak2), parts)
	if peak2 > bound {
		t.Errorf("after the restart, peak RSS %.1f MiB with -m %d and %.0f MiB on disk; the documented bound is %.0f MiB",
			mib(peak2), memMB, mib(payload), mib(bound))
	}
}

// recoveredLine returns the fields of the server's "data directory
// recovered" log line.
func recoveredLine(out string) string {
	for line := range strings.Lines(out) {
		if strings.Contains(line, "data directory recovered") {
			if _, rest, ok := strings.Cut(line, "took="); ok {
				return "took=" + strings.TrimSpace(rest)
			}
		}
	}
	return "no recovery line in the log"
}
