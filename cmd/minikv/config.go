package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/minikv/minikv/internal/admin"
	"github.com/minikv/minikv/internal/server/redis"
)

// config is everything the command line, the environment and the config
// file can set. Precedence: flags > MINIKV_* env > --config file > defaults.
type config struct {
	Listen          string
	AdminAddr       string
	PProf           bool
	Port            int
	RESPPort        int
	MemoryLimit     size // bytes
	NoEvict         bool
	LFU             bool
	MaxConns        int
	Threads         int
	MaxItemSize     size
	UDPPort         int
	Verbose         int
	DisableCAS      bool
	DisableFlushAll bool
	Databases       int
	ReqsPerEvent    int
	EventLoops      int
	NoIOURing       bool
	IdleTimeout     time.Duration
	CommandTimeout  time.Duration
	WriteTimeout    time.Duration
	PubsubLimit     size // bytes
	NotifyEvents    string
	ShutdownTimeout time.Duration
	AuthTokenFile   string
	AuthFile        string
	ACLFile         string
	TLSCert         string
	TLSKey          string
	InsecureRemote  bool
	Shards          int
	DataDir         string
	Fsync           string
	DiskLimit       size
	LogFormat       string
	ClusterConfig   string
	Dir             string // RDB files: where SAVE writes (and start-up reads) dbfilename
	DBFilename      string
	Save            string // RDB save points; "": none
	RDBLoad         string // an RDB file to import at start
	ReplicaOf       string // HOST:PORT of the primary to replicate at start; "" = a primary
	ProtectedConfig string // enable-protected-configs
	ClusterNode     string
	ConfigFile      string
	RedisParams     *[][2]string // --config lines naming Redis run-time parameters (redis.IsConfigFileKey); a pointer keeps config comparable
	ShowVersion     bool
	ShowHelp        bool
}

// minDiskLimit is the smallest --disk-limit.
const minDiskLimit = 16 << 20

// size is a byte count written as memcached writes them: a plain number
// (in the flag's default unit) or a number with a k, m or g suffix.
type size struct {
	bytes int64
	unit  int64 // multiplier for a bare number
}

func (s *size) String() string { return strconv.FormatInt(s.bytes, 10) }

func (s *size) Set(v string) error {
	v = strings.TrimSpace(strings.ToLower(v))
	mult := s.unit
	switch {
	case strings.HasSuffix(v, "k"), strings.HasSuffix(v, "kb"):
		mult = 1 << 10
	case strings.HasSuffix(v, "m"), strings.HasSuffix(v, "mb"):
		mult = 1 << 20
	case strings.HasSuffix(v, "g"), strings.HasSuffix(v, "gb"):
		mult = 1 << 30
	case strings.HasSuffix(v, "b"): // bytes, as CONFIG REWRITE writes a limit no unit divides
		mult = 1
	}
	n, err := strconv.ParseInt(strings.TrimRight(v, "kmgb"), 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return fmt.Errorf("invalid size %q", v)
	}
	s.bytes = n * mult
	return nil
}

// options is memcached's "-o key=value,key=value". idle_timeout is honoured;
// the rest belong to memcached's internals (slab tuning, LRU threads...) and
// are warned about and ignored so existing command lines keep working.
type options struct {
	cfg     *config
	ignored []string
	idleSet bool // -o idle_timeout was given: it outranks env and file
}

func (o *options) String() string { return "" }

func (o *options) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch k {
		case "idle_timeout":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return fmt.Errorf("-o idle_timeout: invalid value %q", val)
			}
			o.cfg.IdleTimeout = time.Duration(n) * time.Second
			o.idleSet = true
		case "":
		default:
			o.ignored = append(o.ignored, k)
		}
	}
	return nil
}

// verbosity counts -v, -vv and -vvv like memcached.
type verbosity struct {
	v     *int
	level int
}

func (f verbosity) String() string   { return "" }
func (f verbosity) IsBoolFlag() bool { return true }
func (f verbosity) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		n, err2 := strconv.Atoi(s) // --verbose=2 from env or file
		if err2 != nil {
			return err
		}
		*f.v = n
		return nil
	}
	if b {
		*f.v = max(*f.v, f.level)
	}
	return nil
}

