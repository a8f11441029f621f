package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
	"time"
)

// chartColors are distinguishable in colour and in greyscale print.
var chartColors = []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}

// WriteChart draws the report as an SVG with two panels, median ops/s and
// median p99 latency, against the swept knob (or against the variants in
// the order measured), one line per target. It is plain SVG written by
// hand: no chart library, and the file diffs well in git.
func (rep *Report) WriteChart(w io.Writer, title string) error {
	type point struct {
		x        int
		ops, p99 float64
	}
	var xs []Variant
	xi := map[Variant]int{}
	series := map[string][]point{}
	label := "mixed"
	if len(rep.Cells) > 0 {
		label = rep.Cells[0].Label
	}
	for _, c := range rep.Cells {
		if c.Label != label {
			continue // one row per chart: the first (mixed, or the seed's write)
		}
		i, ok := xi[c.Variant]
		if !ok {
			i = len(xs)
			xi[c.Variant] = i
			xs = append(xs, c.Variant)
		}
		series[c.Target] = append(series[c.Target], point{i, c.Median.OpsPerSec, float64(c.Median.All.P99)})
	}
	if len(xs) == 0 {
		return fmt.Errorf("bench: nothing to chart")
	}
	xname, xval := "variant", func(v Variant) string { return fmt.Sprintf("c=%d P=%d", v.Conns, v.Pipeline) }
	switch rep.SweepParam {
	case "c":
		xname, xval = "connections (c), P="+fmt.Sprint(xs[0].Pipeline), func(v Variant) string { return fmt.Sprint(v.Conns) }
	case "P":
		xname, xval = "pipeline depth (P), c="+fmt.Sprint(xs[0].Conns), func(v Variant) string { return fmt.Sprint(v.Pipeline) }
	}
	if title == "" {
		s := rep.Settings
		title = fmt.Sprintf("%s: %d keys, %d B values, set:get %s, medians of %d", label, s.Keys, s.ValueSize, s.Ratio, s.Repeat)
	}

	const (
		W, H       = 960, 420
		panelW     = 400
		panelH     = 280
		top        = 86
		left1      = 80
		left2      = left1 + panelW + 80
		legendY    = top + panelH + 70
		fontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif"
	)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" font-size="12">`+"\n", W, H+20, W, H+20, fontFamily)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15" font-weight="bold">%s</text>`+"\n", left1-40, esc(title))
	note := rep.Host.Note
	if other, n := 0.0, 0; len(rep.Cells) > 0 {
		for _, c := range rep.Cells {
			other += c.Median.OtherCores()
			n++
		}
		note += fmt.Sprintf("; other processes used %.2f cores on average during the runs", other/float64(n))
	}
	fmt.Fprintf(&b, `<text x="%d" y="44" fill="#555">%s</text>`+"\n", left1-40, esc(note))

	xpos := func(left, i int) float64 {
		if len(xs) == 1 {
			return float64(left) + panelW/2
		}
		return float64(left) + 20 + float64(i)*float64(panelW-40)/float64(len(xs)-1)
	}
	panel := func(left int, name string, get func(point) float64, fmtY func(float64) string, logY bool) {
		minY, maxY := math.Inf(1), 0.0
		for _, pts := range series {
			for _, p := range pts {
				maxY = math.Max(maxY, get(p))
				if get(p) > 0 {
					minY = math.Min(minY, get(p))
				}
			}
		}
		var ypos func(float64) float64
		var ticks []float64
		if logY && maxY > 0 {
			// Latencies span 10 µs to a second across a sweep: a log axis
			// keeps the low end readable.
			lo := math.Pow(10, math.Floor(math.Log10(minY)))
			hi := math.Pow(10, math.Ceil(math.Log10(maxY)))
			if hi <= lo {
				hi = lo * 10
			}
			ypos = func(v float64) float64 {
				v = math.Max(v, lo)
				return top + panelH - (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*panelH
			}
			for v := lo; v <= hi*1.01; v *= 10 {
				ticks = append(ticks, v)
			}
		} else {
			step := niceStep(maxY / 5)
			if step == 0 {
				step = 1
			}
			ymax := step * math.Ceil(maxY/step)
			if ymax == 0 {
				ymax = step
			}
			ypos = func(v float64) float64 { return top + panelH - v/ymax*panelH }
			for v := 0.0; v <= ymax+step/2; v += step {
				ticks = append(ticks, v)
			}
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, top-10, esc(name))
		for _, v := range ticks {
			y := ypos(v)
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, y, left+panelW, y)
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" fill="#444">%s</text>`+"\n", left-6, y+4, esc(fmtY(v)))
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>`+"\n", left, top, panelW, panelH)
		for i, v := range xs {
			x := xpos(left, i)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#444">%s</text>`+"\n", x, top+panelH+16, esc(xval(v)))
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" fill="#444">%s</text>`+"\n", left+panelW/2, top+panelH+36, esc(xname))
		for ti, t := range rep.Targets {
			pts := series[t]
			if len(pts) == 0 {
				continue
			}
			col := chartColors[ti%len(chartColors)]
			var path strings.Builder
			for j, p := range pts {
				cmd := "L"
				if j == 0 {
					cmd = "M"
				}
				fmt.Fprintf(&path, "%s%.1f,%.1f ", cmd, xpos(left, p.x), ypos(get(p)))
			}
			fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.TrimSpace(path.String()), col)
			for _, p := range pts {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s %s: %s</title></circle>`+"\n",
					xpos(left, p.x), ypos(get(p)), col, esc(t), esc(xval(xs[p.x])), esc(fmtY(get(p))))
			}
		}
	}
	panel(left1, "throughput, ops/s (median)", func(p point) float64 { return p.ops }, humanCount, false)
	panel(left2, "p99 latency, all requests (median, log scale)", func(p point) float64 { return p.p99 },
		func(v float64) string { return axisDur(time.Duration(v)) }, true)
	x := left1
	for ti, t := range rep.Targets {
		col := chartColors[ti%len(chartColors)]
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", x, legendY-4, x+24, legendY-4, col)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", x+30, legendY, esc(t))
		x += 40 + 9*len(t) + 30
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// axisDur labels a latency axis: "10µs", "1ms", "100ms", "1s".
func axisDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%gµs", float64(d)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%gms", float64(d)/1e6)
	}
	return fmt.Sprintf("%gs", d.Seconds())
}

// niceStep rounds raw up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func esc(s string) string { return html.EscapeString(s) }
