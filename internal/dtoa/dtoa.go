package dtoa

import (
	"math"
	"math/bits"
	"strconv"
)

// AppendDouble72 appends d as Redis 7.2 prints a double reply (its
// d2string): "nan", "inf", "-inf", "0", "-0", an integer's digits when d
// is one within ±2^62, else the digits of Grisu2 (Florian Loitsch,
// "Printing Floating-Point Numbers Quickly and Accurately with Integers",
// 2010) laid out as Redis's fpconv_dtoa lays them out: digits that read
// back as d, the shortest in all but rare cases, in plain notation from
// 1e-7 up to 21 digits before the point and in scientific notation
// beyond. Writer.Double (Redis's addReplyDouble) and the scores a small
// sorted set's listpack holds use it; Redis 7.0 printed "%.17g". Checked
// digit for digit against redis-server 7.2.4 by TestDouble72.
func AppendDouble72(dst []byte, d float64) []byte {
	switch {
	case math.IsNaN(d):
		return append(dst, "nan"...)
	case math.IsInf(d, 1):
		return append(dst, "inf"...)
	case math.IsInf(d, -1):
		return append(dst, "-inf"...)
	case d == 0:
		if math.Signbit(d) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	// Redis's double2ll: within ±(2^63-1)/2 an integral d prints as one.
	if d >= -float64(math.MaxInt64/2) && d <= float64(math.MaxInt64/2) {
		if ll := int64(d); float64(ll) == d {
			return strconv.AppendInt(dst, ll, 10)
		}
	}
	neg := math.Signbit(d)
	if neg {
		dst = append(dst, '-')
	}
	var digits [18]byte
	n, k := grisu2(d, &digits)
	return emitDigits(dst, digits[:n], k, neg)
}

// AppendFpconvDtoa appends d as Redis 7.2's fpconv_dtoa writes it, without
// d2string's shortcuts: the sign from the sign bit ("-0", "-nan" for a
// NaN with it set, "-inf"), "0", "nan", "inf", else Grisu2's digits laid
// out as AppendDouble72 lays them out, integers included (1e17 is
// "1e+17"). Redis 7.2.4 formats a Lua number passed to redis.call this
// way.
func AppendFpconvDtoa(dst []byte, d float64) []byte {
	neg := math.Signbit(d)
	if neg {
		dst = append(dst, '-')
	}
	switch {
	case math.IsNaN(d):
		return append(dst, "nan"...)
	case math.IsInf(d, 0):
		return append(dst, "inf"...)
	case d == 0:
		return append(dst, '0')
	}
	var digits [18]byte
	n, k := grisu2(d, &digits)
	return emitDigits(dst, digits[:n], k, neg)
}

// diyFp is a 64-bit significand and a binary exponent: f × 2^e.
type diyFp struct {
	f uint64
	e int
}

const (
	dblFracMask  = 1<<52 - 1
	dblHiddenBit = 1 << 52
	dblExpBias   = 1023 + 52
)

// mul is the product's upper 64 bits, rounded half up.
func (x diyFp) mul(y diyFp) diyFp {
	hi, lo := bits.Mul64(x.f, y.f)
	return diyFp{hi + lo>>63, x.e + y.e + 64}
}

// grisu2 writes the digits of d (finite, not 0) and returns their count
// and the power of ten of the last one.
func grisu2(d float64, digits *[18]byte) (int, int) {
	b := math.Float64bits(d)
	w := diyFp{b & dblFracMask, int(b>>52) & 0x7ff}
	if w.e != 0 {
		w.f += dblHiddenBit
		w.e -= dblExpBias
	} else {
		w.e = 1 - dblExpBias
	}
	// The boundaries halfway to the neighbouring doubles; the lower one is
	// closer when d's significand is a power of two.
	upper := diyFp{w.f<<1 + 1, w.e - 1}
	for upper.f&(dblHiddenBit<<1) == 0 {
		upper.f <<= 1
		upper.e--
	}
	upper.f <<= 64 - 52 - 2
	upper.e -= 64 - 52 - 2
	shift := 1
	if w.f == dblHiddenBit {
		shift = 2
	}
	lower := diyFp{w.f<<shift - 1, w.e - shift}
	lower.f <<= uint(lower.e - upper.e)
	lower.e = upper.e
	for w.f&dblHiddenBit == 0 {
		w.f <<= 1
		w.e--
	}
	w.f <<= 64 - 52 - 1
	w.e -= 64 - 52 - 1

	c, k := cachedPow10(upper.e)
	w, upper, lower = w.mul(c), upper.mul(c), lower.mul(c)
	lower.f++
	upper.f--
	return genDigits(w, upper, lower, digits, -k)
}

// cachedPow10 picks the cached power of ten c that brings a number of
// binary exponent e to one of exponent -60 to -32 (e + c.e + 64), and
// returns it with its decimal exponent.
func cachedPow10(e int) (diyFp, int) {
	const (
		first = -348
		step  = 8
	)
	i := (int(float64(-(e+len(cachedPowers)))*0.30102999566398114) - first) / step
	for {
		switch cur := e + cachedPowers[i].e + 64; {
		case cur < -60:
			i++
		case cur > -32:
			i--
		default:
			return cachedPowers[i], first + i*step
		}
	}
}

var pow10u64 = [...]uint64{1e19, 1e18, 1e17, 1e16, 1e15, 1e14, 1e13, 1e12, 1e11, 1e10, 1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 100, 10, 1}

// genDigits writes the digits of upper, scaled, until what is left falls
// within delta, nudged towards w; k is the decimal exponent so far.
func genDigits(w, upper, lower diyFp, digits *[18]byte, k int) (int, int) {
	wfrac := upper.f - w.f
	delta := upper.f - lower.f
	one := diyFp{1 << uint(-upper.e), upper.e}
	part1 := upper.f >> uint(-one.e)
	part2 := upper.f & (one.f - 1)
	n := 0
	for i, kappa := 10, 10; kappa > 0; i++ {
		div := pow10u64[i]
		digit := part1 / div
		if digit != 0 || n != 0 {
			digits[n] = byte(digit) + '0'
			n++
		}
		part1 -= digit * div
		kappa--
		if tmp := part1<<uint(-one.e) + part2; tmp <= delta {
			roundDigit(digits[:n], delta, tmp, div<<uint(-one.e), wfrac)
			return n, k + kappa
		}
	}
	for kappa, unit := 0, 18; ; unit-- {
		part2 *= 10
		delta *= 10
		kappa--
		digit := part2 >> uint(-one.e)
		if digit != 0 || n != 0 {
			digits[n] = byte(digit) + '0'
			n++
		}
		part2 &= one.f - 1
		if part2 < delta {
			roundDigit(digits[:n], delta, part2, one.f, wfrac*pow10u64[unit])
			return n, k + kappa
		}
	}
}

// roundDigit lowers the last digit while that brings the number closer
// to w and keeps it within delta.
func roundDigit(digits []byte, delta, rem, kappa, frac uint64) {
	for rem < frac && delta-rem >= kappa && (rem+kappa < frac || frac-rem > rem+kappa-frac) {
		digits[len(digits)-1]--
		rem += kappa
	}
}

// emitDigits lays out digits × 10^k as Redis's fpconv_dtoa does.
func emitDigits(dst, digits []byte, k int, neg bool) []byte {
	n := len(digits)
	exp := k + n - 1
	if exp < 0 {
		exp = -exp
	}
	if k >= 0 && exp < n+7 { // an integer, written out
		dst = append(dst, digits...)
		for range k {
			dst = append(dst, '0')
		}
		return dst
	}
	if k < 0 && (k > -7 || exp < 4) { // a decimal without an exponent
		off := n + k
		if off <= 0 {
			dst = append(dst, '0', '.')
			for range -off {
				dst = append(dst, '0')
			}
			return append(dst, digits...)
		}
		dst = append(dst, digits[:off]...)
		dst = append(dst, '.')
		return append(dst, digits[off:]...)
	}
	// Scientific: at most 17 digits for a negative number, 18 otherwise,
	// and the exponent's sign from that count, as Redis's code has it.
	if neg {
		n = min(n, 17)
	} else {
		n = min(n, 18)
	}
	dst = append(dst, digits[0])
	if n > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:n]...)
	}
	dst = append(dst, 'e')
	if k+n-1 < 0 {
		dst = append(dst, '-')
	} else {
		dst = append(dst, '+')
	}
	cent := 0
	if exp > 99 {
		cent = exp / 100
		dst = append(dst, byte(cent)+'0')
		exp -= cent * 100
	}
	if exp > 9 {
		dec := exp / 10
		dst = append(dst, byte(dec)+'0')
		exp -= dec * 10
	} else if cent != 0 {
		dst = append(dst, '0')
	}
	return append(dst, byte(exp%10)+'0')
}

