package redis

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
)

// CONFIG GET, SET and REWRITE over one table of parameters. Each
// parameter knows how to read its value, how to parse and apply a new one
// (nil: fixed at start-up), and under which key the --config file holds
// it. A parameter's state lives where it acts: the store (maxmemory, the
// encoding limits), the server core (timeout, maxclients) or the Protocol
// (slowlog, notifications); the table only reaches it.
//
// A multi-parameter CONFIG SET is all or nothing, as in Redis 7: every
// name is checked first (unknown, immutable, given twice), then every
// value is parsed, and only when all parse are they applied, in order.
// Should an apply fail, the ones before it are put back. p.configMu
// serialises CONFIG SET and REWRITE, so two clients' SETs never
// interleave.

// configParam is one parameter of CONFIG GET/SET/REWRITE.
type configParam struct {
	name string // Redis's name, lower case

	// get is the value as CONFIG GET prints it.
	get func(rc *conn) string

	// set parses v and returns what applies it, or the reason it is
	// refused, which follows "ERR CONFIG SET failed (possibly related to
	// argument '<name>') - ". A nil set makes the parameter immutable.
	// Parsing changes nothing; apply does, and returns a reason when it
	// fails (then nothing may have changed either).
	set func(p *Protocol, v []byte) (apply func() string, reason string)

	// fileKey is the parameter's key in minikv's --config file, for
	// CONFIG REWRITE: a long flag name ("memory-limit"), or "" for the
	// parameters without a flag, which the file holds under their Redis
	// name. fileValue is the current value in that key's format (nil:
	// get's). noRewrite leaves the parameter out of the file.
	fileKey   string
	fileValue func(p *Protocol) string
	noRewrite bool

	// protected marks Redis's protected configs (dir, dbfilename):
	// CONFIG SET changes them only as enable-protected-configs allows.
	protected bool

	// def is the value a REWRITE does not add to the file when the file
	// does not hold the parameter already (Redis writes only changed
	// parameters), in the file's format.
	def string
}

// configParams is the table, built once by init and never changed after.
var configParams []*configParam

// configByName finds parameters by lower-case name.
var configByName map[string]*configParam

func init() {
	configParams = append(configParams, serverConfigParams()...)
	configParams = append(configParams, encodingConfigParams()...)
	configParams = append(configParams, notifyConfigParam())
	configParams = append(configParams, trackingConfigParam())        // tracking.go
	configParams = append(configParams, acceptedConfigParams()...)    // config_accepted.go
	configParams = append(configParams, opsConfigParams()...)         // ops.go
	configParams = append(configParams, scriptConfigParams()...)      // script.go
	configParams = append(configParams, persistConfigParams()...)     // persist.go
	configParams = append(configParams, replicationConfigParams()...) // replica.go
	configParams = append(configParams, aclConfigParams()...)         // acl.go
	configByName = make(map[string]*configParam, len(configParams))
	for _, c := range configParams {
		if configByName[c.name] != nil {
			panic("redis: CONFIG parameter " + c.name + " declared twice")
		}
		configByName[c.name] = c
	}
}

