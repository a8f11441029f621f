# MiniKV build and test entry points, shared by people and CI (.ci/run).
GO       ?= go
PYTHON   ?= python3
NPM      ?= npm
BIN      := bin
COMMIT   := $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS  := -X main.commit=$(COMMIT)
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
FUZZTIME ?= 60s
# Redis 7.2.4 (scripts/redis72.sh installs it in .peers) comes first, so
# every test's redis-server is the release MiniKV's redis_version names.
export PATH := $(CURDIR)/.peers/bin:$(PATH)

.PHONY: build run test deps test-go test-invariants test-python test-node test-lua-redis test-k8s race vet lint fuzz bench clean smoke \
	bench-compare bench-compare-p16 bench-resp bench-rate bench-null bench-seed bench-seed-pressure bench-sweep-conns bench-sweep-pipeline bench-perf bench-scaleout

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/minikv ./cmd/minikv
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/minikv-bench ./cmd/minikv-bench
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/minikv-lsm ./cmd/minikv-lsm

# Starts MiniKV with its defaults: 127.0.0.1:11211, 64 MiB.
run: build
	./$(BIN)/minikv

# Installs what the tests need (memcached and redis-server for the
# differential tests and minikv-bench's --compare tests, redis-tools'
# redis-cli and redis-benchmark for the RESP tool tests,
# prometheus-redis-exporter for the RESP INFO test, nutcracker (twemproxy)
# for the proxy test, shellcheck for scripts/cluster.sh, pymemcache,
# redis-py and pylibmc for the Python client suites, Celery and limits for
# the scripting tests, Node.js with BullMQ for tests/node), then runs every
# test.
test: deps vet build test-go test-loops test-invariants test-python test-node test-k8s

deps:
	@pkgs=""; command -v memcached >/dev/null 2>&1 || pkgs="$$pkgs memcached"; \
	command -v redis-server >/dev/null 2>&1 || pkgs="$$pkgs redis-server"; \
	{ command -v redis-cli && command -v redis-benchmark; } >/dev/null 2>&1 || pkgs="$$pkgs redis-tools"; \
	command -v prometheus-redis-exporter >/dev/null 2>&1 || pkgs="$$pkgs prometheus-redis-exporter"; \
	command -v openssl >/dev/null 2>&1 || pkgs="$$pkgs openssl"; \
	PATH="$$PATH:/usr/sbin" command -v nutcracker >/dev/null 2>&1 || pkgs="$$pkgs nutcracker"; \
	command -v shellcheck >/dev/null 2>&1 || pkgs="$$pkgs shellcheck"; \
	command -v node >/dev/null 2>&1 || pkgs="$$pkgs nodejs"; \
	command -v npm >/dev/null 2>&1 || pkgs="$$pkgs npm"; \
	[ -z "$$pkgs" ] || { $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkgs; }
	@# Redis 7.2.4, the differential tests' peer (Debian 12 has 7.0.15).
	bash scripts/redis72.sh
	$(PYTHON) -m pip install -q -r tests/python/requirements.txt
	cd tests/node && $(NPM) ci --ignore-scripts --no-audit --no-fund
	$(GO) mod download
	cd deploy/kubernetes/validate && $(GO) mod download

vet:
	$(GO) vet ./...
	$(GO) vet -tags invariants ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# MINIKV_REQUIRE_PEERS makes tests that need memcached fail instead of skip.
test-go:
	MINIKV_REQUIRE_PEERS=1 $(GO) test -race -count=1 -timeout 8m ./...

# The connection tests once more with the connections served by an event
# loop (--event-loops 1): the test servers (MINIKV_TEST_EVENT_LOOPS) and
# the minikv processes the cmd tests start (MINIKV_EVENT_LOOPS). No -race.
test-loops:
	MINIKV_TEST_EVENT_LOOPS=1 MINIKV_EVENT_LOOPS=1 MINIKV_REQUIRE_PEERS=1 $(GO) test -count=1 -timeout 8m ./internal/server/... ./cmd/minikv

# The whole suite once more, built with -tags invariants: the store runs
# its deep check on the shard each operation touched, the LSM on every
# version it installs (internal/store/invariants_on.go,
# lsm/invariants_on.go); a broken invariant panics. No -race, to keep it
# short: about a minute on two cores.
test-invariants:
	MINIKV_REQUIRE_PEERS=1 $(GO) test -tags invariants -count=1 -timeout 8m ./...

# MINIKV_REQUIRE_PEERS: the twemproxy, pylibmc and shellcheck tests fail
# instead of skipping when their tool is missing.
test-python: build
	MINIKV_REQUIRE_PEERS=1 MINIKV_BIN=$(CURDIR)/$(BIN)/minikv $(PYTHON) -m pytest -q tests/python

