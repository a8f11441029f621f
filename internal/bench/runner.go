package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Target is a server to load.
type Target struct {
	Name  string // "minikv", "memcached", "redis", "null", or the address
	Addr  string // host:port
	Proto Proto
	PID   int // of a server this process started (its CPU time is read from /proc); 0 if not ours
	// Pool, when set, spreads the keys over several servers on the client
	// side (Addr is then unused): see Pool.
	Pool *Pool
}

// Phase is one measured stretch of load over a Session's connections.
//
// Without Keys, every connection draws requests from its Generator until
// Requests have been sent in total or Duration has passed. With Keys,
// connection i sends Op for each key index of Keys(i) in order and stops:
// that is how prefill and the seed's write and read phases run.
type Phase struct {
	Label    string
	Pipeline int           // requests per batch: written in one write, then all replies read
	Requests int64         // total requests; 0 means run for Duration
	Duration time.Duration // used when Requests is 0 and Keys is nil
	Keys     func(conn int) []int
	Op       Op
	// Rate, when > 0, makes the load open-loop: Rate requests per second in
	// total, each connection sending its batches on a fixed schedule. A
	// latency then runs from when the batch was due, not when it was sent,
	// so a server that stalls is charged for the requests that queued
	// behind the stall (no coordinated omission). That is how p99 is
	// compared "at the same offered load".
	Rate float64
}

// Session is a set of open connections to one target with the workload
// they send. Generators live as long as the Session, so a warm-up phase
// and the measured phase after it continue one request stream.
type Session struct {
	t       Target
	w       *Workload
	conns   []*client
	timeout time.Duration

	// Done counts requests completed in the current phase, for progress.
	Done atomic.Int64
	// Errs counts errors in the current phase, for progress.
	Errs atomic.Int64
}

type client struct {
	nc   net.Conn
	br   *bufio.Reader
	gen  *Generator
	buf  []byte
	key  []byte
	ops  []Op
	smp  []sample
	dead bool

	rearm time.Time // when the I/O deadline must next be pushed back
	arena []byte    // --multiget: the keys of one request, back to back
	mkeys [][]byte  // --multiget: slices of arena

	shards []*shard // a pooled target: one connection per server (nc is nil)
}

// ErrNoConnections is returned when a Session could not open any.
var ErrNoConnections = errors.New("bench: no connection could be opened")

// Connect opens n connections to t. timeout bounds each dial and each
// pipelined batch (a server that stops answering fails the run instead of
// hanging it).
func Connect(ctx context.Context, t Target, w *Workload, n int, timeout time.Duration) (*Session, error) {
	if n < 1 {
		return nil, fmt.Errorf("bench: connections must be >= 1, got %d", n)
	}
	s := &Session{t: t, w: w, conns: make([]*client, n), timeout: timeout}
	d := net.Dialer{Timeout: timeout}
	// Dial in parallel, but not all 1024 at once: a listen backlog of 128
	// (Redis's default tcp-backlog is 511, memcached's 1024) drops SYNs and
	// turns a burst into one-second retransmit stalls.
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if t.Pool != nil {
				shards, err := dialPool(ctx, &d, t.Pool)
				if err != nil {
					errs[i] = err
					return
				}
				s.conns[i] = &client{shards: shards, gen: w.NewGenerator(i, n)}
				return
			}
			nc, err := d.DialContext(ctx, "tcp", t.Addr)
			if err != nil {
				errs[i] = err
				return
			}
			s.conns[i] = &client{
				nc:  nc,
				br:  bufio.NewReaderSize(nc, 16<<10),
				gen: w.NewGenerator(i, n),
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		s.Close()
		addr := t.Addr
		if t.Pool != nil {
			addr = strings.Join(t.Pool.Addrs(), ", ")
		}
		return nil, fmt.Errorf("bench: connecting to %s (%s): %w", t.Name, addr, err)
	}
	return s, nil
}

// Close closes every connection.
func (s *Session) Close() {
	for _, c := range s.conns {
		if c == nil {
			continue
		}
		if c.nc != nil {
			_ = c.nc.Close()
		}
		for _, sh := range c.shards {
			_ = sh.nc.Close()
		}
	}
}