// serverConfigParams are the parameters of the server as a whole:
// memory, connections, and the fixed ones CONFIG GET reports for clients
// that look for them. The settable ones are the start-up flags of the
// same meaning (-m, -M, --idle-timeout, -c), and CONFIG REWRITE writes
// them under the flags' names.
func serverConfigParams() []*configParam {
	fixed := func(name, value string) *configParam {
		return &configParam{name: name, get: func(*conn) string { return value }, noRewrite: true}
	}
	return []*configParam{
		{name: "maxmemory", get: func(rc *conn) string { return itoa64(rc.st.MemoryLimit()) },
			set:     setMaxmemory,
			fileKey: "memory-limit", fileValue: func(p *Protocol) string { return sizeFlag(p.st.MemoryLimit()) }, def: "64m"},
		{name: "maxmemory-policy", get: func(rc *conn) string { return rc.p.maxmemoryPolicy() }, set: setMaxmemoryPolicy,
			fileKey: "no-evict", fileValue: func(p *Protocol) string { return strconv.FormatBool(p.st.NoEvict()) }, def: "false"},
		{name: "timeout", get: func(rc *conn) string { return itoa64(int64(rc.p.srv.IdleTimeout() / time.Second)) },
			set: intConfig(0, math.MaxInt32, func(p *Protocol, v int64) string {
				p.srv.SetIdleTimeout(time.Duration(v) * time.Second)
				return ""
			}),
			fileKey: "idle-timeout", fileValue: func(p *Protocol) string { return p.srv.IdleTimeout().String() }, def: "0s"},
		{name: "maxclients", get: func(rc *conn) string { return itoa64(int64(rc.p.srv.MaxConns())) },
			set:     intConfig(1, math.MaxUint32, setMaxclients),
			fileKey: "max-connections", fileValue: func(p *Protocol) string { return strconv.Itoa(p.srv.MaxConns()) }, def: "1024"},
		// Durable mode is MiniKV's AOF: INFO's aof_enabled and WAITAOF
		// say so too.
		{name: "appendonly", get: func(rc *conn) string { return map[bool]string{true: "yes", false: "no"}[rc.p.st.Durable()] },
			noRewrite: true},
		{name: "databases", get: func(rc *conn) string { return strconv.Itoa(rc.p.databases()) }, noRewrite: true},
		{name: "port", get: func(rc *conn) string { return itoa64(int64(localPort(rc.LocalAddr()))) }, noRewrite: true},
		{name: "proto-max-bulk-len", get: func(rc *conn) string { return itoa64(rc.p.protoMaxBulk.Load()) },
			set: setProtoMaxBulkLen, def: itoa64(resp.MaxBulkLen)},
		fixed("hz", "10"),
		fixed("io-threads", "1"),
		{name: "cluster-enabled", get: func(rc *conn) string {
			return map[bool]string{false: "no", true: "yes"}[rc.p.cluster != nil]
		}, noRewrite: true},
	}
}

// setMaxmemory parses maxmemory, a memory value; 0 is no limit, as in
// Redis: nothing is evicted for size, and the Go heap's soft limit set
// from it is lifted too (cmd/minikv's followOffHeap).
var setMaxmemory = memConfig(0, math.MaxInt64, func(p *Protocol, v int64) string {
	p.st.SetMemoryLimit(v)
	return ""
})

// setProtoMaxBulkLen parses proto-max-bulk-len, a memory value in Redis
// 7.0's range (1 MiB up).
var setProtoMaxBulkLen = memConfig(1<<20, math.MaxInt64, func(p *Protocol, v int64) string {
	p.protoMaxBulk.Store(v)
	return ""
})

// redisPolicies are Redis's maxmemory-policy values, in its error's order.
var redisPolicies = []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
	"allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}

// setMaxmemoryPolicy parses maxmemory-policy. MiniKV has three
// policies: evict by its CLOCK walk over recency (reported as
// allkeys-lru), evict by Redis's LFU counters (allkeys-lfu: the store's
// LFU mode, store/lfu.go), or refuse writes (noeviction, -M). Redis's
// other policies are refused with a reason rather than run as something
// else: the volatile-* ones would need the walk to pass over every key
// without a TTL, and the store keeps no separate set of the keys with one.
func setMaxmemoryPolicy(p *Protocol, v []byte) (func() string, string) {
	name := strings.ToLower(string(v))
	switch name {
	case "noeviction", "allkeys-lru", "allkeys-lfu":
		return func() string {
			noEvict := name == "noeviction"
			p.st.SetNoEvict(noEvict)
			p.st.SetLFU(name == "allkeys-lfu")
			if !noEvict {
				p.st.SetMemoryLimit(p.st.MemoryLimit()) // evict what is over now
			}
			return ""
		}, ""
	}
	if slices.Contains(redisPolicies, name) {
		return nil, "MiniKV supports only allkeys-lru, allkeys-lfu and noeviction"
	}
	return nil, "argument(s) must be one of the following: " + strings.Join(redisPolicies, ", ")
}

