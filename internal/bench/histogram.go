package bench

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in nanoseconds from 1 ns to a minute with three
// significant digits: 0.1% resolution at every scale, which is what the
// p99.9 column needs, for about 220 KB per histogram.
const (
	histMin     = 1
	histMax     = int64(time.Minute)
	histSigFigs = 3
)

// recorderShards bounds the number of histograms whatever the connection
// count: 1024 connections each with their own pair of histograms would
// cost ~450 MB. A connection locks its shard once per pipelined batch, so
// with 16 shards the lock is uncontended in practice.
const recorderShards = 16

// Recorder collects latencies per operation kind from many connections.
type Recorder struct {
	shards [recorderShards]recorderShard
}

type recorderShard struct {
	mu sync.Mutex // protects h
	h  [numOps]*hdrhistogram.Histogram
	_  [64]byte // keep neighbouring shards' locks off one cache line
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	r := &Recorder{}
	for i := range r.shards {
		for op := range numOps {
			r.shards[i].h[op] = hdrhistogram.New(histMin, histMax, histSigFigs)
		}
	}
	return r
}

// sample is one latency waiting to be recorded.
type sample struct {
	op  Op
	lat time.Duration
}

// record adds a batch of samples from connection conn.
func (r *Recorder) record(conn int, batch []sample) {
	sh := &r.shards[conn%recorderShards]
	sh.mu.Lock()
	for _, s := range batch {
		_ = sh.h[s.op].RecordValue(clampLatency(s.lat))
	}
	sh.mu.Unlock()
}

func clampLatency(d time.Duration) int64 {
	return min(max(int64(d), histMin), histMax)
}

// Merged returns one histogram per operation kind with every shard added.
func (r *Recorder) Merged() [numOps]*hdrhistogram.Histogram {
	var out [numOps]*hdrhistogram.Histogram
	for op := range numOps {
		out[op] = hdrhistogram.New(histMin, histMax, histSigFigs)
		for i := range r.shards {
			sh := &r.shards[i]
			sh.mu.Lock()
			out[op].Merge(sh.h[op])
			sh.mu.Unlock()
		}
	}
	return out
}

// Latency is a latency distribution's summary.
type Latency struct {
	Count int64         `json:"count"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p999_ns"`
	Max   time.Duration `json:"max_ns"`
}

// Summarize reads the percentiles off h.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Count: h.TotalCount(),
		Mean:  time.Duration(h.Mean()),
		P50:   time.Duration(h.ValueAtQuantile(50)),
		P90:   time.Duration(h.ValueAtQuantile(90)),
		P99:   time.Duration(h.ValueAtQuantile(99)),
		P999:  time.Duration(h.ValueAtQuantile(99.9)),
		Max:   time.Duration(h.Max()),
	}
}