// Conns is the number of connections.
func (s *Session) Conns() int { return len(s.conns) }

// workerStats are one connection's counters for a phase.
type workerStats struct {
	ops, hits, misses, errors int64
	err                       error
	pool                      poolStats // a pooled target's per-server counters
}

// Run runs one phase and returns its Result. Errors during the phase do not
// stop it: they are counted in Result.Errors and the first is kept in
// Result.FirstErr; a connection whose stream broke sits out the rest of the
// Session. Only ctx's cancellation ends a phase early.
func (s *Session) Run(ctx context.Context, ph Phase) *Result {
	if ph.Pipeline < 1 {
		ph.Pipeline = 1
	}
	s.Done.Store(0)
	s.Errs.Store(0)
	rec := NewRecorder()
	stats := make([]workerStats, len(s.conns))
	var remaining atomic.Int64
	remaining.Store(ph.Requests)

	ev0 := evictions(s.t)
	cpu0 := processCPU()
	srv0 := pidCPU(s.t.PID)
	busy0 := machineBusy()
	start := time.Now()
	deadline := start.Add(ph.Duration)
	var wg sync.WaitGroup
	for i, c := range s.conns {
		if c.dead {
			continue
		}
		if s.t.Pool != nil {
			wg.Go(func() { s.workPool(ctx, i, c, &ph, deadline, &remaining, rec, &stats[i]) })
			continue
		}
		wg.Go(func() { s.work(ctx, i, c, &ph, deadline, &remaining, rec, &stats[i]) })
	}
	wg.Wait()
	wall := time.Since(start)

	r := &Result{
		Target:    s.t.Name,
		Label:     ph.Label,
		Conns:     len(s.conns),
		Pipeline:  ph.Pipeline,
		Wall:      wall,
		ClientCPU: processCPU() - cpu0,
		hist:      rec.Merged(),
	}
	if s.t.PID > 0 {
		r.ServerCPU = pidCPU(s.t.PID) - srv0
	}
	if busy0 > 0 {
		r.OtherCPU = max(machineBusy()-busy0-r.ClientCPU-r.ServerCPU, 0)
	}
	r.Evictions = -1
	if ev1 := evictions(s.t); ev0 >= 0 && ev1 >= ev0 {
		r.Evictions = ev1 - ev0
	}
	for _, st := range stats {
		r.Ops += st.ops
		r.Hits += st.hits
		r.Misses += st.misses
		r.Errors += st.errors
		if st.err != nil && r.FirstErr == "" {
			r.FirstErr = st.err.Error()
		}
	}
	if s.t.Pool != nil {
		r.Servers = poolResult(s.t.Pool, stats, wall)
	}
	r.finish()
	return r
}

