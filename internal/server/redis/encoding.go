package redis

import (
	"math"
	"strconv"
	"strings"

	"github.com/minikv/minikv/internal/store"
)

// Redis's encoding parameters: how large a collection grows before it
// leaves its compact encoding. CONFIG GET reads and CONFIG SET changes
// them (store.Limits); the ziplist names are Redis's older aliases.
// Collections already converted stay as they are, as in Redis.

// encodingParam is one parameter and the Limits field it sets.
type encodingParam struct {
	name  string
	field func(l *store.Limits) *int64
	min   int64
}

// memoryParam is the parameter whose value is a memory value ("3000",
// "1kb", "2mb"), as Redis's memtoull reads it.
const memoryParam = "hll-sparse-max-bytes"

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
	{memoryParam, func(l *store.Limits) *int64 { return &l.HLLSparseMaxBytes }, 0},
}

// encodingConfig is the parameters with their current values, for CONFIG
// GET.
func (rc *conn) encodingConfig() [][2]string {
	l := rc.p.st.Limits()
	out := make([][2]string, 0, len(encodingParams))
	for _, p := range encodingParams {
		out = append(out, [2]string{p.name, strconv.FormatInt(*p.field(&l), 10)})
	}
	return out
}

// cmdConfigSet is CONFIG SET parameter value [parameter value ...]: the
// encoding parameters, all or none (as Redis 7 applies a multi-parameter
// SET). Other parameters are fixed at start-up by flags.
func cmdConfigSet(rc *conn, argv [][]byte) {
	if len(argv)%2 != 0 {
		rc.w.Error("ERR wrong number of arguments for 'config|set' command")
		return
	}
	l := rc.p.st.Limits()
	for i := 2; i < len(argv); i += 2 {
		var param *encodingParam
		for j := range encodingParams {
			if is(argv[i], encodingParams[j].name) {
				param = &encodingParams[j]
			}
		}
		if param == nil {
			if _, known := rc.configValue(argv[i]); known {
				rc.w.Error("ERR CONFIG SET is not supported by MiniKV for '" + string(argv[i]) + "'; restart it with the flag instead")
			} else {
				rc.w.Error("ERR Unknown option or number of arguments for CONFIG SET - '" + string(argv[i]) + "'")
			}
			return
		}
		failed := "ERR CONFIG SET failed (possibly related to argument '" + string(argv[i]) + "') - "
		v, err := strconv.ParseInt(string(argv[i+1]), 10, 64)
		memory := param.name == memoryParam
		if memory {
			var u uint64
			if u, err = memValue(argv[i+1]); err == nil && u > math.MaxInt64 {
				v = -1 // out of range below
			} else {
				v = int64(u)
			}
		}
		switch {
		case err != nil && memory:
			rc.w.Error(failed + "argument must be a memory value")
			return
		case err != nil:
			rc.w.Error(failed + "argument couldn't be parsed into an integer")
			return
		case v < param.min || v > paramMax(param):
			rc.w.Error(failed + "argument must be between " + strconv.FormatInt(param.min, 10) + " and " +
				strconv.FormatInt(paramMax(param), 10) + " inclusive")
			return
		}
		*param.field(&l) = v
	}
	rc.p.st.SetLimits(l)
	rc.w.OK()
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

// paramMax is a parameter's largest value: a C int's for the one Redis
// declares as int (list-max-listpack-size, the one with a negative
// minimum), a long's for the others.
func paramMax(p *encodingParam) int64 {
	if p.min == math.MinInt32 {
		return math.MaxInt32
	}
	return math.MaxInt64
}

// configValue looks a parameter up among those CONFIG GET reports.
func (rc *conn) configValue(name []byte) (string, bool) {
	for _, p := range rc.configParams() {
		if is(name, p[0]) {
			return p[1], true
		}
	}
	return "", false
}
