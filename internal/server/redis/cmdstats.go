package redis

import (
	"bytes"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Per-command statistics, as Redis's INFO commandstats, errorstats and
// latencystats report them, and the per-command bookkeeping Redis's
// call() does around every command (call, below).
//
// Each connection keeps its own counters (connStats), so two cores
// serving two clients never write the same cache line per command: a
// command's counters sit at its number in the connection's table (chunks
// of 16 commands, allocated when the connection first runs one of them).
// A connection that closes folds its counters into the Protocol's
// totals; INFO sums the totals and the live connections.
//
//	command ─▶ conn.stats.chunks[idx/16][idx%16]: ns, rejected, failed, and the call in
//	           the latency histogram (or in untracked, with latency tracking off)
//	error reply ─▶ conn.stats.errs[code] (unknown codes: opsState.otherErrs)
//
// Durations come from one clock reading per command (clock.go): the end
// of one command is the start of the next while a pipelined batch runs;
// the first command after the connection waited or read from its socket
// reads the clock once more (conn.t0 is 0 then). So a duration covers the
// command and the parsing of its request from the read buffer, never the
// time spent waiting for the client.

// statChunkLen is the number of commands per chunk of a connection's
// counters.
const statChunkLen = 16

// cmdCounters are one command's counters on one connection. A call is
// counted once: in its latency histogram while latency tracking is on,
// else in untracked (calls are their sum).
type cmdCounters struct {
	untracked atomic.Uint64 // calls made with latency tracking off
	ns        atomic.Uint64 // total duration
	rejected  atomic.Uint64 // refused before running (arity, auth, OOM, ...)
	failed    atomic.Uint64 // ran and answered an error
	hist      atomic.Pointer[latencyHist]
}

type statChunk [statChunkLen]cmdCounters

// connStats are one connection's counters.
type connStats struct {
	chunks []atomic.Pointer[statChunk] // by command number / statChunkLen; written by the connection only
	errs   [len(errCodes)]atomic.Uint64
}

// errCodes are the error codes MiniKV's replies start with; each
// connection counts them in an array. Others (none today) go to a shared
// map.
var errCodes = [...]string{"ERR", "WRONGTYPE", "OOM", "NOAUTH", "WRONGPASS", "EXECABORT", "MOVED", "ASK",
	"CROSSSLOT", "CLUSTERDOWN", "NOPROTO", "BUSYKEY", "UNBLOCKED", "NOPERM", "TRYAGAIN", "NOSCRIPT"}

// maxOtherErrCodes bounds the shared map of other error codes.
const maxOtherErrCodes = 128

// numCommands is the number of commands and subcommands in the table;
// finishCommands numbers them.
var numCommands int

// counters returns the connection's counters of the command numbered
// idx. Only the serving goroutine calls it.
func (s *connStats) counters(idx int) *cmdCounters {
	p := &s.chunks[idx/statChunkLen]
	ch := p.Load()
	if ch == nil {
		ch = new(statChunk)
		p.Store(ch)
	}
	return &ch[idx%statChunkLen]
}

// commandTotals are the counters of one command summed over connections.
type commandTotals struct {
	calls, ns, rejected, failed uint64
	hist                        *histCounts // nil: no latency recorded
}

func (t *commandTotals) add(c *cmdCounters) {
	t.calls += c.untracked.Load()
	t.ns += c.ns.Load()
	t.rejected += c.rejected.Load()
	t.failed += c.failed.Load()
	if h := c.hist.Load(); h != nil {
		if t.hist == nil {
			t.hist = new(histCounts)
		}
		t.calls += h.addTo(t.hist)
	}
}

// statTotals are the counters of a set of connections.
type statTotals struct {
	cmds []commandTotals // by command number
	errs [len(errCodes)]uint64
}

func (t *statTotals) addConn(s *connStats) {
	t.addErrs(s)
	if t.cmds == nil {
		t.cmds = make([]commandTotals, numCommands)
	}
	for i := range s.chunks {
		ch := s.chunks[i].Load()
		if ch == nil {
			continue
		}
		for j := range ch {
			if idx := i*statChunkLen + j; idx < numCommands {
				t.cmds[idx].add(&ch[j])
			}
		}
	}
}

func (t *statTotals) addErrs(s *connStats) {
	for i := range s.errs {
		t.errs[i] += s.errs[i].Load()
	}
}

// statsRegistry holds every connection's counters (opsState.stats).
type statsRegistry struct {
	mu        sync.Mutex // protects the fields below
	conns     map[*connStats]struct{}
	closed    statTotals        // the connections that have closed
	otherErrs map[string]uint64 // error codes not in errCodes
}

// register gives a new connection its counters.
func (r *statsRegistry) register() *connStats {
	s := &connStats{chunks: make([]atomic.Pointer[statChunk], (numCommands+statChunkLen-1)/statChunkLen)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = make(map[*connStats]struct{})
	}
	r.conns[s] = struct{}{}
	return s
}

// unregister folds a closing connection's counters into the totals.
func (r *statsRegistry) unregister(s *connStats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.conns, s)
	r.closed.addConn(s)
}

