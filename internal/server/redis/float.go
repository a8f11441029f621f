package redis

import (
	"math/big"
	"math/bits"
)

// INCRBYFLOAT's arithmetic, emulating what redis-server does on x86-64
// Linux (src/util.c string2ld and ld2string, src/t_string.c
// incrbyfloatCommand): both numbers are read with glibc's strtold into an
// x87 long double, added in long double, and the sum is printed with
// printf("%.17Lf"), trailing zeros and a trailing '.' cut and "-0" turned
// into "0".
//
// A long double is held in a big.Float of precision 64 (the x87 format's
// explicit 64-bit significand) rounding to nearest even; big.Float's
// exponent is unbounded, so the format's 15-bit exponent is enforced
// here: parsing rounds once, exactly, onto the long double grid, gradual
// underflow included, and anything at or past 2^16384 overflows. A sum
// needs only the overflow check: the exact sum of two long doubles that
// falls below the smallest normal is itself on the subnormal grid.
//
// The layout of an x87 long double, for the constants below:
//
//	79  78      64 63 62                                   0
//	+---+---------+--+--------------------------------------+
//	| s | exp(15) | i|          fraction (63 bits)          |
//	+---+---------+--+--------------------------------------+
//	bias 16383; largest (2-2^-63)*2^16383 ~ 1.19e4932,
//	smallest normal 2^-16382 ~ 3.36e-4932, smallest subnormal 2^-16445 ~ 3.65e-4951

const (
	ldPrec = 64 // significand bits

	// ldMaxMantExp is the largest big.Float MantExp (x = mant * 2^exp,
	// 0.5 <= mant < 1) of a finite long double: the largest one is just
	// below 2^16384.
	ldMaxMantExp = 16384
	// ldMinNormalExp is the exponent of the smallest normal, 2^-16382;
	// ldMinSubnormalExp that of the smallest subnormal, 2^-16445, the
	// weight of the last bit any long double has.
	ldMinNormalExp    = -16382
	ldMinSubnormalExp = ldMinNormalExp - (ldPrec - 1)

	// ldMaxChars is Redis's MAX_LONG_DOUBLE_CHARS: string2ld copies its
	// input into a buffer this big and rejects anything that does not fit
	// with its NUL, so at most ldMaxChars-1 bytes parse.
	ldMaxChars = 5 * 1024

	// ldExpLimit bounds how large an exponent the scanner keeps; it
	// saturates beyond. Anything this far out is over- or underflow
	// whatever the digits, which number at most ldMaxChars.
	ldExpLimit = 1 << 40
)

// parseLongDouble sets z (precision 64) to b read as Redis's string2ld
// reads a number, and reports whether Redis would accept it. strtold's
// syntax: an optional sign, then decimal digits with an optional '.' and
// an optional exponent e[sign]digits; or 0x/0X, hex digits with an
// optional '.' and an optional exponent p[sign]digits (decimal, a power of
// two); or inf/infinity; or nan, nan(chars), any case. An exponent
// marker without digits is not part of the number, so "1e" is "1"
// followed by junk. string2ld then rejects: an empty or over-long input,
// a leading space (strtold would skip it), anything after the number,
// NaN, and overflow or underflow to zero (strtold's ERANGE with HUGE_VAL
// or 0). Subnormal results, ERANGE but not zero, are accepted.
func parseLongDouble(z *big.Float, b []byte) bool {
	z.SetPrec(ldPrec).SetMode(big.ToNearestEven)
	if len(b) == 0 || len(b) >= ldMaxChars || isCSpace(b[0]) {
		return false
	}
	n, ok := scanLongDouble(b)
	if !ok {
		return false
	}
	if n.inf {
		z.SetInf(n.neg)
		return true
	}
	if n.digits == 0 {
		z.SetInt64(0)
		if n.neg {
			z.Neg(z)
		}
		return true
	}
	if !n.hex && n.digits <= 19 && n.exp >= -27 && n.exp <= 27 {
		return parseLongDoubleSmall(z, n)
	}
	return parseLongDoubleExact(z, n)
}

