package script

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// Redis 7.2 turns doubles into text with fpconv_dtoa (deps/fpconv, a
// Grisu2 conversion): digits that read back as the same double, the
// fewest in most cases but not all (Grisu2 gives up the shortest form
// now and then, about 1 double in 400 at random, so Go's shortest
// formatting is not the same), laid out by its emit_digits. A number passed to redis.call
// becomes that text (Redis 7.0 printed "%.17g"), and a {double=} reply
// is d2string's: integers below 2^62 as integers, the rest fpconv's.

// appendFpconv is fpconv_dtoa's text of f: "-0", "inf", "nan" (with the
// sign bit's '-': 0/0 is "-nan" on x86-64), digits in plain notation
// when the exponent is small, else d.ddde[+-]x.
func appendFpconv(b []byte, f float64) []byte {
	neg := math.Signbit(f)
	if neg {
		b = append(b, '-')
	}
	switch {
	case f == 0:
		return append(b, '0')
	case math.IsNaN(f):
		return append(b, "nan"...)
	case math.IsInf(f, 0):
		return append(b, "inf"...)
	}
	var digits [18]byte
	nd, K := grisu2(f, &digits)
	return emitDigits(b, digits[:nd], K, neg)
}

// emitDigits is fpconv's emit_digits.
func emitDigits(b []byte, digits []byte, K int, neg bool) []byte {
	nd := len(digits)
	exp := K + nd - 1
	if exp < 0 {
		exp = -exp
	}
	// A plain integer.
	if K >= 0 && exp < nd+7 {
		b = append(b, digits...)
		for range K {
			b = append(b, '0')
		}
		return b
	}
	// A decimal without an exponent.
	if K < 0 && (K > -7 || exp < 4) {
		offset := nd + K
		if offset <= 0 { // below 1: a leading zero
			b = append(b, '0', '.')
			for range -offset {
				b = append(b, '0')
			}
			return append(b, digits...)
		}
		b = append(b, digits[:offset]...)
		b = append(b, '.')
		return append(b, digits[offset:]...)
	}
	// Scientific notation, at most 18 digits (17 when negative).
	max := 18
	if neg {
		max = 17
	}
	if nd > max {
		digits, nd = digits[:max], max
	}
	b = append(b, digits[0])
	if nd > 1 {
		b = append(b, '.')
		b = append(b, digits[1:]...)
	}
	b = append(b, 'e')
	if K+nd-1 < 0 {
		b = append(b, '-')
	} else {
		b = append(b, '+')
	}
	e := K + nd - 1
	if e < 0 {
		e = -e
	}
	return strconv.AppendInt(b, int64(e), 10)
}

// appendD2string is Redis 7.2's d2string, what addReplyDouble sends:
// "nan", "inf", "-inf", "0" or "-0", a double of integer value within
// ±2^62 as an integer, anything else as fpconv_dtoa writes it.
func appendD2string(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "nan"...)
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0"...)
		}
		return append(b, '0')
	}
	// double2ll: within ±LLONG_MAX/2 (as a double, 2^62) and integral.
	const lim = float64(math.MaxInt64 / 2)
	if f >= -lim && f <= lim {
		if n := int64(f); float64(n) == f {
			return strconv.AppendInt(b, n, 10)
		}
	}
	return appendFpconv(b, f)
}

// diyFp is a number frac * 2^exp, Grisu's "do it yourself" float.
type diyFp struct {
	frac uint64
	exp  int
}

// The cached powers of ten Grisu2 scales by: 10^k for k = -348, -340,
// ..., 340, each a 64-bit significand with its top bit set (rounded to
// nearest) and a binary exponent. Computed once, exactly, with big.Float.
const (
	pow10First = -348
	pow10Step  = 8
	pow10Count = 87
)