// reservedFDs are the descriptors Redis keeps for itself beyond
// maxclients (CONFIG_MIN_RESERVED_FDS): listeners, files, the log.
const reservedFDs = 32

// setMaxclients applies maxclients as Redis's updateMaxclients does: the
// process's descriptor limit is raised to fit if it can be, else the
// value is refused with the number that would fit.
func setMaxclients(p *Protocol, v int64) string {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur != math.MaxUint64 { // RLIM_INFINITY
		need := uint64(v) + reservedFDs
		if lim.Cur < need {
			raised := lim
			raised.Cur = min(need, lim.Max)
			if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
				lim = raised
			}
		}
		if lim.Cur < need {
			return "The operating system is not able to handle the specified number of clients, try with " +
				strconv.FormatUint(max(lim.Cur, reservedFDs+1)-reservedFDs, 10)
		}
	}
	p.srv.SetMaxConns(int(v))
	return ""
}

// sizeFlag writes n bytes as --memory-limit reads it: in the largest unit
// that divides it (64m, 1536k), or in bytes (1000b); 0 (no limit) as 0.
func sizeFlag(n int64) string {
	switch {
	case n == 0:
		return "0"
	case n%(1<<30) == 0:
		return itoa64(n>>30) + "g"
	case n%(1<<20) == 0:
		return itoa64(n>>20) + "m"
	case n%(1<<10) == 0:
		return itoa64(n>>10) + "k"
	}
	return itoa64(n) + "b"
}

// configFailed is the prefix of Redis's CONFIG SET errors about one
// argument.
func configFailed(arg []byte) string {
	return "ERR CONFIG SET failed (possibly related to argument '" + string(arg) + "') - "
}

// cmdConfigGet is CONFIG GET pattern [pattern ...]. As in Redis, a
// pattern without glob characters is a name, answered in the caller's
// spelling; each parameter is listed once.
func cmdConfigGet(rc *conn, argv [][]byte) {
	type match struct {
		name string
		c    *configParam
	}
	var out []match
	seen := make(map[string]bool)
	add := func(name string, c *configParam) {
		if !seen[c.name] {
			seen[c.name] = true
			out = append(out, match{name, c})
		}
	}
	for _, pat := range argv[2:] {
		if !bytes.ContainsAny(pat, "[*?") {
			if c := configByName[strings.ToLower(string(pat))]; c != nil {
				add(string(pat), c)
			}
			continue
		}
		g := compileGlob(bytes.ToLower(pat))
		for _, c := range configParams {
			if g.match([]byte(c.name)) {
				add(c.name, c)
			}
		}
	}
	rc.w.Map(len(out))
	for _, m := range out {
		rc.w.BulkString(m.name)
		rc.w.BulkString(m.c.get(rc))
	}
}

// cmdConfigSet is CONFIG SET parameter value [parameter value ...],
// applied all or none.
func cmdConfigSet(rc *conn, argv [][]byte) {
	if len(argv)%2 != 0 {
		rc.w.Error(errSyntax)
		return
	}
	if msg := rc.p.configSet(argv[2:], rc.protectedAllowed()); msg != "" {
		rc.w.Error(msg)
		return
	}
	rc.w.OK()
}

