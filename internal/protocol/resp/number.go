package resp

import "math"

// ParseInt parses b as a signed 64-bit decimal integer with the exact
// rules of Redis's string2ll (util.c), which Redis uses for lengths in the
// protocol and for every integer argument and stored integer: an optional
// '-', then digits without leading zeros ("0" alone is fine), nothing
// else: no '+', no spaces, no "-0".
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	i := 0
	if b[0] == '-' {
		neg = true
		i++
		if len(b) == 1 {
			return 0, false
		}
	}
	if b[i] < '1' || b[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true // -(1<<63) wraps to MinInt64, as intended
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}
