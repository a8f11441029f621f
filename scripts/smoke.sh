#!/usr/bin/env bash
# Smoke test of MiniKV as it is packaged (Dockerfile, deploy/): no Docker
# engine runs here, so this proves the same behaviour natively.
#
#   scripts/smoke.sh [path/to/minikv]      (make smoke)
#
# 1. Static checks: deploy/*.yaml parse (python3 yaml), the systemd unit
#    passes `systemd-analyze verify` (each when the tool is present), and the
#    Docker build context builds static binaries with CGO_ENABLED=0.
# 2. The image's listening rule: MINIKV_LISTEN=0.0.0.0 without a token
#    refuses to start.
# 3. The binary started the way the container and unit start it (MINIKV_*
#    environment, free ports on 127.0.0.1): /healthz and /readyz 200, a set/get on the
#    memcached port, PING on the RESP port, /metrics with memcached_up 1,
#    /doctor 200, no /debug/pprof without --pprof.
# 4. SIGTERM with an idle client connected: exit status 0 within
#    --shutdown-timeout.
#
# It stops only the processes it started, by PID.
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=${1:-${MINIKV_BIN:-bin/minikv}}
SHUTDOWN_TIMEOUT=5
PY=${PYTHON:-python3}

fail() { echo "smoke: FAIL: $*" >&2; exit 1; }
ok() { echo "smoke: ok: $*"; }

[ -x "$BIN" ] || fail "$BIN not built (run make build)"
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
command -v "$PY" >/dev/null || fail "$PY not found"

