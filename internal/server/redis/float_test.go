package redis

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestIncrByFloatRedisAnswers pins replies taken from redis-server 7.0.15
// (x86-64, glibc 2.36), so the emulation is checked without a Redis to
// compare with; TestIncrByFloatDifferential does that at scale.
func TestIncrByFloatRedisAnswers(t *testing.T) {
	const (
		notFloat = "-ERR value is not a valid float\r\n"
		nanInf   = "-ERR increment would produce NaN or Infinity\r\n"
		missing  = "\x00missing"
	)
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	sum3e308 := "29999999999999999999980295297893693606203368193012188993426737084236021213338209207351332945643204406380585674104404992868170916501329041897572161315579235035045528735512222575552060651347779303368824984285687039203443028266302347357854148857665464270608100848684286818009969323037780890526659372902369984512" + "0"
	for _, tc := range []struct{ stored, incr, want string }{
		{missing, "0x10", "16"},
		{missing, "0X10", "16"},
		{missing, "0xABC.DEF", "2748.870849609375"},
		{missing, "0x.8p1", "1"},
		{missing, "0x", notFloat},
		{"18446744073709551615", "16", "18446744073709551632"}, // 2^64+15 rounds to even
		{missing, "18446744073709551617", "18446744073709551616"},
		{missing, "18446744073709551619", "18446744073709551620"},
		{missing, "123456789012345678901234567890", "123456789012345678899921813504"},
		{missing, "9007199254740993", "9007199254740993"}, // 2^53+1: not a double, a long double
		{"1.5e308", "1.5e308", sum3e308},
		{missing, "0.1", "0.1"},
		{"0.1", "0.2", "0.3"},
		{"10.50", "0.1", "10.6"},
		{missing, ".5", "0.5"},
		{missing, "5.", "5"},
		{missing, "+5", "5"},
		{missing, "00012.5000", "12.5"},
		{missing, "1e", notFloat},
		{missing, "1_000", notFloat},
		{missing, " 1", notFloat},
		{missing, "1 ", notFloat},
		{missing, "-0", "0"},
		{"-0", "-0", "0"},
		{"5e-18", "-1e-17", "0"}, // "-0.00000000000000000" prints as 0
		{missing, "1e-17", "0.00000000000000001"},
		{missing, "0.12345678901234567", "0.12345678901234567"},
		{missing, "0.123456789012345678", "0.12345678901234568"},
		{missing, "0.00000381469726562500", "0.00000381469726562"}, // 2^-18: a tie, to even
		{missing, "0.000000000000000015", "0.00000000000000002"},
		{missing, "3.14159265358979323846264338327950288", "3.14159265358979324"},
		{missing, "0e99999999999999999999", "0"},
		{missing, "1e-99999999999999999999", notFloat}, // underflow to 0
		{missing, "1e4933", notFloat},                  // overflow
		{missing, "1e-4951", notFloat},
		{missing, "1.8e-4951", notFloat}, // below half the smallest subnormal
		{missing, "3.6e-4951", "0"},      // the smallest subnormal is accepted
		{missing, "0x1p-16445", "0"},
		{missing, "0x1.00000000000000011p-16446", "0"},
		{missing, "0x1.0000000000000001p-16446", notFloat}, // glibc 2.36 rounds this one to 0
		{"1.18973149535723176502e4932", "1e4913", nanInf},
		{"1e4932", "1e4932", nanInf},
		{missing, "inf", nanInf},
		{missing, "+InFiNiTy", nanInf},
		{"inf", "1", nanInf},
		{missing, "infinit", notFloat},
		{missing, "nan", notFloat},
		{"abc", "inf", notFloat},
		{"1", "abc", notFloat},
		{"", "1", notFloat},
		{missing, strings.Repeat("0", 5119), "0"},
		{missing, strings.Repeat("0", 5120), notFloat}, // MAX_LONG_DOUBLE_CHARS
	} {
		c.Send(multibulk("DEL", "k"))
		_ = c.Reply()
		if tc.stored != missing {
			c.Expect(multibulk("SET", "k", tc.stored), "+OK\r\n")
		}
		want := tc.want
		if !strings.HasPrefix(want, "-") {
			want = "$" + strconv.Itoa(len(want)) + "\r\n" + want + "\r\n"
		}
		if got := c.Do("INCRBYFLOAT", "k", tc.incr); got != want {
			t.Errorf("stored %q INCRBYFLOAT %q = %q, want %q", clip(tc.stored), clip(tc.incr), clip(got), clip(want))
		}
	}
}

