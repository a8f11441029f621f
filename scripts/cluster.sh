#!/usr/bin/env bash
# Start, benchmark and stop a set of MiniKV servers, on this machine or on
# a list of hosts over ssh.
#
#   scripts/cluster.sh local N                  > nodes   # N servers on free 127.0.0.1 ports
#   scripts/cluster.sh sentinel                 > nodes   # a primary, 2 replicas, 3 redis-sentinels here
#   scripts/cluster.sh deploy NODES_FILE                  # copy bin/minikv over scp, start it over ssh
#   scripts/cluster.sh bench NODES_FILE [requests] [conns]
#   scripts/cluster.sh stop NODES_FILE
#
# A nodes file has one server per line, "host:port [resp_port]": the
# memcached port, then the Redis port if the server should open one; blank
# lines and # comments are ignored. `local` prints one. `sentinel` prints
# one whose first server is the primary, with a line "sentinel host:port"
# per Sentinel.
#
# local   starts N servers here under nohup, each on a free memcached port
#         and a free Redis port of 127.0.0.1, and prints their nodes file.
#         Their pid and log files live in $MINIKV_STATE_DIR.
# sentinel starts, the same way, one MiniKV primary and two MiniKV
#         replicas of it (--replicaof), then three unmodified Redis
#         Sentinels (redis-sentinel, or redis-server --sentinel) on free
#         127.0.0.1 ports monitoring the primary as $MINIKV_SENTINEL_MASTER
#         with quorum 2; their configuration files (which Sentinel rewrites),
#         pid and log files live in $MINIKV_STATE_DIR too. It waits until both
#         replicas are linked (when redis-cli is installed), prints the nodes
#         file, and on stderr how to connect through the Sentinels.
# deploy  for each line: creates $MINIKV_REMOTE_DIR on the host, copies the
#         binary there with scp, starts it with nohup over ssh, listening
#         on the line's host (so the host must be an address of that
#         machine), and waits until the port accepts connections from here.
#         MiniKV refuses a non-loopback address without an auth token: put
#         --auth-token-file FILE, or --insecure-allow-remote on a private
#         benchmark network, in MINIKV_ARGS. For a permanent install use the
#         systemd unit in deploy/minikv.service instead.
# bench   runs minikv-bench once against all the nodes as one pool (every
#         connection talks to every node; keys spread by $MINIKV_HASH,
#         libmemcached's ketama by default), prints its table with the
#         per-node share on stderr, then one aggregate line on stdout:
#         "aggregate nodes=3 requests=... conns=... ops_per_sec=... p99_us=... errors=0".
# stop    stops each node it started (SIGTERM, then waits up to 15 s):
#         from $MINIKV_STATE_DIR for nodes of `local`, over ssh for the
#         others. It kills a PID only if that process is a minikv on the
#         node's port (a Sentinel on its port for the sentinel lines, which
#         it stops first).
#
# Environment (defaults in brackets):
#   MINIKV_BIN         the server binary [bin/minikv]
#   MINIKV_BENCH       the benchmark binary [bin/minikv-bench]
#   MINIKV_ARGS        extra server flags, after the script's own, e.g. "-m 1024 -t 4"
#   MINIKV_BENCH_ARGS  extra minikv-bench flags [--ratio 1:9 -d 32 --keys 100000 --prefill]
#   MINIKV_HASH        ketama, ketama-md5 or modula [ketama]
#   MINIKV_SSH         the ssh command, words allowed ["ssh -o BatchMode=yes"]
#   MINIKV_SCP         the scp command, words allowed ["scp -q -o BatchMode=yes"]
#   MINIKV_REMOTE_DIR  directory for binary, pid and log files on each host [/tmp/minikv-cluster]
#   MINIKV_STATE_DIR   pid and log files of `local` nodes [${TMPDIR:-/tmp}/minikv-cluster-$UID]
#   MINIKV_WAIT        seconds to wait for a server to accept connections [20]
#   MINIKV_SENTINEL_BIN     the Sentinel binary [redis-sentinel, else redis-server]
#   MINIKV_SENTINEL_MASTER  the name the Sentinels give the primary [mymaster]
#   MINIKV_SENTINEL_DOWN_AFTER  their down-after-milliseconds [5000]
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
BIN=${MINIKV_BIN:-$repo/bin/minikv}
BENCH=${MINIKV_BENCH:-$repo/bin/minikv-bench}
HASH=${MINIKV_HASH:-ketama}
REMOTE_DIR=${MINIKV_REMOTE_DIR:-/tmp/minikv-cluster}
STATE_DIR=${MINIKV_STATE_DIR:-${TMPDIR:-/tmp}/minikv-cluster-$UID}
WAIT=${MINIKV_WAIT:-20}
read -r -a SSH <<<"${MINIKV_SSH:-ssh -o BatchMode=yes}"
read -r -a SCP <<<"${MINIKV_SCP:-scp -q -o BatchMode=yes}"
read -r -a EXTRA <<<"${MINIKV_ARGS:-}"
read -r -a BENCH_EXTRA <<<"${MINIKV_BENCH_ARGS:---ratio 1:9 -d 32 --keys 100000 --prefill}"
MASTER_NAME=${MINIKV_SENTINEL_MASTER:-mymaster}
DOWN_AFTER=${MINIKV_SENTINEL_DOWN_AFTER:-5000}

