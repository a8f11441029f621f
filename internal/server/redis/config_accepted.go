package redis

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/minikv/minikv/internal/protocol/resp"
)

// Redis 7.0's configuration parameters that MiniKV has no mechanism for
// (lazy freeing, active defragmentation, AOF and RDB tuning, the
// replication transfer's knobs, ...): CONFIG GET answers them with
// Redis's defaults, and CONFIG SET checks a value as Redis does (its
// type, range and words, with its error texts) and keeps it, changing
// nothing else, so a client or test helper that sets them (as Redis's own
// test suite does) goes on. docs/configuration.md lists them. The table
// was taken from redis-server 7.2.4's answers (TestAcceptedConfigs
// compares them). Two of them do take effect: lfu-log-factor and
// lfu-decay-time set the store's LFU counters (applyLFUParams), used under
// maxmemory-policy allkeys-lfu.

type acceptKind uint8

const (
	acceptString acceptKind = iota // any value
	acceptBool                     // yes or no
	acceptInt                      // an integer in [lo, hi]
	acceptMem                      // a memory value in [lo, hi], printed in bytes
	acceptEnum                     // one of enum, any case, printed in lower case
)

// acceptedConfig is one such parameter.
type acceptedConfig struct {
	name      string
	def       string
	kind      acceptKind
	lo, hi    int64
	enum      []string
	immutable bool
}

var acceptedConfigs = []acceptedConfig{
	{name: "active-defrag-cycle-max", def: "25", kind: acceptInt, lo: 1, hi: 99},
	{name: "active-defrag-cycle-min", def: "1", kind: acceptInt, lo: 1, hi: 99},
	{name: "active-defrag-ignore-bytes", def: "104857600", kind: acceptMem, lo: 1, hi: math.MaxInt64},
	{name: "active-defrag-max-scan-fields", def: "1000", kind: acceptInt, lo: 1, hi: math.MaxInt64},
	{name: "active-defrag-threshold-lower", def: "10", kind: acceptInt, lo: 0, hi: 1000},
	{name: "active-defrag-threshold-upper", def: "100", kind: acceptInt, lo: 0, hi: 1000},
	{name: "active-expire-effort", def: "1", kind: acceptInt, lo: 1, hi: 10},
	{name: "activedefrag", def: "no", kind: acceptBool},
	{name: "activerehashing", def: "yes", kind: acceptBool},
	{name: "aof-disable-auto-gc", def: "no", kind: acceptBool},
	{name: "aof-load-truncated", def: "yes", kind: acceptBool},
	{name: "aof-rewrite-incremental-fsync", def: "yes", kind: acceptBool},
	{name: "aof-timestamp-enabled", def: "no", kind: acceptBool},
	{name: "aof-use-rdb-preamble", def: "yes", kind: acceptBool},
	{name: "appendfilename", def: "appendonly.aof", immutable: true},
	{name: "appendfsync", def: "everysec", kind: acceptEnum, enum: []string{"everysec", "always", "no"}},
	{name: "auto-aof-rewrite-min-size", def: "67108864", kind: acceptMem, lo: 0, hi: math.MaxInt64},
	{name: "auto-aof-rewrite-percentage", def: "100", kind: acceptInt, lo: 0, hi: math.MaxInt32},
	{name: "client-query-buffer-limit", def: "1073741824", kind: acceptMem, lo: 1 << 20, hi: math.MaxInt64},
	{name: "dynamic-hz", def: "yes", kind: acceptBool},
	{name: "ignore-warnings", def: ""},
	{name: "lazyfree-lazy-eviction", def: "no", kind: acceptBool},
	{name: "lazyfree-lazy-expire", def: "no", kind: acceptBool},
	{name: "lazyfree-lazy-server-del", def: "no", kind: acceptBool},
	{name: "lazyfree-lazy-user-del", def: "no", kind: acceptBool},
	{name: "lazyfree-lazy-user-flush", def: "no", kind: acceptBool},
	{name: "lfu-decay-time", def: "1", kind: acceptInt, lo: 0, hi: math.MaxInt32},
	{name: "lfu-log-factor", def: "10", kind: acceptInt, lo: 0, hi: math.MaxInt32},
	{name: "loglevel", def: "notice", kind: acceptEnum, enum: []string{"debug", "verbose", "notice", "warning", "nothing"}},
	{name: "maxmemory-eviction-tenacity", def: "10", kind: acceptInt, lo: 0, hi: 100},
	{name: "maxmemory-samples", def: "5", kind: acceptInt, lo: 1, hi: math.MaxInt32},
	{name: "no-appendfsync-on-rewrite", def: "no", kind: acceptBool},
	{name: "propagation-error-behavior", def: "ignore", kind: acceptEnum, enum: []string{"ignore", "panic", "panic-on-replicas"}},
	{name: "protected-mode", def: "yes", kind: acceptBool},
	{name: "rdb-del-sync-files", def: "no", kind: acceptBool},
	{name: "rdb-save-incremental-fsync", def: "yes", kind: acceptBool},
	{name: "rdbchecksum", def: "yes", immutable: true},
	{name: "rdbcompression", def: "yes", kind: acceptBool},
	{name: "repl-disable-tcp-nodelay", def: "no", kind: acceptBool},
	{name: "repl-diskless-load", def: "disabled", kind: acceptEnum, enum: []string{"disabled", "on-empty-db", "swapdb"}},
	{name: "repl-diskless-sync", def: "yes", kind: acceptBool},
	{name: "repl-diskless-sync-delay", def: "5", kind: acceptInt, lo: 0, hi: math.MaxInt32},
	{name: "repl-diskless-sync-max-replicas", def: "0", kind: acceptInt, lo: 0, hi: math.MaxInt32},
	{name: "replica-announce-ip", def: ""},
	{name: "replica-announced", def: "yes", kind: acceptBool},
	{name: "replica-ignore-disk-write-errors", def: "no", kind: acceptBool},
	{name: "replica-ignore-maxmemory", def: "yes", kind: acceptBool},
	{name: "replica-lazy-flush", def: "no", kind: acceptBool},
	{name: "sanitize-dump-payload", def: "no", kind: acceptEnum, enum: []string{"no", "yes", "clients"}},
	{name: "shutdown-on-sigint", def: "default", kind: acceptEnum, enum: []string{"default", "save", "nosave", "now", "force"}},
	{name: "shutdown-on-sigterm", def: "default", kind: acceptEnum, enum: []string{"default", "save", "nosave", "now", "force"}},
	{name: "shutdown-timeout", def: "10", kind: acceptInt, lo: 0, hi: math.MaxInt32},
	{name: "slave-announce-ip", def: ""},
	{name: "slave-ignore-maxmemory", def: "yes", kind: acceptBool},
	{name: "slave-lazy-flush", def: "no", kind: acceptBool},
	{name: "stop-writes-on-bgsave-error", def: "yes", kind: acceptBool},
	{name: "stream-node-max-bytes", def: "4096", kind: acceptMem, lo: 0, hi: math.MaxInt64},
	{name: "stream-node-max-entries", def: "100", kind: acceptInt, lo: 0, hi: math.MaxInt64},
	{name: "tcp-keepalive", def: "300", kind: acceptInt, lo: 0, hi: math.MaxInt32},
}

