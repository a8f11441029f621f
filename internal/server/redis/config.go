package redis

import (
	"bytes"
	"math"
	"strings"

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
// that look for them.
func serverConfigParams() []*configParam {
	fixed := func(name, value string) *configParam {
		return &configParam{name: name, get: func(*conn) string { return value }, noRewrite: true}
	}
	return []*configParam{
		{name: "maxmemory", get: func(rc *conn) string { return itoa64(rc.st.Stats().Limit) }, noRewrite: true},
		{name: "maxmemory-policy", get: func(rc *conn) string { return rc.p.maxmemoryPolicy() }, noRewrite: true},
		{name: "maxclients", get: func(rc *conn) string { return itoa64(int64(rc.p.cfg.MaxConns)) }, noRewrite: true},
		{name: "timeout", get: func(rc *conn) string { return itoa64(int64(rc.p.cfg.IdleTimeout.Seconds())) }, noRewrite: true},
		fixed("save", ""),
		fixed("appendonly", "no"),
		fixed("databases", "1"),
		{name: "port", get: func(rc *conn) string { return itoa64(int64(localPort(rc.LocalAddr()))) }, noRewrite: true},
		fixed("proto-max-bulk-len", itoa64(resp.MaxBulkLen)),
		fixed("requirepass", ""),
		fixed("hz", "10"),
		fixed("io-threads", "1"),
		{name: "cluster-enabled", get: func(rc *conn) string {
			return map[bool]string{false: "no", true: "yes"}[rc.p.cluster != nil]
		}, noRewrite: true},
	}
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
	if msg := rc.p.configSet(argv[2:]); msg != "" {
		rc.w.Error(msg)
		return
	}
	rc.w.OK()
}

// configSet applies the name, value pairs of pairs, all or none, and
// returns "" or the error reply.
func (p *Protocol) configSet(pairs [][]byte) string {
	params := make([]*configParam, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		c := configByName[strings.ToLower(string(pairs[i]))]
		switch {
		case c == nil:
			return "ERR Unknown option or number of arguments for CONFIG SET - '" + string(pairs[i]) + "'"
		case c.set == nil:
			return configFailed(pairs[i]) + "can't set immutable config"
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

// cmdConfigRewrite is CONFIG REWRITE.
func cmdConfigRewrite(rc *conn, _ [][]byte) {
	rc.w.Error("ERR The server is running without a config file")
}
