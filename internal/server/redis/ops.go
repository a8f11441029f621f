package redis

import (
	"math"
	"slices"
	"strings"
	"sync/atomic"
)

// The RESP port's operational surface, as Redis 7.0 has it: INFO
// commandstats, errorstats and latencystats (cmdstats.go), SLOWLOG
// (slowlog.go), LATENCY (latency.go) and MONITOR (monitor.go), with
// their settings under CONFIG GET/SET. Every command passes through
// conn.call, which does their per-command part; with the defaults that
// is two clock readings per command, or one per command in a pipelined
// batch, a few atomic adds on the connection's own counters, one atomic
// load of the settings and one of the server's monitor count.

// opsState is the Protocol's part of it.
type opsState struct {
	clock    opsClock // durations are measured on it (clock.go)
	settings atomic.Pointer[opsSettings]
	stats    statsRegistry
	slowlog  slowlog
	latency  latencyMonitor
}

// opsSettings are the settings CONFIG SET changes; a change swaps the
// whole struct, so a command reads them with one atomic load.
type opsSettings struct {
	slowlogSlower    int64     // slowlog-log-slower-than, µs; -1: off
	slowlogMaxLen    int64     // slowlog-max-len
	latencyThreshold int64     // latency-monitor-threshold, ms; 0: off
	tracking         bool      // latency-tracking
	percentiles      []float64 // latency-tracking-info-percentiles
}

// defaultOpsSettings are Redis 7.0's defaults.
var defaultOpsSettings = opsSettings{slowlogSlower: 10000, slowlogMaxLen: 128, tracking: true, percentiles: []float64{50, 99, 99.9}}

func (o *opsState) init() {
	o.clock.init()
	s := defaultOpsSettings
	o.settings.Store(&s)
}

// now is a reading of the clock commands are timed on: only differences
// of two readings mean anything, which clock.ns converts to nanoseconds.
func (o *opsState) now() int64 { return o.clock.now() }

// update changes the settings: f edits a copy.
func (o *opsState) update(f func(s *opsSettings)) {
	for {
		old := o.settings.Load()
		s := *old
		f(&s)
		if o.settings.CompareAndSwap(old, &s) {
			return
		}
	}
}

// cmdStat is what the per-command bookkeeping reads of a command: its
// number among the table's commands and subcommands, and its flags.
type cmdStat struct {
	idx       int
	fast      bool // "fast": its latency event is fast-command
	noMonitor bool // "admin" or "skip_monitor": MONITOR does not show it
	noSlowlog bool // "skip_slowlog" (EXEC: its commands are logged instead)
	keyspace  bool // "readonly", "write" or "may_replicate": refused to a MONITOR connection
	tracked   bool // "readonly" and not a script nor pub/sub: a tracking client's read remembers its keys (tracking.go)
}

// allCommands lists the table's commands and subcommands by number.
var allCommands []*respCommand

// finishCommands completes the table at start-up (table.go's init): each
// command, and subcommand, takes the flags and metadata Redis 7.0
// declares for it (cmdmeta.go), and a number for its counters.
func finishCommands(table []respCommand) {
	applyRedisMeta(table)
	number := func(c *respCommand) {
		c.stat = cmdStat{idx: len(allCommands),
			fast:      slices.Contains(c.flags, "fast"),
			noMonitor: slices.Contains(c.flags, "admin") || slices.Contains(c.flags, "skip_monitor"),
			noSlowlog: slices.Contains(c.flags, "skip_slowlog"),
			keyspace:  slices.Contains(c.flags, "readonly") || slices.Contains(c.flags, "write") || slices.Contains(c.flags, "may_replicate"),
			tracked:   slices.Contains(c.flags, "readonly") && !c.script && !slices.Contains(c.flags, "pubsub"),
		}
		allCommands = append(allCommands, c)
	}
	for i := range table {
		number(&table[i])
		for _, sc := range table[i].subs {
			number(sc)
		}
	}
	slices.SortFunc(allCommands, func(a, b *respCommand) int { return strings.Compare(a.name, b.name) })
	for i, c := range allCommands {
		c.stat.idx = i
	}
	numCommands = len(allCommands)
}

// opsConfigParams are the settings of SLOWLOG, LATENCY and latency
// tracking, for CONFIG GET/SET/REWRITE.
func opsConfigParams() []*configParam {
	get := func(f func(s *opsSettings) string) func(rc *conn) string {
		return func(rc *conn) string { return f(rc.p.ops.settings.Load()) }
	}
	setInt := func(lo int64, f func(s *opsSettings, v int64)) func(p *Protocol, v []byte) (func() string, string) {
		return intConfig(lo, math.MaxInt64, func(p *Protocol, v int64) string {
			p.ops.update(func(s *opsSettings) { f(s, v) })
			return ""
		})
	}
	return []*configParam{
		{name: "slowlog-log-slower-than", get: get(func(s *opsSettings) string { return itoa64(s.slowlogSlower) }),
			set: setInt(-1, func(s *opsSettings, v int64) { s.slowlogSlower = v }), def: "10000"},
		{name: "slowlog-max-len", get: get(func(s *opsSettings) string { return itoa64(s.slowlogMaxLen) }),
			set: setInt(0, func(s *opsSettings, v int64) { s.slowlogMaxLen = v }), def: "128"},
		{name: "latency-monitor-threshold", get: get(func(s *opsSettings) string { return itoa64(s.latencyThreshold) }),
			set: setInt(0, func(s *opsSettings, v int64) { s.latencyThreshold = v }), def: "0"},
		{name: "latency-tracking", get: get(func(s *opsSettings) string { return yesNo(s.tracking) }),
			set: func(p *Protocol, v []byte) (func() string, string) {
				on, ok := parseYesNo(v)
				if !ok {
					return nil, "argument must be 'yes' or 'no'"
				}
				return func() string { p.ops.update(func(s *opsSettings) { s.tracking = on }); return "" }, ""
			}, def: "yes"},
		{name: "latency-tracking-info-percentiles", get: get(func(s *opsSettings) string {
			out := make([]string, len(s.percentiles))
			for i, pc := range s.percentiles {
				out[i] = formatPercentile(pc)
			}
			return strings.Join(out, " ")
		}),
			set: func(p *Protocol, v []byte) (func() string, string) {
				pcs, reason := parsePercentiles(string(v))
				if reason != "" {
					return nil, reason
				}
				return func() string { p.ops.update(func(s *opsSettings) { s.percentiles = pcs }); return "" }, ""
			}, def: "50 99 99.9"},
	}
}

// parsePercentiles reads latency-tracking-info-percentiles as Redis
// does: numbers separated by single spaces, each in [0, 100]; "" is
// none.
func parsePercentiles(v string) ([]float64, string) {
	pcs := []float64{}
	if v == "" {
		return pcs, ""
	}
	for _, f := range strings.Split(v, " ") {
		pc, ok := parseZScore([]byte(f)) // Redis's string2d
		if !ok {
			return nil, "Invalid latency-tracking-info-percentiles parameters"
		}
		if pc < 0 || pc > 100 {
			return nil, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
		}
		pcs = append(pcs, pc)
	}
	return pcs, ""
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// parseYesNo reads a boolean config value as Redis does: yes or no, in
// any case.
func parseYesNo(v []byte) (on, ok bool) {
	switch {
	case is(v, "yes"):
		return true, true
	case is(v, "no"):
		return false, true
	}
	return false, false
}
