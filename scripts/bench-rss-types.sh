#!/usr/bin/env bash
# Resident memory per element of the collections, MiniKV against Redis 7:
# one hash of 1 M fields, one set of 1 M members, one sorted set of 1 M
# members, one list of 1 M elements, and 100 k hashes of 10 small fields
# (Redis's listpack case). Each case starts fresh servers, loads the same
# commands into both with redis-cli --pipe, and reads VmRSS from /proc
# before and after (docs/benchmarks.md). Build first (make build). Both
# servers listen on free 127.0.0.1 ports and are stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
MINIKV=${MINIKV_BIN:-bin/minikv}
dir=$(mktemp -d "${TMPDIR:-/tmp}/minikv-rss.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# gen CASE: the RESP commands of a case on stdout, and its element count
# in $dir/count.
gen() {
	python3 - "$1" "$dir/count" <<'EOF'
import sys
case, countfile = sys.argv[1], sys.argv[2]
out = sys.stdout.buffer
def cmd(*args):
    out.write(b"*%d\r\n" % len(args))
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.write(b"$%d\r\n%s\r\n" % (len(a), a))
n = 0
if case == "hash-1M":
    for i in range(0, 1_000_000, 100):
        args = ["HSET", "h"]
        for j in range(i, i + 100):
            args += ["field:%07d" % j, "value:%07d" % j]
        cmd(*args)
    n = 1_000_000
elif case == "set-1M":
    for i in range(0, 1_000_000, 100):
        cmd("SADD", "s", *["member:%07d" % j for j in range(i, i + 100)])
    n = 1_000_000
elif case == "zset-1M":
    for i in range(0, 1_000_000, 100):
        args = ["ZADD", "z"]
        for j in range(i, i + 100):
            args += [j, "member:%07d" % j]
        cmd(*args)
    n = 1_000_000
elif case == "list-1M":
    for i in range(0, 1_000_000, 100):
        cmd("RPUSH", "l", *["element:%07d" % j for j in range(i, i + 100)])
    n = 1_000_000
elif case == "hashes-100k-x10":
    for i in range(100_000):
        args = ["HSET", "user:%06d" % i]
        for j in range(10):
            args += ["f%d" % j, "v%06d" % i]
        cmd(*args)
    n = 1_000_000
open(countfile, "w").write(str(n))
EOF
}

echo "# $(date -u +%FT%TZ) RSS growth per element (bytes), MiniKV / Redis"
for c in hash-1M set-1M zset-1M list-1M hashes-100k-x10; do
	mk_port=$(free_port)
	rd_port=$(free_port)
	"$MINIKV" -p 0 --resp-port "$mk_port" --admin-addr "" -m 4096 >"$dir/mk.log" 2>&1 &
	mk_pid=$!
	redis-server --port "$rd_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$dir/rd.log" 2>&1 &
	rd_pid=$!
	pids=("$mk_pid" "$rd_pid")
	for port in "$mk_port" "$rd_port"; do
		until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
	done
	gen "$c" >"$dir/cmds"
	n=$(cat "$dir/count")
	mk0=$(rss_kb "$mk_pid")
	rd0=$(rss_kb "$rd_pid")
	redis-cli -p "$mk_port" --pipe <"$dir/cmds" >/dev/null
	redis-cli -p "$rd_port" --pipe <"$dir/cmds" >/dev/null
	sleep 1
	mk1=$(rss_kb "$mk_pid")
	rd1=$(rss_kb "$rd_pid")
	enc_mk=$(redis-cli -p "$mk_port" object encoding "$(redis-cli -p "$mk_port" randomkey)")
	enc_rd=$(redis-cli -p "$rd_port" object encoding "$(redis-cli -p "$rd_port" randomkey)")
	awk -v c="$c" -v n="$n" -v m=$(((mk1 - mk0) * 1024)) -v r=$(((rd1 - rd0) * 1024)) -v em="$enc_mk" -v er="$enc_rd" \
		'BEGIN { printf "%-16s %6.1f / %6.1f = %4.2fx   (%s / %s)\n", c, m / n, r / n, m / r, em, er }'
	kill "$mk_pid" "$rd_pid"
	wait "$mk_pid" "$rd_pid" 2>/dev/null || true
done
