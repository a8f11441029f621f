package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"
)

// Pool is a set of servers a Target spreads its keys over on the client
// side, the way libmemcached, pylibmc or gomemcache's server list do: each
// connection of a Session holds one TCP connection to every server, and
// each request goes to the server Ring picks for its key. A multi-key get
// is split into one get per server holding some of its keys, and their
// replies are merged (it counts as one request with all its keys' hits).
//
// A batch of P requests is written as one write per server involved, then
// the replies are read server by server in the pool's order, so a
// request's latency runs from the batch's writes to its last part's reply
// (a fast server's replies may wait while a slower one's are read, as in a
// client that reads its servers in turn).
type Pool struct {
	Servers []PoolServer
	Ring    *Ring
}

// NewPool builds the Ring of mode over servers.
func NewPool(mode string, servers []PoolServer) (*Pool, error) {
	r, err := NewRing(mode, servers)
	if err != nil {
		return nil, err
	}
	return &Pool{Servers: servers, Ring: r}, nil
}

// Addrs are the servers' dial addresses.
func (p *Pool) Addrs() []string {
	out := make([]string, len(p.Servers))
	for i, s := range p.Servers {
		out[i] = s.Addr()
	}
	return out
}

// String is "ketama: a, b, c".
func (p *Pool) String() string {
	return p.Ring.Mode() + ": " + strings.Join(p.Addrs(), ", ")
}

// ServerOps is one pool server's share of a phase.
type ServerOps struct {
	Addr string `json:"addr"`
	// Ops counts the requests this server answered; a multi-key get split
	// over k servers counts once on each.
	Ops       int64   `json:"ops"`
	Keys      int64   `json:"keys"` // keys it was asked for (sets and gets)
	Errors    int64   `json:"errors"`
	OpsPerSec float64 `json:"ops_per_sec"`
}

// shard is one connection of a pooled client to one server.
type shard struct {
	nc    net.Conn
	br    *bufio.Reader
	buf   []byte
	parts []part
	rearm time.Time
}

// part is one request, or one server's piece of a split multi-get, waiting
// for its reply on a shard.
type part struct {
	req   int // index of the request in the batch
	op    Op
	nkeys int // > 0: a multi-get of nkeys keys
}

// poolReq tracks one request of a batch across its parts.
type poolReq struct {
	op      Op
	multi   bool
	pending int
	hits    int
	keys    int
	failed  bool
}

// poolStats are one connection's per-server counters.
type poolStats struct {
	ops, keys, errors []int64
}

func dialPool(ctx context.Context, d *net.Dialer, p *Pool) ([]*shard, error) {
	shards := make([]*shard, 0, len(p.Servers))
	for _, s := range p.Servers {
		nc, err := d.DialContext(ctx, "tcp", s.Addr())
		if err != nil {
			for _, sh := range shards {
				_ = sh.nc.Close()
			}
			return nil, err
		}
		shards = append(shards, &shard{nc: nc, br: bufio.NewReaderSize(nc, 16<<10)})
	}
	return shards, nil
}

