package resp

import (
	"math"
	"strconv"
	"testing"
)

// TestDouble72Specials: the cases Redis 7.2's d2string settles before
// Grisu2 (TestDouble72 in internal/server/redis compares the rest with
// valkey-server), Grisu2's longer digits for 1e23 as Redis prints them, and
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