// otherError counts an error code that is not in errCodes.
func (r *statsRegistry) otherError(code string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.otherErrs == nil {
		r.otherErrs = make(map[string]uint64)
	}
	if _, ok := r.otherErrs[code]; ok || len(r.otherErrs) < maxOtherErrCodes {
		r.otherErrs[code]++
	}
}

// totals sums the closed connections and the live ones: their error
// counts, and with cmds their commands' counters too.
func (r *statsRegistry) totals(cmds bool) (t statTotals, other map[string]uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t.errs = r.closed.errs
	if cmds {
		t.cmds = make([]commandTotals, numCommands)
		for i, c := range r.closed.cmds {
			t.cmds[i] = c
			if c.hist != nil {
				h := *c.hist
				t.cmds[i].hist = &h
			}
		}
	}
	for s := range r.conns {
		if cmds {
			t.addConn(s)
		} else {
			t.addErrs(s)
		}
	}
	other = make(map[string]uint64, len(r.otherErrs))
	for k, v := range r.otherErrs {
		other[k] = v
	}
	return t, other
}

// reset zeroes every counter (CONFIG RESETSTAT), the live connections'
// too. A command running meanwhile may keep what it adds.
func (r *statsRegistry) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = statTotals{}
	r.otherErrs = nil
	for s := range r.conns {
		for i := range s.chunks {
			if ch := s.chunks[i].Load(); ch != nil {
				for j := range ch {
					c := &ch[j]
					c.untracked.Store(0)
					c.ns.Store(0)
					c.rejected.Store(0)
					c.failed.Store(0)
					if h := c.hist.Load(); h != nil {
						h.reset()
					}
				}
			}
		}
		for i := range s.errs {
			s.errs[i].Store(0)
		}
	}
}

// errorReplies is total_error_replies: every error reply counted.
func errorReplies(t *statTotals, other map[string]uint64) uint64 {
	var n uint64
	for _, c := range t.errs {
		n += c
	}
	for _, c := range other {
		n += c
	}
	return n
}

// countError is the writer's error hook: it counts an error reply by its
// code (the first word), for errorstats, and for the failed_calls of the
// command running.
func (rc *conn) countError(msg string) {
	rc.errs++
	code := msg
	if i := strings.IndexByte(msg, ' '); i >= 0 {
		code = msg[:i]
	}
	for i, c := range errCodes {
		if c == code {
			rc.stats.errs[i].Add(1)
			return
		}
	}
	rc.p.ops.stats.otherError(code)
}

// rejectedCall counts a command refused before it ran (Redis's
// rejectCommand): the one dispatch resolved, if any.
func (rc *conn) rejectedCall() {
	if cmd := rc.cur; cmd != nil {
		rc.stats.counters(cmd.stat.idx).rejected.Add(1)
	}
}

