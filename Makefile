# MiniKV build and test entry points, shared by people and CI (.ci/run).
GO       ?= go
PYTHON   ?= python3
BIN      := bin
COMMIT   := $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS  := -X main.commit=$(COMMIT)
SUDO     := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
FUZZTIME ?= 60s

.PHONY: build run test deps test-go test-python race vet lint fuzz bench clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/minikv ./cmd/minikv

# Starts MiniKV with its defaults: 127.0.0.1:11211, 64 MiB.
run: build
	./$(BIN)/minikv

# Installs what the tests need (memcached for the differential test,
# pymemcache for the Python client suite), then runs every test.
test: deps vet build test-go test-python

deps:
	@command -v memcached >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -qq memcached; }
	$(PYTHON) -m pip install -q -r tests/python/requirements.txt
	$(GO) mod download

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# MINIKV_REQUIRE_PEERS makes tests that need memcached fail instead of skip.
test-go:
	MINIKV_REQUIRE_PEERS=1 $(GO) test -race -count=1 -timeout 8m ./...

test-python: build
	MINIKV_BIN=$(CURDIR)/$(BIN)/minikv $(PYTHON) -m pytest -q tests/python

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

clean:
	rm -rf $(BIN)
