package redis

import (
	"math"
	"strconv"
	"strings"

	"github.com/minikv/minikv/internal/store"
)

// Redis's encoding parameters: how large a collection grows before it
// leaves its compact encoding. CONFIG GET reads and CONFIG SET changes
// them (store.Limits, through the table in config.go); the ziplist names
// are Redis's older aliases.
// Collections already converted stay as they are, as in Redis; a big
// list follows a new list-compress-depth at its next write.

// encodingParam is one parameter and the Limits field it sets.
type encodingParam struct {
	name  string
	field func(l *store.Limits) *int64
	min   int64
}

// memoryParam is the parameter whose value is a memory value ("3000",
// "1kb", "2mb"), as Redis's memtoull reads it.
const memoryParam = "hll-sparse-max-bytes"

// compressDepthParam is the one parameter from 0 to a C int's largest.
const compressDepthParam = "list-compress-depth"

var encodingParams = []encodingParam{
	{"hash-max-listpack-entries", func(l *store.Limits) *int64 { return &l.HashEntries }, 0},
	{"hash-max-listpack-value", func(l *store.Limits) *int64 { return &l.HashValue }, 0},
	{"hash-max-ziplist-entries", func(l *store.Limits) *int64 { return &l.HashEntries }, 0},
	{"hash-max-ziplist-value", func(l *store.Limits) *int64 { return &l.HashValue }, 0},
	{"zset-max-listpack-entries", func(l *store.Limits) *int64 { return &l.ZSetEntries }, 0},
	{"zset-max-listpack-value", func(l *store.Limits) *int64 { return &l.ZSetValue }, 0},
	{"zset-max-ziplist-entries", func(l *store.Limits) *int64 { return &l.ZSetEntries }, 0},
	{"zset-max-ziplist-value", func(l *store.Limits) *int64 { return &l.ZSetValue }, 0},
	{"set-max-intset-entries", func(l *store.Limits) *int64 { return &l.SetIntsetEntries }, 0},
	{"set-max-listpack-entries", func(l *store.Limits) *int64 { return &l.SetListpackEntries }, 0},
	{"set-max-listpack-value", func(l *store.Limits) *int64 { return &l.SetListpackValue }, 0},
	{"list-max-listpack-size", func(l *store.Limits) *int64 { return &l.ListPackSize }, math.MinInt32},
	{"list-max-ziplist-size", func(l *store.Limits) *int64 { return &l.ListPackSize }, math.MinInt32},
	// A list already big follows a new depth at its next write
	// (store.Limits); MiniKV's default is 1, Redis's 0 (docs/redis.md).
	{compressDepthParam, func(l *store.Limits) *int64 { return &l.ListCompressDepth }, 0},
	{memoryParam, func(l *store.Limits) *int64 { return &l.HLLSparseMaxBytes }, 0},
}

// encodingConfigParams are the encoding parameters as CONFIG parameters
// (config.go). The ziplist aliases are left out of CONFIG REWRITE: their
// listpack names carry the same values.
func encodingConfigParams() []*configParam {
	out := make([]*configParam, 0, len(encodingParams))
	for _, ep := range encodingParams {
		get := func(p *Protocol) string {
			l := p.st.Limits()
			return strconv.FormatInt(*ep.field(&l), 10)
		}
		apply := func(p *Protocol, v int64) string {
			l := p.st.Limits()
			*ep.field(&l) = v
			p.st.SetLimits(l)
			return ""
		}
		def := store.DefaultLimits
		c := &configParam{name: ep.name, get: func(rc *conn) string { return get(rc.p) }, fileValue: get,
			def: strconv.FormatInt(*ep.field(&def), 10), noRewrite: strings.Contains(ep.name, "ziplist")}
		if ep.name == memoryParam {
			c.set = memConfig(ep.min, math.MaxInt64, apply)
		} else {
			hi := paramMax(ep.min)
			if ep.name == compressDepthParam {
				hi = math.MaxInt32 // a C int in Redis, from 0
			}
			c.set = intConfig(ep.min, hi, apply)
		}
		out = append(out, c)
	}
	return out
}

// memValue parses a memory value as Redis's memtoull does: digits and
// an optional unit (b, k, kb, m, mb, g, gb, any case; k is 1000, kb
// 1024), the product wrapping at 64 bits.
func memValue(b []byte) (uint64, error) {
	errMem := strconv.ErrSyntax
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	var mul uint64
	switch strings.ToLower(string(b[i:])) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, errMem
	}
	if i >= 128 {
		return 0, errMem
	}
	var v uint64
	for _, c := range b[:i] {
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			v = math.MaxUint64 // strtoull saturates
			break
		}
		v = v*10 + d
	}
	return v * mul, nil
}

// paramMax is a parameter's largest value given its smallest: a C int's
// for the one Redis declares as int (list-max-listpack-size, the one with
// a negative minimum), a long's for the others.
func paramMax(min int64) int64 {
	if min == math.MinInt32 {
		return math.MaxInt32
	}
	return math.MaxInt64
}
