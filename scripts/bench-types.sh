#!/usr/bin/env bash
# The data-type commands side by side: redis-benchmark's own tests
# (lpush, rpush, lpop, rpop, sadd, hset, spop, zadd, zpopmin, lrange_100,
# lrange_300, lrange_600, mset) against MiniKV's RESP port and a Redis 7
# started beside it, at P=1 and P=16, alternating servers, ROUNDS rounds;
# prints each server's requests per second and server CPU per request
# (the sum of its threads' run time from /proc/PID/task/*/schedstat, in
# nanoseconds, around each run), and the median of the rounds
# (docs/benchmarks.md). A round runs the tests one after the other on
# one dataset, as `redis-benchmark -t LIST` does (flushed at the round's
# start only): LPOP and RPOP pop what LPUSH and RPUSH pushed, SPOP and
# ZPOPMIN what SADD and ZADD added (without -r, one member each). Each
# test is its own redis-benchmark run, so the server's CPU is read around
# each. Pipelined runs but the LRANGEs send PN requests
# per test (ten times N by default), so that a run lasts about as long as
# an unpipelined one instead of a tenth of a second. Build first (make
# build). Both servers listen on free 127.0.0.1 ports, cache mode, and are
# stopped by PID.
#
# Environment: TESTS [the list above], N [200000 requests per test at
# P=1], PN [10 x N, at P>1], CONNS [50], PIPELINES ["1 16"], ROUNDS [3],
# MINIKV_BIN [bin/minikv], RB_ARGS [extra redis-benchmark arguments, e.g.
# "-r 1000000" for random keys: without it every request of a test names
# the same key, and MSET's ten pairs the same key ten times], PIN [set: both
# servers on CPU 1 and redis-benchmark on CPU 0 (taskset), so the client
# and a server never share a core or wait for each other's; the throughput
# then tells which side is the limit: the client's core when the two
# servers come out equal].
set -euo pipefail
cd "$(dirname "$0")/.."
TESTS=${TESTS:-lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,lrange_300,lrange_600,mset}
N=${N:-200000}
PN=${PN:-$((10 * N))}
CONNS=${CONNS:-50}
PIPELINES=${PIPELINES:-1 16}
ROUNDS=${ROUNDS:-3}
RB_ARGS=${RB_ARGS:-}
MINIKV=${MINIKV_BIN:-bin/minikv}
srv=() cli=()
if [ -n "${PIN:-}" ]; then
	srv=(taskset -c 1)
	cli=(taskset -c 0)
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/minikv-types.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mk_port=$(free_port)
rd_port=$(free_port)
"${srv[@]}" "$MINIKV" -p 0 --resp-port "$mk_port" --admin-addr "" -m 2048 >"$dir/mk.log" 2>&1 &
mk_pid=$!
"${srv[@]}" redis-server --port "$rd_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$dir/rd.log" 2>&1 &
rd_pid=$!
pids+=("$mk_pid" "$rd_pid")
for port in "$mk_port" "$rd_port"; do
	until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
done
# cpu_ns PID: the process's CPU time, its threads' run times summed.
cpu_ns() {
	local t sum=0 f
	for t in /proc/"$1"/task/*/schedstat; do
		read -r -a f <"$t" 2>/dev/null || continue
		sum=$((sum + f[0]))
	done
	echo "$sum"
}
# run NAME PORT PID P: the tests in order on a flushed dataset, each its
# own redis-benchmark run with the server's CPU read
# around it; appends "test name P rps cpu_us_per_request" lines.
run() {
	local name=$1 port=$2 pid=$3 p=$4 t t0 t1 n
	redis-cli -p "$port" flushall >/dev/null
	for t in ${TESTS//,/ }; do
		n=$N
		# (LRANGE replies are long: N takes seconds pipelined too.)
		if [ "$p" -gt 1 ] && [ "${t#lrange}" = "$t" ]; then n=$PN; fi
		t0=$(cpu_ns "$pid")
		# shellcheck disable=SC2086 # RB_ARGS is a list of arguments
		"${cli[@]}" redis-benchmark -p "$port" -t "$t" -n "$n" -c "$CONNS" -P "$p" $RB_ARGS -q --csv >"$dir/out.csv"
		t1=$(cpu_ns "$pid")
		# An LRANGE test runs an LPUSH fill first: its CPU is shared
		# between the two lines by request count.
		awk -F, -v n="$name" -v p="$p" -v cpu=$((t1 - t0)) -v N="$n" \
			'NR > 1 { gsub(/"/, ""); sub(/ .*/, "", $1); l[NR] = $1 " " n " " p " " $2 }
			END { for (i = 2; i <= NR; i++) printf "%s %.3f\n", l[i], cpu / 1e3 / (N * (NR - 1)) }' \
			"$dir/out.csv" >>"$dir/results"
	done
}
for p in $PIPELINES; do
	for r in $(seq "$ROUNDS"); do
		if [ $((r % 2)) = 1 ]; then
			run minikv "$mk_port" "$mk_pid" "$p"
			run redis "$rd_port" "$rd_pid" "$p"
		else
			run redis "$rd_port" "$rd_pid" "$p"
			run minikv "$mk_port" "$mk_pid" "$p"
		fi
	done
done
echo "# $(date -u +%FT%TZ) $(nproc) CPUs${PIN:+, servers on CPU 1 and the client on CPU 0}; redis-benchmark -n $N (pipelined $PN) -c $CONNS $RB_ARGS; medians of $ROUNDS rounds"
echo "# test P: MiniKV rps / Redis rps = ratio [the rounds' ratios, lowest-highest]; server CPU per request: MiniKV / Redis"
python3 - "$dir/results" <<'EOF'
import statistics, sys, collections
rows = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    test, name, p, rps, cpu = line.split()
    key = (test, p)
    if key not in order:
        order.append(key)
    rows[key + (name,)].append((float(rps), float(cpu)))
for test, p in sorted(order, key=lambda k: (int(k[1]), order.index(k))):
    m = rows[(test, p, "minikv")]
    r = rows[(test, p, "redis")]
    mr = statistics.median(x[0] for x in m)
    rr = statistics.median(x[0] for x in r)
    mc = statistics.median(x[1] for x in m)
    rc = statistics.median(x[1] for x in r)
    # Round i of one server ran next to round i of the other.
    ratios = [a[0] / b[0] for a, b in zip(m, r)]
    print(f"{test:<28} P={p:<3} {mr:>10.0f} / {rr:>10.0f} = {mr / rr:4.2f}x [{min(ratios):4.2f}-{max(ratios):4.2f}]"
          f"   cpu {mc:5.2f} / {rc:5.2f} us")
EOF
