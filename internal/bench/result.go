package bench

import (
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Result is what one measured phase produced against one server.
//
// OpsPerSec is completed requests divided by the wall-clock time of the
// phase, from the moment the first request was sent to the moment the last
// reply was read. It is never count/sum(latencies): that formula only
// equals throughput for one connection with nothing between requests, and
// overstates N connections by up to N times.
type Result struct {
	Target    string        `json:"target"`
	Label     string        `json:"workload"` // "mixed", or "write"/"read" for the seed shapes
	Conns     int           `json:"conns"`
	Pipeline  int           `json:"pipeline"`
	Ops       int64         `json:"ops"`
	Wall      time.Duration `json:"wall_ns"`
	OpsPerSec float64       `json:"ops_per_sec"`
	Hits      int64         `json:"hits"`
	Misses    int64         `json:"misses"`
	Errors    int64         `json:"errors"`
	FirstErr  string        `json:"first_error,omitempty"`
	Evictions int64         `json:"evictions"`               // items the server evicted during the phase; -1 unknown
	ClientCPU time.Duration `json:"client_cpu_ns"`           // user+system time of this process
	ServerCPU time.Duration `json:"server_cpu_ns,omitempty"` // of a server this process started; 0 when unknown
	// OtherCPU is what the rest of the machine used during the phase
	// (everything but this process and the server it started): the
	// disturbance on a shared machine. It includes the server's CPU when
	// that is unknown.
	OtherCPU time.Duration `json:"other_cpu_ns,omitempty"`
	// ServerCPUPerOp is ServerCPU over Ops: the server's CPU time per
	// request, in µs. On a machine where the load generator takes a core,
	// throughput says little about the server; this says what a request
	// costs it. 0 when the server's CPU is unknown.
	ServerCPUPerOp float64 `json:"server_cpu_per_op_us,omitempty"`
	All            Latency `json:"latency"`
	Get            Latency `json:"get"`
	Set            Latency `json:"set"`
	// Servers is a pooled target's share of each server (-s a,b,c --hash).
	Servers []ServerOps `json:"servers,omitempty"`

	hist [numOps]*hdrhistogram.Histogram
}

// OpsPerSecond is the honest throughput formula: completed requests over
// wall-clock time.
func OpsPerSecond(ops int64, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return float64(ops) / wall.Seconds()
}

// HitRate is hits over gets that got an answer, or 0 with no gets.
func (r *Result) HitRate() float64 {
	if r.Hits+r.Misses == 0 {
		return 0
	}
	return float64(r.Hits) / float64(r.Hits+r.Misses)
}

// ClientCores is the client's CPU use in cores during the phase; close to
// the number of cores means the client, not the server, set the pace.
func (r *Result) ClientCores() float64 { return cores(r.ClientCPU, r.Wall) }

// OtherCores is the rest of the machine's CPU use in cores.
func (r *Result) OtherCores() float64 { return cores(r.OtherCPU, r.Wall) }

// ServerCores is the server's CPU use in cores, when known.
func (r *Result) ServerCores() float64 { return cores(r.ServerCPU, r.Wall) }

// cpuPerOp is cpu over ops, in µs; 0 when either is unknown.
func cpuPerOp(cpu time.Duration, ops int64) float64 {
	if cpu <= 0 || ops <= 0 {
		return 0
	}
	return float64(cpu.Nanoseconds()) / 1e3 / float64(ops)
}

func cores(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds()
}

// finish fills the derived fields from the counters and histograms.
func (r *Result) finish() {
	r.OpsPerSec = OpsPerSecond(r.Ops, r.Wall)
	r.ServerCPUPerOp = cpuPerOp(r.ServerCPU, r.Ops)
	all := hdrhistogram.New(histMin, histMax, histSigFigs)
	for op := range numOps {
		if r.hist[op] != nil {
			all.Merge(r.hist[op])
		}
	}
	r.All = Summarize(all)
	r.Get = Summarize(r.hist[OpGet])
	r.Set = Summarize(r.hist[OpSet])
}

// Merge adds the phases in rs into one Result: counts and wall times add,
// histograms merge. The seed shapes measure "write" as the sum over five
// runs of each run's write phase, which is this.
func Merge(rs ...*Result) *Result {
	if len(rs) == 0 {
		return &Result{}
	}
	out := &Result{Target: rs[0].Target, Label: rs[0].Label, Conns: rs[0].Conns, Pipeline: rs[0].Pipeline}
	for _, r := range rs {
		if r.Evictions < 0 || out.Evictions < 0 {
			out.Evictions = -1
		} else {
			out.Evictions += r.Evictions
		}
	}
	for op := range numOps {
		out.hist[op] = hdrhistogram.New(histMin, histMax, histSigFigs)
	}
	for _, r := range rs {
		out.Ops += r.Ops
		out.Wall += r.Wall
		out.Hits += r.Hits
		out.Misses += r.Misses
		out.Errors += r.Errors
		out.ClientCPU += r.ClientCPU
		out.ServerCPU += r.ServerCPU
		out.OtherCPU += r.OtherCPU
		if out.FirstErr == "" {
			out.FirstErr = r.FirstErr
		}
		out.Servers = addServers(out.Servers, r.Servers)
		for op := range numOps {
			if r.hist[op] != nil {
				out.hist[op].Merge(r.hist[op])
			}
		}
	}
	out.finish()
	for i := range out.Servers {
		out.Servers[i].OpsPerSec = OpsPerSecond(out.Servers[i].Ops, out.Wall)
	}
	return out
}

// addServers adds b's per-server counts to a's, server by server.
func addServers(a, b []ServerOps) []ServerOps {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = make([]ServerOps, len(b))
		for i := range b {
			a[i].Addr = b[i].Addr
		}
	}
	for i := range min(len(a), len(b)) {
		a[i].Ops += b[i].Ops
		a[i].Keys += b[i].Keys
		a[i].Errors += b[i].Errors
	}
	return a
}

