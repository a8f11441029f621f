#!/usr/bin/env bash
# Reads when 90 % of the data is only on disk (issue 13): durable MiniKV
# with -m sized so about a tenth of the data set fits in item memory
# ("tiered") against -m large enough for all of it ("in-memory"), same
# data, same reads.
#
#   scripts/bench-tiered.sh            (make bench-tiered)
#
# Each run starts bin/minikv on a fresh --data-dir (--fsync everysec),
# preloads every key with minikv-bench --prefill, waits until the server is
# idle (the engine's compactions after the load have finished, so they do
# not compete with the reads), warms up for WARMUP of gets, then measures
# DURATION of 100 % gets over uniform keys with CONNS connections, P=1.
# The two configurations alternate (tiered first in odd rounds, in-memory
# first in even ones) for ROUNDS rounds; the summary gives the medians.
#
# Per run it reports ops/s and p99 of the gets (minikv-bench), the server's
# CPU per get (its utime+stime from /proc/PID/stat during the measured
# phase, divided by the phase's gets), the share of gets served from item
# memory (1 - disk_hits / get_hits over the phase, from memcached stats)
# and the server's peak RSS (VmHWM).
#
# The data files stay in the OS page cache on a machine with more RAM than
# the data set: a "disk" read here costs the engine's read path (lookup,
# block read through the page cache, checksum, copy) and bringing the item
# back into memory (which evicts another), not a device's latency.
#
# Knobs (environment): KEYS=100000 VALUE=4096 SMALL_MB=40 FULL_MB=1024
# ROUNDS=3 CONNS=50 DURATION=10s WARMUP=3s FSYNC=everysec; MINIKV_BIN and
# MINIKV_BENCH name the binaries (default bin/minikv, bin/minikv-bench);
# OUT=dir keeps every run's minikv-bench table and JSON and the results.
# It stops only the server it started, by PID, and removes its data.
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=${MINIKV_BIN:-bin/minikv}
BENCH=${MINIKV_BENCH:-bin/minikv-bench}
PY=${PYTHON:-python3}
KEYS=${KEYS:-100000}
VALUE=${VALUE:-4096}
SMALL_MB=${SMALL_MB:-40}
FULL_MB=${FULL_MB:-1024}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-50}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
FSYNC=${FSYNC:-everysec}
OUT=${OUT:-}