// TestParseLongDoubleSmallIsExact checks the one-operation path for short
// decimals against the exact rational one.
func TestParseLongDoubleSmallIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var fast, exact big.Float
	for range 20000 {
		m := strconv.FormatUint(r.Uint64()>>r.IntN(64), 10)
		if len(m) > 19 {
			m = m[:19]
		}
		s := m + "e" + strconv.Itoa(r.IntN(55)-27)
		if p := r.IntN(len(m) + 1); r.IntN(2) == 0 {
			s = m[:p] + "." + m[p:] + "e" + strconv.Itoa(r.IntN(55)-27)
		}
		n, ok := scanLongDouble([]byte(s))
		if !ok || n.digits == 0 || n.digits > 19 || n.exp < -27 || n.exp > 27 {
			continue
		}
		fast.SetPrec(ldPrec)
		parseLongDoubleSmall(&fast, n)
		exact.SetPrec(ldPrec)
		if !parseLongDoubleExact(&exact, n) || fast.Cmp(&exact) != 0 {
			t.Fatalf("%q: small path %s, exact %s", s, fast.Text('p', 0), exact.Text('p', 0))
		}
	}
}

func FuzzParseLongDouble(f *testing.F) {
	for _, s := range floatEdgeIncrements {
		if len(s) < 100 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		var z big.Float
		ok := parseLongDouble(&z, []byte(s))
		if !ok {
			return
		}
		if z.IsInf() {
			return
		}
		if z.Prec() != ldPrec {
			t.Fatalf("%q: precision %d", s, z.Prec())
		}
		// On long double's grid: a multiple of the smallest subnormal,
		// below 2^16384.
		if z.Sign() != 0 {
			if e := z.MantExp(nil); e > ldMaxMantExp || e <= ldMinSubnormalExp {
				t.Fatalf("%q = %s: exponent %d out of range", s, z.Text('p', 0), e)
			}
			var g big.Float
			if !g.SetMantExp(&z, -ldMinSubnormalExp).IsInt() {
				t.Fatalf("%q = %s: not a multiple of 2^-16445", s, z.Text('p', 0))
			}
		}
		// The exact binary value in hex reads back as itself.
		hex := z.Text('p', 0)
		var back big.Float
		if !parseLongDouble(&back, []byte(hex)) || back.Cmp(&z) != 0 {
			t.Fatalf("%q = %s reads back as %s", s, hex, back.Text('p', 0))
		}
		// The small-decimal path agrees with the exact one.
		if n, _ := scanLongDouble([]byte(s)); !n.hex && n.digits > 0 && n.digits <= 19 && n.exp >= -27 && n.exp <= 27 {
			var exact big.Float
			if !parseLongDoubleExact(&exact, n) || exact.Cmp(&z) != 0 {
				t.Fatalf("%q: small path %s, exact %s", s, hex, exact.Text('p', 0))
			}
		}
		// The formatting matches its definition, and what INCRBYFLOAT
		// would store parses again.
		out := appendLongDouble(nil, &z)
		if want := humanLongDouble(&z); string(out) != want {
			t.Fatalf("%q = %s formats as %q, want %q", s, hex, out, want)
		}
		if !parseLongDouble(&back, out) {
			t.Fatalf("%q: formatted %q does not parse", s, out)
		}
		// Where Go's strconv reads the same number as a normal double, the
		// two agree to within a double's ulp.
		if strings.ContainsAny(s, "_") {
			return
		}
		if f64, err := strconv.ParseFloat(s, 64); err == nil && f64 != 0 && !math.IsInf(f64, 0) && math.Abs(f64) > 0x1p-1000 {
			var d big.Float
			d.SetPrec(128).Sub(&z, new(big.Float).SetFloat64(f64))
			ulp := math.Abs(math.Nextafter(f64, math.Inf(1)) - f64)
			if d.Abs(&d).Cmp(new(big.Float).SetFloat64(ulp)) > 0 {
				t.Fatalf("%q: long double %s, strconv %v", s, hex, f64)
			}
		}
	})
}

// humanLongDouble is ld2string(LD_STR_HUMAN) written plainly: "%.17Lf",
// trailing zeros and '.' cut, "-0" made "0".
func humanLongDouble(x *big.Float) string {
	s := strings.TrimRight(x.Text('f', 17), "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// BenchmarkIncrByFloatMath is the arithmetic of one everyday INCRBYFLOAT:
// two parses, the add and the formatting.
func BenchmarkIncrByFloatMath(b *testing.B) {
	stored, incr := []byte("10.5"), []byte("0.1")
	var v, d big.Float
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		if !parseLongDouble(&v, stored) || !parseLongDouble(&d, incr) || !addLongDouble(&v, &v, &d) {
			b.Fatal("parse")
		}
		buf = appendLongDouble(buf[:0], &v)
	}
}