// acceptedValues holds the values CONFIG SET gave them, by name (an
// alias's under its replica- name).
type acceptedValues struct {
	mu sync.Mutex
	m  map[string]string

	// The two that streams use (stream.go), read on every XADD: set+1,
	// so 0 means the default.
	streamNodeBytes, streamNodeEntries atomic.Int64
}

// streamNodeLimits are stream-node-max-bytes and stream-node-max-entries.
func (a *acceptedValues) streamNodeLimits() (maxBytes, maxEntries int64) {
	maxBytes, maxEntries = 4096, 100
	if v := a.streamNodeBytes.Load(); v > 0 {
		maxBytes = v - 1
	}
	if v := a.streamNodeEntries.Load(); v > 0 {
		maxEntries = v - 1
	}
	return maxBytes, maxEntries
}

func (a *acceptedValues) get(name, def string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if v, ok := a.m[name]; ok {
		return v
	}
	return def
}

func (a *acceptedValues) set(name, v string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = make(map[string]string)
	}
	a.m[name] = v
	switch name {
	case "stream-node-max-bytes":
		n, _ := strconv.ParseInt(v, 10, 64)
		a.streamNodeBytes.Store(n + 1)
	case "stream-node-max-entries":
		n, _ := strconv.ParseInt(v, 10, 64)
		a.streamNodeEntries.Store(n + 1)
	}
}

