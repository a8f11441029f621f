// Package bench is the engine of minikv-bench: workload generation, the
// connection loop, latency histograms, server lifecycle for side-by-side
// comparisons, and the reports (table, JSON, CSV, SVG chart).
//
// # How a measurement runs
//
// Each connection is one goroutine that fills a batch of P requests, writes
// it in one write, then reads the P replies in order (redis-benchmark's -P;
// memtier keeps P in flight continuously instead). A request's latency runs
// from its batch's write to its own reply, so at P > 1 it includes waiting
// behind the requests before it in the batch, as an application that
// pipelines would see it.
//
//	conn i:  [write g g s g]──▶ server ──▶[read r r r r]  record 4 latencies, repeat
//	         t0                              t0+l1 ... t0+l4
//
// By default the load is closed-loop: a connection sends its next batch
// only when the last one is answered, so latencies are service times at the
// throughput reached, not latencies at a fixed offered rate. With
// Phase.Rate (--rate) it is open-loop: batches are due on a fixed schedule
// and a latency runs from when its batch was due, so a stall is charged to
// every request that queued behind it (no coordinated omission). Compare
// p99 across servers at the same --rate.
//
// Throughput is requests over wall-clock time of the phase, never
// count/sum(latencies) (see Result). Latencies go into HdrHistograms (1 ns
// to 1 min, 3 significant digits), shared by up to 16 shards of
// connections. Client CPU is this process's rusage over the phase; server
// CPU, for servers this process started, comes from /proc/<pid>/stat.
//
// # Comparisons
//
// A Fleet starts servers on free loopback ports with matched settings and
// stops them by PID on every path (servers get Pdeathsig, so even a killed
// bench leaves none behind). A Plan prepares (prefills) each target once,
// then runs Repeat rounds, rotating the order of targets each round, and
// reports medians and the ratio of the baseline (MiniKV) to each peer.
package bench
