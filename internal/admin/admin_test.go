package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/durable"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

func TestHealthz(t *testing.T) {
	e := startEnv(t, envConfig{})
	if code, body := e.get(t, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("GET /healthz = %d %q, want 200 \"ok\\n\"", code, body)
	}
	if code, _ := e.get(t, "/healthz?verbose=1"); code != http.StatusOK {
		t.Errorf("GET /healthz?verbose=1 = %d, want 200", code)
	}

	// Once the data port shuts down, liveness turns 503 (the admin port
	// itself is still up, so the probe sees why).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if code, body := e.get(t, "/healthz"); code != http.StatusServiceUnavailable || body != "not serving\n" {
		t.Errorf("GET /healthz after Shutdown = %d %q, want 503 \"not serving\\n\"", code, body)
	}
	if code, body := e.get(t, "/doctor"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"name": "listeners"`) {
		t.Errorf("GET /doctor after Shutdown = %d %s, want 503 naming listeners", code, body)
	}
}

func TestUnknownPathAndMethod(t *testing.T) {
	e := startEnv(t, envConfig{})
	if code, _ := e.get(t, "/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope = %d, want 404", code)
	}
	resp, err := http.Post(e.url+"/healthz", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz = %d, want 405", resp.StatusCode)
	}
}

func TestPProfOnlyWithFlag(t *testing.T) {
	paths := []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=1", "/debug/pprof/heap"}
	off := startEnv(t, envConfig{})
	for _, p := range paths {
		if code, _ := off.get(t, p); code != http.StatusNotFound {
			t.Errorf("without PProf: GET %s = %d, want 404", p, code)
		}
	}
	on := startEnv(t, envConfig{admin: Config{PProf: true}})
	for _, p := range paths {
		if code, body := on.get(t, p); code != http.StatusOK {
			t.Errorf("with PProf: GET %s = %d, want 200 (%.200s)", p, code, body)
		}
	}
}

func decodeReport(t *testing.T, body string) Report {
	t.Helper()
	var r Report
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("/doctor body is not a Report: %v\n%s", err, body)
	}
	return r
}

func TestDoctorHealthy(t *testing.T) {
	e := startEnv(t, envConfig{})
	c := dialMC(t, e.addr)
	c.do("set k 0 0 1\r\nv\r\n", "STORED")

	code, body := e.get(t, "/doctor")
	if code != http.StatusOK {
		t.Fatalf("GET /doctor = %d, want 200\n%s", code, body)
	}
	r := decodeReport(t, body)
	var names []string
	for _, c := range r.Checks {
		names = append(names, c.Name)
		if !c.OK {
			t.Errorf("check %+v failed on an idle server", c)
		}
	}
	want := []string{CheckListeners, CheckMemory, CheckShardBalance, CheckEvictionRate, CheckDeadBytes}
	if r.Status != "ok" || fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("/doctor = status %q checks %v, want ok %v", r.Status, names, want)
	}
	if !strings.Contains(r.Checks[0].Detail, e.addr) {
		t.Errorf("listeners detail %q does not name %s", r.Checks[0].Detail, e.addr)
	}
}

// TestDeadBytesShown: overwrites leave dead segment bytes, and /doctor,
// /metrics and the memcached port's stats all show the store's figures.
func TestDeadBytesShown(t *testing.T) {
	e := startEnv(t, envConfig{})
	c := dialMC(t, e.addr)
	val := strings.Repeat("v", 4000)
	for range 100 {
		c.do("set k 0 0 4000\r\n"+val+"\r\n", "STORED")
	}
	st := e.store.Stats()
	if st.DeadBytes < 4000 || st.DeadBytes > st.SegmentBytes {
		t.Fatalf("after 100 overwrites of 4000 B: %d of %d segment bytes dead", st.DeadBytes, st.SegmentBytes)
	}
	_, body := e.get(t, "/doctor")
	var dead *Check
	for _, c := range decodeReport(t, body).Checks {
		if c.Name == CheckDeadBytes {
			dead = &c
		}
	}
	if want := fmt.Sprintf("%d of %d segment bytes dead", st.DeadBytes, st.SegmentBytes); dead == nil || !dead.OK ||
		!strings.HasPrefix(dead.Detail, want) || dead.Value != float64(st.DeadBytes)/float64(st.SegmentBytes) {
		t.Errorf("/doctor's %s check = %+v, want ok, %q...", CheckDeadBytes, dead, want)
	}
	mfs := scrape(t, e)
	if got := value(t, mfs, "memcached_dead_bytes"); got != float64(st.DeadBytes) {
		t.Errorf("memcached_dead_bytes = %v, want %d", got, st.DeadBytes)
	}
	if got := value(t, mfs, "memcached_segment_bytes"); got != float64(st.SegmentBytes) {
		t.Errorf("memcached_segment_bytes = %v, want %d", got, st.SegmentBytes)
	}
	stats := map[string]string{}
	for _, l := range c.do("stats\r\n", "END") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "STAT" {
			stats[f[1]] = f[2]
		}
	}
	if stats["dead_bytes"] != fmt.Sprint(st.DeadBytes) || stats["segment_bytes"] != fmt.Sprint(st.SegmentBytes) {
		t.Errorf("stats: dead_bytes %q segment_bytes %q, want %d and %d", stats["dead_bytes"], stats["segment_bytes"], st.DeadBytes, st.SegmentBytes)
	}
}

// TestDoctorMemoryPressure fills a small store past the high-water mark: the
// doctor answers 503 and lists the memory check first.
func TestDoctorMemoryPressure(t *testing.T) {
	const limit = 1 << 20
	e := startEnv(t, envConfig{store: store.Config{MemoryLimit: limit, MaxItemSize: 64 << 10}})
	val := make([]byte, 4000)
	for i := 0; e.store.Stats().Bytes < limit*97/100; i++ {
		if _, err := e.store.Store(store.ModeSet, fmt.Appendf(nil, "key:%d", i), val, 0, 0, 0); err != nil {
			t.Fatalf("Store #%d: %v", i, err)
		}
	}
	code, body := e.get(t, "/doctor")
	if code != http.StatusServiceUnavailable {
		t.Fatalf("GET /doctor on a full store = %d, want 503\n%s", code, body)
	}
	r := decodeReport(t, body)
	if r.Status != "fail" || r.Checks[0].Name != CheckMemory || r.Checks[0].OK {
		t.Fatalf("/doctor = %+v, want status fail with a failing memory check first", r)
	}
	if r.Checks[0].Value < 0.95 || r.Checks[0].Threshold != DefaultMemoryHighWater {
		t.Errorf("memory check = %+v, want value >= 0.95 and threshold %v", r.Checks[0], DefaultMemoryHighWater)
	}
	seenOK := false
	for _, c := range r.Checks {
		if c.OK {
			seenOK = true
		} else if seenOK {
			t.Errorf("failing check %q listed after a passing one: %+v", c.Name, r.Checks)
		}
	}
}

func TestShardBalanceCheck(t *testing.T) {
	for _, tc := range []struct {
		st     store.Stats
		wantOK bool
	}{
		{store.Stats{Shards: 16, Items: 0}, true},                                              // empty
		{store.Stats{Shards: 16, Items: 100, MinShardItems: 0, MaxShardItems: 30}, true},       // too few to judge
		{store.Stats{Shards: 16, Items: 16000, MinShardItems: 900, MaxShardItems: 1100}, true}, // balanced
		{store.Stats{Shards: 16, Items: 16000, MinShardItems: 100, MaxShardItems: 8000}, false},
		{store.Stats{Shards: 16, Items: 16000, MinShardItems: 0, MaxShardItems: 16000}, false},
	} {
		got := shardBalanceCheck(tc.st, DefaultMaxShardImbalance)
		if got.OK != tc.wantOK || got.Name != CheckShardBalance || got.Detail == "" {
			t.Errorf("shardBalanceCheck(%+v) = %+v, want OK=%v", tc.st, got, tc.wantOK)
		}
	}
}

func TestMemoryCheck(t *testing.T) {
	for _, tc := range []struct {
		bytes, limit int64
		wantOK       bool
	}{
		{0, 1000, true},
		{940, 1000, true},
		{950, 1000, false},
		{1000, 1000, false},
		{5, 0, true}, // no limit
	} {
		got := memoryCheck(store.Stats{Bytes: tc.bytes, Limit: tc.limit}, DefaultMemoryHighWater)
		if got.OK != tc.wantOK {
			t.Errorf("memoryCheck(bytes %d, limit %d) = %+v, want OK=%v", tc.bytes, tc.limit, got, tc.wantOK)
		}
	}
}

func TestEvictionRate(t *testing.T) {
	a := &Server{}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		at     time.Duration // since t0
		uptime time.Duration
		ev     uint64
		want   float64
	}{
		{0, 10 * time.Second, 500, 50},                   // first call: since start-up
		{100 * time.Millisecond, 0, 510, 510 / 10.1},     // too soon for a new sample: still from start-up
		{2 * time.Second, 0, 2500, 2000 / 2.0},           // from the first sample
		{2100 * time.Millisecond, 0, 2500, 2000 / 2.1},   // window stays >= 1s
		{5 * time.Second, 0, 2500, 0},                    // quiet for 3s
		{6 * time.Second, 0, 100, 0},                     // counter went back: no negative rate
		{8 * time.Second, 0, 300, 200 / float64(2)},      // recovers
		{8500 * time.Millisecond, 0, 300, 200 / 2.5},     // ...over >= 1s
		{20 * time.Second, 0, 300 + 12*5000, 5000 / 1.0}, // a burst: 5000/s over 12s
	}
	for i, s := range steps {
		got := a.evictionRate(s.ev, s.uptime, t0.Add(s.at))
		if diff := got - s.want; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("step %d: evictionRate(%d at %v) = %v, want %v", i, s.ev, s.at, got, s.want)
		}
	}
	if c := evictionRateCheck(5000, DefaultMaxEvictionRate); c.OK {
		t.Errorf("evictionRateCheck(5000) = %+v, want failing", c)
	}
}

func TestServeShutdown(t *testing.T) {
	e := startEnv(t, envConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.admin.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case err := <-e.adminErr:
		if err != ErrServerClosed {
			t.Fatalf("Serve returned %v, want ErrServerClosed", err)
		}
		e.adminErr <- err // for the cleanup's check
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after Shutdown")
	}
	if _, err := http.Get(e.url + "/healthz"); err == nil {
		t.Error("admin port still answers after Shutdown")
	}
}

// TestDiskChecks: the durable-mode checks fail on what they watch and pass
// otherwise.
func TestDiskChecks(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := sample{at: t0, stall: time.Second, syncs: 10, syncTime: 100 * time.Millisecond}
	quiet := sample{at: t0.Add(10 * time.Second), stall: time.Second, syncs: 20, syncTime: 200 * time.Millisecond}
	busy := sample{at: t0.Add(10 * time.Second), stall: 4 * time.Second, syncs: 12, syncTime: 5100 * time.Millisecond}
	if c := stallCheck(old, quiet, DefaultMaxStallShare); !c.OK || c.Value != 0 {
		t.Errorf("no stall: %+v", c)
	}
	if c := stallCheck(old, busy, DefaultMaxStallShare); c.OK || c.Value != 0.3 {
		t.Errorf("3 s of stalls in 10 s: %+v, want failing at 0.3", c)
	}
	if c := fsyncCheck(old, quiet, 20*time.Millisecond, DefaultMaxFsyncLatency); !c.OK || c.Value != 0.01 {
		t.Errorf("10 ms fsyncs: %+v", c)
	}
	if c := fsyncCheck(old, busy, 3*time.Second, DefaultMaxFsyncLatency); c.OK || c.Value != 2.5 {
		t.Errorf("2.5 s fsyncs: %+v, want failing", c)
	}
	if c := fsyncCheck(old, old, 0, DefaultMaxFsyncLatency); !c.OK {
		t.Errorf("no fsync in the window: %+v", c)
	}
	if c := diskErrorsCheck(store.DiskStats{Durable: true}); !c.OK {
		t.Errorf("no error: %+v", c)
	}
	if c := diskErrorsCheck(store.DiskStats{Durable: true, WriteErr: errors.New("no space left on device"), FailedSince: time.Now()}); c.OK ||
		!strings.Contains(c.Detail, "no space left") {
		t.Errorf("log write failed: %+v", c)
	}
	if c := diskErrorsCheck(store.DiskStats{Durable: true, ReadErrors: 2}); c.OK {
		t.Errorf("read errors: %+v", c)
	}
	a := &Server{cfg: Config{DataDir: t.TempDir(), MinDiskFree: DefaultMinDiskFree}}
	if c := a.diskSpaceCheck(store.DiskStats{Durable: true, DiskUsage: store.DiskUsage{Bytes: 1 << 20}}); c.Value <= 0 || c.Value > 1 {
		t.Errorf("disk space of the temp dir: %+v", c)
	}
	a.cfg.MinDiskFree = 1.01 // more than everything: must fail
	if c := a.diskSpaceCheck(store.DiskStats{Durable: true}); c.OK {
		t.Errorf("free share below the threshold: %+v", c)
	}
}

// TestNoMemoryLimit: without a memory limit (Redis's maxmemory 0) the
// doctor's memory check passes and says so, with no ratio to divide by
// zero, and /metrics reports a limit of 0, as memcached's stats do.
func TestNoMemoryLimit(t *testing.T) {
	e := startEnv(t, envConfig{store: store.Config{MemoryLimit: store.NoMemoryLimit}})
	if _, err := e.store.Store(store.ModeSet, []byte("k"), make([]byte, 4000), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	code, body := e.get(t, "/doctor")
	if code != http.StatusOK {
		t.Fatalf("GET /doctor without a memory limit = %d\n%s", code, body)
	}
	for _, c := range decodeReport(t, body).Checks {
		if c.Name == CheckMemory && (!c.OK || c.Detail != "no memory limit" || c.Value != 0) {
			t.Errorf("memory check without a limit = %+v", c)
		}
	}
	if _, body := e.get(t, "/metrics"); !strings.Contains(body, "\nmemcached_limit_bytes 0\n") {
		t.Errorf("/metrics lacks memcached_limit_bytes 0")
	}
}

// TestReadyzFollowsTheDisk: /readyz is 200 while the durable log takes
// writes, 503 naming the error while the disk is failed (writes refused),
// while /healthz stays 200 (the process is alive), and 200 again once the
// disk takes writes, with /metrics saying so; and 503 "not serving" once
// shutdown begins. The log's disk is lsm's in-memory
// filesystem, made to fail every write to the log.
func TestReadyzFollowsTheDisk(t *testing.T) {
	fs := vfs.NewMem()
	l, err := durable.Open("/data", lsm.Options{FS: fs, Sync: lsm.SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() }) // after the env's: the failed log's error is expected
	e := startEnv(t, envConfig{disk: l})
	if _, err := e.store.Store(store.ModeSet, []byte("before"), []byte("v"), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Sync(); err != nil {
		t.Fatal(err)
	}
	if code, body := e.get(t, "/readyz"); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("GET /readyz = %d %q, want 200 \"ok\\n\"", code, body)
	}

	fs.SetInjector(func(op vfs.Op, name string) error {
		if op == vfs.OpWrite && strings.HasSuffix(name, ".log") {
			return vfs.ErrInjected
		}
		return nil
	})
	if _, err := e.store.Store(store.ModeSet, []byte("after"), []byte("v"), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Sync(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Sync with the log failing = %v, want the injected error", err)
	}
	if code, body := e.get(t, "/readyz"); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "writes refused, the disk failed: ") {
		t.Errorf("GET /readyz with the log failing = %d %q, want 503 \"writes refused, the disk failed: ...\"", code, body)
	}
	if code, _ := e.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz with the log failing = %d, want 200 (liveness)", code)
	}
	if _, body := e.get(t, "/metrics"); !strings.Contains(body, "memcached_disk_writes_refused 1\n") ||
		!strings.Contains(body, "memcached_disk_failures_total 1\n") {
		t.Errorf("/metrics with the log failing lacks memcached_disk_writes_refused 1 or memcached_disk_failures_total 1")
	}

	// The disk takes writes again: ready again, without a restart.
	fs.SetInjector(nil)
	if err := e.store.RecoverDisk(); err != nil {
		t.Fatalf("RecoverDisk with the disk back = %v", err)
	}
	if code, body := e.get(t, "/readyz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /readyz after recovery = %d %q, want 200 \"ok\\n\"", code, body)
	}
	if _, body := e.get(t, "/metrics"); !strings.Contains(body, "memcached_disk_writes_refused 0\n") ||
		!strings.Contains(body, "memcached_disk_recoveries_total 1\n") {
		t.Errorf("/metrics after recovery lacks memcached_disk_writes_refused 0 or memcached_disk_recoveries_total 1")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if code, body := e.get(t, "/readyz"); code != http.StatusServiceUnavailable || body != "not serving\n" {
		t.Errorf("GET /readyz after Shutdown = %d %q, want 503 \"not serving\\n\"", code, body)
	}
}
