#!/usr/bin/env bash
# Disk bytes per item after BGREWRITEAOF: MiniKV --data-dir against Redis
# with appendonly yes (everysec). N [1000000] keys of 100 B are written by
# minikv-bench to each, then BGREWRITEAOF runs on both, and once both
# rewrites are done the script prints du -sb of each directory
# (docs/durability.md). Build first (make build). Both servers listen on
# free 127.0.0.1 ports and are stopped by PID.
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
"$MINIKV" -p 0 --resp-port "$mk_port" --data-dir "$dir/mk" -m 4096 >"$dir/mk.log" 2>&1 &
pids+=($!)
redis-server --port "$rd_port" --bind 127.0.0.1 --dir "$dir/rd" --appendonly yes --appendfsync everysec --save '' >"$dir/rd.log" 2>&1 &
pids+=($!)
for port in "$mk_port" "$rd_port"; do
	until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
done
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