usage() {
	sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
die() {
	echo "cluster.sh: $*" >&2
	exit 1
}
say() { echo "cluster.sh: $*" >&2; }

# accepting HOST PORT: does HOST:PORT accept a TCP connection now?
accepting() {
	(exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
}

# wait_accepting HOST PORT [PID]: polls for up to $WAIT seconds; fails early
# if PID (a local process) exits.
wait_accepting() {
	local host=$1 port=$2 pid=${3:-} i
	for ((i = 0; i < WAIT * 10; i++)); do
		accepting "$host" "$port" && return 0
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			return 1
		fi
		sleep 0.1
	done
	return 1
}

# read_nodes FILE: fills the arrays HOSTS, PORTS and RESPS (0: no Redis
# port), and SENTINEL_HOSTS and SENTINEL_PORTS from "sentinel host:port" lines.
read_nodes() {
	local file=$1 addr resp rest host port
	[ -r "$file" ] || die "cannot read nodes file $file"
	HOSTS=() PORTS=() RESPS=() SENTINEL_HOSTS=() SENTINEL_PORTS=()
	while read -r addr resp rest || [ -n "${addr:-}" ]; do
		case $addr in '' | '#'*) continue ;; esac
		if [ "$addr" = sentinel ]; then
			if [ -z "${resp:-}" ] || [ -n "${rest:-}" ]; then
				die "$file: want 'sentinel host:port', got '$addr ${resp:-} ${rest:-}'"
			fi
			host=${resp%:*}
			port=${resp##*:}
			if [ "$host" = "$resp" ] || [ -z "$host" ] || ! is_port "$port"; then
				die "$file: '$resp' is not host:port"
			fi
			SENTINEL_HOSTS+=("$host") SENTINEL_PORTS+=("$port")
			continue
		fi
		[ -z "${rest:-}" ] || die "$file: too many fields in line '$addr $resp $rest' (want host:port [resp_port])"
		host=${addr%:*}
		port=${addr##*:}
		host=${host#[}
		host=${host%]}
		if [ "$host" = "$addr" ] || [ -z "$host" ]; then
			die "$file: '$addr' is not host:port"
		fi
		is_port "$port" || die "$file: bad port in '$addr'"
		resp=${resp:-0}
		[ "$resp" = 0 ] || is_port "$resp" || die "$file: bad Redis port '$resp'"
		HOSTS+=("$host") PORTS+=("$port") RESPS+=("$resp")
	done <"$file"
	[ "${#HOSTS[@]}" -gt 0 ] || die "$file lists no node"
}

is_loopback() {
	case $1 in 127.* | localhost | ::1) return 0 ;; esac
	return 1
}

is_port() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
	[ "$1" -ge 1 ] && [ "$1" -le 65535 ]
}

# join_addr HOST PORT: host:port, with brackets for an IPv6 host.
join_addr() {
	case $1 in *:*) echo "[$1]:$2" ;; *) echo "$1:$2" ;; esac
}

