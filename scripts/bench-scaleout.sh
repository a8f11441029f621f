#!/usr/bin/env bash
# Throughput of 1, 2 and 3 MiniKV servers on this machine, reached three
# ways: directly (one server only), through twemproxy, and with
# client-side ketama (minikv-bench -s a,b,c --hash ketama). The figures of
# docs/scale-out.md come from here.
#
#   scripts/bench-scaleout.sh            (make bench-scaleout)
#
# Environment (defaults in brackets): NODES ["1 2 3"], PIPELINES ["1 16"],
# CONNS [50], DURATION [5s], REPEAT [3], KEYS [100000], VALUE [32],
# RATIO [1:9], MEMORY [256] (MiB per server), OUT [a temporary directory:
# each run's JSON report]. Servers start through scripts/cluster.sh local;
# nutcracker must be installed. Everything started is stopped by PID.
#
# On one machine every server, the proxy and the load generator share the
# same cores, so the nodes add no capacity here: this measures the cost of
# each way of spreading keys, not how far they scale (docs/scale-out.md).
set -euo pipefail

cd "$(dirname "$0")/.."
NODES=${NODES:-1 2 3}
PIPELINES=${PIPELINES:-1 16}
CONNS=${CONNS:-50}
DURATION=${DURATION:-5s}
REPEAT=${REPEAT:-3}
KEYS=${KEYS:-100000}
VALUE=${VALUE:-32}
RATIO=${RATIO:-1:9}
MEMORY=${MEMORY:-256}
BENCH=${MINIKV_BENCH:-bin/minikv-bench}
NUTCRACKER=$(PATH="$PATH:/usr/sbin" command -v nutcracker) || {
	echo "bench-scaleout: nutcracker not installed (apt-get install nutcracker)" >&2
	exit 1
}
if [ ! -x "$BENCH" ] || [ ! -x "${MINIKV_BIN:-bin/minikv}" ]; then
	echo "bench-scaleout: build first (make build)" >&2
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/minikv-scaleout.XXXXXX")
OUT=${OUT:-$work}
mkdir -p "$OUT"
export MINIKV_STATE_DIR=$work/state MINIKV_ARGS="-m $MEMORY"
proxy_pid=""
nodes_file=""
cleanup() {
	if [ -n "$proxy_pid" ]; then
		kill "$proxy_pid" 2>/dev/null || true
		wait "$proxy_pid" 2>/dev/null || true
	fi
	if [ -n "$nodes_file" ]; then
		scripts/cluster.sh stop "$nodes_file" 2>/dev/null || true
	fi
	[ "$OUT" = "$work" ] || rm -rf "$work"
}
trap cleanup EXIT

