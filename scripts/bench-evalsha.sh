#!/bin/bash
# EVALSHA of a script on MiniKV and on redis-server, side by side with the
# same client (redis-benchmark, 50 connections, 100 000 keys), three runs
# each, alternating: requests per second and the server's CPU per request
# (utime+stime from /proc). docs/benchmarks.md quotes its medians.
#
#   SCRIPT=getset (default): redis.call("GET", KEYS[1]) return redis.call("SET", KEYS[1], ARGV[1])
#   SCRIPT=release: the lock release script of redis-py's Lock and others,
#     if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end
#     run after "SET key:__rand_int__ v" filled the keyspace (about 63 000 of
#     the 100 000 keys), so calls find a lock to release until it is gone
#     (about a quarter of them delete; the rest read and return 0).
#
#   make build && P=16 scripts/bench-evalsha.sh && P=1 N=60000 scripts/bench-evalsha.sh
#   make build && SCRIPT=release P=16 scripts/bench-evalsha.sh && SCRIPT=release P=1 N=60000 scripts/bench-evalsha.sh
set -eu
P=${P:-16}
N=${N:-200000}
MINIKV=${MINIKV:-bin/minikv}
SCRIPT=${SCRIPT:-getset}
case "$SCRIPT" in
getset) body='redis.call("GET", KEYS[1]) return redis.call("SET", KEYS[1], ARGV[1])' ;;
release) body='if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end' ;;
*)
	echo "SCRIPT is getset or release" >&2
	exit 2
	;;
esac
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
for _ in 1 2 3; do
	for srv in redis minikv; do
		port=$(free_port)
		if [ "$srv" = redis ]; then
			redis-server --port "$port" --save '' --appendonly no >/dev/null 2>&1 &
		else
			"$MINIKV" -l 127.0.0.1 -p 0 --resp-port "$port" --admin-addr= >/dev/null 2>&1 &
		fi
		pid=$!
		sleep 0.4
		sha=$(redis-cli -p "$port" SCRIPT LOAD "$body")
		if [ "$SCRIPT" = release ]; then
			redis-benchmark -p "$port" -n 100000 -r 100000 -P 16 -c 50 -q SET key:__rand_int__ v >/dev/null 2>&1
		fi
		redis-benchmark -p "$port" -n 20000 -r 100000 -P "$P" -c 50 -q EVALSHA "$sha" 1 key:__rand_int__ v >/dev/null 2>&1
		c0=$(cpu "$pid")
		rps=$(redis-benchmark -p "$port" -n "$N" -r 100000 -P "$P" -c 50 -q EVALSHA "$sha" 1 key:__rand_int__ v 2>/dev/null |
			tr '\r' '\n' | awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "requests") print $i}' | tail -1)
		c1=$(cpu "$pid")
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		echo "$srv script=$SCRIPT P=$P rps=$rps cpu_us_per_req=$(echo "scale=2; ($c1-$c0)*10000/$N" | bc)"
	done
done
