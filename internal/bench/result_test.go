package bench

import (
	"math"
	"testing"
	"time"
)

func TestPercentiles(t *testing.T) {
	rec := NewRecorder()
	var batch []sample
	for i := 1; i <= 10000; i++ {
		batch = append(batch, sample{op: OpGet, lat: time.Duration(i) * time.Microsecond})
	}
	rec.record(0, batch[:5000])
	rec.record(5, batch[5000:])
	l := Summarize(rec.Merged()[OpGet])
	for _, tt := range []struct {
		name      string
		got, want time.Duration
	}{
		{"p50", l.P50, 5000 * time.Microsecond},
		{"p90", l.P90, 9000 * time.Microsecond},
		{"p99", l.P99, 9900 * time.Microsecond},
		{"p99.9", l.P999, 9990 * time.Microsecond},
		{"max", l.Max, 10000 * time.Microsecond},
	} {
		// Three significant digits: within 0.1% (plus one bucket).
		if d := math.Abs(float64(tt.got-tt.want)) / float64(tt.want); d > 0.002 {
			t.Errorf("%s = %v, want %v ±0.2%%", tt.name, tt.got, tt.want)
		}
	}
	if l.Count != 10000 {
		t.Errorf("Count = %d, want 10000", l.Count)
	}
}

// TestThroughputIsWallClock guards the seed's lesson: with 8 connections
// in flight, count/sum(latencies) understates ops/s 8 times; the harness
// must divide by wall-clock time.
func TestThroughputIsWallClock(t *testing.T) {
	// Eight connections, each 1000 requests of 1 ms back to back: the sum
	// of latencies is 8 s, the wall clock 1 s.
	rec := NewRecorder()
	for conn := range 8 {
		batch := make([]sample, 1000)
		for i := range batch {
			batch[i] = sample{op: OpGet, lat: time.Millisecond}
		}
		rec.record(conn, batch)
	}
	r := &Result{Ops: 8000, Wall: time.Second, hist: rec.Merged()}
	r.finish()
	sumLat := time.Duration(r.All.Count) * r.All.Mean
	if naive := float64(r.All.Count) / sumLat.Seconds(); math.Abs(naive-1000) > 1 {
		t.Fatalf("count/sum(latencies) = %v, want 1000 (test setup)", naive)
	}
	if r.OpsPerSec != 8000 {
		t.Errorf("OpsPerSec = %v, want 8000 (requests over wall clock, not count/sum(latencies))", r.OpsPerSec)
	}
	if got := OpsPerSecond(1000, 250*time.Millisecond); got != 4000 {
		t.Errorf("OpsPerSecond(1000, 250ms) = %v, want 4000", got)
	}
	if got := OpsPerSecond(1000, 0); got != 0 {
		t.Errorf("OpsPerSecond(1000, 0) = %v, want 0", got)
	}
}

func TestMergeAddsPhases(t *testing.T) {
	a := &Result{Target: "x", Label: "write", Ops: 1000, Wall: 100 * time.Millisecond, Hits: 1, Errors: 2}
	b := &Result{Target: "x", Label: "write", Ops: 3000, Wall: 300 * time.Millisecond, Misses: 4, FirstErr: "boom"}
	m := Merge(a, b)
	if m.Ops != 4000 || m.Wall != 400*time.Millisecond || m.Hits != 1 || m.Misses != 4 || m.Errors != 2 || m.FirstErr != "boom" {
		t.Errorf("Merge = %+v", m)
	}
	if m.OpsPerSec != 10000 {
		t.Errorf("Merge ops/s = %v, want 10000: all requests over the sum of the phases' wall clocks", m.OpsPerSec)
	}
	a.ServerCPU, b.ServerCPU = 3*time.Millisecond, 5*time.Millisecond
	if m := Merge(a, b); m.ServerCPUPerOp != 2 {
		t.Errorf("Merge server CPU per op = %v µs, want 2 (8 ms over 4000 requests)", m.ServerCPUPerOp)
	}
	if m := Merge(&Result{Ops: 10}); m.ServerCPUPerOp != 0 {
		t.Errorf("server CPU per op with the server's CPU unknown = %v, want 0", m.ServerCPUPerOp)
	}
}

func TestMedian(t *testing.T) {
	rs := []*Result{
		{OpsPerSec: 300, Errors: 0, All: Latency{P99: 30}, ServerCPUPerOp: 9},
		{OpsPerSec: 100, Errors: 5, FirstErr: "e", All: Latency{P99: 10}, ServerCPUPerOp: 7},
		{OpsPerSec: 200, Errors: 0, All: Latency{P99: 50}, ServerCPUPerOp: 8},
	}
	m := Median(rs)
	if m.ServerCPUPerOp != 8 {
		t.Errorf("Median server CPU per op = %v, want 8", m.ServerCPUPerOp)
	}
	if m.OpsPerSec != 200 || m.All.P99 != 30 {
		t.Errorf("Median: ops/s %v p99 %v, want 200 and 30", m.OpsPerSec, m.All.P99)
	}
	if m.Errors != 5 || m.FirstErr != "e" {
		t.Errorf("Median: errors %d %q, want the sum 5 and the first error", m.Errors, m.FirstErr)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median(4,1,3,2) = %v, want 2.5", got)
	}
	if lo, hi := Spread(rs); lo != 100 || hi != 300 {
		t.Errorf("Spread = %v..%v, want 100..300", lo, hi)
	}
}

func TestFormatting(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{humanCount(1234567), "1.23M"},
		{humanCount(12345), "12.3k"},
		{humanCount(999), "999"},
		{groupDigits(1234567.4), "1,234,567"},
		{groupDigits(999), "999"},
		{fmtDur(61200 * time.Nanosecond), "61.2µs"},
		{fmtDur(12345 * time.Microsecond), "12.35ms"},
		{fmtDur(0), "-"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