// cachedPowers are 10^k for k = -348, -340, ..., 340: 64-bit significands
// rounded to nearest, and binary exponents (computed with math/big).
var cachedPowers = [...]diyFp{
	{0xfa8fd5a0081c0288, -1220}, // 1e-348
	{0xbaaee17fa23ebf76, -1193}, // 1e-340
	{0x8b16fb203055ac76, -1166}, // 1e-332
	{0xcf42894a5dce35ea, -1140}, // 1e-324
	{0x9a6bb0aa55653b2d, -1113}, // 1e-316
	{0xe61acf033d1a45df, -1087}, // 1e-308
	{0xab70fe17c79ac6ca, -1060}, // 1e-300
	{0xff77b1fcbebcdc4f, -1034}, // 1e-292
	{0xbe5691ef416bd60c, -1007}, // 1e-284
	{0x8dd01fad907ffc3c, -980},  // 1e-276
	{0xd3515c2831559a83, -954},  // 1e-268
	{0x9d71ac8fada6c9b5, -927},  // 1e-260
	{0xea9c227723ee8bcb, -901},  // 1e-252
	{0xaecc49914078536d, -874},  // 1e-244
	{0x823c12795db6ce57, -847},  // 1e-236
	{0xc21094364dfb5637, -821},  // 1e-228
	{0x9096ea6f3848984f, -794},  // 1e-220
	{0xd77485cb25823ac7, -768},  // 1e-212
	{0xa086cfcd97bf97f4, -741},  // 1e-204
	{0xef340a98172aace5, -715},  // 1e-196
	{0xb23867fb2a35b28e, -688},  // 1e-188
	{0x84c8d4dfd2c63f3b, -661},  // 1e-180
	{0xc5dd44271ad3cdba, -635},  // 1e-172
	{0x936b9fcebb25c996, -608},  // 1e-164
	{0xdbac6c247d62a584, -582},  // 1e-156
	{0xa3ab66580d5fdaf6, -555},  // 1e-148
	{0xf3e2f893dec3f126, -529},  // 1e-140
	{0xb5b5ada8aaff80b8, -502},  // 1e-132
	{0x87625f056c7c4a8b, -475},  // 1e-124
	{0xc9bcff6034c13053, -449},  // 1e-116
	{0x964e858c91ba2655, -422},  // 1e-108
	{0xdff9772470297ebd, -396},  // 1e-100
	{0xa6dfbd9fb8e5b88f, -369},  // 1e-92
	{0xf8a95fcf88747d94, -343},  // 1e-84
	{0xb94470938fa89bcf, -316},  // 1e-76
	{0x8a08f0f8bf0f156b, -289},  // 1e-68
	{0xcdb02555653131b6, -263},  // 1e-60
	{0x993fe2c6d07b7fac, -236},  // 1e-52
	{0xe45c10c42a2b3b06, -210},  // 1e-44
	{0xaa242499697392d3, -183},  // 1e-36
	{0xfd87b5f28300ca0e, -157},  // 1e-28
	{0xbce5086492111aeb, -130},  // 1e-20
	{0x8cbccc096f5088cc, -103},  // 1e-12
	{0xd1b71758e219652c, -77},   // 1e-4
	{0x9c40000000000000, -50},   // 1e4
	{0xe8d4a51000000000, -24},   // 1e12
	{0xad78ebc5ac620000, 3},     // 1e20
	{0x813f3978f8940984, 30},    // 1e28
	{0xc097ce7bc90715b3, 56},    // 1e36
	{0x8f7e32ce7bea5c70, 83},    // 1e44
	{0xd5d238a4abe98068, 109},   // 1e52
	{0x9f4f2726179a2245, 136},   // 1e60
	{0xed63a231d4c4fb27, 162},   // 1e68
	{0xb0de65388cc8ada8, 189},   // 1e76
	{0x83c7088e1aab65db, 216},   // 1e84
	{0xc45d1df942711d9a, 242},   // 1e92
	{0x924d692ca61be758, 269},   // 1e100
	{0xda01ee641a708dea, 295},   // 1e108
	{0xa26da3999aef774a, 322},   // 1e116
	{0xf209787bb47d6b85, 348},   // 1e124
	{0xb454e4a179dd1877, 375},   // 1e132
	{0x865b86925b9bc5c2, 402},   // 1e140
	{0xc83553c5c8965d3d, 428},   // 1e148
	{0x952ab45cfa97a0b3, 455},   // 1e156
	{0xde469fbd99a05fe3, 481},   // 1e164
	{0xa59bc234db398c25, 508},   // 1e172
	{0xf6c69a72a3989f5c, 534},   // 1e180
	{0xb7dcbf5354e9bece, 561},   // 1e188
	{0x88fcf317f22241e2, 588},   // 1e196
	{0xcc20ce9bd35c78a5, 614},   // 1e204
	{0x98165af37b2153df, 641},   // 1e212
	{0xe2a0b5dc971f303a, 667},   // 1e220
	{0xa8d9d1535ce3b396, 694},   // 1e228
	{0xfb9b7cd9a4a7443c, 720},   // 1e236
	{0xbb764c4ca7a44410, 747},   // 1e244
	{0x8bab8eefb6409c1a, 774},   // 1e252
	{0xd01fef10a657842c, 800},   // 1e260
	{0x9b10a4e5e9913129, 827},   // 1e268
	{0xe7109bfba19c0c9d, 853},   // 1e276
	{0xac2820d9623bf429, 880},   // 1e284
	{0x80444b5e7aa7cf85, 907},   // 1e292
	{0xbf21e44003acdd2d, 933},   // 1e300
	{0x8e679c2f5e44ff8f, 960},   // 1e308
	{0xd433179d9c8cb841, 986},   // 1e316
	{0x9e19db92b4e31ba9, 1013},  // 1e324
	{0xeb96bf6ebadf77d9, 1039},  // 1e332
	{0xaf87023b9bf0ee6b, 1066},  // 1e340
}