// work is one connection's loop: fill a batch, write it in one syscall,
// read every reply, record the latencies, repeat.
func (s *Session) work(ctx context.Context, i int, c *client, ph *Phase, deadline time.Time, remaining *atomic.Int64, rec *Recorder, st *workerStats) {
	var fixed []int
	if ph.Keys != nil {
		fixed = ph.Keys(i)
	}
	value := s.w.Value()
	proto := s.t.Proto
	multi := 1
	if ph.Keys == nil {
		multi = max(s.w.MultiGet, 1) // prefill and the seed phases stay single-key
	}
	var interval time.Duration
	var due time.Time
	if ph.Rate > 0 {
		// Each connection sends Pipeline requests every interval; their
		// first batches are staggered over one interval.
		interval = time.Duration(float64(time.Second) * float64(ph.Pipeline) * float64(len(s.conns)) / ph.Rate)
		due = time.Now().Add(interval * time.Duration(i) / time.Duration(len(s.conns)))
	}
	for ctx.Err() == nil {
		n := ph.Pipeline
		switch {
		case ph.Keys != nil:
			n = min(n, len(fixed))
		case ph.Requests > 0:
			if left := remaining.Add(-int64(n)); left < 0 {
				n += int(left)
			}
		default:
			if !time.Now().Before(deadline) {
				n = 0
			}
		}
		if n <= 0 {
			return
		}
		c.buf, c.ops = c.buf[:0], c.ops[:0]
		for j := range n {
			var op Op
			var k int
			if ph.Keys != nil {
				op, k = ph.Op, fixed[j]
			} else {
				op, k = c.gen.Next()
			}
			c.key = s.w.AppendKey(c.key[:0], k)
			switch {
			case op == OpSet:
				c.buf = proto.AppendSet(c.buf, c.key, value, s.w.TTL)
			case multi > 1:
				c.buf = s.appendMultiGet(c, k, multi)
			default:
				c.buf = proto.AppendGet(c.buf, c.key)
			}
			c.ops = append(c.ops, op)
		}
		if ph.Keys != nil {
			fixed = fixed[n:]
		}
		t0 := time.Now()
		if interval > 0 {
			if wait := due.Sub(t0); wait > 0 {
				time.Sleep(wait)
			}
			t0 = due // latency from when the batch was due
			due = due.Add(interval)
		}
		// Re-arming the deadline on every batch costs a timer update per
		// round trip; re-arm it when half of it has been used instead, so a
		// batch still fails after between timeout/2 and timeout of silence.
		if now := time.Now(); s.timeout > 0 && now.After(c.rearm) {
			_ = c.nc.SetDeadline(now.Add(s.timeout))
			c.rearm = now.Add(s.timeout / 2)
		}
		if _, err := c.nc.Write(c.buf); err != nil {
			s.fail(c, st, n, fmt.Errorf("write: %w", err))
			return
		}
		c.smp = c.smp[:0]
		for j, op := range c.ops {
			var out Outcome
			var err error
			if op == OpGet && multi > 1 {
				var hits int
				hits, out, err = proto.ReadMultiGet(c.br, multi)
				if out != OutError {
					st.hits += int64(hits)
					st.misses += int64(multi - hits)
					out = outCounted
				}
			} else {
				out, err = proto.ReadReply(c.br, op)
			}
			if err != nil {
				rec.record(i, c.smp)
				s.fail(c, st, n-j, fmt.Errorf("read: %w", err))
				return
			}
			c.smp = append(c.smp, sample{op: op, lat: time.Since(t0)})
			switch out {
			case OutHit:
				st.hits++
			case OutMiss:
				st.misses++
			case OutError:
				st.errors++
				s.Errs.Add(1)
				if st.err == nil {
					st.err = fmt.Errorf("%s: error reply to %s", s.t.Name, op)
				}
			}
			st.ops++
		}
		rec.record(i, c.smp)
		s.Done.Add(int64(n))
	}
}

// outCounted marks a reply whose hits and misses were already added.
const outCounted Outcome = 255

// appendMultiGet encodes a get of multi keys: first, then multi-1 more
// drawn from the connection's generator.
func (s *Session) appendMultiGet(c *client, first, multi int) []byte {
	c.arena = s.w.AppendKey(c.arena[:0], first)
	for range multi - 1 {
		c.arena = s.w.AppendKey(c.arena, c.gen.key())
	}
	kl := s.w.KeyLen()
	c.mkeys = c.mkeys[:0]
	for i := range multi {
		c.mkeys = append(c.mkeys, c.arena[i*kl:(i+1)*kl])
	}
	return s.t.Proto.AppendMultiGet(c.buf, c.mkeys)
}

// fail retires a connection whose stream broke, counting the requests that
// got no reply as errors.
func (s *Session) fail(c *client, st *workerStats, unanswered int, err error) {
	c.dead = true
	_ = c.nc.Close()
	st.errors += int64(unanswered)
	s.Errs.Add(int64(unanswered))
	if st.err == nil {
		st.err = fmt.Errorf("%s: %w", s.t.Name, err)
	}
}

// SplitKeys returns a Phase.Keys function that gives connection i of n its
// contiguous share of the indexes base..base+count-1, as the seed harness
// splits each run's keyspace across its workers.
func SplitKeys(base, count, n int) func(int) []int {
	return func(i int) []int {
		lo := base + count*i/n
		hi := base + count*(i+1)/n
		ks := make([]int, 0, hi-lo)
		for k := lo; k < hi; k++ {
			ks = append(ks, k)
		}
		return ks
	}
}