# Node.js client libraries against the RESP port (tests/node: BullMQ, whose
# queue operations are all Lua scripts), with node's test runner, one file
# at a time. Until MiniKV answers EVAL they skip, saying so;
# MINIKV_LUA_TARGET=redis runs them, like tests/python's test_lua_*.py,
# against a redis-server instead.
test-node: build
	cd tests/node && MINIKV_BIN=$(CURDIR)/$(BIN)/minikv $(NPM) test

# The tests of real libraries' Lua scripts (tests/python/test_lua_*.py and
# tests/node) against redis-server 7.0.15 instead of MiniKV: proves the
# tests themselves while MiniKV skips them. Not part of `make test`.
test-lua-redis:
	MINIKV_REQUIRE_PEERS=1 MINIKV_LUA_TARGET=redis $(PYTHON) -m pytest -q tests/python/test_lua_*.py
	cd tests/node && MINIKV_LUA_TARGET=redis $(NPM) test

# Decodes every Kubernetes manifest (deploy/kubernetes/*.yaml,
# deploy/kubernetes.yaml) strictly into the API's Go types and checks the
# objects applied together against each other, twemproxy's embedded config
# with nutcracker -t. A module of its own: k8s.io/api stays out of go.mod.
test-k8s:
	cd deploy/kubernetes/validate && $(GO) vet ./... && MINIKV_REQUIRE_PEERS=1 $(GO) test -count=1 ./...

# Runs bin/minikv the way the Dockerfile and deploy/ run it (MINIKV_* env,
# free 127.0.0.1 ports) and checks /healthz, set/get, RESP PING, /metrics,
# /doctor and exit 0 on SIGTERM; also validates deploy/*.yaml and the systemd
# unit. No Docker engine needed (scripts/smoke.sh).
smoke: build
	./scripts/smoke.sh $(BIN)/minikv

race: test-go

lint: vet

# Runs every fuzz target for FUZZTIME each (default 60s).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# Side-by-side runs of MiniKV, memcached and Redis (docs/benchmarks.md).
# Each target starts the servers itself and stops them when done.
BENCH_REPEAT ?= 3
BENCH_FLAGS  ?=
bench-compare: build
	./$(BIN)/minikv-bench --compare minikv,memcached,redis -c 50 -P 1 --ratio 1:9 -d 32 --keys 100000 --prefill -t 10s --repeat $(BENCH_REPEAT) $(BENCH_FLAGS)

bench-compare-p16: build
	./$(BIN)/minikv-bench --compare minikv,memcached,redis -c 50 -P 16 --ratio 1:9 -d 32 --keys 100000 --prefill -t 10s --repeat $(BENCH_REPEAT) $(BENCH_FLAGS)

bench-resp: build
	./$(BIN)/minikv-bench --compare minikv-resp,redis -c 50 -P 1 --ratio 1:9 -d 32 --keys 100000 --prefill -t 10s --repeat $(BENCH_REPEAT) $(BENCH_FLAGS)

bench-rate: build
	./$(BIN)/minikv-bench --compare minikv,memcached,redis -c 50 -P 1 --ratio 1:9 -d 32 --keys 100000 --prefill -t 10s --repeat $(BENCH_REPEAT) --rate 30000 $(BENCH_FLAGS)

bench-null: build
	./$(BIN)/minikv-bench --compare minikv,null -c 50 -P 1 --ratio 1:9 -d 32 --keys 100000 --prefill -t 10s --repeat $(BENCH_REPEAT) $(BENCH_FLAGS)

# The throughput rows of issue 6's acceptance (docs/performance.md §5):
# every target, P=1 then P=16, medians of 5 alternating repeats.
PERF_RUN = ./$(BIN)/minikv-bench --compare minikv,null,memcached,redis,minikv-resp -c 50 --ratio 1:9 -d 32 --keys 100000 --prefill -t 4s --repeat 5 $(BENCH_FLAGS)
bench-perf: build
	$(PERF_RUN) -P 1
	$(PERF_RUN) -P 16

bench-seed: build
	./$(BIN)/minikv-bench --compare minikv,memcached,redis --preset seed-vol1 --repeat $(BENCH_REPEAT) $(BENCH_FLAGS)

bench-seed-pressure: build
	./$(BIN)/minikv-bench --compare minikv,memcached,redis --preset seed-pressure --repeat $(BENCH_REPEAT) $(BENCH_FLAGS)

bench-sweep-conns: build
	./$(BIN)/minikv-bench --compare minikv,minikv-resp,memcached,redis --sweep c=1,8,32,128,1024 -P 1 --ratio 1:9 -d 32 --keys 100000 --prefill -t 5s --repeat $(BENCH_REPEAT) --chart docs/bench-sweep-conns.svg $(BENCH_FLAGS)

bench-sweep-pipeline: build
	./$(BIN)/minikv-bench --compare minikv,minikv-resp,memcached,redis --sweep P=1,4,16,32 -c 50 --ratio 1:9 -d 32 --keys 100000 --prefill -t 5s --repeat $(BENCH_REPEAT) --chart docs/bench-sweep-pipeline.svg $(BENCH_FLAGS)

