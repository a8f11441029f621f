package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"
)

// Plan is a whole benchmark: which targets, which variants (one, or a
// sweep), how many repetitions.
type Plan struct {
	Job      Job
	Targets  []Target // already running
	Variants []Variant
	Repeat   int
	Live     *Live
}

// Cell is one (row, variant, target) of the report with every repetition
// and their median.
type Cell struct {
	Label    string    `json:"workload"`
	Variant  Variant   `json:"variant"`
	Target   string    `json:"target"`
	Runs     []*Result `json:"runs"`
	Median   *Result   `json:"median"`
	MinOps   float64   `json:"min_ops_per_sec"`
	MaxOps   float64   `json:"max_ops_per_sec"`
	Baseline string    `json:"baseline,omitempty"`
	// Ratio is the baseline's median ops/s over this target's: above 1
	// the baseline (MiniKV) is faster. 0 for the baseline itself.
	Ratio float64 `json:"ratio,omitempty"`
}

// Report is everything a run measured, for the table, JSON, CSV and chart.
type Report struct {
	Command    string            `json:"command"`
	Started    time.Time         `json:"started"`
	Host       HostInfo          `json:"host"`
	Targets    []string          `json:"targets"`
	Protocols  map[string]string `json:"protocols,omitempty"` // target -> "memcache" or "resp"
	Servers    []ServerInfo      `json:"servers,omitempty"`
	Settings   Settings          `json:"settings"`
	Prefill    []*Result         `json:"prefill,omitempty"`
	Cells      []*Cell           `json:"cells"`
	SweepParam string            `json:"sweep,omitempty"` // "c" or "P" when Variants vary
	Elapsed    time.Duration     `json:"elapsed_ns"`
}

// HostInfo says where the figures come from.
type HostInfo struct {
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go"`
	Note       string `json:"note"`
}

// ServerInfo is the command line of a server the bench started.
type ServerInfo struct {
	Name string   `json:"name"`
	Addr string   `json:"addr"`
	Args []string `json:"args"`
}

// Settings echo the workload knobs.
type Settings struct {
	Preset    string        `json:"preset,omitempty"`
	Pool      string        `json:"pool,omitempty"` // -s a,b,c: "ketama: a, b, c"
	Keys      int           `json:"keys"`
	Dist      string        `json:"dist"`
	Ratio     string        `json:"ratio"`
	ValueSize int           `json:"value_size"`
	TTL       int           `json:"ttl"`
	MultiGet  int           `json:"multiget,omitempty"`
	Rate      float64       `json:"rate,omitempty"` // offered requests/s (open loop); 0 closed loop
	Requests  int64         `json:"requests,omitempty"`
	Duration  time.Duration `json:"duration_ns,omitempty"`
	Warmup    time.Duration `json:"warmup_ns,omitempty"`
	Prefill   bool          `json:"prefill"`
	Repeat    int           `json:"repeat"`
	MemoryMB  int           `json:"memory_mb,omitempty"`
	Threads   int           `json:"threads,omitempty"`
}

// NewHostInfo describes this machine.
func NewHostInfo() HostInfo {
	h := HostInfo{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()}
	h.Note = fmt.Sprintf("client and servers share the same %d CPUs over loopback", h.CPUs)
	return h
}

// Execute prepares every target, then runs Repeat rounds; round i runs the
// targets rotated by i, so no server always goes first (or last, after the
// machine has warmed up or other work has started). It fills rep.Cells and
// rep.Prefill and returns the first error; ctx's cancellation stops it
// between phases.
func (p *Plan) Execute(ctx context.Context, rep *Report) error {
	repeat := max(p.Repeat, 1)
	for _, t := range p.Targets {
		r, err := p.Job.Prepare(ctx, t, p.Live)
		if err != nil {
			return err
		}
		if r != nil {
			rep.Prefill = append(rep.Prefill, r)
		}
	}
	type key struct {
		label  string
		v      Variant
		target string
	}
	cells := map[key]*Cell{}
	var order []key
	for _, v := range p.Variants {
		for round := range repeat {
			for j := range p.Targets {
				t := p.Targets[(j+round)%len(p.Targets)]
				if p.Live != nil {
					p.Live.Prefix = fmt.Sprintf("[c=%d P=%d run %d/%d]", v.Conns, v.Pipeline, round+1, repeat)
				}
				rs, err := p.Job.Measure(ctx, t, v, p.Live)
				if err != nil {
					return err
				}
				for _, r := range rs {
					k := key{r.Label, v, t.Name}
					c := cells[k]
					if c == nil {
						c = &Cell{Label: r.Label, Variant: v, Target: t.Name}
						cells[k] = c
						order = append(order, k)
					}
					c.Runs = append(c.Runs, r)
				}
			}
		}
	}
	// Report order: variants and rows as measured, targets as listed.
	var labels []string
	seen := map[string]bool{}
	for _, k := range order {
		if !seen[k.label] {
			seen[k.label] = true
			labels = append(labels, k.label)
		}
	}
	for _, v := range p.Variants {
		for _, l := range labels {
			for _, t := range p.Targets {
				if c := cells[key{l, v, t.Name}]; c != nil {
					c.Median = Median(c.Runs)
					c.MinOps, c.MaxOps = Spread(c.Runs)
					rep.Cells = append(rep.Cells, c)
				}
			}
		}
	}
	rep.fillRatios()
	return nil
}

// Baseline is the target the ratios of target t are taken against: a
// Redis-protocol peer is compared with MiniKV's RESP port (minikv-resp)
// when that was measured, everything else with minikv's memcached port;
// without either, with the first target. MiniKV's own rows get none ("").
func (rep *Report) Baseline(t string) string {
	has := func(name string) bool {
		for _, x := range rep.Targets {
			if x == name {
				return true
			}
		}
		return false
	}
	if t == NameMinikv || t == NameMinikvRESP {
		return ""
	}
	if rep.Protocols[t] == "resp" && has(NameMinikvRESP) {
		return NameMinikvRESP
	}
	if has(NameMinikv) {
		return NameMinikv
	}
	if has(NameMinikvRESP) {
		return NameMinikvRESP
	}
	if len(rep.Targets) > 0 && rep.Targets[0] != t {
		return rep.Targets[0]
	}
	return ""
}

// baselineName is the column title: "minikv" in a MiniKV comparison, else
// the first target.
func (rep *Report) baselineName() string {
	for _, t := range rep.Targets {
		if t == NameMinikv || t == NameMinikvRESP {
			return "minikv"
		}
	}
	if len(rep.Targets) > 0 {
		return rep.Targets[0]
	}
	return ""
}

func (rep *Report) fillRatios() {
	for _, c := range rep.Cells {
		base := rep.Baseline(c.Target)
		if base == "" {
			continue
		}
		for _, b := range rep.Cells {
			if b.Target == base && b.Label == c.Label && b.Variant == c.Variant && c.Median.OpsPerSec > 0 {
				c.Baseline = base
				c.Ratio = b.Median.OpsPerSec / c.Median.OpsPerSec
			}
		}
	}
}

// Errors is the number of errors over every measured run.
func (rep *Report) Errors() int64 {
	var n int64
	for _, c := range rep.Cells {
		for _, r := range c.Runs {
			n += r.Errors
		}
	}
	for _, r := range rep.Prefill {
		n += r.Errors
	}
	return n
}
