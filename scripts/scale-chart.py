#!/usr/bin/env python3
"""Draws scripts/bench-scale.sh's output as an SVG: server CPU per request
against the key count (GET and SET at P=1 and P=16), MiniKV solid and
Redis dashed, and RSS per key beside it.

    scripts/bench-scale.sh > scale.log && scripts/scale-chart.py scale.log docs/bench-scale.svg
"""
import math
import re
import sys

runs, rss = {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) n=(\d+) (get|set) P=(\d+) .*cpu/req=([\d.]+)us", line)
    if m:
        runs.setdefault((m[1], m[3], int(m[4])), []).append((int(m[2]), float(m[5])))
    m = re.match(r"(\w+) n=(\d+) keys=.* rss/key=(\d+)B", line)
    if m:
        rss.setdefault(m[1], []).append((int(m[2]), int(m[3])))
sizes = sorted({n for pts in runs.values() for n, _ in pts})
W, H, L, T, PW, PH = 960, 420, 70, 70, 520, 280
colors = {("get", 1): "#1f77b4", ("get", 16): "#2ca02c", ("set", 1): "#d62728", ("set", 16): "#9467bd"}
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
       'font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">',
       '<rect width="100%" height="100%" fill="white"/>',
       '<text x="40" y="24" font-size="15" font-weight="bold">MiniKV (solid) and Redis 7.0.15 (dashed) as keys grow: '
       '100 B values, minikv-bench c=50</text>',
       '<text x="40" y="44" fill="#555">server CPU per request (utime+stime / requests); one run per point, '
       'scripts/bench-scale.sh</text>']
lx = lambda n, x0, w: x0 + w * (math.log10(n) - math.log10(sizes[0])) / max(math.log10(sizes[-1] / sizes[0]), 1e-9)


def panel(x0, w, ymax, title, series, unit):
    out.append(f'<text x="{x0}" y="{T - 8}" font-weight="bold">{title}</text>')
    for i in range(5):
        y = T + PH - PH * i / 4
        out.append(f'<line x1="{x0}" y1="{y}" x2="{x0 + w}" y2="{y}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4}" text-anchor="end">{ymax * i / 4:g}</text>')
    for n in sizes:
        x = lx(n, x0, w)
        out.append(f'<text x="{x}" y="{T + PH + 16}" text-anchor="middle">{n // 1000000} M</text>')
    out.append(f'<text x="{x0 + w / 2}" y="{T + PH + 34}" text-anchor="middle">keys ({unit})</text>')
    for pts, color, dash, label in series:
        pts = sorted(pts)
        d = " ".join(f"{lx(n, x0, w):.1f},{T + PH - PH * v / ymax:.1f}" for n, v in pts)
        out.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"'
                   + (' stroke-dasharray="6,4"' if dash else "") + "/>")
        if label:
            n, v = pts[-1]
            out.append(f'<text x="{lx(n, x0, w) + 6}" y="{T + PH - PH * v / ymax + 4}" fill="{color}">{label}</text>')


cpu_max = math.ceil(max(v for pts in runs.values() for _, v in pts))
panel(L, PW, cpu_max, "server CPU per request, µs", [
    (pts, colors[(op, p)], srv == "redis", f"{op.upper()} P={p}" if srv == "minikv" else "")
    for (srv, op, p), pts in sorted(runs.items())], "log scale")
rss_max = 50 * math.ceil(max(v for pts in rss.values() for _, v in pts) / 50)
panel(L + PW + 110, 250, rss_max, "RSS per key, bytes", [
    (pts, "#333", srv == "redis", srv) for srv, pts in sorted(rss.items())], "log scale")
out.append("</svg>")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