// Median is the middle of repeated Results: each figure is the median of
// that figure over the runs (so the median p99 need not come from the same
// run as the median ops/s). Counts of errors are summed, not medianed: one
// failing run out of three must still show.
func Median(rs []*Result) *Result {
	if len(rs) == 0 {
		return &Result{}
	}
	med := func(f func(*Result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		return median(v)
	}
	dur := func(f func(*Result) time.Duration) time.Duration {
		return time.Duration(med(func(r *Result) float64 { return float64(f(r)) }))
	}
	lat := func(f func(*Result) Latency) Latency {
		return Latency{
			Count: int64(med(func(r *Result) float64 { return float64(f(r).Count) })),
			Mean:  dur(func(r *Result) time.Duration { return f(r).Mean }),
			P50:   dur(func(r *Result) time.Duration { return f(r).P50 }),
			P90:   dur(func(r *Result) time.Duration { return f(r).P90 }),
			P99:   dur(func(r *Result) time.Duration { return f(r).P99 }),
			P999:  dur(func(r *Result) time.Duration { return f(r).P999 }),
			Max:   dur(func(r *Result) time.Duration { return f(r).Max }),
		}
	}
	out := &Result{
		Target:    rs[0].Target,
		Label:     rs[0].Label,
		Conns:     rs[0].Conns,
		Pipeline:  rs[0].Pipeline,
		Ops:       int64(med(func(r *Result) float64 { return float64(r.Ops) })),
		Wall:      dur(func(r *Result) time.Duration { return r.Wall }),
		OpsPerSec: med(func(r *Result) float64 { return r.OpsPerSec }),
		Hits:      int64(med(func(r *Result) float64 { return float64(r.Hits) })),
		Misses:    int64(med(func(r *Result) float64 { return float64(r.Misses) })),
		Evictions: int64(med(func(r *Result) float64 { return float64(r.Evictions) })),
		ClientCPU: dur(func(r *Result) time.Duration { return r.ClientCPU }),
		ServerCPU: dur(func(r *Result) time.Duration { return r.ServerCPU }),
		OtherCPU:  dur(func(r *Result) time.Duration { return r.OtherCPU }),
		// The median of each run's own ratio, not one median over another.
		ServerCPUPerOp: med(func(r *Result) float64 { return r.ServerCPUPerOp }),
		All:            lat(func(r *Result) Latency { return r.All }),
		Get:            lat(func(r *Result) Latency { return r.Get }),
		Set:            lat(func(r *Result) Latency { return r.Set }),
	}
	if n := len(rs[0].Servers); n > 0 {
		out.Servers = make([]ServerOps, n)
		for i := range n {
			at := func(r *Result) ServerOps {
				if i < len(r.Servers) {
					return r.Servers[i]
				}
				return ServerOps{}
			}
			out.Servers[i] = ServerOps{
				Addr:      rs[0].Servers[i].Addr,
				Ops:       int64(med(func(r *Result) float64 { return float64(at(r).Ops) })),
				Keys:      int64(med(func(r *Result) float64 { return float64(at(r).Keys) })),
				OpsPerSec: med(func(r *Result) float64 { return at(r).OpsPerSec }),
			}
			for _, r := range rs {
				out.Servers[i].Errors += at(r).Errors
			}
		}
	}
	for _, r := range rs {
		if r.Evictions < 0 {
			out.Evictions = -1
		}
		out.Errors += r.Errors
		if out.FirstErr == "" {
			out.FirstErr = r.FirstErr
		}
	}
	return out
}

// median of v (the mean of the middle two for an even count); v is sorted
// in place.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// Spread returns the lowest and highest ops/s of rs.
func Spread(rs []*Result) (lo, hi float64) {
	for i, r := range rs {
		if i == 0 || r.OpsPerSec < lo {
			lo = r.OpsPerSec
		}
		if i == 0 || r.OpsPerSec > hi {
			hi = r.OpsPerSec
		}
	}
	return lo, hi
}
