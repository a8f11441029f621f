#!/usr/bin/env bash
# Disk bytes per item after BGREWRITEAOF, and restart time after kill -9:
# MiniKV --data-dir against Redis with appendonly yes (everysec). N
# [1000000] keys of 100 B are written by minikv-bench to each, then
# BGREWRITEAOF runs on both; once both rewrites are done the script prints
# du -sb of each directory, kills both with SIGKILL, starts them again on
# the same directories and prints the time from the start to the first
# PONG (docs/durability.md). Build first (make build). Both servers listen
# on free 127.0.0.1 ports and are stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
MINIKV=${MINIKV_BIN:-bin/minikv}
BENCH=${MINIKV_BENCH:-bin/minikv-bench}
dir=$(mktemp -d "${TMPDIR:-/tmp}/minikv-diskbytes.XXXXXX")
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
mkdir -p "$dir/mk" "$dir/rd"
start() {
	"$MINIKV" -p 0 --resp-port "$mk_port" --data-dir "$dir/mk" -m $((4096 + N / 2000)) >>"$dir/mk.log" 2>&1 &
	mk_pid=$!
	redis-server --port "$rd_port" --bind 127.0.0.1 --dir "$dir/rd" --appendonly yes --appendfsync everysec --save '' >>"$dir/rd.log" 2>&1 &
	rd_pid=$!
	pids+=("$mk_pid" "$rd_pid")
}
# serving PORT T0: milliseconds from T0 (date +%s%N) until PORT answers
# PING with PONG (Redis answers -LOADING while it loads).
serving() {
	until [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ]; do sleep 0.01; done
	echo $((($(date +%s%N) - $2) / 1000000))
}
start
serving "$mk_port" 0 >/dev/null
serving "$rd_port" 0 >/dev/null
rewriting() { redis-cli -p "$1" info persistence | grep -q 'aof_rewrite_in_progress:1'; }
rewrite() {
	rewriting "$1" && while rewriting "$1"; do sleep 1; done # Redis may be rewriting on its own
	redis-cli -p "$1" bgrewriteaof >/dev/null
	sleep 1
	while rewriting "$1"; do sleep 1; done
}
for port in "$mk_port" "$rd_port"; do
	"$BENCH" -s "127.0.0.1:$port" --proto resp --keys "$N" --prefill --ratio 1:0 -d 100 -c 50 -P 16 -t 1s >"$dir/bench-$port.txt" 2>&1
	rewrite "$port"
done
sleep 2
mk=$(du -sb "$dir/mk" | cut -f1)
rd=$(du -sb "$dir/rd" | cut -f1)
echo "keys: MiniKV $(redis-cli -p "$mk_port" dbsize), Redis $(redis-cli -p "$rd_port" dbsize)"
echo "MiniKV --data-dir after BGREWRITEAOF: $mk bytes ($((mk / N)) per key)"
echo "Redis AOF after BGREWRITEAOF:         $rd bytes ($((rd / N)) per key)"
kill -9 "$mk_pid" "$rd_pid"
wait "$mk_pid" "$rd_pid" 2>/dev/null || true
t0=$(date +%s%N)
start
mk_ms=$(serving "$mk_port" "$t0")
rd_ms=$(serving "$rd_port" "$t0")
echo "restart after kill -9 until PONG (both started at once): MiniKV $mk_ms ms, Redis $rd_ms ms"
echo "keys after the restart: MiniKV $(redis-cli -p "$mk_port" dbsize), Redis $(redis-cli -p "$rd_port" dbsize)"