# free_port: a port of 127.0.0.1 nobody accepts on now. The server's own
# bind is the real test: local retries with other ports if it fails.
free_port() {
	local p lo=32768 _
	# Below the kernel's ephemeral range, which outgoing connections use.
	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	[ "$lo" -gt 12000 ] || lo=65536
	while :; do
		p=$((10000 + (RANDOM * 32768 + RANDOM) % (lo - 10000)))
		accepting 127.0.0.1 "$p" || {
			echo "$p"
			return
		}
	done
}

cmd_local() {
	local n=${1:-}
	case $n in '' | *[!0-9]*) usage ;; esac
	[ "$n" -ge 1 ] || usage
	[ -x "$BIN" ] || die "$BIN is not an executable (make build, or set MINIKV_BIN)"
	mkdir -p "$STATE_DIR"
	echo "# host:port resp_port  (scripts/cluster.sh local $n; stop with: scripts/cluster.sh stop FILE)"
	local i
	for ((i = 0; i < n; i++)); do
		start_local "node $((i + 1)) of $n"
	done
}

# start_local WHAT [FLAGS...]: starts a server here on a free memcached
# port and a free Redis port of 127.0.0.1, with FLAGS after the script's
# own, prints its nodes line and sets LOCAL_RESP to its Redis port.
start_local() {
	local what=$1 try port resp pid
	shift
	for try in 1 2 3 4 5; do
		port=$(free_port)
		resp=$(free_port)
		[ "$port" != "$resp" ] || continue
		nohup "$BIN" -l 127.0.0.1 -p "$port" --resp-port "$resp" --admin-addr "" "$@" "${EXTRA[@]}" \
			>"$STATE_DIR/node-$port.log" 2>&1 </dev/null &
		pid=$!
		if wait_accepting 127.0.0.1 "$port" "$pid" && wait_accepting 127.0.0.1 "$resp" "$pid"; then
			echo "$pid" >"$STATE_DIR/node-$port.pid"
			echo "127.0.0.1:$port $resp"
			LOCAL_RESP=$resp
			return
		fi
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		say "attempt $try: server on $port/$resp did not start: $(tail -n 2 "$STATE_DIR/node-$port.log")"
	done
	die "could not start $what"
}

# sentinel_bin: the Sentinel to run, unmodified Redis's.
sentinel_bin() {
	if [ -n "${MINIKV_SENTINEL_BIN:-}" ]; then
		echo "$MINIKV_SENTINEL_BIN"
	else
		command -v redis-sentinel || command -v redis-server ||
			die "neither redis-sentinel nor redis-server is installed (apt-get install redis-sentinel), or set MINIKV_SENTINEL_BIN"
	fi
}