[ -x "$BIN" ] || { echo "bench-tiered: $BIN not built (run make build)" >&2; exit 1; }
[ -x "$BENCH" ] || { echo "bench-tiered: $BENCH not built (run make build)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/minikv-bench-tiered-XXXXXX")
PID=""
cleanup() {
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill -TERM "$PID" 2>/dev/null || true
		wait "$PID" 2>/dev/null || true
	fi
	if [ -n "$OUT" ]; then
		mkdir -p "$OUT" && cp "$WORK"/*.json "$WORK"/*.txt "$WORK"/results.tsv "$OUT"/ 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
	"$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# mc_stat ADDR NAME prints one memcached stat.
mc_stat() {
	"$PY" - "$1" "$2" <<'EOF'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(b"stats\r\n")
buf = b""
while not buf.endswith(b"END\r\n"):
    chunk = s.recv(65536)
    if not chunk:
        break
    buf += chunk
for line in buf.decode().split("\r\n"):
    f = line.split()
    if len(f) == 3 and f[1] == sys.argv[2]:
        print(f[2])
        break
else:
    print(0)
EOF
}

# cpu_ticks PID prints utime+stime in clock ticks.
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

hwm_mib() {
	awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"
}

TICK=$(getconf CLK_TCK)
RESULTS="$WORK/results.tsv"
: >"$RESULTS"

# run LABEL MB ROUND
run() {
	local label=$1 mb=$2 round=$3
	local port addr data
	port=$(free_port)
	addr=127.0.0.1:$port
	data="$WORK/data-$label-$round"
	"$BIN" -l 127.0.0.1 -p "$port" --resp-port 0 --admin-addr "" --data-dir "$data" --fsync "$FSYNC" \
		-m "$mb" >"$WORK/server-$label-$round.log" 2>&1 &
	PID=$!
	local up=""
	for _ in $(seq 200); do
		"$PY" -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && { up=1; break; }
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$up" ] || { echo "bench-tiered: the server did not start:" >&2; cat "$WORK/server-$label-$round.log" >&2; exit 1; }
	local common=(-s "$addr" -d "$VALUE" --keys "$KEYS" --progress off)
	"$BENCH" "${common[@]}" --prefill --ratio 1:0 -n 1 --warmup 0 -c 8 >"$WORK/prefill-$label-$round.txt"
	# Idle: under 3 % of a core over a second, for at most a minute.
	local before now
	before=$(cpu_ticks "$PID")
	for _ in $(seq 60); do
		sleep 1
		now=$(cpu_ticks "$PID")
		[ $((now - before)) -le $((TICK * 3 / 100)) ] && break
		before=$now
	done
	"$BENCH" "${common[@]}" --ratio 0:1 -c "$CONNS" -t "$WARMUP" --warmup 0 >/dev/null
	local hits0 disk0 cpu0 hits1 disk1 cpu1
	hits0=$(mc_stat "$addr" get_hits)
	disk0=$(mc_stat "$addr" disk_hits)
	cpu0=$(cpu_ticks "$PID")
	"$BENCH" "${common[@]}" --name "$label" --ratio 0:1 -c "$CONNS" -P 1 --dist uniform -t "$DURATION" --warmup 0 \
		--json "$WORK/$label-$round.json" >"$WORK/$label-$round.txt"
	cpu1=$(cpu_ticks "$PID")
	hits1=$(mc_stat "$addr" get_hits)
	disk1=$(mc_stat "$addr" disk_hits)
	local hwm
	hwm=$(hwm_mib "$PID")
	kill -TERM "$PID"
	wait "$PID" || true
	PID=""
	rm -rf "$data"
	"$PY" - "$WORK/$label-$round.json" "$label" "$mb" "$round" $((cpu1 - cpu0)) "$TICK" \
		$((hits1 - hits0)) $((disk1 - disk0)) "$hwm" >>"$RESULTS" <<'EOF'
import json, sys
path, label, mb, rnd, ticks, tick, hits, disk, hwm = sys.argv[1:]
m = json.load(open(path))["cells"][0]["median"]
ops = m["ops"]
cpu_us = int(ticks) / int(tick) * 1e6 / ops if ops else 0
mem = 1 - int(disk) / int(hits) if int(hits) else 0
print("\t".join(str(x) for x in [label, mb, rnd, round(m["ops_per_sec"]), m["get"]["p99_ns"] / 1e3,
                                 round(cpu_us, 1), round(100 * mem, 1), hwm, m["errors"]]))
EOF
	tail -n 1 "$RESULTS" | awk -F'\t' '{ printf "%-9s -m %-5s round %s: %8d gets/s  p99 %8.0f µs  server %6.1f µs CPU/get  %5.1f %% from memory  peak RSS %s MiB  errors %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
}

echo "bench-tiered: $KEYS keys of $VALUE B, durable (--fsync $FSYNC); tiered -m $SMALL_MB, in-memory -m $FULL_MB;" \
	"$CONNS conns, P=1, 100 % gets, uniform, $DURATION per run, $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then
		run tiered "$SMALL_MB" "$round"
		run in-memory "$FULL_MB" "$round"
	else
		run in-memory "$FULL_MB" "$round"
		run tiered "$SMALL_MB" "$round"
	fi
done

"$PY" - "$RESULTS" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
med = {}
for label in ("tiered", "in-memory"):
    rs = [r for r in rows if r[0] == label]
    if not rs:
        continue
    col = lambda i: statistics.median(float(r[i]) for r in rs)
    med[label] = dict(mb=rs[0][1], ops=col(3), p99=col(4), cpu=col(5), mem=col(6), rss=col(7))
print("\nmedians of %d runs each:" % (len(rows) // max(len(med), 1)))
print("%-10s %6s %10s %10s %14s %12s %10s" % ("", "-m", "gets/s", "p99 µs", "CPU µs/get", "from memory", "peak RSS"))
for label, m in med.items():
    print("%-10s %6s %10.0f %10.0f %14.1f %11.1f%% %7.0f MiB" % (label, m["mb"], m["ops"], m["p99"], m["cpu"], m["mem"], m["rss"]))
if len(med) == 2:
    t, f = med["tiered"], med["in-memory"]
    print("tiered / in-memory: gets/s %.2f x, p99 %.2f x, CPU per get %.2f x" % (t["ops"] / f["ops"], t["p99"] / f["p99"], t["cpu"] / f["cpu"]))
EOF
