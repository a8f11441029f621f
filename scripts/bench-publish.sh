#!/usr/bin/env bash
# PUBLISH side by side: MiniKV's RESP port (one or two builds) and a Redis
# started beside it, each with SUBS subscribers (redis-cli subscribe, the
# messages thrown away) on one channel, and redis-benchmark sending
# `PUBLISH ch hello` from one connection at each pipeline depth of
# PIPELINES, servers alternating, ROUNDS rounds. Prints each run's
# requests per second and server CPU per request (utime + stime of the
# server process from /proc/PID/stat around the run), then each server's
# median (docs/benchmarks.md, "PUBLISH").
#
# Environment: MINIKV_BIN [bin/minikv], MINIKV_OLD [another minikv build to
# compare with, e.g. one built from an earlier commit; unset: none], SUBS
# ["1 10"], PIPELINES ["1 16"], N [60000 requests at P=1; 10 x N at P>1],
# ROUNDS [5]. Every server listens on a free 127.0.0.1 port and is stopped
# by its PID, with its subscribers.
set -euo pipefail
cd "$(dirname "$0")/.."
MINIKV_BIN=${MINIKV_BIN:-bin/minikv}
SUBS=${SUBS:-"1 10"}
PIPELINES=${PIPELINES:-"1 16"}
N=${N:-60000}
ROUNDS=${ROUNDS:-5}
TCK=$(getconf CLK_TCK)

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# run KIND BIN SUBS P: one run; prints "KIND subs=S P=P rps cpu_us".
run() {
	local kind=$1 bin=$2 subs=$3 p=$4 port spid n t0 t1 rps
	port=$(free_port)
	if [ "$kind" = redis ]; then
		redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
	else
		"$bin" -l 127.0.0.1 -p 0 --resp-port "$port" --admin-addr "" >/dev/null 2>&1 &
	fi
	spid=$!
	for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
	local pids=()
	for _ in $(seq "$subs"); do
		redis-cli -p "$port" subscribe ch >/dev/null &
		pids+=($!)
	done
	until [ "$(redis-cli -p "$port" pubsub numsub ch | tail -1)" = "$subs" ]; do sleep 0.05; done
	n=$N
	[ "$p" = 1 ] || n=$((N * 10))
	t0=$(awk '{print $14 + $15}' "/proc/$spid/stat")
	rps=$(redis-benchmark -p "$port" -n "$n" -c 1 -P "$p" -q PUBLISH ch hello 2>&1 | tr '\r' '\n' |
		grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
	t1=$(awk '{print $14 + $15}' "/proc/$spid/stat")
	kill "${pids[@]}" "$spid" 2>/dev/null || true
	wait "${pids[@]}" "$spid" 2>/dev/null || true
	echo "$kind subs=$subs P=$p $rps $(python3 -c "print(round(($t1 - $t0) / $TCK * 1e6 / $n, 2))")"
}

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for subs in $SUBS; do
	for p in $PIPELINES; do
		for _ in $(seq "$ROUNDS"); do
			run minikv "$MINIKV_BIN" "$subs" "$p" | tee -a "$out"
			[ -z "${MINIKV_OLD:-}" ] || run minikv-old "$MINIKV_OLD" "$subs" "$p" | tee -a "$out"
			run redis "" "$subs" "$p" | tee -a "$out"
		done
	done
done
echo "medians (server CPU per request, us; requests per second):"
python3 - "$out" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    kind, subs, p, rps, cpu = line.split()
    runs.setdefault((subs, p, kind), []).append((float(cpu), float(rps)))
for (subs, p, kind), v in sorted(runs.items()):
    print(f"{subs} {p} {kind:10s} {statistics.median(c for c, _ in v):7.2f} us  {statistics.median(r for _, r in v):9.0f}/s  ({len(v)} runs)")
EOF
