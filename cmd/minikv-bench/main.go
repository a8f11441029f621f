// Command minikv-bench is a load generator for memcached-protocol and
// Redis-protocol servers that reports wall-clock throughput and
// HdrHistogram latency percentiles, and that can start MiniKV, memcached
// and Redis itself to measure them side by side:
//
//	minikv-bench -s 127.0.0.1:11211 -c 50 -P 1 --ratio 1:9 -d 32 --keys 100000 --prefill -t 10s
//	minikv-bench --compare minikv,memcached,redis -c 50 --prefill -t 10s --repeat 3
//	minikv-bench --compare minikv,memcached,redis --sweep c=1,8,32,128,1024 --chart conns.svg
//	minikv-bench --compare minikv,memcached,redis --preset seed-vol1 --repeat 3
//	minikv-bench -s 10.0.0.1:11211,10.0.0.2:11211,10.0.0.3:11211 --hash ketama -c 50 -t 10s
//	minikv-bench locate -s 10.0.0.1:11211,10.0.0.2:11211 --hash ketama user:1 user:2
//
// It exits 1 when any request failed, 2 on bad usage or setup, 130 when
// interrupted; every server it started is stopped in all cases.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/minikv/minikv/internal/bench"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK          = 0
	exitErrors      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

type options struct {
	server, proto, name, hash string

	conns, pipeline, valueSize, keys, ttl, repeat int
	multiGet                                      int
	ratio, dist, preset, sweep, compare           string
	zipfTheta, rate                               float64
	prefill                                       bool
	requests                                      int64
	duration, warmup, timeout                     time.Duration
	seed                                          uint64

	memoryMB, threads, maxConns, redisIO       int
	minikvBin, memcachedBin, redisBin          string
	durable                                    string // --durable: fsync mode for minikv --data-dir and redis appendfsync
	jsonOut, csvOut, chartOut, progress, title string
	cpuProfile, fromJSON                       string
}

