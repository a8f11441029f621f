#!/usr/bin/env bash
# Reads right after a restart, durable MiniKV against Redis with its AOF
# (issue 41): each server is loaded with
#
#   redis-benchmark -t set -n N -r N -d 100 -P 64 -c 50
#
# (about 63 % of N distinct keys), stopped cleanly, and started again on
# its data; the script times the first PING answered after the start,
# then runs WINDOWS back-to-back GET loads of G requests
#
#   redis-benchmark -t get -n G -r N -P 16 -c 50
#
# and prints each window's requests per second and when it began, in
# seconds after the start. Redis answers only once its AOF is loaded;
# MiniKV answers at once and loads its data back into memory while it
# serves (its warm-up). Runs alternate redis/minikv, RUNS times.
#
#   make build && scripts/bench-warmup.sh
#   MINIKV_ARGS=--no-warm-up scripts/bench-warmup.sh   # if the flag exists
set -euo pipefail
cd "$(dirname "$0")/.."
MINIKV=${MINIKV_BIN:-bin/minikv}
N=${N:-3000000}
G=${G:-500000}
WINDOWS=${WINDOWS:-6}
RUNS=${RUNS:-2}
pid=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/minikv-warm.XXXXXX")
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
start_server() { # $1 redis|minikv, $2 port, $3 dir
	if [ "$1" = redis ]; then
		redis-server --port "$2" --dir "$3" --save '' --appendonly yes --appendfsync everysec >/dev/null 2>&1 &
	else
		"$MINIKV" -l 127.0.0.1 -p 0 --resp-port "$2" --admin-addr= -m 4096 --data-dir "$3" --fsync everysec ${MINIKV_ARGS:-} >/dev/null 2>&1 &
	fi
	pid=$!
}
stop_server() {
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
}
rps() { redis-benchmark -p "$1" "${@:2}" 2>/dev/null | tr '\r' '\n' | awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "requests") print $i}' | tail -1; }
for run in $(seq "$RUNS"); do
	for srv in redis minikv; do
		dir="$tmp/$srv-$run"
		mkdir -p "$dir"
		port=$(free_port)
		start_server "$srv" "$port" "$dir"
		until redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; do sleep 0.05; done
		redis-benchmark -p "$port" -t set -n "$N" -r "$N" -d 100 -P 64 -c 50 -q >/dev/null 2>&1
		keys=$(redis-cli -p "$port" dbsize)
		stop_server
		sync
		port=$(free_port)
		t0=$(now)
		start_server "$srv" "$port" "$dir"
		until redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; do sleep 0.01; done
		ready=$(awk -v a="$t0" -v b="$(now)" 'BEGIN {printf "%.2f", b - a}')
		line="$srv keys=$keys first-reply=${ready}s"
		for _ in $(seq "$WINDOWS"); do
			at=$(awk -v a="$t0" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}')
			line="$line ${at}s:$(rps "$port" -t get -n "$G" -r "$N" -P 16 -c 50 -q)"
		done
		echo "$line"
		stop_server
		rm -rf "$dir"
	done
done
