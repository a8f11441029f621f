package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints the report as aligned tables, one per workload row and
// variant, with the medians, the min–max spread of ops/s over the
// repetitions, latency percentiles, hit rate, errors, CPU use and the ratio
// of the baseline (MiniKV) to each peer.
func (rep *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "\n%s\n", rep.headline())
	for _, r := range rep.Prefill {
		fmt.Fprintf(w, "prefill %-10s %s keys in %v (%s sets/s), errors %d\n",
			r.Target, humanCount(float64(r.Ops)), r.Wall.Round(time.Millisecond), humanCount(r.OpsPerSec), r.Errors)
	}
	base := rep.baselineName()
	var prev *Cell
	var tw *tabwriter.Writer
	var group []*Cell
	flush := func() {
		if tw != nil {
			_ = tw.Flush()
		}
		writeServers(w, group)
		group = group[:0]
	}
	for _, c := range rep.Cells {
		if prev == nil || prev.Label != c.Label || prev.Variant != c.Variant {
			flush()
			fmt.Fprintf(w, "\n%s  c=%d P=%d  (median of %d)\n", c.Label, c.Variant.Conns, c.Variant.Pipeline, len(c.Runs))
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "target\top\tops/s\tmin–max\tp50\tp90\tp99\tp99.9\tmax\thit%%\tevicted\terrors\tclient cpu\tserver cpu\tsrv µs/req\tother cpu\t%s ÷ this\t\n", base)
		}
		prev = c
		group = append(group, c)
		m := c.Median
		ratio := ""
		if c.Ratio > 0 {
			ratio = fmt.Sprintf("%.2f×", c.Ratio)
			if c.Baseline != base {
				ratio = fmt.Sprintf("%.2f× (%s)", c.Ratio, c.Baseline)
			}
		}
		hit := "-"
		if m.Hits+m.Misses > 0 {
			hit = fmt.Sprintf("%.1f", 100*m.HitRate())
		}
		srv, perOp := "-", "-"
		if m.ServerCPU > 0 {
			srv = fmt.Sprintf("%.2f", m.ServerCores())
			perOp = fmt.Sprintf("%.2f", m.ServerCPUPerOp)
		}
		errs := strconv.FormatInt(m.Errors, 10)
		if m.Errors > 0 {
			errs = "!! " + errs
		}
		ev := "-"
		if m.Evictions >= 0 {
			ev = humanCount(float64(m.Evictions))
		}
		fmt.Fprintf(tw, "%s\tall\t%s\t%s–%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%.2f\t%s\t\n",
			c.Target, humanCount(m.OpsPerSec), humanCount(c.MinOps), humanCount(c.MaxOps),
			fmtDur(m.All.P50), fmtDur(m.All.P90), fmtDur(m.All.P99), fmtDur(m.All.P999), fmtDur(m.All.Max),
			hit, ev, errs, m.ClientCores(), srv, perOp, m.OtherCores(), ratio)
		for _, ol := range []struct {
			name string
			l    Latency
		}{{"get", m.Get}, {"set", m.Set}} {
			if ol.l.Count == 0 || ol.l == m.All {
				continue
			}
			fmt.Fprintf(tw, "\t%s\t\t\t%s\t%s\t%s\t%s\t%s\t\t\t\t\t\t\t\t\t\n", ol.name,
				fmtDur(ol.l.P50), fmtDur(ol.l.P90), fmtDur(ol.l.P99), fmtDur(ol.l.P999), fmtDur(ol.l.Max))
		}
	}
	flush()
	if rep.Settings.Preset != "" {
		rep.writeSeedTable(w)
	}
	fmt.Fprintf(w, "\n%s. ops/s = requests / wall-clock time; cpu in cores;\n"+
		"other cpu = the rest of the machine during the run (above ~0.1, other work competed for the cores).\n", rep.Host.Note)
	if n := rep.Errors(); n > 0 {
		fmt.Fprintf(w, "\n!!! %d ERRORS during this run: the figures above are not trustworthy.\n", n)
		for _, c := range rep.Cells {
			if c.Median.FirstErr != "" {
				fmt.Fprintf(w, "!!! %s %s: %s\n", c.Target, c.Label, c.Median.FirstErr)
			}
		}
	}
	return nil
}

// writeServers prints each pooled target's per-server share under its
// table: requests answered (a split multi-get counts on every server it
// touched), keys asked for, their share, errors.
func writeServers(w io.Writer, cells []*Cell) {
	for _, c := range cells {
		m := c.Median
		if m == nil || len(m.Servers) == 0 {
			continue
		}
		var keys int64
		for _, s := range m.Servers {
			keys += s.Keys
		}
		fmt.Fprintf(w, "\n%s per server (medians; aggregate %s ops/s above):\n", c.Target, humanCount(m.OpsPerSec))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "server\tops/s\tops\tkeys\tshare of keys\terrors\t\n")
		for _, s := range m.Servers {
			share := 0.0
			if keys > 0 {
				share = 100 * float64(s.Keys) / float64(keys)
			}
			errs := strconv.FormatInt(s.Errors, 10)
			if s.Errors > 0 {
				errs = "!! " + errs
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f%%\t%s\t\n", s.Addr, humanCount(s.OpsPerSec), s.Ops, s.Keys, share, errs)
		}
		_ = tw.Flush()
	}
}