// configSet applies the name, value pairs of pairs, all or none, and
// returns "" or the error reply. protectedOK lets it set protected
// parameters (start-up, or enable-protected-configs allows the client).
func (p *Protocol) configSet(pairs [][]byte, protectedOK bool) string {
	params := make([]*configParam, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		c := configByName[strings.ToLower(string(pairs[i]))]
		switch {
		case c == nil:
			return "ERR Unknown option or number of arguments for CONFIG SET - '" + string(pairs[i]) + "'"
		case c.set == nil:
			return configFailed(pairs[i]) + "can't set immutable config"
		case c.protected && !protectedOK:
			return configFailed(pairs[i]) + "can't set protected config"
		}
		for _, o := range params {
			if o == c {
				return configFailed(pairs[i]) + "duplicate parameter"
			}
		}
		params = append(params, c)
	}
	p.configMu.Lock()
	defer p.configMu.Unlock()
	applies := make([]func() string, len(params))
	for i, c := range params {
		apply, reason := c.set(p, pairs[2*i+1])
		if apply == nil {
			return configFailed(pairs[2*i]) + reason
		}
		applies[i] = apply
	}
	// The values that are in effect, to put back should an apply fail.
	var rc conn
	rc.p, rc.st = p, p.st
	old := make([]string, len(params))
	for i, c := range params {
		old[i] = c.get(&rc)
	}
	for i, apply := range applies {
		if reason := apply(); reason != "" {
			for j := i - 1; j >= 0; j-- {
				if undo, _ := params[j].set(p, []byte(old[j])); undo != nil {
					undo()
				}
			}
			return configFailed(pairs[2*i]) + reason
		}
	}
	return ""
}

// intConfig is a parameter with an integer value in [lo, hi], as Redis's
// numeric configs parse it (strtoll: no spaces, no '+', no fraction).
func intConfig(lo, hi int64, apply func(p *Protocol, v int64) string) func(p *Protocol, v []byte) (func() string, string) {
	return func(p *Protocol, b []byte) (func() string, string) {
		v, ok := resp.ParseInt(b)
		if !ok {
			return nil, "argument couldn't be parsed into an integer"
		}
		if v < lo || v > hi {
			return nil, "argument must be between " + itoa64(lo) + " and " + itoa64(hi) + " inclusive"
		}
		return func() string { return apply(p, v) }, ""
	}
}

// memConfig is a parameter with a memory value ("3000", "1kb", "2mb") in
// [lo, hi], as Redis's memtoull reads it.
func memConfig(lo, hi int64, apply func(p *Protocol, v int64) string) func(p *Protocol, v []byte) (func() string, string) {
	return func(p *Protocol, b []byte) (func() string, string) {
		u, err := memValue(b)
		if err != nil {
			return nil, "argument must be a memory value"
		}
		v := int64(min(u, math.MaxInt64))
		if u > math.MaxInt64 || v < lo || v > hi {
			return nil, "argument must be between " + itoa64(lo) + " and " + itoa64(hi) + " inclusive"
		}
		return func() string { return apply(p, v) }, ""
	}
}

// SetConfigFile names the file CONFIG REWRITE rewrites: minikv's
// --config, as an absolute path (the working directory may change).
// Without one, REWRITE answers Redis's error. Call it before serving.
func (p *Protocol) SetConfigFile(path string) { p.configFile = path }

// IsConfigFileKey reports whether key names a run-time parameter that a
// --config file holds under its Redis name (the encoding parameters): the
// parameters with a flag of their own are held under the flag's name.
func IsConfigFileKey(key string) bool {
	c := configByName[key]
	return c != nil && c.set != nil && c.fileKey == ""
}

// ApplyConfig sets parameters by their Redis names, all or none, as
// CONFIG SET does: the lines of a --config file that IsConfigFileKey
// accepts, at start-up.
func (p *Protocol) ApplyConfig(pairs [][2]string) error {
	args := make([][]byte, 0, 2*len(pairs))
	for _, kv := range pairs {
		args = append(args, []byte(kv[0]), []byte(kv[1]))
	}
	if msg := p.configSet(args, true); msg != "" {
		return errors.New(strings.TrimPrefix(msg, "ERR "))
	}
	return nil
}

// configSignature marks where CONFIG REWRITE appended the parameters the
// file did not hold, as Redis's "# Generated by CONFIG REWRITE".
const configSignature = "# Generated by CONFIG REWRITE"

