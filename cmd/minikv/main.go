// Command minikv is a memcached-compatible cache server.
//
// It takes memcached's short flags (-p -l -m -M -c -t -I -U 0 -v -V -h -C -F
// -R -o idle_timeout=N), long flags, MINIKV_* environment variables and a
// key = value config file, in that order of precedence.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/minikv/minikv/internal/admin"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/memcache"
	"github.com/minikv/minikv/internal/server/redis"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
)

// Set by the linker: -ldflags "-X main.commit=...".
var commit = ""

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "minikv:", err)
		}
		os.Exit(2)
	}
}

func versionString() string {
	c := commit
	if c == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					c = s.Value
				}
			}
		}
	}
	if c == "" {
		c = "unknown"
	}
	return fmt.Sprintf("minikv %s (memcached protocol %s) commit %s %s",
		server.Release, server.ProtocolVersion, c, runtime.Version())
}

// run parses the configuration, wires the store and server, and serves until
// SIGTERM or SIGINT, then shuts down gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, ignored, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	if cfg.ShowHelp {
		fs, _, _ := newFlagSet(&config{}, stdout)
		fmt.Fprintln(stdout, "Usage: minikv [flags]")
		fs.PrintDefaults()
		return nil
	}
	if cfg.ShowVersion {
		fmt.Fprintln(stdout, versionString())
		return nil
	}
	log := newLogger(cfg, stderr)
	for _, k := range ignored {
		log.Warn("ignoring unsupported -o option", "option", k)
	}
	if cfg.Threads > 0 {
		runtime.GOMAXPROCS(min(cfg.Threads, runtime.NumCPU()))
	}
	if getenv("GOMEMLIMIT") == "" {
		lim := softMemoryLimit(cfg.MemoryLimit.bytes, cfg.DataDir != "")
		prev := debug.SetMemoryLimit(lim)
		defer debug.SetMemoryLimit(prev)
		log.Debug("Go heap soft limit set from the memory limit", "gomemlimit", lim)
	}

	sec, err := loadSecurity(cfg, getenv)
	if err != nil {
		return err
	}
	var clusterCfg redis.ClusterConfig
	if cfg.ClusterConfig != "" {
		if clusterCfg, err = loadCluster(cfg, sec.tls != nil); err != nil {
			return err
		}
	}

	// The store holds items up to the record's limit: each port refuses
	// what is over its own (memcached's -I on the memcached port, Redis's
	// proto-max-bulk-len on the RESP port) before it reaches the store.
	scfg := store.Config{
		MemoryLimit: cfg.MemoryLimit.bytes,
		MaxItemSize: math.MaxUint32,
		Shards:      cfg.Shards,
		NoEvict:     cfg.NoEvict,
	}
	if scfg.MemoryLimit == 0 {
		scfg.MemoryLimit = store.NoMemoryLimit // --memory-limit 0
	}
	var st *store.Store
	if cfg.DataDir == "" {
		st = store.New(scfg)
	} else {
		scfg.DiskLimit = cfg.DiskLimit.bytes
		var closeDisk func() error
		if st, closeDisk, err = openDurable(ctx, cfg, scfg, log); err != nil {
			return err
		}
		defer func() {
			if err := closeDisk(); err != nil {
				log.Error("closing the data directory", "dir", cfg.DataDir, "err", err)
			}
		}()
	}
	defer st.Close()
	if getenv("GOMEMLIMIT") == "" {
		defer followOffHeap(st, cfg.DataDir != "")() // memlimit.go
	}
	if getenv("GOGC") == "" {
		defer followHeap()() // gcpace.go
	}
	srv := server.New(server.Config{
		MaxConns:          cfg.MaxConns,
		IdleTimeout:       cfg.IdleTimeout,
		CommandTimeout:    orNever(cfg.CommandTimeout),
		WriteTimeout:      orNever(cfg.WriteTimeout),
		PubsubOutputLimit: pubsubLimit(cfg.PubsubLimit.bytes),
		AuthToken:         sec.token,
		AuthUsers:         sec.users,
		ACLFile:           cfg.ACLFile,
		ReqsPerEvent:      cfg.ReqsPerEvent,
		EventLoops:        eventLoops(cfg.EventLoops),
		NoIOURing:         cfg.NoIOURing,
		DisableCAS:        cfg.DisableCAS,
		DisableFlushAll:   cfg.DisableFlushAll,
		Databases:         cfg.Databases,
		ShutdownTimeout:   cfg.ShutdownTimeout,
		Threads:           cfg.Threads,
		Verbosity:         cfg.Verbose,
		MaxItemSize:       cfg.MaxItemSize.bytes,
		NoEvict:           cfg.NoEvict,
		Logger:            log,
	}, st)
	srv.SetKeyEvents(notifyEvents(cfg.NotifyEvents)) // Redis's notify-keyspace-events
	st.SetLFU(cfg.LFU)                               // --lfu: maxmemory-policy allkeys-lfu
	if cfg.ACLFile != "" {
		if msg := srv.ACL().LoadFile(cfg.ACLFile, nil); msg != "" {
			return fmt.Errorf("aclfile: %s", msg) // Redis refuses to start too
		}
	}

	var respProto server.Protocol = redis.New(srv)
	if clusterCfg.Map != nil {
		if respProto, err = redis.NewCluster(srv, clusterCfg); err != nil {
			return err
		}
		self := clusterCfg.Self
		primary := ""
		if self.Primary != nil {
			primary = self.Primary.Name
		}
		log.Info("Redis Cluster mode", "config", cfg.ClusterConfig, "node", self.Name, "id", self.ID,
			"addr", self.Addr, "nodes", len(clusterCfg.Map.Nodes), "slots", slotCount(self), "replica_of", primary)
	}
	rp := respProto.(*redis.Protocol)
	if self := clusterCfg.Self; self != nil && self.Primary != nil && len(sec.token) > 0 {
		// A cluster replica authenticates to its primary with the token
		// every node of the cluster shares; a --config masterauth line
		// (applied next) overrides it.
		if err := rp.ApplyConfig([][2]string{{"masterauth", string(sec.token)}}); err != nil {
			return err
		}
	}
	if err := configureRESP(rp, cfg); err != nil {
		return err
	}
	if err := startRDB(rp, cfg, log); err != nil { // rdb.go
		return err
	}
	defer rp.Close() // the save-point ticker and a running BGSAVE

	// SHUTDOWN on the RESP port stops the process as SIGTERM does, after
	// the save it asks for; NOSAVE while a script runs exits at once
	// (shutdown.go in internal/server/redis says why).
	ctx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	var finalSave atomic.Bool
	finalSave.Store(true)
	rp.SetShutdown(func(req redis.ShutdownRequest) error {
		if req.Busy {
			log.Warn("SHUTDOWN NOSAVE while a script runs: exiting now; the script's changes are not kept")
			exitNow(0)
		}
		switch {
		case req.NoSave:
			finalSave.Store(false)
		case req.Save || rp.SavePointsSet():
			log.Info("saving the RDB snapshot before SHUTDOWN", "path", rp.RDBPath())
			if err := rp.Save(); err != nil && !req.Force {
				return err
			}
			finalSave.Store(false)
		}
		log.Info("SHUTDOWN received")
		cancelRun()
		return nil
	})

	// Listen on every port before serving any, so a port in use fails
	// start-up cleanly instead of leaving a half-started server.
	type listener struct {
		ln       net.Listener
		protocol server.Protocol
		proto    string
	}
	var lns []listener
	for _, l := range []struct {
		port     int
		protocol server.Protocol
		proto    string
	}{
		{cfg.Port, memcache.New(srv), "memcache"},
		{cfg.RESPPort, respProto, "resp"},
	} {
		if l.proto == "resp" && l.port == 0 {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Listen, strconv.Itoa(l.port)))
		if err != nil {
			for _, o := range lns {
				o.ln.Close()
			}
			return err
		}
		if sec.tls != nil {
			ln = tls.NewListener(ln, sec.tls)
		}
		lns = append(lns, listener{ln, l.protocol, l.proto})
		if a, ok := ln.Addr().(*net.TCPAddr); ok && l.proto == "resp" {
			rp.SetReplicaPort(a.Port) // REPLCONF listening-port
		}
	}
	if cfg.ReplicaOf != "" {
		host, port, err := net.SplitHostPort(cfg.ReplicaOf)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil || n <= 0 || n > 65535 {
			for _, o := range lns {
				o.ln.Close()
			}
			return fmt.Errorf("--replicaof %q: want HOST:PORT", cfg.ReplicaOf)
		}
		rp.Replicate(host, n)
	}
	if self := clusterCfg.Self; self != nil && self.Primary != nil {
		// A replica line of the slot map: replicate its primary, at the
		// address the map gives it.
		rp.Replicate(self.Primary.Host, self.Primary.Port)
	}
	// The admin port: bound before anything is served, like the data ports,
	// so a taken port fails start-up; "" turns it off.
	var adm *admin.Server
	admDone := make(chan struct{})
	if cfg.AdminAddr != "" {
		aln, err := net.Listen("tcp", cfg.AdminAddr)
		if err != nil {
			for _, o := range lns {
				o.ln.Close()
			}
			return fmt.Errorf("admin port: %w", err)
		}
		adm = admin.New(admin.Config{Addr: cfg.AdminAddr, PProf: cfg.PProf, Logger: log, DataDir: cfg.DataDir}, srv, st)
		go func() {
			defer close(admDone)
			if err := adm.Serve(aln); !errors.Is(err, admin.ErrServerClosed) {
				log.Error("admin port stopped", "err", err) // the cache keeps serving
			}
		}()
	}
	// Stopped last: /metrics stays scrapable and /healthz answers 503
	// while the data ports drain.
	stopAdmin := func() {
		if adm == nil {
			return
		}
		actx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = adm.Shutdown(actx)
		<-admDone
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// What start-up built and dropped (the command tables' parse, the
	// scripting engine's set-up) goes back to the system before the
	// first request instead of staying resident until the heap grows
	// over it: an idle server holds 18 MB instead of 20.
	debug.FreeOSMemory()
	serveErr := make(chan error, len(lns))
	for _, l := range lns {
		log.Info("minikv listening", "protocol", l.proto, "addr", l.ln.Addr().String(), "tls", sec.tls != nil,
			"auth", len(sec.token) > 0 || len(sec.users) > 0,
			"version", server.Version, "memory_limit", cfg.MemoryLimit.bytes, "max_connections", cfg.MaxConns)
		go func() { serveErr <- srv.Serve(l.ln, l.protocol) }()
	}

	select {
	case err := <-serveErr:
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
		stopAdmin()
		return err
	case <-ctx.Done():
	}
	stop() // a second signal kills the process the default way
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown timed out; connections closed by force", "err", err)
	}
	for range lns {
		<-serveErr
	}
	if !finalSave.Load() {
		_ = rp.Close() // SHUTDOWN saved already, or said NOSAVE
	} else if err := rp.FinalSave(); err != nil { // with save points, as Redis's shutdown
		log.Error("saving the RDB file at shutdown", "err", err)
	}
	stopAdmin()
	log.Info("stopped")
	return nil
}