cmd_sentinel() {
	[ $# -eq 0 ] || usage
	[ -x "$BIN" ] || die "$BIN is not an executable (make build, or set MINIKV_BIN)"
	local sbin primary resp1 resp2 i try port conf pid sentinels=() up
	sbin=$(sentinel_bin)
	mkdir -p "$STATE_DIR"
	echo "# host:port resp_port  (scripts/cluster.sh sentinel: the primary, its 2 replicas, 3 sentinels; stop with: scripts/cluster.sh stop FILE)"
	start_local "the primary"
	primary=$LOCAL_RESP
	start_local "replica 1" --replicaof "127.0.0.1:$primary"
	resp1=$LOCAL_RESP
	start_local "replica 2" --replicaof "127.0.0.1:$primary"
	resp2=$LOCAL_RESP
	if command -v redis-cli >/dev/null; then
		# Both replicas linked: Sentinel then finds them in the primary's
		# INFO replication at once.
		for ((i = 0; i < WAIT * 10; i++)); do
			up=$(redis-cli -p "$primary" INFO replication 2>/dev/null | tr -d '\r' | grep -c 'state=online' || true)
			[ "$up" -lt 2 ] || break
			sleep 0.1
		done
		[ "$up" -ge 2 ] || die "the replicas did not link to the primary within ${WAIT}s (logs in $STATE_DIR)"
	else
		say "redis-cli not installed: not waiting for the replicas to link"
	fi
	for i in 1 2 3; do
		for try in 1 2 3 4 5; do
			port=$(free_port)
			conf=$STATE_DIR/sentinel-$port.conf
			printf '%s\n' "port $port" "bind 127.0.0.1" "dir $STATE_DIR" \
				"sentinel monitor $MASTER_NAME 127.0.0.1 $primary 2" \
				"sentinel down-after-milliseconds $MASTER_NAME $DOWN_AFTER" \
				"sentinel failover-timeout $MASTER_NAME 60000" >"$conf"
			nohup "$sbin" "$conf" --sentinel >"$STATE_DIR/sentinel-$port.log" 2>&1 </dev/null &
			pid=$!
			if wait_accepting 127.0.0.1 "$port" "$pid"; then
				echo "$pid" >"$STATE_DIR/sentinel-$port.pid"
				echo "sentinel 127.0.0.1:$port"
				sentinels+=("$port")
				break
			fi
			kill "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			say "attempt $try: sentinel on $port did not start: $(tail -n 2 "$STATE_DIR/sentinel-$port.log")"
			[ "$try" -lt 5 ] || die "could not start sentinel $i of 3"
		done
	done
	say "primary 127.0.0.1:$primary, replicas 127.0.0.1:$resp1 and 127.0.0.1:$resp2 (Redis ports)"
	say "sentinels 127.0.0.1:${sentinels[0]}, :${sentinels[1]}, :${sentinels[2]} watch it as \"$MASTER_NAME\":"
	say "  redis-cli -p ${sentinels[0]} SENTINEL get-master-addr-by-name $MASTER_NAME"
	say "  go-redis: redis.NewFailoverClient(&redis.FailoverOptions{MasterName: \"$MASTER_NAME\", SentinelAddrs: []string{\"127.0.0.1:${sentinels[0]}\", \"127.0.0.1:${sentinels[1]}\", \"127.0.0.1:${sentinels[2]}\"}})"
	say "  redis-py: redis.Sentinel([(\"127.0.0.1\", ${sentinels[0]}), (\"127.0.0.1\", ${sentinels[1]}), (\"127.0.0.1\", ${sentinels[2]})]).master_for(\"$MASTER_NAME\")"
}

# remote HOST COMMAND: runs COMMAND through $MINIKV_SSH on HOST.
remote() {
	"${SSH[@]}" "$1" "$2"
}

# quote ARGS: the arguments quoted for a POSIX shell on the far side.
quote() {
	local a out=""
	for a in "$@"; do
		out+=" '${a//\'/\'\\\'\'}'"
	done
	echo "${out# }"
}

cmd_deploy() {
	[ $# -eq 1 ] || usage
	read_nodes "$1"
	[ "${#SENTINEL_HOSTS[@]}" -eq 0 ] || die "$1: deploy starts no sentinels (sentinel lines are for a file of \`sentinel\`)"
	[ -x "$BIN" ] || die "$BIN is not an executable (make build, or set MINIKV_BIN)"
	local i host port resp dir args
	dir=$(quote "$REMOTE_DIR")
	for i in "${!HOSTS[@]}"; do
		host=${HOSTS[$i]} port=${PORTS[$i]} resp=${RESPS[$i]}
		say "deploying $(join_addr "$host" "$port") (Redis port $resp)"
		remote "$host" "mkdir -p $dir" || die "$host: mkdir $REMOTE_DIR failed"
		"${SCP[@]}" "$BIN" "$host:$REMOTE_DIR/minikv.new" || die "$host: copying $BIN failed"
		args=$(quote -l "$host" -p "$port" --resp-port "$resp" --admin-addr "" "${EXTRA[@]}")
		# Replace the binary atomically (a running node keeps its inode),
		# start the server detached, and record its PID.
		remote "$host" "cd $dir && chmod 755 minikv.new && mv -f minikv.new minikv && \
nohup ./minikv $args >node-$port.log 2>&1 </dev/null & echo \$! >$dir/node-$port.pid" ||
			die "$host: starting minikv failed"
		if ! wait_accepting "$host" "$port"; then
			remote "$host" "tail -n 5 $dir/node-$port.log" >&2 || true
			die "$(join_addr "$host" "$port") does not accept connections after ${WAIT}s"
		fi
		echo "$(join_addr "$host" "$port") $resp"
	done
}

cmd_bench() {
	if [ $# -lt 1 ] || [ $# -gt 3 ]; then usage; fi
	read_nodes "$1"
	[ "${#SENTINEL_HOSTS[@]}" -eq 0 ] || die "$1: its replicas refuse writes; bench the primary's line alone"
	local requests=${2:-100000} conns=${3:-50} i list="" csv line
	case $requests$conns in *[!0-9]*) usage ;; esac
	[ -x "$BENCH" ] || die "$BENCH is not an executable (make build, or set MINIKV_BENCH)"
	for i in "${!HOSTS[@]}"; do
		list+=${list:+,}$(join_addr "${HOSTS[$i]}" "${PORTS[$i]}")
	done
	csv=$("$BENCH" -s "$list" --hash "$HASH" -n "$requests" -c "$conns" --progress off \
		"${BENCH_EXTRA[@]}" --csv -) || die "minikv-bench failed (exit $?)"
	# The CSV's median row: ops=$6 ops_per_sec=$8 errors=$12 p99_us=$18.
	line=$(awk -F, -v n="${#HOSTS[@]}" -v c="$conns" '$5 == "median" {
		printf "aggregate nodes=%d requests=%s conns=%s ops_per_sec=%.0f p99_us=%s errors=%s\n", n, $6, c, $8, $18, $12 }' <<<"$csv")
	[ -n "$line" ] || die "no median row in minikv-bench's CSV"
	echo "$line"
}

# stop_pid_cmd PIDFILE PORT [PATTERN]: shell code that stops the process
# whose PID is in PIDFILE if its command line matches PATTERN (a minikv
# serving PORT by default), and waits for it to exit.
stop_pid_cmd() {
	local f=$1 port=$2 pattern=${3:-"minikv.* -p $2 "}
	cat <<EOF
f=$f; [ -f "\$f" ] || { echo "no pid file \$f" >&2; exit 3; }
pid=\$(cat "\$f")
# Running: kill -0 works and it is no zombie waiting for its reaper.
running() { kill -0 "\$pid" 2>/dev/null && [ "\$(sed -n 's/.*) \\(.\\).*/\\1/p' "/proc/\$pid/stat" 2>/dev/null)" != Z ]; }
if running && tr '\\0' ' ' <"/proc/\$pid/cmdline" | grep -q -- "$pattern"; then
	kill -TERM "\$pid"
	i=0; while running && [ \$i -lt 150 ]; do sleep 0.1; i=\$((i + 1)); done
	if running; then echo "pid \$pid still running after 15 s" >&2; exit 1; fi
fi
rm -f "\$f"
EOF
}

cmd_stop() {
	[ $# -eq 1 ] || usage
	read_nodes "$1"
	local i host port f rc=0
	# The sentinels first, so that none fails the primary over while the
	# servers stop. Redis titles a Sentinel "redis-server HOST:PORT [sentinel]".
	for i in "${!SENTINEL_HOSTS[@]}"; do
		host=${SENTINEL_HOSTS[$i]} port=${SENTINEL_PORTS[$i]}
		f=$STATE_DIR/sentinel-$port.pid
		if [ -f "$f" ]; then
			bash -c "$(stop_pid_cmd "$(quote "$f")" "$port" ":$port \\[sentinel\\]")" || rc=1
		else
			say "no pid file $f for sentinel $(join_addr "$host" "$port")"
			rc=1
		fi
		[ $rc -ne 0 ] || say "stopped sentinel $(join_addr "$host" "$port")"
	done
	for i in "${!HOSTS[@]}"; do
		host=${HOSTS[$i]} port=${PORTS[$i]}
		f=$STATE_DIR/node-$port.pid
		if is_loopback "$host" && [ -f "$f" ]; then
			bash -c "$(stop_pid_cmd "$(quote "$f")" "$port")" || rc=1
		else
			remote "$host" "$(stop_pid_cmd "$(quote "$REMOTE_DIR/node-$port.pid")" "$port")" || rc=1
		fi
		if [ $rc -eq 0 ]; then
			say "stopped $(join_addr "$host" "$port")"
		fi
	done
	return $rc
}

case ${1:-} in
local | sentinel | deploy | bench | stop)
	cmd=$1
	shift
	"cmd_$cmd" "$@"
	;;
*) usage ;;
esac
