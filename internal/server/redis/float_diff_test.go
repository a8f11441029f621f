package redis

// INCRBYFLOAT differential test: the same (stored value, increment) pairs
// go to a real redis-server and to an in-process MiniKV, and the reply
// bytes and the value GET reads back afterwards must be equal. Redis does
// the work in x87 long double (strtold, an 80-bit add, printf "%.17Lf"),
// so this is where the emulation in float.go is held to account: a
// table of edge cases, then a few thousand seeded random pairs of many
// shapes, then chains that feed each result into the next increment.

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

var (
	floatPairs = flag.Int("float.pairs", 4000, "TestIncrByFloatDifferential: random (stored, increment) pairs")
	floatSeed  = flag.Uint64("float.seed", 20240607, "TestIncrByFloatDifferential: seed of the random pairs and chains")
)

// floatStep is one INCRBYFLOAT on key: when set, SET key stored first.
type floatStep struct {
	key    string
	set    bool
	stored string
	incr   string
}

// floatResult is what a server answered to one floatStep.
type floatResult struct{ incr, get string }

// runFloatSteps sends steps pipelined over one connection and reads back
// the INCRBYFLOAT and GET replies of each.
func runFloatSteps(t *testing.T, addr string, steps []floatStep) []floatResult {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	werr := make(chan error, 1)
	go func() { // write while reading, so neither side's buffers fill up
		bw := bufio.NewWriter(nc)
		for _, s := range steps {
			if s.set {
				_, _ = io.WriteString(bw, multibulk("SET", s.key, s.stored))
			}
			_, _ = io.WriteString(bw, multibulk("INCRBYFLOAT", s.key, s.incr))
			_, _ = io.WriteString(bw, multibulk("GET", s.key))
		}
		werr <- bw.Flush()
	}()
	br := bufio.NewReader(nc)
	read := func() string {
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		r, err := readRESPReply(br)
		if err != nil {
			t.Fatalf("%s: read reply: %v (got %q)", addr, err, r)
		}
		return r
	}
	out := make([]floatResult, len(steps))
	for i, s := range steps {
		if s.set {
			if r := read(); r != "+OK\r\n" {
				t.Fatalf("%s: SET %q: %q", addr, s.stored, r)
			}
		}
		out[i].incr = read()
		out[i].get = read()
	}
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	return out
}

// diffFloatSteps runs steps on both servers and reports every step whose
// replies differ.
func diffFloatSteps(t *testing.T, redisAddr, minikvAddr string, steps []floatStep) {
	t.Helper()
	want := runFloatSteps(t, redisAddr, steps)
	got := runFloatSteps(t, minikvAddr, steps)
	bad, numbers := 0, 0
	for i, s := range steps {
		if strings.HasPrefix(want[i].incr, "$") {
			numbers++
		}
		if got[i] == want[i] {
			continue
		}
		bad++
		stored := "(missing)"
		if s.set {
			stored = strconv.Quote(clip(s.stored))
		} else if i > 0 && steps[i-1].key == s.key {
			stored = "(previous result)"
		}
		t.Errorf("stored %s INCRBYFLOAT %q:\n  redis  %q GET %q\n  minikv %q GET %q",
			stored, clip(s.incr), clip(want[i].incr), clip(want[i].get), clip(got[i].incr), clip(got[i].get))
	}
	t.Logf("%d steps, %d answered with a number; %d differ", len(steps), numbers, bad)
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:60] + fmt.Sprintf("...(%d bytes)...", len(s)) + s[len(s)-40:]
	}
	return s
}