// call runs a command that passed dispatch's checks and does what Redis's
// call() does after it: the command's counters, latency histogram,
// SLOWLOG entry, latency event and MONITOR feed. A command whose replies
// include an error it wrote itself failed (errors of the commands it ran,
// as EXEC's, count for those: rc.prevErrs moves past them). A blocking
// command's wait is not part of its duration, as in Redis.
func (rc *conn) call(cmd *respCommand, argv [][]byte) {
	ops := &rc.p.ops
	start := rc.t0
	if start == 0 {
		start = ops.now()
	}
	rc.prevErrs = rc.errs
	outer, outerArgv := rc.running, rc.argv // EXEC, running its commands
	rc.running, rc.argv = cmd, argv
	run := argv
	if cmd.firstKey > 0 && (rc.db != 0 || mayNeedDBKey(cmd, argv)) || cmd.keysOf != nil {
		run = dbArgv(cmd, argv, rc.db) // the keys as the store names them (db.go)
	}
	if rc.noTouch && cmd.name != "touch" && cmd.hasKeys() {
		rc.runNoTouch(cmd, run)
	} else {
		cmd.run(rc, run)
	}
	argv = rc.argv // a copy if the command waited (beforeWait)
	fed := rc.fed
	rc.running, rc.argv, rc.fed = outer, outerArgv, false
	if rc.trackPending() {
		rc.afterTracked(cmd, argv, outer != nil) // tracking.go
	}
	end := ops.now()
	d := max(ops.clock.ns(end-start-rc.waited), 0)
	rc.t0, rc.waited = end, 0
	rc.Count(server.StatCommands) // total_commands_processed, once done as in Redis
	c := rc.stats.counters(cmd.stat.idx)
	c.ns.Add(uint64(d))
	if rc.errs != rc.prevErrs {
		c.failed.Add(1)
		rc.prevErrs = rc.errs
	}
	set := ops.settings.Load()
	if set.tracking {
		h := c.hist.Load()
		if h == nil {
			h = new(latencyHist)
			c.hist.Store(h)
		}
		h.record(d) // counts the call too
	} else {
		c.untracked.Add(1)
	}
	if set.slowlogSlower >= 0 && d/1000 >= set.slowlogSlower && !cmd.stat.noSlowlog {
		ops.slowlog.push(rc, argv, d)
	}
	if set.latencyThreshold > 0 && d/1e6 >= set.latencyThreshold {
		event := "command"
		if cmd.stat.fast {
			event = "fast-command"
		}
		ops.latency.add(event, d/1e6)
	}
	if !fed && rc.p.srv.Monitored() && !cmd.stat.noMonitor { // (shown when it began to wait)
		if rc.monitor { // its own reply first, as in Redis's one output buffer
			rc.FeedMonitorsAfter(rc.db, redactedArgs(argv), func() { _ = rc.w.Flush() })
		} else {
			rc.feedMonitors(argv)
		}
	}
}

// beforeWait is called by a command about to block (BLPOP, ...) and
// returns the clock reading its wait starts at. MONITOR shows the command
// now, as Redis does when a command blocks; and its arguments are copied,
// since the read buffer they point into takes in what the client sends
// meanwhile (the copy is what SLOWLOG keeps once it is served).
func (rc *conn) beforeWait() int64 {
	rc.SetCommand(&rc.running.name) // CLIENT LIST shows it while it waits (cmd=blpop)
	if rc.p.srv.Monitored() && !rc.running.stat.noMonitor {
		rc.feedMonitors(rc.argv)
		rc.fed = true
	}
	cp := make([][]byte, len(rc.argv))
	for i, a := range rc.argv {
		cp[i] = append([]byte(nil), a...)
	}
	rc.argv = cp
	return rc.p.ops.now()
}

// INFO's commandstats, errorstats and latencystats sections.

func (rc *conn) writeCommandStats(b *bytes.Buffer, t *statTotals) {
	for _, c := range allCommands {
		ct := &t.cmds[c.stat.idx]
		if ct.calls == 0 && ct.rejected == 0 && ct.failed == 0 {
			continue
		}
		usec := ct.ns / 1000
		perCall := 0.0
		if ct.calls > 0 {
			perCall = float64(usec) / float64(ct.calls)
		}
		fmt.Fprintf(b, "cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d\r\n",
			c.name, ct.calls, usec, perCall, ct.rejected, ct.failed)
	}
}

func writeErrorStats(b *bytes.Buffer, t *statTotals, other map[string]uint64) {
	counts := make(map[string]uint64, len(other)+len(errCodes))
	for k, v := range other {
		counts[k] = v
	}
	for i, c := range errCodes {
		if t.errs[i] > 0 {
			counts[c] += t.errs[i]
		}
	}
	codes := make([]string, 0, len(counts))
	for k := range counts {
		codes = append(codes, k)
	}
	slices.Sort(codes) // Redis keeps them in a radix tree: in byte order
	for _, k := range codes {
		fmt.Fprintf(b, "errorstat_%s:count=%d\r\n", k, counts[k])
	}
}