# free_port: as in scripts/cluster.sh.
free_port() {
	local p lo=32768 _
	# Below the kernel's ephemeral range, which outgoing connections use.
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	[ "$lo" -gt 12000 ] || lo=65536
	while :; do
		p=$((10000 + (RANDOM * 32768 + RANDOM) % (lo - 10000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

# measure LABEL P ARGS...: one minikv-bench run (REPEAT repetitions);
# prints "LABEL P ops/s p99_us errors" from its CSV's median row.
measure() {
	local label=$1 p=$2
	shift 2
	local csv
	csv=$("$BENCH" "$@" -c "$CONNS" -P "$p" --ratio "$RATIO" -d "$VALUE" --keys "$KEYS" --prefill \
		-t "$DURATION" --repeat "$REPEAT" --progress off --name "$label" \
		--json "$OUT/${label// /_}-P$p.json" --csv - 2>/dev/null)
	awk -F, -v l="$label" -v p="$p" '$5 == "median" { printf "%-22s P=%-3s %10.0f ops/s  p99 %8s us  errors %s\n", l, p, $8, $18, $12 }' <<<"$csv"
}

# ticks PID...: user+system CPU ticks of the processes, summed.
ticks() {
	local pid sum=0 f
	for pid in "$@"; do
		read -r -a f <"/proc/$pid/stat"
		# Fields 14 and 15 (utime, stime), counted after the ")" that ends
		# the command name, which has no spaces for these processes.
		sum=$((sum + f[13] + f[14]))
	done
	echo "$sum"
}
HZ=$(getconf CLK_TCK)

# cpu_cost LABEL P ARGS...: one more run of DURATION, no prefill (the keys
# are there), no warm-up, no repeat, with the CPU time of the servers and
# of the proxy read around it: prints each one's CPU per request.
cpu_cost() {
	local label=$1 p=$2
	shift 2
	local nodes=() s0 p0=0 s1 p1=0 ops client
	for f in "$MINIKV_STATE_DIR"/node-*.pid; do nodes+=("$(cat "$f")"); done
	s0=$(ticks "${nodes[@]}")
	[ -z "$proxy_pid" ] || p0=$(ticks "$proxy_pid")
	read -r ops client < <("$BENCH" "$@" -c "$CONNS" -P "$p" --ratio "$RATIO" -d "$VALUE" --keys "$KEYS" \
		-t "$DURATION" --warmup 0 --progress off --csv - 2>/dev/null |
		awk -F, '$5 == "median" { print $6, $13 * $7 }')
	s1=$(ticks "${nodes[@]}")
	[ -z "$proxy_pid" ] || p1=$(ticks "$proxy_pid")
	awk -v l="$label" -v p="$p" -v ops="$ops" -v c="$client" -v s=$((s1 - s0)) -v x=$((p1 - p0)) -v hz="$HZ" \
		'BEGIN { printf "%-22s P=%-3s cpu per request: client %.1f us, proxy %.1f us, servers %.1f us\n", l, p, 1e6 * c / ops, 1e6 * x / hz / ops, 1e6 * s / hz / ops }'
}

echo "# $(date -u +%FT%TZ) $(nproc) CPUs; c=$CONNS ratio=$RATIO value=${VALUE}B keys=$KEYS t=$DURATION, medians of $REPEAT"
for n in $NODES; do
	nodes_file=$work/nodes-$n
	scripts/cluster.sh local "$n" >"$nodes_file"
	list=$(awk '!/^#/ && NF { printf "%s%s", sep, $1; sep="," }' "$nodes_file")
	proxy_port=$(free_port)
	{
		echo "minikv:"
		echo "  listen: 127.0.0.1:$proxy_port"
		echo "  hash: md5"
		echo "  distribution: ketama"
		echo "  timeout: 5000"
		echo "  backlog: 1024"
		echo "  preconnect: true"
		echo "  auto_eject_hosts: false"
		echo "  servers:"
		i=0
		for a in ${list//,/ }; do
			echo "    - $a:1 minikv-$i"
			i=$((i + 1))
		done
	} >"$work/nutcracker-$n.yml"
	"$NUTCRACKER" -c "$work/nutcracker-$n.yml" -s "$(free_port)" -a 127.0.0.1 -o "$work/nutcracker-$n.log" &
	proxy_pid=$!
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$proxy_port") 2>/dev/null && break
		sleep 0.1
	done
	for p in $PIPELINES; do
		if [ "$n" = 1 ]; then
			measure "direct 1 node" "$p" -s "$list"
			cpu_cost "direct 1 node" "$p" -s "$list"
		fi
		measure "ketama $n node(s)" "$p" -s "$list" --hash ketama
		cpu_cost "ketama $n node(s)" "$p" -s "$list" --hash ketama
		measure "twemproxy $n node(s)" "$p" -s "127.0.0.1:$proxy_port"
		cpu_cost "twemproxy $n node(s)" "$p" -s "127.0.0.1:$proxy_port"
	done
	kill "$proxy_pid"
	wait "$proxy_pid" 2>/dev/null || true
	proxy_pid=""
	scripts/cluster.sh stop "$nodes_file" 2>/dev/null
	nodes_file=""
done
echo "# reports: $OUT"