// floatEdgeIncrements are increments tried on a missing key; each says
// in its text what it probes.
var floatEdgeIncrements = []string{
	// plain syntax
	"1", "+5", "-5", ".5", "5.", "-.5", "+.5", "-5.", "00012.5000", "-00012.5000", "0", "-0", "+0", "-0.0", "0.0", "000",
	"0.1", "0.2", "0.3", "10.50", "3.0e3", "5.0e3", "1.5", "-1.5", "1e5", "1E5", "1e+5", "1e-5", "1E-05", "5.e3", ".5e-3", "1e0",
	// rejected syntax
	"", ".", "-", "+", " 1", "1 ", "\t1", "1\n", "\n1", "\v1", "\f1", "\r1", "1\r", "- 1", "+-1", "--1", "++1", "1_000", "1,5",
	"1.2.3", "1e", "1e+", "1e-", "1E", "e5", ".e5", "1e5.5", "1e 5", "1 0", "abc", "1a", "x", "0b101", "0o17", "\x001", "1\x00",
	"١", "1e+-5", "1d5", "1f", "1L",
	// hexadecimal (strtold reads these; Go's strconv wants a p exponent)
	"0x10", "0X10", "-0x10", "+0x1A", "0xabc", "0xABC.DEF", "0x1.8", "0x.8", "0x.8p1", "0x1p-2", "0x1P+2", "0x1p0", "0x1.p1",
	"0x", "0x.", "0x.p1", "0xp1", "0xg", "0x1g", "0x1p", "0x1p+", "0x1p-", "0x1.8p", "0x1e5", "0x1e+5", "0x0", "0x0.", "0x0p99999",
	"0x00000000000000000001", "0xffffffffffffffff", "0x1ffffffffffffffff", "0x1.00000000000000008p0", "0x1.00000000000000018p0",
	"0x1.000000000000000081p0", "0x1.fffffffffffffffep16383", "0x1.ffffffffffffffffp16383", "0x1p16383", "0x1p16384",
	"0x1p-16382", "0x.8p-16381", "0x1p-16445", "0x1p-16446", "0x1.0000000000000001p-16446", "0x3p-16447", "0x1p-16447",
	"0x1.00000000000000010p-16446", "-0x1.0000000000000001p-16446", "0x2.0000000000000002p-16447", "0x.80000000000000008p-16445",
	"0x1.00000000000000011p-16446", "0x1.0000000000000001000000001p-16446", "0x1.0000000000000002p-16446", "0x1.00000000000000008p-16446",
	"0x1.0000000000000003p-16446", "0x1.8p-16446", "0x1.fffffffffffffffffp-16446", "0x1.0000000000000001p-16445", "0x1.0000000000000001p-16447",
	"0x1p-99999999999999999999", "0x1p99999999999999999999", "0x0p99999999999999999999", "0x1.fffffffffffffffffffp-16383",
	// inf and nan spellings
	"inf", "-inf", "+inf", "INF", "Inf", "iNf", "infinity", "-Infinity", "INFINITY", "+InFiNiTy", "infinit", "infinityx", "infx",
	"in", "i", "inf ", " inf", "nan", "NaN", "-nan", "+NAN", "nan(123)", "nan()", "nan(", "nan(abc_1)", "nan(-)", "nanx", "na",
	// large and overflow
	"1.5e308", "2e308", "1e400", "1e4000", "1e4931", "1e4932", "-1e4932", "1.18973149535723176502e4932",
	"1.189731495357231765021263853e4932", "1.18973149535723176508e4932", "1.1897314953572317651e4932", "1e4933", "-1e4933",
	"1e5000", "1e99999999999999999999", "-1e99999999999999999999", "0e99999999999999999999", "0.0000e+99999999999999999999",
	// tiny, denormal and underflow
	"1e-20", "1e-17", "5e-18", "4e-18", "6e-18", "-5e-18", "5.000000000000000001e-18", "1e-4931", "3.3621031431120935063e-4932",
	"3.3621031431120935062e-4932", "1e-4940", "1e-4950", "3.6e-4951", "3.7e-4951", "3.64519953188247460253e-4951", "1.8e-4951",
	"1.82259976594123730126e-4951", "1.8225997659412373013e-4951", "1.9e-4951", "1e-4951", "1e-5000", "-1e-5000",
	"1e-99999999999999999999", "0.000000000000000000000000000000000000000000000001e48",
	// integers around 2^53, 2^63, 2^64 and beyond
	"9007199254740993", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
	"18446744073709551615", "18446744073709551616", "18446744073709551617", "18446744073709551618", "18446744073709551619",
	"36893488147419103233", "36893488147419103235", "123456789012345678901234567890", "-123456789012345678901234567890.5",
	"1000000000000000000000000", "99999999999999999999.99999999999999999999",
	// results needing all 17 decimals, and rounding at the 17th
	"0.12345678901234567", "0.123456789012345678", "0.000000000000000015", "0.000000000000000025", "0.00000000000000001",
	"1.00000000000000000555", "3.14159265358979323846264338327950288", "2.71828182845904523536", "0.3333333333333333333333",
	"123456.78901234567890123", "0.00000381469726562500", "7.62939453125e-6",
	// long strings at Redis's 5*1024 limit
	strings.Repeat("0", 5119), strings.Repeat("0", 5120), "1." + strings.Repeat("0", 5117), "1." + strings.Repeat("0", 5118),
	"0." + strings.Repeat("0", 5000) + "1", "0." + strings.Repeat("0", 4900) + "1", strings.Repeat("9", 4933), strings.Repeat("9", 4932),
	strings.Repeat("1", 200) + "e-4800", "0." + strings.Repeat("3", 5000),
}