func newFlagSet(o *options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("minikv-bench", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, `Usage: minikv-bench [flags]

Load one running server:
  minikv-bench -s 127.0.0.1:11211 -c 50 -P 1 --ratio 1:9 -d 32 --keys 100000 --prefill -t 10s
  minikv-bench -s 127.0.0.1:6379 --proto resp -c 50 -P 16 -t 10s
Spread keys over several servers as libmemcached/pylibmc do (per-server ops and the aggregate):
  minikv-bench -s 10.0.0.1:11211,10.0.0.2:11211,10.0.0.3:11211 --hash ketama -c 50 --prefill -t 10s
  minikv-bench locate -s 10.0.0.1:11211,10.0.0.2:11211 --hash ketama KEY...   (which server holds KEY)
Start servers on free loopback ports and compare them (medians, MiniKV ÷ peer):
  minikv-bench --compare minikv,memcached,redis -c 50 -P 1 --prefill -t 10s --repeat 3
  minikv-bench --compare minikv,memcached,redis --sweep c=1,8,32,128,1024 --prefill --chart c.svg
  minikv-bench --compare minikv,memcached,redis --preset seed-vol1 --repeat 5
Targets: minikv, minikv-resp (MiniKV's RESP port), memcached, redis, null (codec-only ceiling).

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.server, "s", "127.0.0.1:11211", "server `address` to load (without --compare); several, comma-separated (host:port[:weight]), are a client-side-hashed pool (see --hash)")
	fs.StringVar(&o.hash, "hash", "", "how a pool given to -s places keys: ketama (libmemcached/pylibmc's ketama, default with several servers), ketama-md5 (libmemcached's ketama_weighted, libketama, twemproxy's ketama with hash md5) or modula (libmemcached's default)")
	fs.StringVar(&o.proto, "proto", "memcache", "protocol of -s: memcache or resp")
	fs.StringVar(&o.name, "name", "", "label of -s in the report (default: its address)")
	fs.IntVar(&o.conns, "c", 50, "connections")
	fs.IntVar(&o.pipeline, "P", 1, "pipeline depth: requests written per batch before reading their replies")
	fs.IntVar(&o.valueSize, "d", 32, "value size in bytes")
	fs.StringVar(&o.ratio, "ratio", "1:9", "set:get ratio")
	fs.IntVar(&o.keys, "keys", 100000, "keyspace size")
	fs.StringVar(&o.dist, "dist", "uniform", "key distribution: uniform, zipf or sequential")
	fs.Float64Var(&o.zipfTheta, "zipf-theta", 0.99, "zipf skew, 0 < theta < 1")
	fs.BoolVar(&o.prefill, "prefill", false, "set every key once before measuring, so gets hit")
	fs.Int64Var(&o.requests, "n", 0, "total requests per run (0: run for -t)")
	fs.DurationVar(&o.duration, "t", 10*time.Second, "duration of each run (when -n is 0)")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load before each run")
	fs.IntVar(&o.multiGet, "multiget", 1, "keys per get: memcached 'get k1 k2 ...', Redis MGET (ops/s counts requests; hit% counts keys)")
	fs.Float64Var(&o.rate, "rate", 0, "open loop: offer this many requests/s in total on a fixed schedule, latency counted from when each batch was due (0: closed loop, as fast as replies come)")
	fs.IntVar(&o.ttl, "ttl", 0, "expiry of stored keys in seconds (0: none)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed (runs with one seed send the same requests)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "dial timeout and per-batch reply timeout")
	fs.IntVar(&o.repeat, "repeat", 1, "runs per target; the table shows medians")
	fs.StringVar(&o.compare, "compare", "", "start these servers and compare them: minikv,memcached,redis[,null,minikv-resp]")
	fs.StringVar(&o.preset, "preset", "", "a named workload: seed-vol1 or seed-pressure")
	fs.StringVar(&o.sweep, "sweep", "", "vary one knob, e.g. c=1,8,32,128,1024 or P=1,4,16,32")
	fs.IntVar(&o.memoryMB, "memory", 1024, "memory limit in MiB for servers started by --compare")
	fs.IntVar(&o.threads, "threads", runtime.NumCPU(), "thread count for servers started by --compare")
	fs.IntVar(&o.redisIO, "redis-io-threads", 0, "redis io-threads (default 1: Redis's default; its I/O threads busy-poll cores the client needs)")
	fs.IntVar(&o.maxConns, "max-conns", 4096, "connection limit for servers started by --compare")
	fs.StringVar(&o.minikvBin, "minikv-bin", "", "minikv binary (default: next to this program, then PATH)")
	fs.StringVar(&o.durable, "durable", "", "with --compare: start minikv with --data-dir (fsync always, everysec or no) and redis with appendonly yes and the same appendfsync")
	fs.StringVar(&o.memcachedBin, "memcached-bin", "memcached", "memcached binary")
	fs.StringVar(&o.redisBin, "redis-bin", "redis-server", "redis-server binary")
	fs.StringVar(&o.jsonOut, "json", "", "write the full report as JSON to `file` (- for stdout)")
	fs.StringVar(&o.csvOut, "csv", "", "write every run as CSV to `file` (- for stdout)")
	fs.StringVar(&o.chartOut, "chart", "", "draw ops/s and p99 per server to an SVG `file` (with --sweep)")
	fs.StringVar(&o.progress, "progress", "auto", "live progress on stderr: auto (on a terminal), on, off")
	fs.StringVar(&o.title, "title", "", "chart title")
	fs.StringVar(&o.fromJSON, "from-json", "", "measure nothing: re-print the table and redo --csv/--chart from a saved --json `file`")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write the client's own CPU profile to `file` (is the client the bottleneck?)")
	return fs
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "serve-null" {
		return serveNull(ctx, args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "locate" {
		return locate(args[1:], os.Stdin, stdout, stderr)
	}
	var o options
	fs := newFlagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if o.fromJSON != "" {
		return replay(&o, stdout, stderr)
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	b, err := plan(ctx, &o, set, stderr)
	// Whatever happens from here on, servers started are stopped.
	if b != nil && b.fleet != nil {
		defer b.fleet.Close()
	}
	if err != nil {
		fmt.Fprintln(stderr, "minikv-bench:", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		return exitUsage
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "minikv-bench:", err)
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "minikv-bench:", err)
			return exitUsage
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	err = b.plan.Execute(ctx, b.report)
	b.report.Elapsed = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "minikv-bench: interrupted; stopping servers")
			return exitInterrupted
		}
		fmt.Fprintln(stderr, "minikv-bench:", err)
		return exitUsage
	}
	if err := writeOutputs(&o, b.report, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "minikv-bench:", err)
		return exitUsage
	}
	if n := b.report.Errors(); n > 0 {
		fmt.Fprintf(stderr, "minikv-bench: !!! %d requests failed; see the table\n", n)
		return exitErrors
	}
	return exitOK
}

// replay re-renders a saved report.
func replay(o *options, stdout, stderr io.Writer) int {
	f, err := os.Open(o.fromJSON)
	if err != nil {
		fmt.Fprintln(stderr, "minikv-bench:", err)
		return exitUsage
	}
	defer f.Close()
	var rep bench.Report
	if err := json.NewDecoder(f).Decode(&rep); err != nil {
		fmt.Fprintf(stderr, "minikv-bench: %s: %v\n", o.fromJSON, err)
		return exitUsage
	}
	o.jsonOut = ""
	if err := writeOutputs(o, &rep, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "minikv-bench:", err)
		return exitUsage
	}
	return exitOK
}

type built struct {
	plan   *bench.Plan
	report *bench.Report
	fleet  *bench.Fleet
}

// plan turns the flags into a Plan, starting the servers of --compare.
func plan(ctx context.Context, o *options, set map[string]bool, stderr io.Writer) (*built, error) {
	ratio, err := bench.ParseRatio(o.ratio)
	if err != nil {
		return nil, err
	}
	dist, err := bench.ParseDist(o.dist)
	if err != nil {
		return nil, err
	}
	if o.conns < 1 || o.pipeline < 1 || o.repeat < 1 {
		return nil, fmt.Errorf("-c, -P and --repeat must be >= 1")
	}
	w := &bench.Workload{
		Keys: o.keys, Dist: dist, ZipfTheta: o.zipfTheta, Ratio: ratio,
		ValueSize: o.valueSize, TTL: o.ttl, Seed: o.seed, MultiGet: o.multiGet,
	}
	variants := []bench.Variant{{Conns: o.conns, Pipeline: o.pipeline}}
	sweepParam := ""
	if o.sweep != "" {
		sweepParam, variants, err = parseSweep(o.sweep, o.conns, o.pipeline)
		if err != nil {
			return nil, err
		}
	}
	var job bench.Job
	switch o.preset {
	case "":
		if !set["t"] && o.requests > 0 {
			o.duration = 0
		}
		job = &bench.Mixed{
			Workload: w, Requests: o.requests, Duration: o.duration, Warmup: o.warmup, Rate: o.rate,
			Prefill: o.prefill, Timeout: o.timeout,
		}
	case "seed-vol1", "seed-pressure":
		if o.sweep != "" {
			return nil, fmt.Errorf("--preset and --sweep do not combine")
		}
		runKeys, concs := 1000, []int{1, 8}
		if o.preset == "seed-pressure" {
			runKeys, concs = 60000, []int{8}
			if !set["memory"] {
				o.memoryMB = 64
			}
		}
		if !set["d"] {
			w.ValueSize = 128
		}
		if set["c"] {
			concs = []int{o.conns}
		}
		variants = variants[:0]
		for _, c := range concs {
			variants = append(variants, bench.Variant{Conns: c, Pipeline: o.pipeline})
		}
		w.Keys = 5 * runKeys
		w.KeyPrefix = strings.TrimPrefix(o.preset, "seed-") + ":"
		o.prefill, o.warmup, o.requests, o.duration = false, 0, 0, 0
		job = &bench.Phased{Workload: w, Runs: 5, RunKeys: runKeys, Timeout: o.timeout}
	default:
		return nil, fmt.Errorf("unknown preset %q (want seed-vol1 or seed-pressure)", o.preset)
	}
	if err := w.Init(); err != nil {
		return nil, err
	}
	rep := &bench.Report{
		Command: "minikv-bench " + strings.Join(os.Args[1:], " "),
		Started: time.Now(),
		Host:    bench.NewHostInfo(),
		Settings: bench.Settings{
			Preset: o.preset, Keys: w.Keys, Dist: w.Dist.String(), Ratio: w.Ratio.String(),
			ValueSize: w.ValueSize, TTL: w.TTL, MultiGet: w.MultiGet, Rate: o.rate, Requests: o.requests, Duration: o.duration,
			Warmup: o.warmup, Prefill: o.prefill, Repeat: o.repeat,
		},
		SweepParam: sweepParam,
	}
	if o.preset != "" {
		rep.Settings.Ratio = "write, then read"
		rep.Settings.Dist = "sequential split"
	}
	p := &bench.Plan{Job: job, Variants: variants, Repeat: o.repeat, Live: live(o.progress, stderr)}
	b := &built{plan: p, report: rep}

	if o.compare == "" {
		proto, err := bench.ProtoByName(o.proto)
		if err != nil {
			return nil, err
		}
		pool, err := poolOf(o.server, o.hash)
		if err != nil {
			return nil, err
		}
		name := o.name
		if name == "" {
			name = o.server
			if pool != nil {
				name = fmt.Sprintf("%d servers (%s)", len(pool.Servers), pool.Ring.Mode())
			}
		}
		p.Targets = []bench.Target{{Name: name, Addr: o.server, Proto: proto, Pool: pool}}
		if pool != nil {
			rep.Settings.Pool = pool.String()
		}
		rep.Targets = []string{name}
		rep.Protocols = map[string]string{name: proto.Name()}
		return b, nil
	}

	if o.hash != "" {
		return nil, fmt.Errorf("--hash applies to the servers of -s, not to --compare")
	}
	exe, _ := os.Executable()
	minikvBin := o.minikvBin
	if minikvBin == "" {
		minikvBin = bench.FindMinikv(exe)
	}
	maxc := o.maxConns
	for _, v := range variants {
		maxc = max(maxc, v.Conns+64)
	}
	b.fleet = bench.NewFleet(bench.ServerOptions{
		MemoryMB: o.memoryMB, Threads: o.threads, RedisIOThreads: o.redisIO, MaxConns: maxc,
		MinikvBin: minikvBin, MemcachedBin: o.memcachedBin, RedisBin: o.redisBin,
		NullCmd: []string{exe, "serve-null"}, NullValueSize: w.ValueSize, Durable: o.durable,
	})
	rep.Settings.MemoryMB, rep.Settings.Threads = o.memoryMB, o.threads
	for _, name := range strings.Split(o.compare, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		s, err := b.fleet.Start(ctx, name)
		if err != nil {
			return b, err
		}
		p.Targets = append(p.Targets, s.Target())
		rep.Targets = append(rep.Targets, name)
		if rep.Protocols == nil {
			rep.Protocols = map[string]string{}
		}
		rep.Protocols[name] = s.Proto.Name()
		rep.Servers = append(rep.Servers, bench.ServerInfo{Name: name, Addr: s.Addr, Args: s.Args})
	}
	if len(p.Targets) == 0 {
		return b, fmt.Errorf("--compare names no server")
	}
	return b, nil
}

// poolOf returns the pool -s names: nil for one server without --hash.
func poolOf(server, hash string) (*bench.Pool, error) {
	if !strings.Contains(server, ",") && hash == "" {
		return nil, nil
	}
	servers, err := bench.ParsePool(server)
	if err != nil {
		return nil, err
	}
	if hash == "" {
		hash = bench.HashKetama
	}
	return bench.NewPool(hash, servers)
}

// locate prints the server each key goes to: the keys given as arguments,
// or one per line on stdin when there are none.
func locate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("minikv-bench locate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("s", "", "the pool: host:port[:weight],... in the clients' order")
	hash := fs.String("hash", bench.HashKetama, "ketama, ketama-md5 or modula (as for a benchmark)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: minikv-bench locate -s host:port,host:port,... [--hash ketama] [KEY...]\n"+
			"Prints KEY<TAB>server for each KEY (or each line of stdin), where libmemcached and pylibmc put it.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *server == "" {
		fmt.Fprintln(stderr, "minikv-bench locate: -s is required")
		return exitUsage
	}
	servers, err := bench.ParsePool(*server)
	if err != nil {
		fmt.Fprintln(stderr, "minikv-bench locate:", err)
		return exitUsage
	}
	pool, err := bench.NewPool(*hash, servers)
	if err != nil {
		fmt.Fprintln(stderr, "minikv-bench locate:", err)
		return exitUsage
	}
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	print := func(key string) {
		fmt.Fprintf(bw, "%s\t%s\n", key, pool.Locate([]byte(key)))
	}
	if fs.NArg() > 0 {
		for _, k := range fs.Args() {
			print(k)
		}
		return exitOK
	}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		print(sc.Text())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(stderr, "minikv-bench locate:", err)
		return exitUsage
	}
	return exitOK
}

// parseSweep parses "c=1,8,32" or "P=1,4,16" into variants that keep the
// other knob at its flag value.
func parseSweep(s string, conns, pipeline int) (string, []bench.Variant, error) {
	param, list, ok := strings.Cut(s, "=")
	if !ok || (param != "c" && param != "P") {
		return "", nil, fmt.Errorf("--sweep %q: want c=N,N,... or P=N,N,...", s)
	}
	var vs []bench.Variant
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return "", nil, fmt.Errorf("--sweep %q: %q is not a positive integer", s, f)
		}
		v := bench.Variant{Conns: conns, Pipeline: pipeline}
		if param == "c" {
			v.Conns = n
		} else {
			v.Pipeline = n
		}
		vs = append(vs, v)
	}
	return param, vs, nil
}

func live(mode string, stderr io.Writer) *bench.Live {
	on := false
	switch mode {
	case "on":
		on = true
	case "auto":
		if f, ok := stderr.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				on = true
			}
		}
	}
	if !on {
		return nil
	}
	return &bench.Live{W: stderr}
}

func writeOutputs(o *options, rep *bench.Report, stdout, stderr io.Writer) error {
	table := stdout
	if o.jsonOut == "-" || o.csvOut == "-" {
		table = stderr
	}
	if err := rep.WriteTable(table); err != nil {
		return err
	}
	write := func(path string, f func(io.Writer) error) error {
		if path == "" {
			return nil
		}
		if path == "-" {
			return f(stdout)
		}
		fh, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := f(fh); err != nil {
			fh.Close()
			return err
		}
		return fh.Close()
	}
	if err := write(o.jsonOut, rep.WriteJSON); err != nil {
		return err
	}
	if err := write(o.csvOut, rep.WriteCSV); err != nil {
		return err
	}
	return write(o.chartOut, func(w io.Writer) error { return rep.WriteChart(w, o.title) })
}
