package bench

import (
	"context"
	"fmt"
	"time"
)

// Variant is one point of a sweep: the connection count and pipeline depth
// a measurement runs at.
type Variant struct {
	Conns    int `json:"conns"`
	Pipeline int `json:"pipeline"`
}

// Job is what a benchmark does to each target: Prepare once per server
// (prefill), then Measure once per repetition and sweep point. Measure
// returns one Result per row of the report ("mixed", or "write" and
// "read").
type Job interface {
	Prepare(ctx context.Context, t Target, live *Live) (*Result, error)
	Measure(ctx context.Context, t Target, v Variant, live *Live) ([]*Result, error)
}

// Mixed is the classic load: Conns connections, each sending batches of
// Pipeline requests drawn from the Workload, for Requests requests or for
// Duration, after an unmeasured Warmup.
type Mixed struct {
	Workload *Workload
	Requests int64
	Duration time.Duration
	Rate     float64 // requests/s in total for an open-loop run; 0 is closed-loop
	Warmup   time.Duration
	Prefill  bool
	Timeout  time.Duration
}

// prefillConns and prefillDepth make prefill quick on every server: it is
// setup, not a measurement (its ops/s is reported for information only).
const (
	prefillConns = 8
	prefillDepth = 64
)

// Prepare sets every key of the keyspace once, when Prefill is on, so that
// gets hit from the first measured request on every server alike.
func (m *Mixed) Prepare(ctx context.Context, t Target, live *Live) (*Result, error) {
	if !m.Prefill {
		return nil, nil
	}
	return prefill(ctx, t, m.Workload, 0, m.Workload.Keys, m.Timeout, live)
}

func prefill(ctx context.Context, t Target, w *Workload, base, count int, timeout time.Duration, live *Live) (*Result, error) {
	n := min(prefillConns, count)
	s, err := Connect(ctx, t, w, n, timeout)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ph := Phase{Label: "prefill", Pipeline: prefillDepth, Keys: SplitKeys(base, count, n), Op: OpSet}
	stop := live.Start(t.Name+" prefill", s, int64(count), 0)
	r := s.Run(ctx, ph)
	stop()
	if r.Errors > 0 {
		return r, fmt.Errorf("bench: prefill of %s: %d errors, first: %s", t.Name, r.Errors, r.FirstErr)
	}
	return r, ctx.Err()
}

// Measure runs the warm-up and the measured phase over fresh connections.
func (m *Mixed) Measure(ctx context.Context, t Target, v Variant, live *Live) ([]*Result, error) {
	s, err := Connect(ctx, t, m.Workload, v.Conns, m.Timeout)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if m.Warmup > 0 {
		stop := live.Start(t.Name+" warm-up", s, 0, m.Warmup)
		s.Run(ctx, Phase{Label: "warmup", Pipeline: v.Pipeline, Duration: m.Warmup, Rate: m.Rate})
		stop()
	}
	stop := live.Start(t.Name, s, m.Requests, m.Duration)
	r := s.Run(ctx, Phase{Label: "mixed", Pipeline: v.Pipeline, Requests: m.Requests, Duration: m.Duration, Rate: m.Rate})
	stop()
	return []*Result{r}, ctx.Err()
}

// Phased is the seed harness's shape: Runs runs, each writing RunKeys keys
// of Workload.ValueSize bytes split across the connections, a barrier, then
// reading the same keys back, at each concurrency in turn. The run's keys
// are written and read before the next run starts (the per-run interleave:
// reading every run's keys after all writes would read evicted keys once
// the keyspace exceeds memory).
type Phased struct {
	Workload *Workload // Keys must be at least Runs*RunKeys
	Runs     int
	RunKeys  int
	Timeout  time.Duration
}

// Prepare does nothing: the write phase is the fill.
func (p *Phased) Prepare(context.Context, Target, *Live) (*Result, error) { return nil, nil }

// Measure runs every run's write and read phases at v.Conns connections and
// returns the merged "write" and "read" rows. ops/s of a row is all its
// requests over the sum of its phases' wall-clock times.
func (p *Phased) Measure(ctx context.Context, t Target, v Variant, live *Live) ([]*Result, error) {
	s, err := Connect(ctx, t, p.Workload, v.Conns, p.Timeout)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var writes, reads []*Result
	for run := range p.Runs {
		keys := SplitKeys(run*p.RunKeys, p.RunKeys, v.Conns)
		label := fmt.Sprintf("%s run %d/%d", t.Name, run+1, p.Runs)
		stop := live.Start(label+" write", s, int64(p.RunKeys), 0)
		writes = append(writes, s.Run(ctx, Phase{Label: "write", Pipeline: v.Pipeline, Keys: keys, Op: OpSet}))
		stop()
		// Run returns only when every connection has finished: the barrier.
		stop = live.Start(label+" read", s, int64(p.RunKeys), 0)
		reads = append(reads, s.Run(ctx, Phase{Label: "read", Pipeline: v.Pipeline, Keys: keys, Op: OpGet}))
		stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return []*Result{Merge(writes...), Merge(reads...)}, nil
}
