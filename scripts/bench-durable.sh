#!/usr/bin/env bash
# Durable SET throughput against Redis's AOF (issue 13): redis-benchmark
# `-t set -d 100 -r 100000` against MiniKV's RESP port (--data-dir,
# --fsync MODE) and a Redis 7 started beside it with appendonly yes and
# the same appendfsync, at P=1 and P=16, alternating the servers, ROUNDS
# rounds; prints each server's requests per second, server CPU per SET
# (utime+stime from /proc around each run), SETs per fdatasync (perf's
# syscalls:sys_enter_fdatasync on the server's PID, when perf can) and the
# medians, and for MiniKV the average duration of a log fdatasync (from
# its /metrics: memcached_disk_fsync_seconds_total over
# memcached_disk_fsyncs_total, around each run) (docs/durability.md).
# MINIKV_BINS="NAME=PATH[@FLAG...] ..." runs
# several MiniKV builds or settings in the same rounds (each FLAG is passed
# to that server, e.g. loops=bin/minikv@--event-loops=1), so they compare
# with each other and with Redis in one run. Build first (make build).
# Every server listens on a free 127.0.0.1 port in its own temporary
# directory and is stopped by PID.
#
# Environment: MODE [always], N [300000 requests per run], CONNS [50],
# PIPELINES ["1 16"], ROUNDS [3], MINIKV_BINS ["minikv=bin/minikv"].
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${MODE:-always}
N=${N:-300000}
CONNS=${CONNS:-50}
PIPELINES=${PIPELINES:-1 16}
ROUNDS=${ROUNDS:-3}
BINS=${MINIKV_BINS:-minikv=bin/minikv}
dir=$(mktemp -d "${TMPDIR:-/tmp}/minikv-durable.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
names=() ports=() spids=() admins=()
start_minikv() { # NAME BIN[@FLAG...]
	local port bin flags admin
	port=$(free_port)
	admin=$(free_port)
	mkdir -p "$dir/$1"
	IFS=@ read -r -a flags <<<"$2"
	bin=${flags[0]}
	flags=("${flags[@]:1}")
	"$bin" -p 0 --resp-port "$port" --admin-addr "127.0.0.1:$admin" -m 2048 --data-dir "$dir/$1" --fsync "$MODE" "${flags[@]}" >"$dir/$1.log" 2>&1 &
	pids+=($!) names+=("$1") ports+=("$port") spids+=($!) admins+=("$admin")
}
for nb in $BINS; do start_minikv "${nb%%=*}" "${nb#*=}"; done
rd_port=$(free_port)
mkdir -p "$dir/redis"
redis-server --port "$rd_port" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync "$MODE" \
	--dir "$dir/redis" >"$dir/redis.log" 2>&1 &
pids+=($!) names+=(redis) ports+=("$rd_port") spids+=($!) admins+=("")
for port in "${ports[@]}"; do
	until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
	# Warm up: the first run after a start is slower for every server.
	redis-benchmark -p "$port" -t set -n 20000 -c "$CONNS" -d 100 -r 100000 -q >/dev/null
done
HZ=$(getconf CLK_TCK)
ticks() {
	local f
	read -r -a f <"/proc/$1/stat"
	echo $((f[13] + f[14]))
}
# fsyncs I: "count seconds" of server I's log fdatasyncs so far (MiniKV).
fsyncs() {
	if [ -z "${admins[$1]}" ]; then
		echo "0 0"
		return
	fi
	curl -s "http://127.0.0.1:${admins[$1]}/metrics" | awk '
		/^memcached_disk_fsyncs_total / { n = $2 }
		/^memcached_disk_fsync_seconds_total / { s = $2 }
		END { printf "%s %s\n", n + 0, s + 0 }'
}
perf_ok=0
if perf stat -e syscalls:sys_enter_fdatasync -x, -o /dev/null true 2>/dev/null; then perf_ok=1; fi
# run I P: one redis-benchmark run against server I; appends
# "name P rps cpu_us_per_set sets_per_fdatasync" to results.
run() {
	local i=$1 p=$2 t0 t1 rps syncs=0 perfpid=
	if [ $perf_ok = 1 ]; then
		perf stat -e syscalls:sys_enter_fdatasync -x, -o "$dir/perf.out" -p "${spids[$i]}" &
		perfpid=$!
		sleep 0.2
	fi
	read -r f0 fs0 < <(fsyncs "$i")
	t0=$(ticks "${spids[$i]}")
	rps=$(redis-benchmark -p "${ports[$i]}" -t set -n "$N" -c "$CONNS" -P "$p" -d 100 -r 100000 -q --csv |
		awk -F, 'NR > 1 { gsub(/"/, ""); print $2 }')
	t1=$(ticks "${spids[$i]}")
	read -r f1 fs1 < <(fsyncs "$i")
	if [ -n "$perfpid" ]; then
		kill -INT "$perfpid"
		wait "$perfpid" || true
		syncs=$(awk -F, '/fdatasync/ { print $1 }' "$dir/perf.out")
	fi
	awk -v n="${names[$i]}" -v p="$p" -v rps="$rps" -v cpu=$((t1 - t0)) -v hz="$HZ" -v N="$N" -v s="${syncs:-0}" \
		-v fn=$((f1 - f0)) -v fs="$(awk -v a="$fs0" -v b="$fs1" 'BEGIN { print b - a }')" \
		'BEGIN { printf "%s %s %s %.2f %.1f %.1f\n", n, p, rps, 1e6 * cpu / hz / N, (s > 0 ? N / s : 0), (fn > 0 ? 1e6 * fs / fn : 0) }' >>"$dir/results"
}
count=${#names[@]}
for p in $PIPELINES; do
	for r in $(seq "$ROUNDS"); do
		for j in $(seq 0 $((count - 1))); do
			run $(((j + r) % count)) "$p" # rotate who goes first
		done
	done
done
echo "# $(date -u +%FT%TZ) $(nproc) CPUs; --fsync $MODE vs appendfsync $MODE;" \
	"redis-benchmark -t set -n $N -c $CONNS -d 100 -r 100000; medians of $ROUNDS rounds"
echo "# server P: SET/s (each round), cpu us per SET, SETs per fdatasync, us per log fdatasync; ratio to Redis"
python3 - "$dir/results" <<'EOF'
import statistics, sys, collections
rows = collections.defaultdict(list)
names = []
for line in open(sys.argv[1]):
    name, p, rps, cpu, per, fus = line.split()
    if name not in names:
        names.append(name)
    rows[(name, p)].append((float(rps), float(cpu), float(per), float(fus)))
for p in sorted({k[1] for k in rows}, key=int):
    red = statistics.median(x[0] for x in rows[("redis", p)])
    for name in names:
        xs = rows[(name, p)]
        rps = statistics.median(x[0] for x in xs)
        each = " ".join(f"{x[0]/1000:.1f}k" for x in xs)
        print(f"{name:<12} P={p:<3} {rps:>9.0f}/s ({each})  cpu {statistics.median(x[1] for x in xs):5.2f} us"
              f"  {statistics.median(x[2] for x in xs):5.1f} SET/fdatasync"
              f"  {statistics.median(x[3] for x in xs):5.0f} us/fdatasync  {rps / red:4.2f}x Redis")
EOF