// exitNow ends the process at once (SHUTDOWN NOSAVE while a script
// runs); a variable for tests.
var exitNow = os.Exit

// notifyEvents is --notify-keyspace-events as classes (validate has
// checked it).
func notifyEvents(s string) server.EventClass {
	flags, _ := redis.ParseKeyspaceEvents(s)
	return flags
}

// configureRESP gives the RESP port the --config file: its lines that
// name Redis parameters are applied as CONFIG SET applies them, and
// CONFIG REWRITE rewrites it.
func configureRESP(p *redis.Protocol, cfg *config) error {
	if cfg.ConfigFile == "" {
		return nil
	}
	if err := p.ApplyConfig(*cfg.RedisParams); err != nil {
		return fmt.Errorf("%s: %w", cfg.ConfigFile, err)
	}
	path, err := filepath.Abs(cfg.ConfigFile)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	p.SetConfigFile(path)
	return nil
}

// orNever maps the flags' "0 = never" to the server's negative "never"
// (its zero means "default").
func orNever(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func newLogger(cfg *config, w io.Writer) *slog.Logger {
	// Start-up and shutdown lines are Info; -vv adds per-connection Debug.
	level := slog.LevelInfo
	if cfg.Verbose >= 2 {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// softMemoryLimit is the Go heap's soft limit (runtime/debug.SetMemoryLimit)
// that MiniKV sets from its item memory limit when GOMEMLIMIT is not in the
// environment. The store's live heap under steady eviction is about 1.4 times
// the item limit (records, up to a quarter of segment bytes dead before
// compaction, the index); left to GOGC=100 alone, the collector let RSS reach
// 151 MiB for the default 64 MiB under a 1:1 set:get load over 1.5 M keys,
// and with this limit (128 MiB) RSS stayed at 128 MiB at the same throughput
// (docs/performance.md). The 32 MiB covers connection buffers and the
// runtime. It is a soft limit: above it the collector runs more often (at
// most about half the CPU), it never fails an allocation.
//
// Durable mode adds the engine's own heap, which -m does not count: its
// memtables (3 of engineMemTable's size), block cache (8 MiB) and the
// batches being committed. Without it, a small -m left the collector
// running almost without pause (tiered reads with -m 8: 17.7k gets/s at
// 73 µs of CPU each, against 58.4k at 19 µs with room for the engine).
//
// Without a memory limit (--memory-limit 0, CONFIG SET maxmemory 0) there
// is no soft limit either: math.MaxInt64, the runtime's "off".
func softMemoryLimit(memoryLimit int64, durable bool) int64 {
	if memoryLimit <= 0 {
		return math.MaxInt64
	}
	lim := memoryLimit + memoryLimit/2 + 32<<20
	if durable {
		lim += engineMemory + 3*int64(engineMemTable(memoryLimit)-lsm.DefaultMemTableSize)
	}
	return lim
}

// engineMemory is the durable engine's heap with 4 MiB memtables.
const engineMemory = 3*lsm.DefaultMemTableSize + 8<<20 + 4<<20

// pubsubLimit is --pubsub-output-limit as the server's OutputLimit: the
// hard bound, with Redis's soft one; 0 turns both off.
func pubsubLimit(hard int64) server.OutputLimit {
	if hard == 0 {
		return server.OutputLimit{Hard: -1, Soft: -1}
	}
	return server.OutputLimit{Hard: hard}
}

// eventLoops is the number of event loops --event-loops N asks for: -1
// (the default) is one per two CPUs the process may use, at least one,
// so that on a small machine the load generator or the application keeps
// a core, and each loop finds many connections ready per pass.
func eventLoops(n int) int {
	if n < 0 {
		return max(1, runtime.GOMAXPROCS(0)/2)
	}
	return n
}