var pow10Cache = func() (t [pow10Count]diyFp) {
	for i := range t {
		k := pow10First + i*pow10Step
		x := new(big.Float).SetPrec(2048).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(k))), nil))
		if k < 0 {
			x.Quo(new(big.Float).SetPrec(2048).SetInt64(1), x)
		}
		mant := new(big.Float).SetPrec(2048)
		e := x.MantExp(mant) // x = mant * 2^e, 0.5 <= mant < 1
		// The 64-bit significand: mant * 2^64, rounded to nearest.
		mant.SetMantExp(mant, 64)
		r := new(big.Float).SetPrec(2048).Add(mant, big.NewFloat(0.5))
		n, _ := r.Int(nil)
		if n.BitLen() > 64 { // rounded up to 2^64
			n.Rsh(n, 1)
			e++
		}
		t[i] = diyFp{frac: n.Uint64(), exp: e - 64}
	}
	return t
}()

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// cachedPow10 picks the cached power c = 10^k that brings a number of
// binary exponent exp into Grisu's window: exp + c.exp + 64 within
// [-60, -32].
func cachedPow10(exp int) (diyFp, int) {
	approx := int(float64(-(exp + pow10Count)) * 0.30102999566398114)
	i := (approx - pow10First) / pow10Step
	for {
		cur := exp + pow10Cache[i].exp + 64
		switch {
		case cur < -60:
			i++
		case cur > -32:
			i--
		default:
			return pow10Cache[i], pow10First + i*pow10Step
		}
	}
}

// mulFp is a * b, the 128-bit product's upper half rounded half up.
func mulFp(a, b diyFp) diyFp {
	hi, lo := bits.Mul64(a.frac, b.frac)
	if lo&(1<<63) != 0 {
		hi++
	}
	return diyFp{frac: hi, exp: a.exp + b.exp + 64}
}

// grisu2 writes the digits of f (finite, not zero, sign ignored) to
// digits and returns how many, and K: f is about digits * 10^K.
func grisu2(f float64, digits *[18]byte) (int, int) {
	const fracMask, hidden = 1<<52 - 1, 1 << 52
	b := math.Float64bits(f)
	w := diyFp{frac: b & fracMask, exp: int(b>>52) & 0x7ff}
	if w.exp != 0 {
		w.frac += hidden
		w.exp -= 1075
	} else {
		w.exp = -1074
	}
	// The boundaries halfway to the neighbouring doubles, on a common
	// exponent, the upper one normalized.
	upper := diyFp{frac: w.frac<<1 + 1, exp: w.exp - 1}
	for upper.frac&(hidden<<1) == 0 {
		upper.frac <<= 1
		upper.exp--
	}
	upper.frac <<= 10
	upper.exp -= 10
	lshift := 1
	if w.frac == hidden {
		lshift = 2
	}
	lower := diyFp{frac: w.frac<<lshift - 1, exp: w.exp - lshift}
	lower.frac <<= uint(lower.exp - upper.exp)
	lower.exp = upper.exp
	for w.frac&hidden == 0 {
		w.frac <<= 1
		w.exp--
	}
	w.frac <<= 11
	w.exp -= 11

	c, k := cachedPow10(upper.exp)
	w, upper, lower = mulFp(w, c), mulFp(upper, c), mulFp(lower, c)
	lower.frac++
	upper.frac--
	return genDigits(w, upper, lower, digits, -k)
}

// genDigits is Grisu2's digit generation: the digits of upper, stopped
// once the rest is within upper - lower, the last one then walked down
// towards w (weeding).
func genDigits(w, upper, lower diyFp, digits *[18]byte, K int) (int, int) {
	wfrac := upper.frac - w.frac
	delta := upper.frac - lower.frac
	shift := uint(-upper.exp)
	one := uint64(1) << shift
	part1 := upper.frac >> shift
	part2 := upper.frac & (one - 1)
	n := 0
	// The integral part, from 10^9 down.
	div := uint64(1000000000)
	for kappa := 10; kappa > 0; div /= 10 {
		d := uint32(part1 / div)
		if d != 0 || n != 0 {
			digits[n] = byte('0' + d)
			n++
		}
		part1 -= uint64(d) * div
		kappa--
		if rest := part1<<shift + part2; rest <= delta {
			weed(digits[:n], delta, rest, div<<shift, wfrac)
			return n, K + kappa
		}
	}
	// The fraction, one digit at a time.
	unit := uint64(10)
	for kappa := 0; ; unit *= 10 {
		part2 *= 10
		delta *= 10
		kappa--
		d := uint32(part2 >> shift)
		if d != 0 || n != 0 {
			digits[n] = byte('0' + d)
			n++
		}
		part2 &= one - 1
		if part2 < delta {
			weed(digits[:n], delta, part2, one, wfrac*unit)
			return n, K + kappa
		}
	}
}

// weed lowers the last digit while that brings the number closer to
// the double (Grisu's round_weed, as fpconv has it).
func weed(digits []byte, delta, rest, ten, wfrac uint64) {
	for rest < wfrac && delta-rest >= ten && (rest+ten < wfrac || wfrac-rest > rest+ten-wfrac) {
		digits[len(digits)-1]--
		rest += ten
	}
}
