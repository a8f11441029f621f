#!/bin/bash
# GEOADD and GEOSEARCH on MiniKV and on redis-server, side by side with
# the same client (redis-benchmark, 50 connections), three runs each,
# alternating: requests per second and the server's CPU per request
# (utime+stime from /proc). docs/benchmarks.md quotes its medians.
#
#   GEOADD geo:add 13.361389 38.115556 m:__rand_int__ (100 000 members)
#   GEOSEARCH geo:pts FROMLONLAT 13.4 38.1 BYRADIUS 2 km ASC COUNT 10 WITHDIST,
#     geo:pts holding 100 000 points spread uniformly over 2 x 2 degrees
#     around it (about 30 within the radius, a few hundred in the cells read)
#
#   make build && P=16 scripts/bench-geo.sh && P=1 N=60000 scripts/bench-geo.sh
#
# MODE=rss: the resident memory of 1 000 000 members in one geo set
# (random positions over the globe, names member:N), each server started
# empty, loaded with redis-cli --pipe, measured a second later (VmRSS).
#
#   make build && MODE=rss scripts/bench-geo.sh
set -eu
MODE=${MODE:-cpu}
P=${P:-16}
N=${N:-200000}
MINIKV=${MINIKV:-bin/minikv}
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
points=$(mktemp)
trap 'rm -f "$points"' EXIT
# gen KEY COUNT LON0 LONSPAN LAT0 LATSPAN PREFIX SEED: GEOADD commands for
# COUNT members at uniform random positions, 500 per command, in $points.
gen() {
	python3 - "$points" "$@" <<'PY'
import random, sys
out, key, n, lon0, lons, lat0, lats, prefix, seed = sys.argv[1:]
r = random.Random(int(seed))
with open(out, "w") as f:
    for i in range(0, int(n), 500):
        args = ["GEOADD", key]
        for j in range(i, i + 500):
            args += ["%.6f" % (float(lon0) + float(lons) * r.random()), "%.6f" % (float(lat0) + float(lats) * r.random()), "%s%d" % (prefix, j)]
        f.write("*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a), a) for a in args))
PY
}
# start SRV PORT: redis-server or MiniKV on PORT, in the background.
start() {
	if [ "$1" = redis ]; then
		redis-server --port "$2" --save '' --appendonly no >/dev/null 2>&1 &
	else
		"$MINIKV" -l 127.0.0.1 -p 0 --resp-port "$2" --admin-addr= -m 4096 >/dev/null 2>&1 &
	fi
}
if [ "$MODE" = rss ]; then
	gen geo:big 1000000 -180 360 -85 170 member: 2
	rss() { awk '/VmRSS/{print $2}' "/proc/$1/status"; }
	# Anonymous and file-backed (the binary's own pages) parts of the RSS.
	anon() { awk '/RssAnon/{a=$2} /RssFile/{f=$2} END {print "rss_anon_kb=" a " rss_file_kb=" f}' "/proc/$1/status"; }
	for _ in 1 2 3; do
		for srv in redis minikv; do
			port=$(free_port)
			start "$srv" "$port"
			pid=$!
			sleep 0.5
			r0=$(rss "$pid")
			redis-cli -p "$port" --pipe <"$points" >/dev/null
			sleep 1
			echo "$srv rss_kb_before=$r0 rss_kb_after=$(rss "$pid") $(anon "$pid") zcard=$(redis-cli -p "$port" ZCARD geo:big)"
			kill "$pid"
			wait "$pid" 2>/dev/null || true
		done
	done
	exit 0
fi
gen geo:pts 100000 12.4 2 37.1 2 p 1
run() { # srv port pid name command...
	local srv=$1 port=$2 pid=$3 name=$4
	shift 4
	redis-benchmark -p "$port" -n 20000 -r 100000 -P "$P" -c 50 -q "$@" >/dev/null 2>&1
	c0=$(cpu "$pid")
	rps=$(redis-benchmark -p "$port" -n "$N" -r 100000 -P "$P" -c 50 -q "$@" 2>/dev/null |
		tr '\r' '\n' | awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "requests") print $i}' | tail -1)
	c1=$(cpu "$pid")
	echo "$srv $name P=$P rps=$rps cpu_us_per_req=$(echo "scale=2; ($c1-$c0)*10000/$N" | bc)"
}
for _ in 1 2 3; do
	for srv in redis minikv; do
		port=$(free_port)
		start "$srv" "$port"
		pid=$!
		sleep 0.4
		redis-cli -p "$port" --pipe <"$points" >/dev/null
		run "$srv" "$port" "$pid" geoadd GEOADD geo:add 13.361389 38.115556 m:__rand_int__
		run "$srv" "$port" "$pid" geosearch GEOSEARCH geo:pts FROMLONLAT 13.4 38.1 BYRADIUS 2 km ASC COUNT 10 WITHDIST
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	done
done
