package redis

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LATENCY (Redis 7.0's latency.c): the latency monitor keeps, for each
// event that took at least latency-monitor-threshold milliseconds (0:
// off), the last 160 seconds that had one (the worst per second) and the
// worst ever. Events: "command" and "fast-command" (commands with and
// without the fast flag, conn.call). LATENCY HISTOGRAM reports the
// per-command latency histograms of latency tracking (cmdstats.go).

const latencyTSLen = 160 // LATENCY_TS_LEN

func latencyCommand() respCommand {
	return respCommand{name: "latency", arity: -2, group: "server", since: "2.8.13", complexity: "Depends on subcommand.",
		summary: "A container for latency diagnostics commands.", subs: []*respCommand{
			sub("latency|doctor", 2, "2.8.13", "Returns a human-readable latency analysis report.", "DOCTOR",
				"Return a human readable latency analysis report.", cmdLatencyDoctor),
			sub("latency|graph", 3, "2.8.13", "Returns a latency graph for an event.", "GRAPH <event>",
				"Return an ASCII latency graph for the <event> class.", cmdLatencyGraph, str("event")),
			sub("latency|history", 3, "2.8.13", "Returns timestamp-latency samples for an event.", "HISTORY <event>",
				"Return time-latency samples for the <event> class.", cmdLatencyHistory, str("event")),
			sub("latency|latest", 2, "2.8.13", "Returns the latest latency samples for all events.", "LATEST",
				"Return the latest latency samples for all events.", cmdLatencyLatest),
			sub("latency|reset", -2, "2.8.13", "Resets the latency data for one or more events.", "RESET [<event> ...]",
				"Reset latency data of one or more <event> classes.\n(default: reset all data for all event classes)",
				cmdLatencyReset, docArg{name: "event", typ: "string", optional: true, multiple: true}),
			sub("latency|histogram", -2, "7.0.0", "Returns the cumulative distribution of latencies of a subset or all commands.",
				"HISTOGRAM [COMMAND ...]",
				"Return a cumulative distribution of latencies in the format of a histogram for the specified command names.\n"+
					"If no commands are specified then all histograms are replied.",
				cmdLatencyHistogram, docArg{name: "command", typ: "string", optional: true, multiple: true}),
			helpSub("latency"),
		}}
}

// latencyMonitor holds the events' time series.
type latencyMonitor struct {
	mu     sync.Mutex // protects events
	events map[string]*latencySeries
}

// latencySeries is one event's samples: a ring of the last latencyTSLen
// seconds with a sample, and the worst ever.
type latencySeries struct {
	idx     int
	max     int64
	samples [latencyTSLen]latencySample
}

type latencySample struct {
	time    int64 // Unix seconds; 0: empty
	latency int64 // ms
}

// add records a sample of event, ms milliseconds long (Redis's
// latencyAddSample): a second keeps its worst sample.
func (m *latencyMonitor) add(event string, ms int64) {
	now := time.Now().Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = make(map[string]*latencySeries)
	}
	ts := m.events[event]
	if ts == nil {
		ts = new(latencySeries)
		m.events[event] = ts
	}
	ts.max = max(ts.max, ms)
	prev := &ts.samples[(ts.idx+latencyTSLen-1)%latencyTSLen]
	if prev.time == now {
		prev.latency = max(prev.latency, ms)
		return
	}
	ts.samples[ts.idx] = latencySample{time: now, latency: ms}
	ts.idx = (ts.idx + 1) % latencyTSLen
}

// snapshot copies the events, by name.
func (m *latencyMonitor) snapshot() (names []string, series []latencySeries) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name := range m.events {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		series = append(series, *m.events[name])
	}
	return names, series
}

// ordered calls f for every sample of ts, oldest first.
func (ts *latencySeries) ordered(f func(s latencySample)) {
	for j := range latencyTSLen {
		if s := ts.samples[(ts.idx+j)%latencyTSLen]; s.time != 0 {
			f(s)
		}
	}
}

func cmdLatencyLatest(rc *conn, _ [][]byte) {
	names, series := rc.p.ops.latency.snapshot()
	rc.w.Array(len(names))
	for i, name := range names {
		ts := &series[i]
		last := ts.samples[(ts.idx+latencyTSLen-1)%latencyTSLen]
		rc.w.Array(4)
		rc.w.BulkString(name)
		rc.w.Int(last.time)
		rc.w.Int(last.latency)
		rc.w.Int(ts.max)
	}
}

// event finds one event's series by its exact name.
func (m *latencyMonitor) event(name string) (latencySeries, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.events[name]
	if ts == nil {
		return latencySeries{}, false
	}
	return *ts, true
}