// cmdConfigRewrite is CONFIG REWRITE: the --config file gets the current
// value of every run-time parameter, as Redis's rewriteConfig does. A
// line that sets one is rewritten in place (under the key it is known by
// in the file: the flag's name, or the Redis name for the parameters
// without a flag), later lines for the same key are dropped, and every
// other line (comments, blank lines, start-up settings) is kept as it is.
// A parameter the file did not hold is appended, after Redis's signature
// line, only when its value is not the default. The new file replaces the
// old one atomically (a temporary file, fsync, rename).
func cmdConfigRewrite(rc *conn, _ [][]byte) {
	p := rc.p
	if p.configFile == "" {
		rc.w.Error("ERR The server is running without a config file")
		return
	}
	p.configMu.Lock()
	defer p.configMu.Unlock()
	if err := p.rewriteConfig(rc); err != nil {
		rc.p.log.Warn("CONFIG REWRITE failed", "file", p.configFile, "err", err)
		rc.w.Error("ERR Rewriting config file: " + errText(err))
		return
	}
	rc.p.log.Info("CONFIG REWRITE executed with success", "file", p.configFile)
	rc.w.OK()
}

// errText is err's text without Go's "op path:" prefix, as strerror.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// configFileKey is a config-file key as minikv reads it: trimmed, with
// underscores read as dashes.
func configFileKey(k string) string {
	return strings.ReplaceAll(strings.TrimSpace(k), "_", "-")
}

// rewriteConfig writes the config file (see cmdConfigRewrite).
func (p *Protocol) rewriteConfig(rc *conn) error {
	old, err := os.ReadFile(p.configFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	type item struct {
		key, value, def string
		drop            bool // at its default, its line goes (replicaof)
	}
	var items []item
	byKey := make(map[string]int)
	for _, c := range configParams {
		if c.set == nil || c.noRewrite {
			continue
		}
		it := item{key: c.fileKey, def: c.def}
		if it.key == "" {
			it.key = c.name
		}
		if c.fileValue != nil {
			it.value = c.fileValue(p)
		} else {
			it.value = c.get(rc)
		}
		byKey[it.key] = len(items)
		items = append(items, it)
	}
	// A replica's primary, as Redis's rewriteConfigReplicaOfOption
	// writes it (the --replicaof flag's HOST:PORT), so a restarted
	// replica follows it again; a primary's file loses the line.
	byKey["replicaof"] = len(items)
	items = append(items, item{key: "replicaof", value: p.replicaOfValue(), drop: true})
	// maxmemory-policy allkeys-lfu is --lfu beside no-evict (false then).
	byKey["lfu"] = len(items)
	items = append(items, item{key: "lfu", value: strconv.FormatBool(p.st.LFU()), def: "false"})
	line := func(it item) string {
		v := it.value
		if v == "" || strings.ContainsAny(v, " \t#") {
			v = `"` + v + `"`
		}
		return it.key + " = " + v
	}
	var out []string
	done := make(map[string]bool)
	signed := false
	text := strings.TrimSuffix(strings.ReplaceAll(string(old), "\r\n", "\n"), "\n")
	if text != "" {
		for _, l := range strings.Split(text, "\n") {
			t := strings.TrimSpace(l)
			signed = signed || t == configSignature
			k, _, ok := strings.Cut(t, "=")
			i, ours := byKey[configFileKey(k)]
			switch {
			case t == "" || t[0] == '#' || !ok || !ours:
				out = append(out, l)
			case !done[items[i].key]:
				done[items[i].key] = true
				if !items[i].drop || items[i].value != items[i].def {
					out = append(out, line(items[i]))
				}
			}
		}
	}
	for _, it := range items {
		if done[it.key] || it.value == it.def {
			continue
		}
		if !signed {
			out = append(out, configSignature)
			signed = true
		}
		out = append(out, line(it))
	}
	return writeFileAtomic(p.configFile, []byte(strings.Join(out, "\n")+"\n"))
}

// writeFileAtomic replaces path with data: a temporary file in the same
// directory, written and synced, then renamed over path, and the
// directory synced, so a crash leaves the old file or the new one. The
// new file keeps the old one's permissions.
func writeFileAtomic(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".minikv-config-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if _, err = f.Write(data); err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