func (rep *Report) headline() string {
	s := rep.Settings
	var b strings.Builder
	if s.Preset != "" {
		fmt.Fprintf(&b, "preset %s: ", s.Preset)
	}
	fmt.Fprintf(&b, "keys=%d dist=%s ratio=%s value=%dB", s.Keys, s.Dist, s.Ratio, s.ValueSize)
	if s.Pool != "" {
		fmt.Fprintf(&b, " pool=(%s)", s.Pool)
	}
	if s.TTL > 0 {
		fmt.Fprintf(&b, " ttl=%ds", s.TTL)
	}
	if s.Rate > 0 {
		fmt.Fprintf(&b, " rate=%s/s (open loop)", humanCount(s.Rate))
	}
	if s.MultiGet > 1 {
		fmt.Fprintf(&b, " multiget=%d", s.MultiGet)
	}
	switch {
	case s.Requests > 0:
		fmt.Fprintf(&b, " n=%d", s.Requests)
	case s.Duration > 0:
		fmt.Fprintf(&b, " t=%v", s.Duration)
	}
	if s.Warmup > 0 {
		fmt.Fprintf(&b, " warmup=%v", s.Warmup)
	}
	if s.Prefill {
		b.WriteString(" prefilled")
	}
	if s.MemoryMB > 0 {
		fmt.Fprintf(&b, " servers: %d MiB, %d threads", s.MemoryMB, s.Threads)
	}
	fmt.Fprintf(&b, "; repeat %d; %s", s.Repeat, rep.Started.UTC().Format(time.RFC3339))
	return b.String()
}

// writeSeedTable prints the seed's own shape: service × workload with one
// ops/s column per concurrency and the scaling from the first to the last.
func (rep *Report) writeSeedTable(w io.Writer) {
	var concs []int
	seen := map[int]bool{}
	for _, c := range rep.Cells {
		if !seen[c.Variant.Conns] {
			seen[c.Variant.Conns] = true
			concs = append(concs, c.Variant.Conns)
		}
	}
	fmt.Fprintf(w, "\nseed shape (medians of %d, ops/s):\n\n| service | workload |", rep.Settings.Repeat)
	for _, n := range concs {
		fmt.Fprintf(w, " conc=%d ops/s |", n)
	}
	if len(concs) > 1 {
		fmt.Fprint(w, " scaling |")
	}
	fmt.Fprint(w, "\n|---|---|")
	for range concs {
		fmt.Fprint(w, "---:|")
	}
	if len(concs) > 1 {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, t := range rep.Targets {
		for _, label := range []string{"write", "read"} {
			fmt.Fprintf(w, "| %s | %s |", t, label)
			var first, last float64
			for i, n := range concs {
				v := 0.0
				for _, c := range rep.Cells {
					if c.Target == t && c.Label == label && c.Variant.Conns == n {
						v = c.Median.OpsPerSec
					}
				}
				if i == 0 {
					first = v
				}
				last = v
				fmt.Fprintf(w, " %s |", groupDigits(v))
			}
			if len(concs) > 1 {
				if first > 0 {
					fmt.Fprintf(w, " %.2fx |", last/first)
				} else {
					fmt.Fprint(w, " - |")
				}
			}
			fmt.Fprintln(w)
		}
	}
}

// WriteJSON writes the whole report, every run included.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteCSV writes one line per run and one per median (run = "median").
// Latencies are in microseconds.
func (rep *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{
		"workload", "conns", "pipeline", "target", "run", "ops", "wall_s", "ops_per_sec",
		"hits", "misses", "evictions", "errors", "client_cores", "server_cores", "server_cpu_per_op_us", "other_cores",
		"p50_us", "p90_us", "p99_us", "p999_us", "max_us", "get_p99_us", "set_p99_us", "ratio_baseline_over_this",
	})
	row := func(c *Cell, run string, r *Result, ratio float64) {
		us := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64) }
		_ = cw.Write([]string{
			c.Label, strconv.Itoa(c.Variant.Conns), strconv.Itoa(c.Variant.Pipeline), c.Target, run,
			strconv.FormatInt(r.Ops, 10), strconv.FormatFloat(r.Wall.Seconds(), 'f', 3, 64),
			strconv.FormatFloat(r.OpsPerSec, 'f', 0, 64),
			strconv.FormatInt(r.Hits, 10), strconv.FormatInt(r.Misses, 10), strconv.FormatInt(r.Evictions, 10),
			strconv.FormatInt(r.Errors, 10),
			strconv.FormatFloat(r.ClientCores(), 'f', 2, 64), strconv.FormatFloat(r.ServerCores(), 'f', 2, 64),
			strconv.FormatFloat(r.ServerCPUPerOp, 'f', 2, 64), strconv.FormatFloat(r.OtherCores(), 'f', 2, 64),
			us(r.All.P50), us(r.All.P90), us(r.All.P99), us(r.All.P999), us(r.All.Max), us(r.Get.P99), us(r.Set.P99),
			strconv.FormatFloat(ratio, 'f', 3, 64),
		})
	}
	for _, c := range rep.Cells {
		for i, r := range c.Runs {
			row(c, strconv.Itoa(i+1), r, 0)
		}
		row(c, "median", c.Median, c.Ratio)
	}
	cw.Flush()
	return cw.Error()
}

// fmtDur prints a latency with three significant digits in µs or ms.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64) + "µs"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
}

// humanCount prints 1234567 as "1.23M", 12345 as "12.3k".
func humanCount(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// groupDigits prints 1234567.8 as "1,234,568".
func groupDigits(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