// flagSpec names one setting: its long name (also the env and config-file
// key) and its memcached short alias, if any.
type flagSpec struct {
	long, short string
}

// newFlagSet declares every flag on cfg. It returns the set, the long/short
// pairs, and the -o collector.
func newFlagSet(cfg *config, out io.Writer) (*flag.FlagSet, []flagSpec, *options) {
	fs := flag.NewFlagSet("minikv", flag.ContinueOnError)
	fs.SetOutput(out)
	var specs []flagSpec
	both := func(long, short string, fn func(name string)) {
		fn(long)
		if short != "" {
			fn(short)
		}
		specs = append(specs, flagSpec{long, short})
	}
	str := func(p *string, long, short, def, usage string) {
		*p = def
		both(long, short, func(n string) { fs.StringVar(p, n, def, usage) })
	}
	integer := func(p *int, long, short string, def int, usage string) {
		*p = def
		both(long, short, func(n string) { fs.IntVar(p, n, def, usage) })
	}
	boolean := func(p *bool, long, short, usage string) {
		both(long, short, func(n string) { fs.BoolVar(p, n, false, usage) })
	}
	dur := func(p *time.Duration, long string, def time.Duration, usage string) {
		*p = def
		both(long, "", func(n string) { fs.DurationVar(p, n, def, usage) })
	}
	sz := func(p *size, long, short string, def, unit int64, usage string) {
		*p = size{bytes: def, unit: unit}
		both(long, short, func(n string) { fs.Var(p, n, usage) })
	}

	str(&cfg.Listen, "listen", "l", "127.0.0.1", "interface to listen on")
	integer(&cfg.Port, "port", "p", 11211, "memcached protocol TCP port")
	integer(&cfg.RESPPort, "resp-port", "", 6379, "Redis protocol (RESP2/RESP3) TCP port; 0 disables it")
	sz(&cfg.MemoryLimit, "memory-limit", "m", 64<<20, 1<<20, "item memory in megabytes (or with a k/m/g suffix); --memory-limit 0: no limit (as Redis's maxmemory 0)")
	boolean(&cfg.NoEvict, "no-evict", "M", "return errors on memory exhausted instead of evicting")
	boolean(&cfg.LFU, "lfu", "", "evict the least frequently used items by Redis's LFU counters (maxmemory-policy allkeys-lfu) instead of the least recently used")
	integer(&cfg.MaxConns, "max-connections", "c", 1024, "max simultaneous connections")
	integer(&cfg.Threads, "threads", "t", 0, "GOMAXPROCS cap (0 = all cores)")
	sz(&cfg.MaxItemSize, "max-item-size", "I", 1<<20, 1, "max item size (key+value+overhead), e.g. 1m, 512k")
	integer(&cfg.UDPPort, "udp-port", "U", 0, "UDP port; only 0 (off) is accepted: MiniKV never serves UDP")
	boolean(&cfg.DisableCAS, "disable-cas", "C", "disable use of CAS")
	boolean(&cfg.DisableFlushAll, "disable-flush-all", "F", "disable flush_all command")
	integer(&cfg.Databases, "databases", "", 16, "number of Redis databases (SELECT 0..n-1), 1 to 255; the memcached port serves database 0")
	integer(&cfg.ReqsPerEvent, "reqs-per-event", "R", 20, "max pipelined requests answered before a flush")
	integer(&cfg.EventLoops, "event-loops", "", -1, "serve plain TCP connections from this many event loops (Linux; -1: one per two CPUs, at least one; 0: a goroutine per connection)")
	boolean(&cfg.NoIOURing, "no-io-uring", "", "event loops write each connection's replies with write(2), not one io_uring submission per pass")
	dur(&cfg.IdleTimeout, "idle-timeout", 0, "close connections idle this long after their last complete command (0 = never)")
	dur(&cfg.CommandTimeout, "command-timeout", 30*time.Second, "a started command (or TLS handshake) must complete within this (0 = never)")
	dur(&cfg.WriteTimeout, "write-timeout", 30*time.Second, "close a client that does not read its replies for this long (0 = never)")
	sz(&cfg.PubsubLimit, "pubsub-output-limit", "", 32<<20, 1<<20, "close a pub/sub subscriber whose unsent output passes this many megabytes (or k/m/g); Redis's client-output-buffer-limit pubsub, whose 8 MiB-for-60s soft limit also applies (0 = no limit)")
	str(&cfg.NotifyEvents, "notify-keyspace-events", "", "", "Redis keyspace notifications: notify-keyspace-events classes, e.g. KEA (\"\" = off; CONFIG SET changes them)")
	dur(&cfg.ShutdownTimeout, "shutdown-timeout", 10*time.Second, "how long SIGTERM waits for connections to finish")
	str(&cfg.AuthTokenFile, "auth-token-file", "", "", "file holding the auth token for both ports (or set MINIKV_AUTH_TOKEN)")
	str(&cfg.AuthFile, "auth-file", "Y", "", "memcached-style user:pass file for the text protocol's set-handshake")
	str(&cfg.ACLFile, "aclfile", "", "", "Redis ACL file: its users are loaded at start and by ACL LOAD, written by ACL SAVE (both ports)")
	str(&cfg.TLSCert, "tls-cert", "", "", "TLS certificate (PEM); with --tls-key, both ports speak TLS 1.2+")
	str(&cfg.TLSKey, "tls-key", "", "", "TLS private key (PEM)")
	boolean(&cfg.InsecureRemote, "insecure-allow-remote", "", "allow a non-loopback listen address without an auth token")
	str(&cfg.AdminAddr, "admin-addr", "", admin.DefaultAddr, "admin HTTP address for /healthz, /doctor, /metrics (\"\" disables it)")
	boolean(&cfg.PProf, "pprof", "", "serve /debug/pprof/ on the admin address")
	integer(&cfg.Shards, "shards", "", 0, "store shards, a power of two >= 16 (0 = from GOMAXPROCS)")
	str(&cfg.DataDir, "data-dir", "", "", "durable mode: keep every item in this directory (memory becomes a cache over it); \"\" = a pure cache")
	str(&cfg.Fsync, "fsync", "", "everysec", "durable mode: when the log is fsynced: always (before each reply), everysec, or no")
	sz(&cfg.DiskLimit, "disk-limit", "", 0, 1<<20, "durable mode: bound on the data directory in megabytes (or k/m/g); over it, expired then least recently written items go (0 = no bound)")
	str(&cfg.LogFormat, "log-format", "", "text", "log format: text or json")
	str(&cfg.ClusterConfig, "cluster-config", "", "", "Redis Cluster mode: the static slot map file (lines of NAME HOST:PORT SLOTS... or NAME HOST:PORT replicaof PRIMARY); \"\" = off")
	str(&cfg.ClusterNode, "cluster-node", "", "", "cluster mode: this node's NAME in --cluster-config (default: the node whose address is --listen:--resp-port)")
	str(&cfg.Dir, "dir", "", "", "RDB files: the directory SAVE and BGSAVE write dbfilename in (\"\" = the working directory)")
	str(&cfg.DBFilename, "dbfilename", "", "dump.rdb", "RDB files: the file name SAVE and BGSAVE write")
	str(&cfg.Save, "save", "", "", "RDB save points, Redis's \"seconds changes ...\" (e.g. \"3600 1 300 100\"): BGSAVE when one is reached, SAVE at shutdown, and dir/dbfilename loaded at start when present (\"\" = off)")
	str(&cfg.RDBLoad, "rdb-load", "", "", "import this RDB file (written by redis-server or MiniKV) at start, before serving; in durable mode into the data directory")
	str(&cfg.ReplicaOf, "replicaof", "", "", "start as a replica of the Redis or MiniKV primary at HOST:PORT (its RESP port), as Redis's replicaof; \"\" = a primary")
	str(&cfg.ProtectedConfig, "enable-protected-configs", "", "no", "whether CONFIG SET may change dir and dbfilename: no, yes, or local (loopback clients only)")
	str(&cfg.ConfigFile, "config", "", "", "key = value config file (keys are long flag names)")
	boolean(&cfg.ShowVersion, "version", "V", "print version and exit")
	boolean(&cfg.ShowHelp, "help", "h", "print this help and exit")

	fs.Var(verbosity{&cfg.Verbose, 1}, "v", "verbose (print errors/warnings)")
	fs.Var(verbosity{&cfg.Verbose, 1}, "verbose", "verbose (same as -v; =2 for -vv)")
	fs.Var(verbosity{&cfg.Verbose, 2}, "vv", "very verbose (also print client commands)")
	fs.Var(verbosity{&cfg.Verbose, 3}, "vvv", "extremely verbose")
	specs = append(specs, flagSpec{"verbose", "v"})
	opts := &options{cfg: cfg}
	fs.Var(opts, "o", "memcached extended options: idle_timeout=N; others are ignored with a warning")
	return fs, specs, opts
}