// ldNumber is a scanned number: its value is mant * 10^exp for decimal,
// mant * 2^exp for hex, mant being the integer its digits spell (leading
// and trailing zeros already cut; a '.' among them is skipped).
type ldNumber struct {
	neg, inf, hex bool
	mant          []byte
	digits        int   // digits in mant
	exp           int64 // saturated at ±ldExpLimit
}

// scanLongDouble checks b against strtold's syntax, all of b being the
// number, and splits it. A NaN reports !ok, as string2ld rejects it.
func scanLongDouble(b []byte) (n ldNumber, ok bool) {
	i := 0
	if b[0] == '+' || b[0] == '-' {
		n.neg = b[0] == '-'
		i++
	}
	s := b[i:]
	switch {
	case ldHasPrefixFold(s, "inf"):
		n.inf = true
		return n, len(s) == 3 || len(s) == 8 && ldHasPrefixFold(s, "infinity")
	case len(s) == 0 || !ldIsDigit(s[0]) && !(s[0] == '.' && len(s) > 1 && ldIsDigit(s[1])):
		return n, false // "nan" in every form lands here too
	}
	base := 10
	if len(s) > 2 && s[0] == '0' && s[1]|0x20 == 'x' {
		n.hex, base = true, 16
		s = s[2:]
	}
	// The significand: digits with at most one '.'.
	j, dot, nd := 0, -1, 0
	for ; j < len(s); j++ {
		switch {
		case ldIsDigitIn(s[j], base):
			nd++
			continue
		case s[j] == '.' && dot < 0:
			dot = j
			continue
		}
		break
	}
	if nd == 0 {
		return n, false // "0x", "0x.", "0xp1": strtold reads just the "0"
	}
	mant, rest := s[:j], s[j:]
	frac := 0
	if dot >= 0 {
		frac = j - dot - 1
	}
	// The exponent, if a complete one follows; a partial one is junk.
	var exp int64
	if len(rest) > 0 && (!n.hex && rest[0]|0x20 == 'e' || n.hex && rest[0]|0x20 == 'p') {
		k, eneg := 1, false
		if k < len(rest) && (rest[k] == '+' || rest[k] == '-') {
			eneg = rest[k] == '-'
			k++
		}
		if k == len(rest) {
			return n, false
		}
		for ; k < len(rest); k++ {
			if !ldIsDigit(rest[k]) {
				return n, false
			}
			if exp < ldExpLimit {
				exp = exp*10 + int64(rest[k]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
		rest = nil
	}
	if len(rest) > 0 {
		return n, false
	}
	// Cut zeros: trailing ones each divide the integer the digits spell
	// by the base; leading ones, and a '.' among either, change nothing.
	scale := -int64(frac)
	for len(mant) > 0 && (mant[len(mant)-1] == '0' || mant[len(mant)-1] == '.') {
		if mant[len(mant)-1] == '0' {
			scale++
		}
		mant = mant[:len(mant)-1]
	}
	for len(mant) > 0 && (mant[0] == '0' || mant[0] == '.') {
		mant = mant[1:]
	}
	n.mant = mant
	for _, c := range mant {
		if c != '.' {
			n.digits++
		}
	}
	if n.hex {
		scale *= 4
	}
	n.exp = ldClampExp(exp + scale)
	return n, true
}

func ldClampExp(e int64) int64 { return max(-ldExpLimit, min(e, ldExpLimit)) }

func ldIsDigit(c byte) bool { return c >= '0' && c <= '9' }

// ldIsDigitIn reports whether c is a digit in base 10 or 16.
func ldIsDigitIn(c byte, base int) bool {
	if ldIsDigit(c) {
		return true
	}
	c |= 0x20
	return base == 16 && c >= 'a' && c <= 'f'
}

// ldDigitVal is the value of a decimal or hex digit.
func ldDigitVal(c byte) uint64 {
	if ldIsDigit(c) {
		return uint64(c - '0')
	}
	return uint64(c|0x20-'a') + 10
}

// ldHasPrefixFold reports whether s starts with the lower-case ASCII prefix,
// in any case.
func ldHasPrefixFold(s []byte, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := range len(prefix) {
		if s[i]|0x20 != prefix[i] {
			return false
		}
	}
	return true
}

// ldPow5 holds 5^0..5^27, the powers of five that fit in a uint64.
var ldPow5 = func() (p [28]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 5
	}
	return p
}()

// parseLongDoubleSmall handles the everyday case, at most 19 significant
// digits and a power of ten within ±27, in one correctly rounded big.Float
// operation: mant and 5^|exp| are exact in 64 bits, and 10^exp is
// 5^exp * 2^exp; the result is far from long double's range limits.
func parseLongDoubleSmall(z *big.Float, n ldNumber) bool {
	var m uint64
	for _, c := range n.mant {
		if c != '.' {
			m = m*10 + uint64(c-'0')
		}
	}
	z.SetUint64(m)
	if n.exp != 0 {
		var p big.Float
		p.SetPrec(ldPrec).SetUint64(ldPow5[ldAbs(n.exp)])
		if n.exp > 0 {
			z.Mul(z, &p)
		} else {
			z.Quo(z, &p)
		}
		z.SetMantExp(z, int(n.exp))
	}
	if n.neg {
		z.Neg(z)
	}
	return true
}

func ldAbs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// parseLongDoubleExact handles every other finite number: it writes the
// value as a fraction num/den * 2^e2 of integers and rounds that once, as
// glibc's strtold does. Values certainly out of range are decided from the
// digit count and exponent alone, before any big power is computed.
func parseLongDoubleExact(z *big.Float, n ldNumber) bool {
	nd := int64(n.digits)
	var num, den big.Int
	den.SetInt64(1)
	if n.hex {
		// mant*2^exp lies in [2^(4nd-4+exp), 2^(4nd+exp)).
		if 4*nd-4+n.exp >= ldMaxMantExp {
			return false // overflow
		}
		if 4*nd+n.exp <= ldMinSubnormalExp-1 {
			return false // below half the smallest subnormal: rounds to 0
		}
		ldDigitsToInt(&num, n.mant, 16)
		return roundLongDouble(z, n.neg, &num, &den, int(n.exp))
	}
	// mant*10^exp lies in [10^(nd-1+exp), 10^(nd+exp)); the largest long
	// double is 1.19e4932, half the smallest subnormal 1.82e-4951.
	if nd-1+n.exp >= 4933 {
		return false // overflow
	}
	if nd+n.exp <= -4951 {
		return false // rounds to 0
	}
	ldDigitsToInt(&num, n.mant, 10)
	// 10^exp is 5^exp * 2^exp: the power of five goes into the fraction.
	var p5 big.Int
	p5.Exp(big.NewInt(5), big.NewInt(ldAbs(n.exp)), nil)
	if n.exp >= 0 {
		num.Mul(&num, &p5)
	} else {
		den.Set(&p5)
	}
	return roundLongDouble(z, n.neg, &num, &den, int(n.exp))
}

// ldDigitsToInt sets z to the integer spelled by mant in base 10 or 16,
// skipping a '.'; it takes the digits a machine word at a time.
func ldDigitsToInt(z *big.Int, mant []byte, base int) {
	per := 19 // decimal digits per uint64
	if base == 16 {
		per = 15
	}
	z.SetInt64(0)
	var chunk big.Int
	var acc uint64
	nacc := 0
	for i, c := range mant {
		if c != '.' {
			acc = acc*uint64(base) + ldDigitVal(c)
			nacc++
		}
		if nacc == per || i == len(mant)-1 && nacc > 0 {
			if base == 16 {
				z.Lsh(z, uint(4*nacc))
			} else {
				z.Mul(z, chunk.SetUint64(ldPow10[nacc]))
			}
			z.Add(z, chunk.SetUint64(acc))
			acc, nacc = 0, 0
		}
	}
}

// ldPow10 holds 10^0..10^19, the powers of ten that fit in a uint64.
var ldPow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// roundLongDouble sets z to ±num/den * 2^e2 (num, den > 0) rounded to the
// nearest long double, ties to even, with gradual underflow. It reports
// false when the result overflows or underflows to zero, the two ERANGE
// results string2ld rejects.
func roundLongDouble(z *big.Float, neg bool, num, den *big.Int, e2 int) bool {
	// q = floor(num*2^k/den) gets 66 or 67 bits: the 64 kept, a round bit
	// and one more, with the remainder as the sticky bit.
	k := ldPrec + 2 - (num.BitLen() - den.BitLen())
	var q, r, scaled big.Int
	if k >= 0 {
		q.QuoRem(scaled.Lsh(num, uint(k)), den, &r)
	} else {
		q.QuoRem(num, scaled.Lsh(den, uint(-k)), &r)
	}
	nb := q.BitLen()
	x := nb - 1 + e2 - k // 2^x <= value < 2^(x+1)
	keep := ldPrec
	if x < ldMinNormalExp {
		keep = x - ldMinSubnormalExp + 1 // bits from 2^x down to 2^-16445
	}
	if keep < 0 {
		return false // below half the smallest subnormal
	}
	drop := nb - keep // >= 2
	m := ldShiftedWord(&q, drop)
	half := q.Bit(drop-1) == 1
	sticky := r.Sign() != 0 || int(q.TrailingZeroBits()) < drop-1
	if keep == 0 {
		// A value in [2^-16446, 2^-16445), where no significand bit is
		// kept. glibc 2.36 (Debian 12's, which redis-server 7.0.15 runs
		// on) has a bug here, in round_and_return (stdlib/strtod_l.c):
		// when it shifts a subnormal's significand right it keeps the
		// bits below the round bit it was given as sticky but forgets
		// that round bit itself (later glibc ORs it back in as
		// old_half_bit). For every other subnormal that changes the
		// value by at most one subnormal ulp, which never shows: such
		// values print as 0 and vanish in any sum that does not. Here it
		// decides between 0 and the smallest subnormal: exactly
		// 2^-16446 * (1 + 2^-64) becomes 0, ERANGE, rejected. Only a hex
		// input can spell such a value within 5 KiB.
		var t big.Int
		t.SetBit(&q, nb-1, 0)
		t.SetBit(&t, nb-1-ldPrec, 0)
		sticky = r.Sign() != 0 || t.Sign() != 0
	}
	if half && (sticky || m&1 == 1) {
		var carry uint64
		m, carry = bits.Add64(m, 1, 0)
		if carry != 0 {
			m, drop = 1<<63, drop+1
		}
	}
	if m == 0 {
		return false // underflow to zero
	}
	z.SetUint64(m)
	z.SetMantExp(z, drop+e2-k)
	if z.MantExp(nil) > ldMaxMantExp {
		return false // rounded up to 2^16384: overflow
	}
	if neg {
		z.Neg(z)
	}
	return true
}

// ldShiftedWord returns q >> s, which fits in 64 bits.
func ldShiftedWord(q *big.Int, s int) uint64 {
	var t big.Int
	return t.Rsh(q, uint(s)).Uint64()
}

// addLongDouble sets z to x + y as the x87 adds long doubles and reports
// whether the sum is finite: an infinite operand or an overflowing sum is
// Redis's "increment would produce NaN or Infinity".
func addLongDouble(z, x, y *big.Float) bool {
	if x.IsInf() || y.IsInf() {
		return false
	}
	z.SetPrec(ldPrec).SetMode(big.ToNearestEven).Add(x, y)
	return z.MantExp(nil) <= ldMaxMantExp
}

// appendLongDouble appends finite x as ld2string(LD_STR_HUMAN) prints it:
// "%.17Lf" (glibc prints the exact binary value, rounding the 17th
// decimal half to even, as big.Float does), then trailing zeros and a
// bare '.' cut, and "-0" made "0".
func appendLongDouble(dst []byte, x *big.Float) []byte {
	if x.MantExp(nil) < -57 {
		// |x| < 2^-58 < 5e-18 prints as (-)0.00000000000000000. Said
		// here, not worked out: big.Float would first write out all
		// ~16,000 decimals of a subnormal.
		return append(dst, '0')
	}
	start := len(dst)
	dst = x.Append(dst, 'f', 17)
	n := len(dst)
	for dst[n-1] == '0' {
		n--
	}
	if dst[n-1] == '.' {
		n--
	}
	dst = dst[:n]
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}
