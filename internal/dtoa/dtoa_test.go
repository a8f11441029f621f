package dtoa

import (
	"math"
	"strconv"
	"testing"
)

// TestDouble72Specials: the cases Redis 7.2's d2string settles before
// Grisu2 (TestDouble72 in internal/server/redis compares the rest with
// redis-server 7.2.4), Grisu2's longer digits for 1e23 as Redis prints them, and
// that every output reads back as the same double.
func TestDouble72Specials(t *testing.T) {
	for _, c := range []struct {
		d    float64
		want string
	}{
		{math.NaN(), "nan"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {0, "0"}, {math.Copysign(0, -1), "-0"},
		{1, "1"}, {-42, "-42"}, {1 << 53, "9007199254740992"}, {math.MaxInt64 / 2, "4611686018427387904"},
		{1 << 63, "9223372036854776000"}, {1e23, "99999999999999990000000"}, {0.1, "0.1"}, {-2.5e-5, "-0.000025"}, {1e-7, "1e-7"}, {1.5e300, "1.5e+300"},
	} {
		if got := string(AppendDouble72(nil, c.d)); got != c.want {
			t.Errorf("AppendDouble72(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	for _, d := range []float64{0.1, 1.0 / 3, math.Pi, 5e-324, math.MaxFloat64, 123456.789e-200} {
		s := string(AppendDouble72(nil, d))
		if back, err := strconv.ParseFloat(s, 64); err != nil || back != d {
			t.Errorf("AppendDouble72(%v) = %q reads back as %v (%v)", d, s, back, err)
		}
	}
}

// TestFpconvDtoa: fpconv_dtoa without d2string's shortcuts, as
// redis-server 7.2.4 writes a Lua number passed to redis.call (checked by
// hand: EVAL "redis.call('set','k',ARG) return redis.call('get','k')").
func TestFpconvDtoa(t *testing.T) {
	negNaN := math.Float64frombits(0xfff8000000000000) // Lua's 0/0 on x86-64
	for _, c := range []struct {
		d    float64
		want string
	}{
		{negNaN, "-nan"}, {math.NaN(), "nan"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
		{0, "0"}, {math.Copysign(0, -1), "-0"}, {3, "3"}, {123456789012, "123456789012"},
		{1e17, "1e+17"}, {1e20, "1e+20"}, {0x1p70, "1180591620717411300000"}, {0.1, "0.1"}, {-0.1, "-0.1"}, {1e-7, "1e-7"},
	} {
		if got := string(AppendFpconvDtoa(nil, c.d)); got != c.want {
			t.Errorf("AppendFpconvDtoa(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