work=$(mktemp -d "${TMPDIR:-/tmp}/minikv-smoke.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT

# --- 1. static checks -------------------------------------------------------
if "$PY" -c 'import yaml' 2>/dev/null; then
	"$PY" - deploy/compose.yaml deploy/kubernetes.yaml <<'EOF' || fail "deploy YAML"
import sys, yaml
for path in sys.argv[1:]:
    docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
    assert docs, path + ": empty"
    if path.endswith("compose.yaml"):
        svcs = docs[0]["services"]
        for s in ("minikv", "memcached", "redis", "bench"):
            assert s in svcs, path + ": no service " + s
    else:
        kinds = [d["kind"] for d in docs]
        assert kinds == ["Deployment", "Service", "PodDisruptionBudget"], kinds
        pod = docs[0]["spec"]["template"]["spec"]
        c = pod["containers"][0]
        assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert pod["securityContext"]["runAsNonRoot"] is True
        ports = sorted(p["port"] for p in docs[1]["spec"]["ports"])
        assert ports == [6379, 9150, 11211], ports
        st = [a for a in c["args"] if a.startswith("--shutdown-timeout=")][0]
        assert pod["terminationGracePeriodSeconds"] > int(st.split("=")[1].rstrip("s")), st
EOF
	ok "deploy/compose.yaml and deploy/kubernetes.yaml parse"
else
	echo "smoke: skip: python3 yaml module missing (pip install pyyaml)"
fi
if command -v systemd-analyze >/dev/null; then
	# verify needs the ExecStart binary to exist: point it at ours.
	sed "s#^ExecStart=/usr/local/bin/minikv#ExecStart=$BIN#" deploy/minikv.service >"$work/minikv.service"
	out=$(systemd-analyze verify --man=no "$work/minikv.service" 2>&1) || fail "systemd-analyze verify: $out"
	[ -z "$out" ] || fail "systemd-analyze verify warns: $out"
	ok "deploy/minikv.service verifies"
else
	echo "smoke: skip: systemd-analyze missing"
fi

# The Dockerfile's build stage sees only go.mod, go.sum, cmd/, internal/ and lsm/
# (.dockerignore) and builds with CGO_ENABLED=0: do the same here, so a
# dependency outside that set or on cgo fails now rather than in an image build.
if command -v go >/dev/null; then
	mkdir -p "$work/ctx"
	cp go.mod go.sum "$work/ctx/"
	tar -cf - --exclude='*_test.go' --exclude=testdata cmd internal lsm | tar -xf - -C "$work/ctx"
	(cd "$work/ctx" && CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o "$work/static/" ./cmd/minikv ./cmd/minikv-bench) ||
		fail "the Docker build context (go.mod go.sum cmd internal lsm, CGO_ENABLED=0) does not build"
	if command -v ldd >/dev/null && ldd "$work/static/minikv" >/dev/null 2>&1; then
		fail "the CGO_ENABLED=0 binary is dynamically linked; distroless/static cannot run it"
	fi
	ok "the Docker build context builds static minikv and minikv-bench"
fi

# --- helpers ----------------------------------------------------------------
free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# http_get URL -> "STATUS\nBODY" on stdout
http_get() {
	"$PY" - "$1" <<'EOF'
import sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
        code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
except OSError as e:
    code, body = 0, str(e).encode()
sys.stdout.write("%d\n" % code)
sys.stdout.buffer.write(body)
EOF
}

# tcp_exchange PORT REQUEST -> the reply, read until the server closes or 2s pass
tcp_exchange() {
	"$PY" - "$1" "$2" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
out = b""
try:
    while True:
        b = s.recv(4096)
        if not b:
            break
        out += b
except socket.timeout:
    pass
sys.stdout.buffer.write(out)
EOF
}

help=$("$BIN" --help 2>&1 || true)
grep -q -- '-admin-addr' <<<"$help" ||
	fail "$BIN has no --admin-addr flag: the admin port (internal/admin) is not wired into cmd/minikv yet"

# --- 2. the container's listening rule --------------------------------------
port=$(free_port)
admin=$(free_port)
set +e
out=$(MINIKV_LISTEN=0.0.0.0 timeout 10 "$BIN" --port "$port" --resp-port 0 --admin-addr "127.0.0.1:$admin" 2>&1)
rc=$?
set -e
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "MINIKV_LISTEN=0.0.0.0 without a token: exit $rc, want a refusal; output: $out"
grep -qi 'refusing' <<<"$out" || fail "no refusal message on 0.0.0.0 without a token: $out"
ok "0.0.0.0 without an auth token is refused (exit $rc)"

# --- 3. started as the container/unit starts it ------------------------------
for attempt in 1 2 3; do
	port=$(free_port)
	resp=$(free_port)
	admin=$(free_port)
	MINIKV_LISTEN=127.0.0.1 MINIKV_SHUTDOWN_TIMEOUT=${SHUTDOWN_TIMEOUT}s \
		"$BIN" --port "$port" --resp-port "$resp" --admin-addr "127.0.0.1:$admin" --log-format json \
		>"$work/minikv.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	up=""
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		if [ "$(http_get "http://127.0.0.1:$admin/healthz" | head -1)" = 200 ]; then
			up=1
			break
		fi
		sleep 0.05
	done
	[ -n "$up" ] && break
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	echo "smoke: retrying start (attempt $attempt): $(tail -3 "$work/minikv.log")"
done
[ -n "$up" ] || fail "minikv did not come up; log: $(cat "$work/minikv.log")"

res=$(http_get "http://127.0.0.1:$admin/healthz")
[ "$res" = $'200\nok' ] || fail "/healthz = $res"
ok "/healthz 200 ok (pid $pid, memcached :$port, resp :$resp, admin :$admin)"
res=$(http_get "http://127.0.0.1:$admin/readyz")
[ "$res" = $'200\nok' ] || fail "/readyz = $res"
ok "/readyz 200 ok"

got=$(tcp_exchange "$port" 'set smoke 0 0 5\r\nhello\r\nget smoke\r\nquit\r\n')
want=$'STORED\r\nVALUE smoke 0 5\r\nhello\r\nEND\r' # $(...) drops the last \n
[ "$got" = "$want" ] || fail "set/get on the memcached port: got $(printf %q "$got")"
ok "set/get on the memcached port"

got=$(tcp_exchange "$resp" '*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nQUIT\r\n')
[[ "$got" == $'+PONG\r\n'* ]] || fail "PING on the RESP port: got $(printf %q "$got")"
ok "PING on the RESP port"

metrics=$(http_get "http://127.0.0.1:$admin/metrics")
[ "$(head -1 <<<"$metrics")" = 200 ] || fail "/metrics status $(head -1 <<<"$metrics")"
for want in '^memcached_up 1$' '^memcached_commands_total\{command="get",status="hit"\} 1$' \
	'^memcached_current_items 1$' '^memcached_version\{version="' '^go_goroutines ' '^process_cpu_seconds_total '; do
	grep -Eq "$want" <<<"$metrics" || fail "/metrics has no line matching $want"
done
ok "/metrics: memcached_up 1, get hit counted, Go and process collectors"

doctor=$(http_get "http://127.0.0.1:$admin/doctor")
[ "$(head -1 <<<"$doctor")" = 200 ] && grep -q '"status": "ok"' <<<"$doctor" || fail "/doctor = $doctor"
ok "/doctor 200 ok"

[ "$(http_get "http://127.0.0.1:$admin/debug/pprof/" | head -1)" = 404 ] || fail "/debug/pprof/ served without --pprof"
ok "/debug/pprof/ 404 without --pprof"

# --- 4. SIGTERM with an idle client connected --------------------------------
exec 5<>"/dev/tcp/127.0.0.1/$port"
start=$(date +%s%N)
kill -TERM "$pid"
set +e
deadline=$((SHUTDOWN_TIMEOUT * 10 + 20)) # tenths of a second: the timeout plus 2 s
for _ in $(seq "$deadline"); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
	kill -KILL "$pid"
	fail "still running $((deadline / 10)) s after SIGTERM (shutdown timeout ${SHUTDOWN_TIMEOUT}s)"
fi
wait "$pid"
rc=$?
set -e
exec 5<&-
ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGTERM; log: $(tail -5 "$work/minikv.log")"
grep -q '"msg":"stopped"' "$work/minikv.log" || echo "smoke: note: no \"stopped\" log line"
ok "SIGTERM with an idle client: exit 0 in ${ms} ms (timeout ${SHUTDOWN_TIMEOUT}s)"
echo "smoke: PASS"