func (rc *conn) writeLatencyStats(b *bytes.Buffer, t *statTotals) {
	set := rc.p.ops.settings.Load()
	if !set.tracking {
		return
	}
	for _, c := range allCommands {
		h := t.cmds[c.stat.idx].hist
		if h == nil || h.total() == 0 {
			continue
		}
		fmt.Fprintf(b, "latency_percentiles_usec_%s:", c.name)
		for i, pc := range set.percentiles {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, "p%s=%.3f", formatPercentile(pc), float64(h.percentile(pc))/1000)
		}
		b.WriteString("\r\n")
	}
}

// latencyHist is one connection's latency histogram of one command, in
// nanoseconds, with Redis's range (1 ns to 1 s: longer counts as 1 s) at
// about 6 % precision: values under 8 ns have a bucket each, then every
// power of two is split into 8 buckets. (Redis keeps an HDR histogram of
// 2 significant digits per command, 24 KiB; this one, 1.8 KiB, is kept
// per connection and command used.) histCounts is its sum over
// connections.
type latencyHist [histBuckets]atomic.Uint64

type histCounts [histBuckets]uint64

const (
	histMax     = 1_000_000_000 // 1 s, Redis's LATENCY_HISTOGRAM_MAX_VALUE
	histBuckets = 8 + (30-3)*8  // up to 2^30 ns > histMax
)

// histBucket is the bucket of v ns (1 <= v <= histMax).
func histBucket(v uint64) int {
	if v < 8 {
		return int(v)
	}
	k := bits.Len64(v) - 1 // v's top bit, >= 3
	return 8 + (k-3)*8 + int(v>>(k-3)&7)
}

// histBounds are the smallest and largest values of bucket i.
func histBounds(i int) (lo, hi uint64) {
	if i < 8 {
		return uint64(i), uint64(i)
	}
	k := (i-8)/8 + 3
	lo = uint64(8+(i-8)%8) << (k - 3)
	return lo, lo + 1<<(k-3) - 1
}

func (h *latencyHist) record(d int64) {
	v := uint64(min(max(d, 1), histMax))
	h[histBucket(v)].Add(1)
}

// addTo adds h's counts to c and returns how many it added.
func (h *latencyHist) addTo(c *histCounts) uint64 {
	var n uint64
	for i := range h {
		v := h[i].Load()
		c[i] += v
		n += v
	}
	return n
}

func (h *latencyHist) reset() {
	for i := range h {
		h[i].Store(0)
	}
}

func (c *histCounts) total() uint64 {
	var n uint64
	for _, v := range c {
		n += v
	}
	return n
}

// percentile is the value at percentile p as HDR histograms report it:
// the largest value of the bucket where the count reaches p % of the
// total.
func (c *histCounts) percentile(p float64) uint64 {
	want := uint64(min(p, 100)/100*float64(c.total()) + 0.5)
	want = max(want, 1)
	var seen uint64
	for i, v := range c {
		seen += v
		if seen >= want {
			_, hi := histBounds(i)
			return hi
		}
	}
	return histMax
}

// below counts the values under v ns.
func (c *histCounts) below(v uint64) uint64 {
	var n uint64
	for i, cnt := range c {
		if _, hi := histBounds(i); hi >= v {
			break
		}
		n += cnt
	}
	return n
}

// formatPercentile is a percentile as Redis names it in INFO: "%f"
// without trailing zeros ("50", "99.9").
func formatPercentile(p float64) string {
	s := strconv.FormatFloat(p, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// runNoTouch runs cmd for a connection in CLIENT NO-TOUCH mode: the
// access state of the command's keys is taken before and put back after
// (store.RestoreAccess), so its reads do not count as uses.
func (rc *conn) runNoTouch(cmd *respCommand, argv [][]byte) {
	type saved struct {
		key []byte
		a   store.Access
	}
	var keep []saved
	for _, r := range cmd.keyRefs(argv) {
		if a, ok := rc.st.AccessOf(argv[r.pos]); ok {
			keep = append(keep, saved{slices.Clone(argv[r.pos]), a})
		}
	}
	cmd.run(rc, argv)
	for _, k := range keep {
		rc.st.RestoreAccess(k.key, k.a)
	}
}