// acceptedConfigParams are the table's CONFIG parameters, and two with a
// syntax of their own: client-output-buffer-limit and maxmemory-clients.
func acceptedConfigParams() []*configParam {
	var out []*configParam
	for _, c := range acceptedConfigs {
		key := c.name
		if strings.HasPrefix(key, "slave-") {
			key = "replica-" + key[len("slave-"):] // the same value as its replica- name
		}
		p := &configParam{name: c.name, def: c.def,
			get: func(rc *conn) string { return rc.p.accepted.get(key, c.def) }}
		if !c.immutable {
			p.set = func(pr *Protocol, v []byte) (func() string, string) {
				norm, reason := c.check(v)
				if reason != "" {
					return nil, reason
				}
				if c.name == "activedefrag" && norm == "yes" {
					// MiniKV has no defragmenter: Redis's words for a
					// build without one (Debian's redis-server answers so).
					return nil, "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution"
				}
				return func() string {
					pr.accepted.set(key, norm)
					if c.name == "lfu-log-factor" || c.name == "lfu-decay-time" {
						pr.applyLFUParams()
					}
					return ""
				}, ""
			}
		}
		out = append(out, p)
	}
	const coblDef = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
	out = append(out, &configParam{name: "client-output-buffer-limit", def: coblDef,
		get: func(rc *conn) string { return rc.p.accepted.get("client-output-buffer-limit", coblDef) },
		set: func(pr *Protocol, v []byte) (func() string, string) {
			cur := pr.accepted.get("client-output-buffer-limit", coblDef)
			next, reason := outputBufferLimits(cur, string(v))
			if reason != "" {
				return nil, reason
			}
			return func() string { pr.accepted.set("client-output-buffer-limit", next); return "" }, ""
		}})
	out = append(out, &configParam{name: "maxmemory-clients", def: "0",
		get: func(rc *conn) string { return rc.p.accepted.get("maxmemory-clients", "0") },
		set: func(pr *Protocol, v []byte) (func() string, string) {
			s := string(v)
			if pct, ok := strings.CutSuffix(s, "%"); ok {
				n, err := strconv.ParseInt(pct, 10, 64)
				switch {
				case err != nil || n < 0:
					return nil, "argument must be a memory or percent value"
				case n > 100:
					return nil, "percentage argument must be less or equal to 100"
				}
				return func() string { pr.accepted.set("maxmemory-clients", s); return "" }, ""
			}
			u, err := memValue(v)
			if err != nil || u > math.MaxInt64 {
				return nil, "argument must be a memory or percent value"
			}
			return func() string { pr.accepted.set("maxmemory-clients", strconv.FormatUint(u, 10)); return "" }, ""
		}})
	return out
}

// applyLFUParams gives the store lfu-log-factor and lfu-decay-time, the
// two of the table that take effect (in allkeys-lfu's counters).
func (p *Protocol) applyLFUParams() {
	factor, _ := strconv.ParseInt(p.accepted.get("lfu-log-factor", "10"), 10, 64)
	decay, _ := strconv.ParseInt(p.accepted.get("lfu-decay-time", "1"), 10, 64)
	p.st.SetLFUParams(factor, decay)
}

// check parses v as c's kind and returns it as CONFIG GET prints it, or
// Redis's reason for refusing it.
func (c *acceptedConfig) check(v []byte) (string, string) {
	switch c.kind {
	case acceptBool:
		switch strings.ToLower(string(v)) {
		case "yes":
			return "yes", ""
		case "no":
			return "no", ""
		}
		return "", "argument must be 'yes' or 'no'"
	case acceptInt:
		n, ok := resp.ParseInt(v) // strtoll's way: no '+', no spaces
		if !ok {
			return "", "argument couldn't be parsed into an integer"
		}
		if n < c.lo || n > c.hi {
			return "", "argument must be between " + itoa64(c.lo) + " and " + itoa64(c.hi) + " inclusive"
		}
		return strconv.FormatInt(n, 10), ""
	case acceptMem:
		u, err := memValue(v)
		if err != nil {
			return "", "argument must be a memory value"
		}
		if u > uint64(c.hi) || int64(u) < c.lo {
			return "", "argument must be between " + itoa64(c.lo) + " and " + itoa64(c.hi) + " inclusive"
		}
		return strconv.FormatUint(u, 10), ""
	case acceptEnum:
		for _, e := range c.enum {
			if strings.EqualFold(e, string(v)) {
				return e, ""
			}
		}
		return "", "argument(s) must be one of the following: " + strings.Join(c.enum, ", ")
	}
	return string(v), ""
}

// outputBufferLimits applies a CONFIG SET client-output-buffer-limit
// value ("<class> <hard> <soft> <seconds>" ...) to cur, as Redis does:
// classes normal, replica (slave) and pubsub, memory values.
func outputBufferLimits(cur, v string) (string, string) {
	f := strings.Fields(cur)
	limits := map[string][3]string{}
	for i := 0; i+3 < len(f); i += 4 {
		limits[f[i]] = [3]string{f[i+1], f[i+2], f[i+3]}
	}
	args := strings.Fields(v)
	if len(args)%4 != 0 {
		return "", "Wrong number of arguments in buffer limit configuration."
	}
	for i := 0; i < len(args); i += 4 {
		class := strings.ToLower(args[i])
		switch class {
		case "replica":
			class = "slave"
		case "normal", "slave", "pubsub":
		default:
			return "", "Invalid client class specified in buffer limit configuration."
		}
		hard, err1 := memValue([]byte(args[i+1]))
		soft, err2 := memValue([]byte(args[i+2]))
		secs, err3 := strconv.ParseInt(args[i+3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || secs < 0 {
			return "", "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		}
		limits[class] = [3]string{strconv.FormatUint(hard, 10), strconv.FormatUint(soft, 10), strconv.FormatInt(secs, 10)}
	}
	var b strings.Builder
	for i, class := range []string{"normal", "slave", "pubsub"} {
		if i > 0 {
			b.WriteByte(' ')
		}
		l := limits[class]
		b.WriteString(class + " " + l[0] + " " + l[1] + " " + l[2])
	}
	return b.String(), ""
}
