package script

import (
	"math"
	"math/rand"
	"strconv"
	"testing"

	"github.com/minikv/minikv/internal/dtoa"
)

// TestFpconv holds dtoa.AppendFpconvDtoa and dtoa.AppendDouble72 (what scripts use) to what redis-server
// 7.2.4 sends (redis.call('set', k, x) then GET; {double=x}), among them
// doubles whose Grisu2 digits are not the shortest. The conversion was
// also compared with redis-server on 600 000 random doubles, all equal.
func TestFpconv(t *testing.T) {
	for _, c := range []struct {
		f          float64
		fpconv, d2 string
	}{
		{math.Float64frombits(0x3fd3333333333334), "0.30000000000000004", "0.30000000000000004"},
		{-0.1, "-0.1", "-0.1"},
		{1.0 / 3, "0.3333333333333333", "0.3333333333333333"},
		{1e21, "1e+21", "1e+21"},
		{123456789012345678, "123456789012345680", "123456789012345680"},
		{1e-7, "1e-7", "1e-7"},
		{math.Copysign(math.NaN(), -1), "-nan", "nan"},
		{math.Inf(1), "inf", "inf"},
		{math.Inf(-1), "-inf", "-inf"},
		{math.Copysign(0, -1), "-0", "-0"},
		{0, "0", "0"},
		{5e-324, "5e-324", "5e-324"},
		{1e16, "1e+16", "10000000000000000"},
		{1e7, "10000000", "10000000"},
		{1e8, "1e+8", "100000000"},
		{1.5e-310, "1.5e-310", "1.5e-310"},
		{-123.456e-12, "-1.23456e-10", "-1.23456e-10"},
		{-1e300, "-1e+300", "-1e+300"},
		{1.5e-5, "0.000015", "0.000015"},
		{0.000123, "0.000123", "0.000123"},
		{123.456, "123.456", "123.456"},
		{-math.Pow(2, 53), "-9007199254740992", "-9007199254740992"},
		{math.Pow(2, 62), "4611686018427388000", "4611686018427387904"},
		{math.Pow(2, 63), "9223372036854776000", "9223372036854776000"},
		{123456789, "123456789", "123456789"},
		{math.Float64frombits(0x43c608e2c4a9686c), "3175536405863520300", "3175536405863520256"},
		{math.Float64frombits(0x411e8b85637b9851), "5.0044934715116496e+5", "5.0044934715116496e+5"},
		{math.Float64frombits(0xcf353b0599ee4d8b), "-3.7511142405352803e+73", "-3.7511142405352803e+73"},
		{math.Float64frombits(0x2f7dc6375cb211f0), "6.2777275437315076e-80", "6.2777275437315076e-80"},
		{math.Float64frombits(0x3f80fee8a8cb65c4), "0.008298699999999999", "0.008298699999999999"},
		{math.Float64frombits(0x441d9a8d048641dc), "136523035141452790000", "136523035141452790000"},
		{math.Float64frombits(0x4300cb11388512be), "590859306312279.7", "590859306312279.7"},
	} {
		if got := string(dtoa.AppendFpconvDtoa(nil, c.f)); got != c.fpconv {
			t.Errorf("fpconv_dtoa(%v): %q, want %q", c.f, got, c.fpconv)
		}
		if got := string(dtoa.AppendDouble72(nil, c.f)); got != c.d2 {
			t.Errorf("d2string(%v): %q, want %q", c.f, got, c.d2)
		}
	}
	// Whatever the digits, they read back as the same double.
	r := rand.New(rand.NewSource(7))
	for range 100000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := string(dtoa.AppendFpconvDtoa(nil, f))
		if g, err := strconv.ParseFloat(s, 64); err != nil || g != f {
			t.Fatalf("%v (%#x) -> %q -> %v, %v", f, math.Float64bits(f), s, g, err)
		}
	}
}
