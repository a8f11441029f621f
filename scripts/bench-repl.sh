#!/bin/bash
# Replication side by side: a MiniKV primary with a MiniKV replica and a
# redis-server primary with a redis-server replica, the same client
# (redis-benchmark, 50 connections, 100 000 keys), ROUNDS runs each,
# alternating. docs/benchmarks.md quotes the medians.
#
#   MODE=set  (default): the primary's CPU per SET (utime+stime from /proc)
#             with one replica attached, at pipeline P, and requests per second.
#   MODE=sync: the time a fresh replica takes to be in sync with a primary
#             holding KEYS keys of mixed types (3/5 strings, and hashes,
#             lists, sets and sorted sets of 5 members), from REPLICAOF
#             until INFO replication says master_link_status:up.
#   MODE=lag: replication lag under redis-benchmark SET -P 16 (running
#             until the probe is done): a probe writes a counter to the
#             primary every 2 ms, PROBES times, and reads the replica until
#             it has it; the lag is the time from the primary's reply to
#             the replica's first reply with the value (p50 and p99).
#
#   MODE=coll: big collections with one replica attached: a sorted set,
#             a hash and a list of MEMBERS members (default 100 000), then
#             ZINCRBY lb 1 m:__rand_int__, HSET hh f:__rand_int__ v and
#             LMOVE lq lq RIGHT LEFT (a queue's rotation) at pipeline P;
#             the primary's CPU per request and requests per second for
#             each.
#
#   make build && P=16 scripts/bench-repl.sh && P=1 N=100000 scripts/bench-repl.sh
#   make build && MODE=coll N=100000 scripts/bench-repl.sh
#   make build && MODE=sync KEYS=1000000 scripts/bench-repl.sh
#   make build && MODE=lag scripts/bench-repl.sh
#   MINIKV_REPLICA_ENV=GOMAXPROCS=1 MODE=lag scripts/bench-repl.sh   # the replica's environment
set -eu
MODE=${MODE:-set}
P=${P:-16}
N=${N:-300000}
ROUNDS=${ROUNDS:-3}
KEYS=${KEYS:-1000000}
PROBES=${PROBES:-1500}
MEMBERS=${MEMBERS:-100000}
MINIKV=${MINIKV:-bin/minikv}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }

# start SRV PORT [REPLICAOF_PORT]: a server on PORT; sets $pid.
start() {
	local srv=$1 port=$2 of=${3:-}
	local dir="$tmp/$srv-$port"
	mkdir -p "$dir"
	if [ "$srv" = redis ]; then
		redis-server --port "$port" --dir "$dir" --save '' --appendonly no --repl-diskless-sync-delay 0 \
			${of:+--replicaof 127.0.0.1 "$of"} >"$dir/log" 2>&1 &
	else
		env ${of:+${MINIKV_REPLICA_ENV:-}} "$MINIKV" -l 127.0.0.1 -p 0 --resp-port "$port" --admin-addr= -m 4096 ${of:+--replicaof "127.0.0.1:$of"} >"$dir/log" 2>&1 &
	fi
	pid=$!
	pids+=("$pid")
	for _ in $(seq 100); do
		redis-cli -p "$port" PING >/dev/null 2>&1 && return
		sleep 0.05
	done
	echo "$srv on $port did not start" >&2
	exit 1
}

# insync PORT: waits until the replica on PORT has its link up.
insync() {
	for _ in $(seq 12000); do
		redis-cli -p "$1" INFO replication 2>/dev/null | grep -q '^master_link_status:up' && return
		sleep 0.01
	done
	echo "the replica on $1 never synced" >&2
	exit 1
}

stop() {
	kill "$@" 2>/dev/null || true
	wait "$@" 2>/dev/null || true
}

rate() { tr '\r' '\n' | awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "requests") print $i}' | tail -1; }

case "$MODE" in
coll)
	python3 - "$MEMBERS" >"$tmp/coll.resp" <<'EOF'
import sys
n = int(sys.argv[1])
out = sys.stdout.buffer
for i in range(0, n, 100):
    a = [b"ZADD", b"lb"]
    h = [b"HSET", b"hh"]
    l = [b"RPUSH", b"lq"]
    for j in range(i, min(i + 100, n)):
        a += [b"%d" % j, b"m:%012d" % j]
        h += [b"f:%012d" % j, b"value-%d" % j]
        l += [b"job-%d" % j]
    for c in (a, h, l):
        out.write(b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in c))
EOF
	for _ in $(seq "$ROUNDS"); do
		for srv in redis minikv; do
			pp=$(free_port)
			start "$srv" "$pp"
			ppid=$pid
			redis-cli -p "$pp" --pipe <"$tmp/coll.resp" >/dev/null
			rp=$(free_port)
			start "$srv" "$rp" "$pp"
			rpid=$pid
			insync "$rp"
			line="$srv P=$P members=$MEMBERS"
			for op in zincrby hset lmove; do
				case $op in
				zincrby) set -- ZINCRBY lb 1 m:__rand_int__ ;;
				hset) set -- HSET hh f:__rand_int__ v ;;
				lmove) set -- LMOVE lq lq RIGHT LEFT ;;
				esac
				c0=$(cpu "$ppid")
				rps=$(redis-benchmark -p "$pp" -n "$N" -r "$MEMBERS" -P "$P" -c 50 -q "$@" 2>/dev/null | rate)
				c1=$(cpu "$ppid")
				line="$line $op: rps=$rps cpu_us=$(echo "scale=2; ($c1-$c0)*10000/$N" | bc)"
			done
			stop "$rpid" "$ppid"
			echo "$line"
		done
	done
	;;