func cmdLatencyHistory(rc *conn, argv [][]byte) {
	ts, ok := rc.p.ops.latency.event(string(argv[2]))
	if !ok {
		rc.w.Array(0)
		return
	}
	var samples []latencySample
	ts.ordered(func(s latencySample) { samples = append(samples, s) })
	rc.w.Array(len(samples))
	for _, s := range samples {
		rc.w.Array(2)
		rc.w.Int(s.time)
		rc.w.Int(s.latency)
	}
}

// cmdLatencyReset is LATENCY RESET [event ...]: it drops the events
// named (in any case), or all, and answers how many it dropped.
func cmdLatencyReset(rc *conn, argv [][]byte) {
	m := &rc.p.ops.latency
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for name := range m.events {
		drop := len(argv) == 2
		for _, a := range argv[2:] {
			drop = drop || strings.EqualFold(name, string(a))
		}
		if drop {
			delete(m.events, name)
			n++
		}
	}
	rc.w.Int(int64(n))
}

func cmdLatencyGraph(rc *conn, argv [][]byte) {
	ts, ok := rc.p.ops.latency.event(string(argv[2]))
	if !ok {
		rc.w.Error("ERR No samples available for event '" + string(argv[2]) + "'")
		return
	}
	rc.w.Verbatim("txt", latencyGraph(string(argv[2]), &ts, time.Now().Unix()))
}