// workPool is work's loop for a pooled target.
func (s *Session) workPool(ctx context.Context, i int, c *client, ph *Phase, deadline time.Time, remaining *atomic.Int64, rec *Recorder, st *workerStats) {
	pool := s.t.Pool
	nsrv := len(pool.Servers)
	ps := &st.pool
	ps.ops, ps.keys, ps.errors = make([]int64, nsrv), make([]int64, nsrv), make([]int64, nsrv)
	var fixed []int
	if ph.Keys != nil {
		fixed = ph.Keys(i)
	}
	value := s.w.Value()
	proto := s.t.Proto
	multi := 1
	if ph.Keys == nil {
		multi = max(s.w.MultiGet, 1)
	}
	var interval time.Duration
	var due time.Time
	if ph.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(ph.Pipeline) * float64(len(s.conns)) / ph.Rate)
		due = time.Now().Add(interval * time.Duration(i) / time.Duration(len(s.conns)))
	}
	var reqs []poolReq
	groups := make([][][]byte, nsrv) // multi-get: each server's keys
	kl := s.w.KeyLen()
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
		for _, sh := range c.shards {
			sh.buf, sh.parts = sh.buf[:0], sh.parts[:0]
		}
		reqs = reqs[:0]
		for j := range n {
			var op Op
			var k int
			if ph.Keys != nil {
				op, k = ph.Op, fixed[j]
			} else {
				op, k = c.gen.Next()
			}
			if op == OpGet && multi > 1 {
				c.arena = s.w.AppendKey(c.arena[:0], k)
				for range multi - 1 {
					c.arena = s.w.AppendKey(c.arena, c.gen.key())
				}
				for g := range groups {
					groups[g] = groups[g][:0]
				}
				for m := range multi {
					key := c.arena[m*kl : (m+1)*kl]
					g := pool.Ring.Pick(key)
					groups[g] = append(groups[g], key)
				}
				r := poolReq{op: op, multi: true, keys: multi}
				for g, keys := range groups {
					if len(keys) == 0 {
						continue
					}
					sh := c.shards[g]
					sh.buf = proto.AppendMultiGet(sh.buf, keys)
					sh.parts = append(sh.parts, part{req: j, op: op, nkeys: len(keys)})
					r.pending++
				}
				reqs = append(reqs, r)
				continue
			}
			c.key = s.w.AppendKey(c.key[:0], k)
			sh := c.shards[pool.Ring.Pick(c.key)]
			if op == OpSet {
				sh.buf = proto.AppendSet(sh.buf, c.key, value, s.w.TTL)
			} else {
				sh.buf = proto.AppendGet(sh.buf, c.key)
			}
			sh.parts = append(sh.parts, part{req: j, op: op})
			reqs = append(reqs, poolReq{op: op, pending: 1, keys: 1})
		}
		if ph.Keys != nil {
			fixed = fixed[n:]
		}
		t0 := time.Now()
		if interval > 0 {
			if wait := due.Sub(t0); wait > 0 {
				time.Sleep(wait)
			}
			t0 = due
			due = due.Add(interval)
		}
		now := time.Now()
		for g, sh := range c.shards {
			if len(sh.parts) == 0 {
				continue
			}
			if s.timeout > 0 && now.After(sh.rearm) {
				_ = sh.nc.SetDeadline(now.Add(s.timeout))
				sh.rearm = now.Add(s.timeout / 2)
			}
			if _, err := sh.nc.Write(sh.buf); err != nil {
				ps.errors[g] += int64(len(sh.parts))
				s.failPool(c, st, n, fmt.Errorf("write to %s: %w", pool.Servers[g].Addr(), err))
				return
			}
		}
		c.smp = c.smp[:0]
		done := 0
		for g, sh := range c.shards {
			for pi, pt := range sh.parts {
				r := &reqs[pt.req]
				var out Outcome
				var err error
				if pt.nkeys > 0 {
					var hits int
					hits, out, err = proto.ReadMultiGet(sh.br, pt.nkeys)
					r.hits += hits
				} else {
					out, err = proto.ReadReply(sh.br, pt.op)
				}
				if err != nil {
					rec.record(i, c.smp)
					ps.errors[g] += int64(len(sh.parts) - pi)
					s.failPool(c, st, n-done, fmt.Errorf("read from %s: %w", pool.Servers[g].Addr(), err))
					return
				}
				ps.ops[g]++
				if pt.nkeys > 0 {
					ps.keys[g] += int64(pt.nkeys)
				} else {
					ps.keys[g]++
				}
				switch out {
				case OutError:
					ps.errors[g]++
					r.failed = true
				case OutHit:
					if !r.multi {
						r.hits = 1
					}
				}
				if r.pending--; r.pending > 0 {
					continue
				}
				done++
				c.smp = append(c.smp, sample{op: r.op, lat: time.Since(t0)})
				st.ops++
				switch {
				case r.failed:
					st.errors++
					s.Errs.Add(1)
					if st.err == nil {
						st.err = fmt.Errorf("%s: error reply to %s", s.t.Name, r.op)
					}
				case r.op == OpGet:
					st.hits += int64(r.hits)
					st.misses += int64(r.keys - r.hits)
				}
			}
		}
		rec.record(i, c.smp)
		s.Done.Add(int64(n))
	}
}

// failPool retires a pooled connection whose stream to one server broke:
// its connections to every server close, and the requests of the batch
// that got no complete reply count as errors.
func (s *Session) failPool(c *client, st *workerStats, unanswered int, err error) {
	c.dead = true
	for _, sh := range c.shards {
		_ = sh.nc.Close()
	}
	st.errors += int64(unanswered)
	s.Errs.Add(int64(unanswered))
	if st.err == nil {
		st.err = fmt.Errorf("%s: %w", s.t.Name, err)
	}
}

// poolResult adds up the per-server counters of every connection.
func poolResult(p *Pool, stats []workerStats, wall time.Duration) []ServerOps {
	out := make([]ServerOps, len(p.Servers))
	for g, s := range p.Servers {
		out[g].Addr = s.Addr()
	}
	for _, st := range stats {
		for g := range st.pool.ops {
			out[g].Ops += st.pool.ops[g]
			out[g].Keys += st.pool.keys[g]
			out[g].Errors += st.pool.errors[g]
		}
	}
	for g := range out {
		out[g].OpsPerSec = OpsPerSecond(out[g].Ops, wall)
	}
	return out
}

// Locate returns the address of the server p puts key on.
func (p *Pool) Locate(key []byte) string { return p.Servers[p.Ring.Pick(key)].Addr() }