set)
	for _ in $(seq "$ROUNDS"); do
		for srv in redis minikv; do
			pp=$(free_port)
			start "$srv" "$pp"
			ppid=$pid
			rp=$(free_port)
			start "$srv" "$rp" "$pp"
			rpid=$pid
			insync "$rp"
			redis-benchmark -p "$pp" -n 50000 -r 100000 -P "$P" -c 50 -q SET key:__rand_int__ vvvvvvvvvv >/dev/null 2>&1
			c0=$(cpu "$ppid")
			rps=$(redis-benchmark -p "$pp" -n "$N" -r 100000 -P "$P" -c 50 -q SET key:__rand_int__ vvvvvvvvvv 2>/dev/null |
				tr '\r' '\n' | awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "requests") print $i}' | tail -1)
			c1=$(cpu "$ppid")
			off=$(redis-cli -p "$rp" INFO replication | tr -d '\r' | awk -F: '/^slave_repl_offset|^master_repl_offset/ {print $2; exit}')
			stop "$rpid" "$ppid"
			echo "$srv P=$P rps=$rps primary_cpu_us_per_set=$(echo "scale=2; ($c1-$c0)*10000/$N" | bc) replica_offset=$off"
		done
	done
	;;
sync)
	# The data set, once: redis-cli --pipe input.
	python3 - "$KEYS" >"$tmp/load.resp" <<'EOF'
import sys
n = int(sys.argv[1])
out = sys.stdout.buffer
def cmd(*a):
    b = [b"*%d\r\n" % len(a)]
    for x in a:
        x = x if isinstance(x, bytes) else str(x).encode()
        b.append(b"$%d\r\n%s\r\n" % (len(x), x))
    out.write(b"".join(b))
for i in range(n):
    k = "k:%d" % i
    m = i % 10
    if m < 6:
        cmd("SET", k, "value-%d-%s" % (i, "x" * 20))
    elif m == 6:
        cmd("HSET", k, *sum((["f%d" % j, "v%d" % j] for j in range(5)), []))
    elif m == 7:
        cmd("RPUSH", k, *["e%d" % j for j in range(5)])
    elif m == 8:
        cmd("SADD", k, *["m%d" % j for j in range(5)])
    else:
        cmd("ZADD", k, *sum(([str(j), "z%d" % j] for j in range(5)), []))
    if i % 7 == 0:
        cmd("PEXPIRE", k, 3600000)
EOF
	for _ in $(seq "$ROUNDS"); do
		for srv in redis minikv; do
			pp=$(free_port)
			start "$srv" "$pp"
			ppid=$pid
			redis-cli -p "$pp" --pipe <"$tmp/load.resp" >/dev/null
			rp=$(free_port)
			start "$srv" "$rp"
			rpid=$pid
			t0=$(date +%s.%N)
			redis-cli -p "$rp" REPLICAOF 127.0.0.1 "$pp" >/dev/null
			insync "$rp"
			t1=$(date +%s.%N)
			n=$(redis-cli -p "$rp" DBSIZE)
			stop "$rpid" "$ppid"
			echo "$srv keys=$n sync_seconds=$(echo "$t1 - $t0" | bc)"
		done
	done
	;;
lag)
	for _ in $(seq "$ROUNDS"); do
		for srv in redis minikv; do
			pp=$(free_port)
			start "$srv" "$pp"
			ppid=$pid
			rp=$(free_port)
			start "$srv" "$rp" "$pp"
			rpid=$pid
			insync "$rp"
			redis-benchmark -p "$pp" -n 1000000000 -r 100000 -P 16 -c 50 -q SET key:__rand_int__ vvvvvvvvvv >/dev/null 2>&1 &
			bpid=$!
			sleep 0.3
			lag=$(python3 - "$pp" "$rp" "$bpid" "$PROBES" <<'EOF'
import os, socket, sys, time
pp, rp, bench, probes = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def conn(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s, s.makefile("rb")
def do(c, *a):
    s, f = c
    s.sendall(b"".join([b"*%d\r\n" % len(a)] + [b"$%d\r\n%s\r\n" % (len(x), x) for x in a]))
    line = f.readline()
    if line[:1] == b"$" and line[1:3] != b"-1":
        v = f.read(int(line[1:]) + 2)[:-2]
        return v
    return line
p, r = conn(pp), conn(rp)
lags = []
i = 0
def alive():  # the load runs (its process is there and not a zombie)
    try:
        with open("/proc/%d/stat" % bench) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
while alive() and len(lags) < probes:
    i += 1
    v = b"%d" % i
    do(p, b"SET", b"lagprobe", v)
    t0 = time.perf_counter()
    while do(r, b"GET", b"lagprobe") != v:
        pass
    lags.append(time.perf_counter() - t0)
    time.sleep(0.002)
lags.sort()
q = lambda x: lags[min(len(lags) - 1, int(x * len(lags)))] * 1e6
print("probes=%d p50_us=%.0f p99_us=%.0f" % (len(lags), q(0.5), q(0.99)))
EOF
)
			stop "$bpid"
			stop "$rpid" "$ppid"
			echo "$srv $lag"
		done
	done
	;;
*)
	echo "MODE is set, sync or lag" >&2
	exit 2
	;;
esac
