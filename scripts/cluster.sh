#!/usr/bin/env bash
# Start, benchmark and stop a set of MiniKV servers, on this machine or on
# a list of hosts over ssh.
#
#   scripts/cluster.sh local N                  > nodes   # N servers on free 127.0.0.1 ports
#   scripts/cluster.sh deploy NODES_FILE                  # copy bin/minikv over scp, start it over ssh
#   scripts/cluster.sh bench NODES_FILE [requests] [conns]
#   scripts/cluster.sh stop NODES_FILE
#
# A nodes file has one server per line, "host:port [resp_port]": the
# memcached port, then the Redis port if the server should open one; blank
# lines and # comments are ignored. `local` prints one.
#
# local   starts N servers here under nohup, each on a free memcached port
#         and a free Redis port of 127.0.0.1, and prints their nodes file.
#         Their pid and log files live in $MINIKV_STATE_DIR.
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
#         node's port.
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

usage() {
	sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
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

# read_nodes FILE: fills the arrays HOSTS, PORTS and RESPS (0: no Redis port).
read_nodes() {
	local file=$1 addr resp rest host port
	[ -r "$file" ] || die "cannot read nodes file $file"
	HOSTS=() PORTS=() RESPS=()
	while read -r addr resp rest || [ -n "${addr:-}" ]; do
		case $addr in '' | '#'*) continue ;; esac
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
	local i try port resp pid
	for ((i = 0; i < n; i++)); do
		for try in 1 2 3 4 5; do
			port=$(free_port)
			resp=$(free_port)
			[ "$port" != "$resp" ] || continue
			nohup "$BIN" -l 127.0.0.1 -p "$port" --resp-port "$resp" --admin-addr "" "${EXTRA[@]}" \
				>"$STATE_DIR/node-$port.log" 2>&1 </dev/null &
			pid=$!
			if wait_accepting 127.0.0.1 "$port" "$pid" && wait_accepting 127.0.0.1 "$resp" "$pid"; then
				echo "$pid" >"$STATE_DIR/node-$port.pid"
				echo "127.0.0.1:$port $resp"
				break
			fi
			kill "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			say "attempt $try: server on $port/$resp did not start: $(tail -n 2 "$STATE_DIR/node-$port.log")"
			[ "$try" -lt 5 ] || die "could not start node $((i + 1)) of $n"
		done
	done
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

# stop_pid_cmd PIDFILE PORT: shell code that stops the minikv whose PID is
# in PIDFILE if it serves PORT, and waits for it to exit.
stop_pid_cmd() {
	local f=$1 port=$2
	cat <<EOF
f=$f; [ -f "\$f" ] || { echo "no pid file \$f" >&2; exit 3; }
pid=\$(cat "\$f")
# Running: kill -0 works and it is no zombie waiting for its reaper.
running() { kill -0 "\$pid" 2>/dev/null && [ "\$(sed -n 's/.*) \\(.\\).*/\\1/p' "/proc/\$pid/stat" 2>/dev/null)" != Z ]; }
if running && tr '\\0' ' ' <"/proc/\$pid/cmdline" | grep -q -- "minikv.* -p $port "; then
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
local | deploy | bench | stop)
	cmd=$1
	shift
	"cmd_$cmd" "$@"
	;;
*) usage ;;
esac
