#!/bin/bash
# A change to one long collection in durable mode, MiniKV against Redis's
# AOF, side by side with the same client (redis-benchmark, 50
# connections), three runs each, alternating: requests per second and the
# server's CPU per request (utime+stime from /proc). MiniKV runs with
# --data-dir (--fsync everysec, its default), redis-server with appendonly
# yes and appendfsync everysec, each in a fresh temporary directory, and
# each first gets the collection of FILL elements through redis-cli
# --pipe (not measured).
#
#   KIND=stream  XADD s * f v to a stream of FILL entries f v
#   KIND=list    LPUSH q v, then RPOP q (a queue), on a list of FILL
#                elements of 16 bytes; a line for each
#   KIND=zset    ZADD z of a random score and member (anywhere in the
#                order), then ZPOPMIN z (the front, a schedule's due job),
#                on a sorted set of FILL members (job:<n>, score n)
#   KIND=hash    HSET h of a random field (new or not) to a 16-byte value,
#                then HINCRBY h of one counter field, then HDEL h of a
#                random field, on a hash of FILL fields field:<n> (values
#                of 16 bytes)
#   KIND=set     SADD s of a random member, then SREM s of a random
#                member, on a set of FILL members member:<n>
#
# docs/durability.md quotes its medians.
#
#   make build && KIND=stream P=1 N=20000 scripts/bench-durable-coll.sh
#   MINIKV=/tmp/minikv-old KIND=list P=16 scripts/bench-durable-coll.sh
set -eu
P=${P:-1}
N=${N:-100000}
FILL=${FILL:-100000}
KIND=${KIND:-stream}
MINIKV=${MINIKV:-bin/minikv}
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
bench() { redis-benchmark -p "$port" "$@" 2>/dev/null | tr '\r' '\n' | awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "requests") print $i}' | tail -1; }
fill() {
	python3 -c "
import sys
n, kind = int(sys.argv[1]), sys.argv[2]
out = sys.stdout
def bulk(s): return '\$%d\r\n%s\r\n' % (len(s), s)
for k in range(n):
    if kind == 'stream':
        out.write('*5\r\n' + bulk('XADD') + bulk('s') + bulk('%d-1' % k) + bulk('f') + bulk('v'))
    elif kind == 'hash':
        out.write('*4\r\n' + bulk('HSET') + bulk('h') + bulk('field:%012d' % k) + bulk('value:%010d' % k))
    elif kind == 'set':
        out.write('*3\r\n' + bulk('SADD') + bulk('s') + bulk('member:%012d' % k))
    elif kind == 'zset':
        out.write('*4\r\n' + bulk('ZADD') + bulk('z') + bulk('%d' % k) + bulk('job:%08d' % k))
    else:
        out.write('*3\r\n' + bulk('RPUSH') + bulk('q') + bulk('element:%08d' % k))
" "$FILL" "$KIND" | redis-cli -p "$port" --pipe >/dev/null
}
run() { # label, then the command
	local label=$1
	shift
	c0=$(cpu "$pid")
	rps=$(bench -n "$N" -P "$P" -c 50 -q "$@")
	c1=$(cpu "$pid")
	echo "$srv kind=$KIND op=$label P=$P rps=$rps cpu_us_per_req=$(echo "scale=2; ($c1-$c0)*10000/$N" | bc)"
}
for _ in 1 2 3; do
	for srv in redis minikv; do
		port=$(free_port)
		data=$(mktemp -d "${TMPDIR:-/tmp}/bench-durable-coll.XXXXXX")
		if [ "$srv" = redis ]; then
			redis-server --port "$port" --save '' --appendonly yes --appendfsync everysec --dir "$data" >/dev/null 2>&1 &
		else
			"$MINIKV" -l 127.0.0.1 -p 0 --resp-port "$port" --admin-addr= -m 4096 --data-dir "$data" >/dev/null 2>&1 &
		fi
		pid=$!
		until redis-cli -p "$port" PING >/dev/null 2>&1; do sleep 0.1; done
		fill
		if [ "$KIND" = stream ]; then
			run xadd XADD s '*' f v
		elif [ "$KIND" = zset ]; then
			run zadd-random -r 100000000 ZADD z __rand_int__ m:__rand_int__
			run zpopmin ZPOPMIN z
		elif [ "$KIND" = hash ]; then
			run hset -r "$((2 * FILL))" HSET h field:__rand_int__ 0123456789abcdef
			run hincrby HINCRBY h counter 1
			run hdel -r "$((2 * FILL))" HDEL h field:__rand_int__
		elif [ "$KIND" = set ]; then
			run sadd -r "$((2 * FILL))" SADD s member:__rand_int__
			run srem -r "$((2 * FILL))" SREM s member:__rand_int__
		else
			run lpush LPUSH q 0123456789abcdef
			run rpop RPOP q
		fi
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		rm -rf "$data"
	done
done