// floatEdgePairs are (stored value, increment) pairs.
var floatEdgePairs = [][2]string{
	{"1.5e308", "1.5e308"}, {"18446744073709551615", "16"}, {"18446744073709551615", "1"}, {"18446744073709551616", "1"},
	{"18446744073709551616", "3"}, {"9223372036854775807", "1"}, {"-9223372036854775808", "-1"}, {"1e4932", "1e4932"},
	{"1.18973149535723176502e4932", "1e4912"}, {"1.18973149535723176502e4932", "1e4913"}, {"-1.18973149535723176502e4932", "-1e4913"},
	{"1.18973149535723176502e4932", "-1.18973149535723176502e4932"}, {"inf", "1"}, {"inf", "-inf"}, {"-inf", "abc"}, {"abc", "inf"},
	{"abc", "abc"}, {"1", "abc"}, {"abc", "1"}, {"0x10", "1"}, {" 1", "1"}, {"1", " 1"}, {"", "1"}, {"1", ""}, {"0.1", "0.2"},
	{"1", "-1"}, {"-0", "-0"}, {"-0", "0"}, {"0", "-0"}, {"5e-18", "-1e-17"}, {"1e-17", "-2e-17"}, {"1e-4940", "1e-4940"},
	{"3.6e-4951", "-3.6e-4951"}, {"3.6e-4951", "3.6e-4951"}, {"0x1p-16445", "0x1p-16445"}, {"0x1p-16382", "-0x1p-16445"},
	{"1e4000", "1"}, {"1e-4000", "1"}, {"10.50", "0.1"}, {"3.0e3", "2.0e2"}, {"1e17", "0.5"}, {"1e18", "0.5"}, {"1e19", "1"},
	{"9007199254740993", "0"}, {"0x1p-2", "0x1p-2"}, {"1e5000", "1"}, {"nan", "1"}, {"1", "nan"}, {"-inf", "inf"},
	{"123", "0.000000000000000001"}, {"0.1", "-0.1"}, {"1.1", "2.2"}, {"1e308", "1e308"}, {"1e-300", "-1e-300"},
	{strings.Repeat("9", 4932), "1"}, {"0.5", "1e-17"}, {"0.5", "5e-18"}, {"7", "0.00000000000000000499"},
	{"-1.5", "1.5"}, {"1.5", "-1.5"}, {"100", "-100.00000000000000000001"}, {"0x1.fffffffffffffffep16383", "0x1p16319"},
	{"0x1.fffffffffffffffep16383", "0x1.fffffffffffffffep16318"}, {"12", "0x10"}, {"0x10", "0x10"}, {"1e+00", "+1e+00"},
}

func TestIncrByFloatDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{MaxItemSize: 1 << 20})

	t.Run("edges", func(t *testing.T) {
		var steps []floatStep
		for i, in := range floatEdgeIncrements {
			steps = append(steps, floatStep{key: "fe:" + strconv.Itoa(i), incr: in})
		}
		for i, p := range floatEdgePairs {
			steps = append(steps, floatStep{key: "fp:" + strconv.Itoa(i), set: true, stored: p[0], incr: p[1]})
		}
		// every increment also as a stored value under a small increment
		for i, in := range floatEdgeIncrements {
			steps = append(steps, floatStep{key: "fs:" + strconv.Itoa(i), set: true, stored: in, incr: "0.5"})
		}
		diffFloatSteps(t, redisAddr, rs.respAddr, steps)
	})

	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(*floatSeed, 7))
		var steps []floatStep
		for i := range *floatPairs {
			steps = append(steps, floatStep{key: "fr:" + strconv.Itoa(i), set: true, stored: randLongDoubleText(r), incr: randLongDoubleText(r)})
		}
		diffFloatSteps(t, redisAddr, rs.respAddr, steps)
	})

	t.Run("chains", func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, *floatSeed))
		var steps []floatStep
		for c := range 40 {
			key := "fc:" + strconv.Itoa(c)
			for range 50 {
				steps = append(steps, floatStep{key: key, incr: randLongDoubleText(r)})
			}
		}
		diffFloatSteps(t, redisAddr, rs.respAddr, steps)
	})
}

