// Package admin is MiniKV's HTTP side port: liveness, a doctor that names
// what is wrong, Prometheus metrics under memcached_exporter's names, and
// pprof when asked for.
//
//	GET /healthz        200 "ok" while the data listeners serve, 503 otherwise
//	GET /readyz         200 "ok" while they serve and writes can be made
//	                    durable; 503 during shutdown or a failed disk
//	GET /doctor         JSON checks (listeners, memory, shard balance,
//	                    eviction rate); 503 with the failing checks first
//	GET /metrics        Prometheus text format, read from Server.Stats at
//	                    scrape time, plus the Go and process collectors
//	GET /debug/pprof/*  only when Config.PProf is set; 404 otherwise
//
// The port is separate from the data ports so that an operator can bind it
// to loopback (the default, 127.0.0.1:9150) or a management network while
// the cache listens elsewhere, and so that no HTTP parser ever sees cache
// traffic. It carries no authentication: keep it off untrusted networks.
package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// DefaultAddr is where the admin port listens unless told otherwise.
const DefaultAddr = "127.0.0.1:9150"

// Defaults for the zero fields of Config.
const (
	DefaultMemoryHighWater   = 0.95
	DefaultMaxShardImbalance = 2.0
	DefaultMaxEvictionRate   = 1000.0
	DefaultMinDiskFree       = 0.05
	DefaultMaxStallShare     = 0.1
	DefaultMaxFsyncLatency   = time.Second
)

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("admin: closed")

// Config sets up the admin port. Zero fields take the defaults noted.
type Config struct {
	Addr   string       // what the caller bound, for its own reference; Serve takes the listener
	PProf  bool         // mount /debug/pprof/
	Logger *slog.Logger // default slog.Default()

	// Doctor thresholds.
	MemoryHighWater   float64 // bytes/limit at or above which "memory" fails; default 0.95
	MaxShardImbalance float64 // max/min items per shard above which "shard_balance" fails; default 2
	MaxEvictionRate   float64 // evictions per second above which "eviction_rate" fails; default 1000

	// Durable mode (--data-dir) only.
	DataDir         string        // the data directory, whose filesystem "disk_space" watches
	MinDiskFree     float64       // share of the filesystem free below which "disk_space" fails; default 0.05
	MaxStallShare   float64       // share of the time writes waited for the engine above which "disk_write_stalls" fails; default 0.1
	MaxFsyncLatency time.Duration // mean log fsync time above which "disk_fsync" fails; default 1s
}

// Server is the admin HTTP server over one MiniKV server and its store.
type Server struct {
	cfg   Config
	srv   *server.Server
	store *store.Store
	log   *slog.Logger
	http  *http.Server

	mu    sync.Mutex // protects older, newer
	older sample     // eviction-rate samples, at least evictionWindow apart
	newer sample
}

// New returns an admin server reporting on srv and st. Neither is modified.
func New(cfg Config, srv *server.Server, st *store.Store) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MemoryHighWater <= 0 {
		cfg.MemoryHighWater = DefaultMemoryHighWater
	}
	if cfg.MaxShardImbalance <= 0 {
		cfg.MaxShardImbalance = DefaultMaxShardImbalance
	}
	if cfg.MaxEvictionRate <= 0 {
		cfg.MaxEvictionRate = DefaultMaxEvictionRate
	}
	if cfg.MinDiskFree <= 0 {
		cfg.MinDiskFree = DefaultMinDiskFree
	}
	if cfg.MaxStallShare <= 0 {
		cfg.MaxStallShare = DefaultMaxStallShare
	}
	if cfg.MaxFsyncLatency <= 0 {
		cfg.MaxFsyncLatency = DefaultMaxFsyncLatency
	}
	a := &Server{cfg: cfg, srv: srv, store: st, log: cfg.Logger}

	// A registry per admin server, not the global one: no package-level
	// state, and two servers in one test binary do not collide.
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		newCollector(srv, st),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", a.healthz)
	mux.HandleFunc("GET /readyz", a.readyz)
	mux.HandleFunc("GET /doctor", a.doctor)
	mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(reg,
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorLog:      slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelError),
			ErrorHandling: promhttp.ContinueOnError,
			Registry:      reg,
		})))
	if cfg.PProf {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}

	writeTimeout := 10 * time.Second
	if cfg.PProf {
		// /debug/pprof/profile and /trace stream for ?seconds= (30 by default).
		writeTimeout = 5 * time.Minute
	}
	a.http = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	return a
}

// Handler returns the admin routes, for tests and for mounting elsewhere.
func (a *Server) Handler() http.Handler { return a.http.Handler }

// Serve answers admin requests on ln until Shutdown. It always returns a
// non-nil error; after Shutdown it is ErrServerClosed.
func (a *Server) Serve(ln net.Listener) error {
	a.log.Info("admin listening", "addr", ln.Addr().String(), "pprof", a.cfg.PProf)
	err := a.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return ErrServerClosed
	}
	return fmt.Errorf("admin: serve: %w", err)
}

// Shutdown stops the listener and waits for in-flight requests (a scrape, a
// pprof profile) until ctx expires, then closes what is left.
func (a *Server) Shutdown(ctx context.Context) error {
	err := a.http.Shutdown(ctx)
	if err != nil {
		a.http.Close()
	}
	return err
}

// readyz is the readiness answer: 200 while the data listeners serve and
// the data directory takes writes; 503 once shutdown begins (so the
// instance drains) and while the disk is failed (writes are refused until
// it takes them again, docs/durability.md: a load balancer sends clients
// elsewhere meanwhile).
// /healthz stays the liveness check: the process is alive, and what to do
// with the disk is the operator's call.
func (a *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	switch err := a.store.WriteErr(); {
	case !a.srv.Listening():
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not serving")
	case err != nil:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "writes refused, the disk failed:", err)
	default:
		fmt.Fprintln(w, "ok")
	}
}

// healthz is the liveness answer: 200 while the data listeners serve. During
// a graceful shutdown it turns 503, so a readiness probe on it takes the
// instance out of rotation while connections drain.
func (a *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !a.srv.Listening() {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "not serving")
		return
	}
	fmt.Fprintln(w, "ok")
}