// splitAttached turns getopt's "-p11211" into "-p 11211" for the one-letter
// flags that take a value, so memcached command lines parse unchanged.
func splitAttached(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && !strings.Contains(a, "=") && fs.Lookup(a[1:]) == nil {
			if f := fs.Lookup(a[1:2]); f != nil {
				if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !bf.IsBoolFlag() {
					out = append(out, a[:2], a[2:])
					continue
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// parseConfig reads args, then fills what they left unset from the
// environment and the config file.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, []string, error) {
	cfg := &config{}
	fs, specs, opts := newFlagSet(cfg, out)
	if err := fs.Parse(splitAttached(fs, args)); err != nil {
		return nil, nil, err
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	isSet := func(sp flagSpec) bool {
		return set[sp.long] || (sp.short != "" && set[sp.short]) ||
			(sp.long == "verbose" && (set["vv"] || set["vvv"]))
	}
	if opts.idleSet {
		set["idle-timeout"] = true
	}
	if set["m"] && !set["memory-limit"] && cfg.MemoryLimit.bytes == 0 {
		// memcached refuses -m 0 (no room for one item); only the long
		// name, the environment and the file mean "no limit" by 0.
		return nil, nil, errors.New("memory limit must be positive (-m 0); --memory-limit 0 means no limit")
	}

	// The config file comes first so the environment can override it.
	if !set["config"] {
		if v := getenv(envName("config")); v != "" {
			cfg.ConfigFile = v
		}
	}
	fileVals := map[string]string{}
	if cfg.ConfigFile != "" {
		var err error
		var params [][2]string
		if fileVals, params, err = readConfigFile(cfg.ConfigFile, specs); err != nil {
			return nil, nil, err
		}
		cfg.RedisParams = &params
	}
	for _, sp := range specs {
		if isSet(sp) || sp.long == "config" {
			continue
		}
		v, ok := getenv(envName(sp.long)), true
		src := "environment variable " + envName(sp.long)
		if v == "" {
			v, ok = fileVals[sp.long]
			src = cfg.ConfigFile + ": " + sp.long
		}
		if !ok {
			continue
		}
		if err := fs.Set(sp.long, v); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", src, err)
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	return cfg, opts.ignored, nil
}

func envName(long string) string {
	return "MINIKV_" + strings.ToUpper(strings.ReplaceAll(long, "-", "_"))
}

// readConfigFile parses "key = value" lines; '#' starts a comment. Keys are
// long flag names (dashes or underscores), or the Redis names of the
// run-time parameters that have no flag (hash-max-listpack-entries, ...),
// which it returns apart, in file order, the last line of a key winning:
// CONFIG REWRITE writes both kinds. An unknown key is an error that names
// its line, so a typo never silently falls back to a default.
func readConfigFile(path string, specs []flagSpec) (map[string]string, [][2]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	known := map[string]bool{}
	for _, sp := range specs {
		known[sp.long] = true
	}
	vals := map[string]string{}
	var params [][2]string
	paramAt := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k = strings.ReplaceAll(strings.TrimSpace(k), "_", "-")
		if !ok || k == "" {
			return nil, nil, fmt.Errorf("%s:%d: want key = value, got %q", path, n, line)
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		if !known[k] && redis.IsConfigFileKey(k) {
			if i, seen := paramAt[k]; seen {
				params[i][1] = v
			} else {
				paramAt[k] = len(params)
				params = append(params, [2]string{k, v})
			}
			continue
		}
		if !known[k] || k == "config" {
			return nil, nil, fmt.Errorf("%s:%d: unknown key %q", path, n, k)
		}
		vals[k] = v
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	return vals, params, nil
}

func (c *config) validate() error {
	var errs []error
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d out of range", c.Port))
	}
	if c.RESPPort < 0 || c.RESPPort > 65535 {
		errs = append(errs, fmt.Errorf("resp port %d out of range", c.RESPPort))
	}
	if c.UDPPort != 0 {
		errs = append(errs, errors.New("UDP is not supported: -U must be 0"))
	}
	if c.MemoryLimit.bytes < 0 {
		errs = append(errs, errors.New("memory limit must not be negative"))
	}
	if c.MaxItemSize.bytes < 1024 || c.MaxItemSize.bytes > 1<<30 {
		errs = append(errs, fmt.Errorf("max item size %d: must be between 1k and 1g", c.MaxItemSize.bytes))
	} else if c.MemoryLimit.bytes > 0 && c.MaxItemSize.bytes > c.MemoryLimit.bytes/2 {
		errs = append(errs, fmt.Errorf("max item size %d cannot be more than half of the memory limit %d",
			c.MaxItemSize.bytes, c.MemoryLimit.bytes))
	}
	if c.MaxConns <= 0 {
		errs = append(errs, errors.New("max connections must be positive"))
	}
	if c.NoEvict && c.LFU {
		errs = append(errs, errors.New("--lfu and --no-evict (-M) are two eviction policies: set one"))
	}
	if c.Databases < 1 || c.Databases > 255 {
		errs = append(errs, fmt.Errorf("--databases %d: must be 1 to 255", c.Databases))
	}
	if c.Fsync != "always" && c.Fsync != "everysec" && c.Fsync != "no" {
		errs = append(errs, fmt.Errorf("--fsync %q: must be always, everysec or no", c.Fsync))
	}
	if c.DiskLimit.bytes != 0 && c.DataDir == "" {
		errs = append(errs, errors.New("--disk-limit needs --data-dir"))
	} else if c.DiskLimit.bytes != 0 && c.DiskLimit.bytes < minDiskLimit {
		errs = append(errs, fmt.Errorf("--disk-limit %d: must be at least 16m (the engine's logs and memtables alone take several megabytes)", c.DiskLimit.bytes))
	}
	if c.Shards < 0 {
		errs = append(errs, errors.New("shards must not be negative"))
	}
	if _, ok := redis.ParseKeyspaceEvents(c.NotifyEvents); !ok {
		errs = append(errs, fmt.Errorf("--notify-keyspace-events %q: the classes are the letters of \"Ag$lshzxeKEtmdn\"", c.NotifyEvents))
	}
	if c.EventLoops < -1 || c.EventLoops > 1024 {
		errs = append(errs, fmt.Errorf("--event-loops %d: must be -1 (one per two CPUs), 0 (a goroutine per connection) or 1 to 1024", c.EventLoops))
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		errs = append(errs, errors.New("--tls-cert and --tls-key go together"))
	}
	if c.CommandTimeout < 0 || c.WriteTimeout < 0 || c.IdleTimeout < 0 {
		errs = append(errs, errors.New("timeouts must not be negative"))
	}
	if c.ClusterNode != "" && c.ClusterConfig == "" {
		errs = append(errs, errors.New("--cluster-node needs --cluster-config"))
	}
	if c.ClusterConfig != "" && c.RESPPort == 0 {
		errs = append(errs, errors.New("--cluster-config needs the RESP port (--resp-port is 0)"))
	}
	if c.ClusterConfig != "" && c.ReplicaOf != "" {
		errs = append(errs, errors.New("--replicaof does not go with --cluster-config: a replica of a cluster is a replicaof line of its file"))
	}
	switch c.ProtectedConfig {
	case "no", "yes", "local":
	default:
		errs = append(errs, fmt.Errorf("--enable-protected-configs %q: want no, yes or local", c.ProtectedConfig))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("log format %q: want text or json", c.LogFormat))
	}
	return errors.Join(errs...)
}
