#!/bin/bash
# Stream commands on MiniKV and on redis-server, side by side with the
# same client (redis-benchmark, 50 connections), three runs each,
# alternating: requests per second and the server's CPU per request
# (utime+stime from /proc), and the server's RSS after the load.
# docs/benchmarks.md quotes its medians.
#
#   OP=xadd       XADD s:__rand_int__ MAXLEN ~ 10000 * f v, over 100 streams
#   OP=xreadgroup XREADGROUP GROUP g c COUNT 1 STREAMS s > on one stream of
#                 N+100000 entries (IDs k-1), each call delivering the next
#   OP=xack       XACK s g k-1 for random k, after the XREADGROUP phase put
#                 every entry in the PEL (about 63% of the calls find one)
#   OP=fill       XADD of N entries to one stream (P=16), then RSS only:
#                 memory per entry; ENTRY=event fills entries like an
#                 application's event (user u<n> action <verb> page /p/<n>
#                 ts <ms>, seeded random) instead of f v
#
# REPLICA=1 attaches a replica of the same kind (a redis-server replica of
# redis-server, a MiniKV replica of MiniKV) before the load; the line then
# also gives the primary's replication offset and the seconds from the
# load's end until the replica's offset reached it (catchup_s).
#
#   make build && OP=xadd P=16 scripts/bench-stream.sh && OP=xadd P=1 N=60000 scripts/bench-stream.sh
#   OP=xadd P=16 REPLICA=1 scripts/bench-stream.sh
set -eu
P=${P:-16}
N=${N:-200000}
OP=${OP:-xadd}
REPLICA=${REPLICA:-0}
MINIKV=${MINIKV:-bin/minikv}
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
# Anonymous and file-backed (the binary's own pages) parts of the RSS.
anon() { awk '/RssAnon/{a=$2} /RssFile/{f=$2} END {print "rss_anon_kb=" a " rss_file_kb=" f}' "/proc/$1/status"; }
bench() { redis-benchmark -p "$port" "$@" 2>/dev/null | tr '\r' '\n' | awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "requests") print $i}' | tail -1; }
ENTRY=${ENTRY:-tiny}
fill() { # $1 entries into stream s with IDs k-1, k from 0
	python3 -c "
import sys, random
n, event = int(sys.argv[1]), sys.argv[2] == 'event'
rnd = random.Random(1)
out = sys.stdout
def bulk(s): return '\$%d\r\n%s\r\n' % (len(s), s)
for k in range(n):
    fv = ['f', 'v']
    if event:
        fv = ['user', 'u%d' % rnd.randrange(100000), 'action', rnd.choice(['view', 'click', 'buy', 'share']),
              'page', '/p/%d' % rnd.randrange(5000), 'ts', str(1764000000000 + 37 * k)]
    out.write('*%d\r\n' % (3 + len(fv)) + bulk('XADD') + bulk('s') + bulk('%d-1' % k) + ''.join(bulk(x) for x in fv))
" "$1" "$ENTRY" | redis-cli -p "$port" --pipe >/dev/null
}
for _ in 1 2 3; do
	for srv in redis minikv; do
		port=$(free_port)
		if [ "$srv" = redis ]; then
			redis-server --port "$port" --save '' --appendonly no >/dev/null 2>&1 &
		else
			"$MINIKV" -l 127.0.0.1 -p 0 --resp-port "$port" --admin-addr= -m 4096 >/dev/null 2>&1 &
		fi
		pid=$!
		sleep 0.4
		rpid=
		if [ "$REPLICA" = 1 ]; then
			rport=$(free_port)
			if [ "$srv" = redis ]; then
				redis-server --port "$rport" --save '' --appendonly no --replicaof 127.0.0.1 "$port" >/dev/null 2>&1 &
			else
				"$MINIKV" -l 127.0.0.1 -p 0 --resp-port "$rport" --admin-addr= -m 4096 --replicaof "127.0.0.1:$port" >/dev/null 2>&1 &
			fi
			rpid=$!
			until redis-cli -p "$rport" INFO replication 2>/dev/null | grep -q 'master_link_status:up'; do sleep 0.1; done
		fi
		r0=$(rss "$pid")
		case "$OP" in
		xadd)
			bench -n 20000 -r 100 -P "$P" -c 50 -q XADD s:__rand_int__ MAXLEN '~' 10000 '*' f v >/dev/null
			c0=$(cpu "$pid")
			rps=$(bench -n "$N" -r 100 -P "$P" -c 50 -q XADD s:__rand_int__ MAXLEN '~' 10000 '*' f v)
			;;
		xreadgroup | xack)
			fill $((N + 100000))
			redis-cli -p "$port" XGROUP CREATE s g 0 >/dev/null
			if [ "$OP" = xack ]; then
				bench -n $((N + 100000)) -P 16 -c 50 -q XREADGROUP GROUP g c COUNT 1 STREAMS s '>' >/dev/null
				c0=$(cpu "$pid")
				rps=$(bench -n "$N" -r $((N + 100000)) -P "$P" -c 50 -q XACK s g __rand_int__-1)
			else
				bench -n 20000 -P "$P" -c 50 -q XREADGROUP GROUP g c COUNT 1 STREAMS s '>' >/dev/null
				c0=$(cpu "$pid")
				rps=$(bench -n "$N" -P "$P" -c 50 -q XREADGROUP GROUP g c COUNT 1 STREAMS s '>')
			fi
			;;
		fill)
			fill "$N"
			c0=$(cpu "$pid")
			rps=-
			;;
		*)
			echo "OP is xadd, xreadgroup, xack or fill" >&2
			exit 2
			;;
		esac
		c1=$(cpu "$pid")
		r1=$(rss "$pid")
		a1=$(anon "$pid")
		repl=
		if [ -n "$rpid" ]; then
			t0=$(date +%s.%N)
			off=$(redis-cli -p "$port" INFO replication | tr -d '\r' | awk -F: '/^master_repl_offset/ {print $2}')
			until [ "$(redis-cli -p "$rport" INFO replication | tr -d '\r' | awk -F: '/^slave_repl_offset/ {print $2}')" -ge "$off" ]; do sleep 0.05; done
			repl=" repl_offset=$off catchup_s=$(echo "$(date +%s.%N) - $t0" | bc | cut -c1-5)"
			kill "$rpid"
			wait "$rpid" 2>/dev/null || true
		fi
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		echo "$srv op=$OP${ENTRY:+ entry=$ENTRY} P=$P rps=$rps cpu_us_per_req=$(echo "scale=2; ($c1-$c0)*10000/$N" | bc) rss_kb=$r1 rss_growth_kb=$((r1 - r0)) $a1$repl"
	done
done
