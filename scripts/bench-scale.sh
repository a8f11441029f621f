#!/usr/bin/env bash
# The scale curve (issue 41): MiniKV against redis-server with 1 M, 10 M
# and 30 M keys of 100 B, the same client (minikv-bench over RESP, 50
# connections) for both. For each size and server, started empty:
#
#   load:  minikv-bench --keys N --prefill (every key set once, P=16):
#          load time, and RSS per key after it (VmRSS growth / N);
#   then four measured runs over those keys, uniform keys, -t T each:
#          GET and SET (same size, overwrites) at P=1 and P=16:
#          requests/s, p99, and server CPU per request (utime+stime of
#          the server from /proc around the run).
#
# One line per measurement; docs/benchmarks.md quotes them. Servers stop
# by PID. Needs about 7 GB of memory at 30 M keys (Redis).
#
#   make build && scripts/bench-scale.sh
#   SIZES="1000000 10000000" T=5s scripts/bench-scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
MINIKV=${MINIKV_BIN:-bin/minikv}
BENCH=${BENCH_BIN:-bin/minikv-bench}
SIZES=${SIZES:-1000000 10000000 30000000}
T=${T:-5s}
SERVERS=${SERVERS:-redis minikv}
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
# run ARGS...: one minikv-bench run; prints "ops/s p99"
run() {
	"$BENCH" -s "127.0.0.1:$port" --proto resp -c 50 -d 100 --progress off "$@" 2>&1 |
		awk '$2 == "all" { print $3, $8 }'
}
for n in $SIZES; do
	for srv in $SERVERS; do
		port=$(free_port)
		if [ "$srv" = redis ]; then
			redis-server --port "$port" --save '' --appendonly no >/dev/null 2>&1 &
		else
			"$MINIKV" -l 127.0.0.1 -p 0 --resp-port "$port" --admin-addr= -m $((n / 1000000 * 250 + 256)) >/dev/null 2>&1 &
		fi
		pid=$!
		until redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; do sleep 0.05; done
		r0=$(rss_kb "$pid")
		load=$("$BENCH" -s "127.0.0.1:$port" --proto resp -c 50 -P 16 -d 100 --keys "$n" --prefill \
			--ratio 0:1 -t 100ms --warmup 0 --progress off 2>&1 | awk '/^prefill/ { print $6 }')
		sleep 2
		r1=$(rss_kb "$pid")
		keys=$(redis-cli -p "$port" dbsize)
		echo "$srv n=$n keys=$keys load=$load rss=$((r1 / 1024))MB rss/key=$(((r1 - r0) * 1024 / n))B"
		for op in get set; do
			ratio=0:1
			[ "$op" = set ] && ratio=1:0
			for p in 1 16; do
				c0=$(cpu "$pid")
				s0=$(date +%s.%N)
				out=$(run --keys "$n" --ratio "$ratio" -P "$p" -t "$T" --warmup 0)
				s1=$(date +%s.%N)
				c1=$(cpu "$pid")
				set -- $out
				awk -v s="$srv" -v n="$n" -v op="$op" -v p="$p" -v rps="$1" -v p99="$2" -v c="$((c1 - c0))" -v w="$(awk -v a="$s0" -v b="$s1" 'BEGIN{print b-a}')" 'BEGIN {
					r = rps; m = 1
					if (r ~ /k$/) { m = 1e3; sub(/k$/, "", r) } else if (r ~ /M$/) { m = 1e6; sub(/M$/, "", r) }
					printf "%s n=%d %s P=%d ops/s=%s p99=%s cpu/req=%.2fus\n", s, n, op, p, rps, p99, c * 10000 / (r * m * w) }'
			done
		done
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		pid=
	done
done