// latencyGraph draws an event's samples as Redis's latency sparkline:
// a header, then 4 rows of bars 80 columns wide, each sample labelled
// with how long ago it was.
func latencyGraph(event string, ts *latencySeries, now int64) []byte {
	var values []float64
	var labels []string
	var lo, hi int64
	ts.ordered(func(s latencySample) {
		if len(values) == 0 {
			lo, hi = s.latency, s.latency
		}
		lo, hi = min(lo, s.latency), max(hi, s.latency)
		var label string
		switch ago := now - s.time; {
		case ago < 60:
			label = strconv.FormatInt(ago, 10) + "s"
		case ago < 3600:
			label = strconv.FormatInt(ago/60, 10) + "m"
		case ago < 3600*24:
			label = strconv.FormatInt(ago/3600, 10) + "h"
		default:
			label = strconv.FormatInt(ago/(3600*24), 10) + "d"
		}
		values = append(values, float64(s.latency))
		labels = append(labels, label)
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, hi, lo, ts.max)
	b.WriteString(strings.Repeat("-", 80) + "\n")
	sparkline(&b, values, labels, 80, 4)
	return b.Bytes()
}

// sparkline renders values as Redis's sparkline.c does with its fill
// option: rows of "_o#" and '|' for each chunk of columns values, then
// the labels written downwards below them.
func sparkline(b *bytes.Buffer, values []float64, labels []string, columns, rows int) {
	if len(values) == 0 {
		return
	}
	minV, maxV := values[0], values[0]
	for _, v := range values[1:] {
		if v < minV {
			minV = v
		} else if v > maxV {
			maxV = v
		}
	}
	const charset = "_o#"
	steps := len(charset) * rows
	relmax := maxV - minV
	if relmax == 0 {
		relmax = 1
	}
	for off := 0; off < len(values); off += columns {
		if off != 0 {
			b.WriteByte('\n')
		}
		n := min(len(values)-off, columns)
		chars := make([]byte, n)
		for row := 0; ; row++ {
			more := false
			for j := range chars {
				chars[j] = ' '
			}
			for j := 0; j < n; j++ {
				step := int((values[off+j] - minV) * float64(steps) / relmax)
				step = max(0, min(step, steps-1))
				if row < rows {
					more = true
					idx := step - (rows-row-1)*len(charset)
					switch {
					case idx >= 0 && idx < len(charset):
						chars[j] = charset[idx]
					case idx >= len(charset):
						chars[j] = '|'
					}
					continue
				}
				if row-rows < 1 { // the blank row between bars and labels
					more = true
					break
				}
				if l := labels[off+j]; len(l) > row-rows-1 {
					more = true
					chars[j] = l[row-rows-1]
				}
			}
			if !more {
				break
			}
			b.Write(chars)
			b.WriteByte('\n')
		}
	}
}

// cmdLatencyHistogram is LATENCY HISTOGRAM [command ...]: the latency
// distribution of each command named (a container: its subcommands too),
// or of all, that has one.
func cmdLatencyHistogram(rc *conn, argv [][]byte) {
	t, _ := rc.p.ops.stats.totals(true)
	var cmds []*respCommand
	if len(argv) == 2 {
		cmds = allCommands
	} else {
		for _, name := range argv[2:] {
			c := lookupFull(name)
			if c == nil {
				continue
			}
			cmds = append(cmds, c)
			cmds = append(cmds, c.subs...)
		}
	}
	var have []*respCommand
	for _, c := range cmds {
		if h := t.cmds[c.stat.idx].hist; h != nil && h.total() > 0 {
			have = append(have, c)
		}
	}
	rc.w.Map(len(have))
	for _, c := range have {
		h := t.cmds[c.stat.idx].hist
		rc.w.BulkString(c.name)
		rc.w.Map(2)
		rc.w.BulkString("calls")
		rc.w.Int(int64(h.total()))
		rc.w.BulkString("histogram_usec")
		type point struct{ usec, count uint64 }
		var points []point
		var prev uint64
		for level := uint64(1024); ; level *= 2 {
			cum := h.below(level + 1)
			if cum > prev {
				// Redis labels the level with the largest value an HDR
				// histogram of 2 significant digits holds with it.
				points = append(points, point{(level + 1<<(bits.Len64(level|255)-8) - 1) / 1000, cum})
				prev = cum
			}
			if cum == h.total() || level > histMax {
				break
			}
		}
		rc.w.Map(len(points))
		for _, p := range points {
			rc.w.Int(int64(p.usec))
			rc.w.Int(int64(p.count))
		}
	}
}

func cmdLatencyDoctor(rc *conn, _ [][]byte) {
	rc.w.Verbatim("txt", []byte(rc.p.latencyReport()))
}

// latencyReport is LATENCY DOCTOR's report: Redis's createLatencyReport,
// with the advice for the events MiniKV records.
func (p *Protocol) latencyReport() string {
	set := p.ops.settings.Load()
	names, series := p.ops.latency.snapshot()
	if len(names) == 0 && set.latencyThreshold == 0 {
		return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. " +
			"You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. " +
			"If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n"
	}
	var b strings.Builder
	advices := 0
	var slowlogEnabled, slowlogTuning, slowlogInspect, largeObjects, scheduler bool
	now := time.Now().Unix()
	for i, name := range names {
		ts := &series[i]
		if i == 0 {
			b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		var n, sum, oldest int64
		ts.ordered(func(s latencySample) {
			n++
			sum += s.latency
			if oldest == 0 || s.time < oldest {
				oldest = s.time
			}
		})
		var avg, mad, period int64
		if n > 0 {
			avg = sum / n
			period = max(now-oldest, 1)
			var dev int64
			ts.ordered(func(s latencySample) { dev += abs64(avg - s.latency) })
			mad = dev / n
		}
		perSample := math.NaN()
		if n > 0 {
			perSample = float64(period) / float64(n)
		}
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			i+1, name, n, avg, mad, perSample, ts.max)
		switch strings.ToLower(name) {
		case "command":
			if set.slowlogSlower < 0 {
				slowlogEnabled = true
				advices++
			} else if set.slowlogSlower/1000 > set.latencyThreshold {
				slowlogTuning = true
				advices++
			}
			slowlogInspect, largeObjects = true, true
			advices += 2
		case "fast-command":
			scheduler = true
			advices++
		}
		b.WriteString("\n")
	}
	thp := anonHugePages() > 0
	if thp {
		advices++
	}
	switch {
	case len(names) == 0 && advices == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. " +
			"I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
		return b.String()
	case len(names) > 0 && advices == 0:
		b.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. " +
			"Please use the Redis community to get some help, providing this report in your help request.\n")
		return b.String()
	}
	b.WriteString("\nI have a few advices for you:\n\n")
	if slowlogEnabled {
		fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature "+
			"using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands "+
			"execution for you.\n", set.latencyThreshold*1000)
	}
	if slowlogTuning {
		fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. "+
			"Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", set.latencyThreshold*1000)
	}
	if slowlogInspect {
		b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. " +
			"Please check https://redis.io/commands/slowlog for more information.\n")
	}
	if scheduler {
		b.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system " +
			"does not provide Redis CPU time to run for long periods. You should try to:\n" +
			"  1) Lower the system load.\n" +
			"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
			"  3) Check if you have a \"noisy neighbour\" problem.\n" +
			"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
			"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. " +
			"However this may create fragmentation problems.\n")
	}
	if largeObjects {
		b.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. " +
			"If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into " +
			"multiple smaller objects.\n")
	}
	if thp {
		b.WriteString("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious " +
			"latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the " +
			"command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so " +
			"that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still " +
			"need to restart the Redis process to get rid of the huge pages already created.\n")
	}
	return b.String()
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// anonHugePages is the process's AnonHugePages in kB (Linux), or 0.
func anonHugePages() int64 {
	f, err := os.Open("/proc/self/smaps_rollup")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "AnonHugePages:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