// randLongDoubleText returns a number-like string of one of many shapes:
// most parse, some on the edge of long double's range or precision, some
// broken by one character.
func randLongDoubleText(r *rand.Rand) string {
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	hexDigits := func(n int) string {
		const hx = "0123456789abcdefABCDEF"
		b := make([]byte, n)
		for i := range b {
			b[i] = hx[r.IntN(len(hx))]
		}
		return string(b)
	}
	sign := func() string { return [...]string{"", "", "-", "+"}[r.IntN(4)] }
	switch r.IntN(18) {
	case 0: // everyday decimals
		return sign() + digits(1+r.IntN(6)) + "." + digits(r.IntN(9))
	case 1: // integers, up to beyond 2^64, maybe with leading zeros
		return sign() + strings.Repeat("0", r.IntN(2)*r.IntN(4)) + strconv.FormatUint(r.Uint64()>>r.IntN(64), 10) + digits(r.IntN(3)*r.IntN(5))
	case 2: // scientific anywhere in (and beyond) long double's range
		m := digits(1 + r.IntN(25))
		if r.IntN(2) == 0 {
			p := r.IntN(len(m) + 1)
			m = m[:p] + "." + m[p:]
			if m == "." {
				m = "1."
			}
		}
		return sign() + m + [...]string{"e", "E"}[r.IntN(2)] + [...]string{"", "+", "-"}[r.IntN(3)] + strconv.Itoa(r.IntN(5100))
	case 3: // near the largest long double
		return sign() + "1.189731495357231765" + digits(r.IntN(8)) + "e4932"
	case 4: // near and below the smallest normal and subnormal
		return sign() + digits(1+r.IntN(3)) + "." + digits(r.IntN(20)) + "e-" + strconv.Itoa(4925+r.IntN(40))
	case 5: // hexadecimal, with and without a binary exponent
		s := sign() + "0" + [...]string{"x", "X"}[r.IntN(2)] + hexDigits(r.IntN(20))
		if r.IntN(2) == 0 {
			s += "." + hexDigits(r.IntN(20))
		}
		switch r.IntN(3) {
		case 0:
			s += "p" + strconv.Itoa(r.IntN(200)-100)
		case 1:
			s += "P" + [...]string{"+", "-"}[r.IntN(2)] + strconv.Itoa(16300+r.IntN(200))
		}
		return s
	case 6: // an exact long double, or the exact midpoint of two, in full
		m := new(big.Int).SetUint64(r.Uint64() | 1<<63)
		e := r.IntN(160) - 100
		if r.IntN(2) == 0 { // midpoint: one more bit, set
			m.Lsh(m, 1).SetBit(m, 0, 1)
			e--
		}
		f := new(big.Float).SetPrec(66).SetInt(m)
		f.SetMantExp(f, e)
		return sign() + f.Text('f', max(0, -e))
	case 7: // the same, in scientific notation with 18 to 25 digits
		f := new(big.Float).SetPrec(64).SetUint64(r.Uint64() | 1)
		f.SetMantExp(f, r.IntN(400)-200)
		return sign() + f.Text('e', 17+r.IntN(8))
	case 8: // specials and junk
		return [...]string{"inf", "-inf", "+Infinity", "INFINITY", "nan", "-NaN", "nan(1)", "", " ", ".", "e", "0x", "1e",
			"0x1p", "infinit", "-", "1_0", "0x.p1", "\t1", "1 "}[r.IntN(20)]
	case 9: // exactly 17 decimals, the precision of the output
		return sign() + strconv.Itoa(r.IntN(1000)) + "." + digits(17)
	case 10: // around 2^53, 2^63 and 2^64
		base := [...]uint64{1 << 53, 1 << 63, 1<<64 - 1}[r.IntN(3)]
		return sign() + strconv.FormatUint(base-uint64(r.IntN(20)), 10) + [...]string{"", "0", "1", "5"}[r.IntN(4)]
	case 11: // long digit strings, rounding decided far to the right
		return sign() + digits(1+r.IntN(40)) + "." + digits(r.IntN(60))
	case 12: // tiny values printed as 0 or as the last decimals
		return sign() + "0." + strings.Repeat("0", r.IntN(20)) + digits(1+r.IntN(5))
	case 13: // hexadecimal around the subnormal range and its bottom
		return sign() + "0x1." + hexDigits(r.IntN(20)) + "p-" + strconv.Itoa(16370+r.IntN(90))
	case 14: // hexadecimal around the top of the range, long significands
		return sign() + "0x" + hexDigits(1+r.IntN(3)) + "." + hexDigits(r.IntN(24)) + "p+" + strconv.Itoa(16370+r.IntN(20))
	case 15: // a long double's exact binary value, as %La-like hex
		f := new(big.Float).SetPrec(64).SetUint64(r.Uint64() | 1<<63)
		f.SetMantExp(f, r.IntN(32900)-16460)
		return sign() + f.Text('p', 0)
	case 16: // subnormal decimals with many digits
		return sign() + "0." + digits(1+r.IntN(30)) + "e-" + strconv.Itoa(4931+r.IntN(21))
	default: // a valid number broken (or not) by one character
		s := []byte(randLongDoubleText(r))
		const junk = "+-.eEpPxX0123456789 aAfFiInN_\t("
		c := junk[r.IntN(len(junk))]
		switch i := r.IntN(len(s) + 1); r.IntN(3) {
		case 0:
			s = append(s[:i], append([]byte{c}, s[i:]...)...)
		case 1:
			if i < len(s) {
				s = append(s[:i], s[i+1:]...)
			}
		default:
			if i < len(s) {
				s[i] = c
			}
		}
		return string(s)
	}
}