# Server CPU per request of each connection model's null server (a goroutine
# per connection, epoll and io_uring event loops, gnet) against Redis,
# memcached and MiniKV, with redis-benchmark and memcaslap (issue 17;
# scripts/bench-netproto.py, bench/netproto; docs/performance.md).
NETPROTO_FLAGS ?=
bench-netproto: build
	python3 scripts/bench-netproto.py $(NETPROTO_FLAGS)

# Issue 17's goal table in one command: server CPU per request of MiniKV
# (a goroutine per connection, one and two event loops), the epoll and
# io_uring null servers, Redis and memcached with redis-benchmark (P=1,
# P=16) and memcaslap, then with minikv-bench (bench-perf's runs): every
# cell a median of 5 rounds that take the targets in turn.
bench-cpu: build
	@command -v memcaslap >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libmemcached-tools; }
	python3 scripts/bench-netproto.py --rounds 5 --targets minikv/0,minikv/1,minikv/2,null-epoll/1,null-uring/1,PEER $(NETPROTO_FLAGS)
	$(PERF_RUN) -P 1
	$(PERF_RUN) -P 16

# 1, 2 and 3 MiniKV on this machine, directly, through twemproxy and with
# client-side ketama, with each one's CPU per request (docs/scale-out.md;
# scripts/bench-scaleout.sh, whose environment knobs size the run).
bench-scaleout: build
	./scripts/bench-scaleout.sh

clean:
	rm -rf $(BIN)

# The durable engine's long tests (lsm): millions of model
# operations with crashes and power losses, 25 kill -9 cycles per sync mode
# and kill point (writes, mid-flush, mid-compaction) against the server,
# 1 GiB of 100 KB values through a server with -m 64 (every one read back
# before and after a restart, peak RSS within the documented bound),
# thousands of corruption trials, plus repeated concurrency runs under -race.
.PHONY: soak lsm-bench bench-tiered bench-diskbytes bench-types bench-rss-types bench-durable bench-netproto bench-cpu
soak:
	MINIKV_REQUIRE_PEERS=1 $(GO) test -race -count=10 -timeout 30m \
	  -run 'BadInput|TwoThousand|Churn|Thousand|Idle|CommandTimeout|NeverReads|Shutdown|Panic|RESP.*(Protocol|Auth|Shutdown|Idle)' ./internal/server/...
	MINIKV_REQUIRE_PEERS=1 $(GO) test -count=1 -timeout 30m -run TestRESPRandomDifferential ./internal/server/redis/ -args -soak -rand.seeds 1000
	$(GO) test -count=1 -timeout 30m -run TestCrashKill9Durable ./cmd/minikv/ -args -soak
	$(GO) test -count=1 -timeout 30m -run TestTieredLargerThanMemory ./cmd/minikv/ -args -soak
	$(GO) test -count=1 -timeout 90m ./lsm/... -args -soak
	$(GO) test -race -count=20 -timeout 30m -run 'TestConcurrent|TestPowerLoss' ./lsm/ -args -soak

# The seed workload against MiniKV's LSM, Pebble, goleveldb and Badger, each
# in its own process (bench/lsm is a separate module, so those engines never
# enter MiniKV's go.mod). Results and how to read them: docs/benchmarks.md.
LSM_BENCH_FLAGS ?= -runs 3
lsm-bench:
	cd bench/lsm && $(GO) run . $(LSM_BENCH_FLAGS)

# Reads when 90 % of the data is only on disk, against all of it in memory
# (issue 13): durable MiniKV with -m for a tenth of the data set, then -m
# for all of it; preload, wait for compactions, 100 % gets over uniform
# keys; 3 alternating rounds, medians of ops/s, p99, server CPU per get
# (scripts/bench-tiered.sh, whose environment knobs size the run).
bench-tiered: build
	./scripts/bench-tiered.sh

# Disk bytes per item after BGREWRITEAOF, MiniKV against Redis's AOF
# (scripts/bench-diskbytes.sh; N keys, default 1 M; docs/durability.md).
bench-diskbytes: build
	./scripts/bench-diskbytes.sh

# The data types against Redis: redis-benchmark's list/set/hash/zset tests
# at P=1 and P=16 with each server's CPU per request, and resident bytes
# per element of big and small collections (docs/benchmarks.md).
bench-types: build
	./scripts/bench-types.sh
bench-rss-types: build
	./scripts/bench-rss-types.sh

# Durable SET throughput against Redis's AOF (issue 13): redis-benchmark
# against MiniKV --data-dir --fsync MODE and Redis appendonly yes with the
# same appendfsync, P=1 and P=16, with server CPU per SET and SETs per
# fdatasync (scripts/bench-durable.sh; MINIKV_BINS compares builds).
bench-durable: build
	./scripts/bench-durable.sh
