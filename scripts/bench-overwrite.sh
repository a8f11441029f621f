#!/usr/bin/env bash
# Resident memory per live key under an overwrite-heavy SET load, MiniKV
# against redis-server, side by side with the same client (issue 41):
#
#   redis-benchmark -t set -n N -r N -d 100 -P 64 -c 50
#
# writes N random keys out of N (about 63 % distinct, the rest
# overwrites). Each run starts fresh servers, reads VmRSS from /proc
# before and after, and DBSIZE; prints the RSS growth per live key and
# the load's wall time. Runs alternate redis/minikv, RUNS times.
#
#   make build && scripts/bench-overwrite.sh
#   M=700 scripts/bench-overwrite.sh            # -m 700 (MB); Redis: maxmemory 700mb, allkeys-lru
#   MINIKV_ENV="GOGC=50" scripts/bench-overwrite.sh
#   SERVERS=minikv RUNS=1 scripts/bench-overwrite.sh   # one server only
#   MODE=mix scripts/bench-overwrite.sh
#
# MODE=mix loads, with redis-cli --pipe, KEYS keys (default 400 000) with
# values of 100 B to 4 KB (uniform), then as many SETs again to random
# keys among them with new values of random sizes: half of all SETs
# overwrite.
set -euo pipefail
cd "$(dirname "$0")/.."
MINIKV=${MINIKV_BIN:-bin/minikv}
N=${N:-5000000}
M=${M:-4096}
RUNS=${RUNS:-2}
D=${D:-100}
MODE=${MODE:-set}
KEYS=${KEYS:-400000}
pid=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/minikv-ow.XXXXXX")
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
if [ "$MODE" = mix ]; then
	python3 - "$KEYS" >"$tmp/mix.resp" <<'PY'
import random, sys
n = int(sys.argv[1])
r = random.Random(41)
block = bytes(r.getrandbits(8) for _ in range(8192))
out = sys.stdout.buffer
def cmd(k):
    size = r.randint(100, 4096)
    off = r.randint(0, 8192 - size)
    key = b"mix:%09d" % k
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n" % (len(key), key, size))
    out.write(block[off:off + size])
    out.write(b"\r\n")
for k in range(n):
    cmd(k)
for _ in range(n):
    cmd(r.randrange(n))
PY
	N=$((2 * KEYS))
fi
for run in $(seq "$RUNS"); do
	for srv in ${SERVERS:-redis minikv}; do
		port=$(free_port)
		if [ "$srv" = redis ]; then
			maxmem=()
			[ "$M" != 4096 ] && maxmem=(--maxmemory "${M}mb" --maxmemory-policy allkeys-lru)
			redis-server --port "$port" --save '' --appendonly no "${maxmem[@]}" >/dev/null 2>&1 &
		else
			env ${MINIKV_ENV:-} "$MINIKV" -l 127.0.0.1 -p 0 --resp-port "$port" --admin-addr= -m "$M" >/dev/null 2>&1 &
		fi
		pid=$!
		for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
		r0=$(rss_kb "$pid")
		c0=$(cpu "$pid")
		t0=$(date +%s.%N)
		if [ "$MODE" = mix ]; then
			redis-cli -p "$port" --pipe <"$tmp/mix.resp" >/dev/null
		else
			redis-benchmark -p "$port" -t set -n "$N" -r "$N" -d "$D" -P 64 -c 50 -q >/dev/null 2>&1
		fi
		t1=$(date +%s.%N)
		c1=$(cpu "$pid")
		sleep 2
		r1=$(rss_kb "$pid")
		keys=$(redis-cli -p "$port" dbsize)
		awk -v s="$srv" -v r0="$r0" -v r1="$r1" -v k="$keys" -v t0="$t0" -v t1="$t1" -v c="$((c1 - c0))" -v n="$N" 'BEGIN {
			printf "%-6s run keys=%d rss=%.1f MB growth=%.1f MB %.1f B/key load=%.1f s cpu/req=%.2f us\n",
				s, k, r1/1024, (r1-r0)/1024, (r1-r0)*1024/k, t1-t0, c*10000/n }'
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		pid=
	done
done
