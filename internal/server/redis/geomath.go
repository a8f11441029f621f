package redis

import (
	"math"
	"math/big"
)

// Sine, cosine and arcsine as close to glibc's as can be had, rather than
// Go's math package, which may be an ulp or two off: a distance
// redis-server prints with 17 digits (STOREDIST scores, a point just at a
// radius) then comes out the same. The arcsine below 1/8 is glibc's own
// evaluation; the rest are rounded to the nearest double, as glibc's
// almost always are, computed in double-double arithmetic (a value as an
// unevaluated sum hi+lo, about 106 bits, of which some 100 are kept):
// reduction by pi/64 held in three doubles, a table and short series,
// and a Newton step for the arcsine. Beyond geoTrigMax (only the bounding
// box of an absurd radius gets there) and for non-finite input they
// defer to the math package.

type dd struct{ hi, lo float64 }

func ddTwoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func ddQuick(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func ddTwoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func ddAdd(a, b dd) dd {
	s := ddTwoSum(a.hi, b.hi)
	t := ddTwoSum(a.lo, b.lo)
	s.lo += t.hi
	s = ddQuick(s.hi, s.lo)
	s.lo += t.lo
	return ddQuick(s.hi, s.lo)
}

func ddMul(a, b dd) dd {
	p := ddTwoProd(a.hi, b.hi)
	p.lo += a.hi*b.lo + a.lo*b.hi
	return ddQuick(p.hi, p.lo)
}

func ddMulF(a dd, b float64) dd {
	p := ddTwoProd(a.hi, b)
	p.lo += a.lo * b
	return ddQuick(p.hi, p.lo)
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

// geoTrigMax bounds the arguments reduced here: k*pi/64 with k below
// 2^24 keeps the reduction exact enough.
const geoTrigMax = 1 << 19

// The reduction: x = k*h + r with h = pi/64 (in three doubles) and
// |r| <= h/2, then sin and cos of k*h from a table of the first quadrant
// (k mod 32) turned by its quadrant (k div 32), and the angle sum with
// short series for r, their leading terms in double-double.
var (
	ddH        [3]float64 // pi/64 = [0]+[1]+[2]
	ddHPair    dd
	ddSinTab   [32]dd // sin(i*pi/64)
	ddCosTab   [32]dd // cos(i*pi/64)
	ddPio2Pair dd     // pi/2, and the rest of it
	ddPio2Lo   float64
	ddC3       dd // -1/6
)

func init() {
	const pi = "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798214808651"
	const prec = 320
	bf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	piF, _, _ := big.ParseFloat(pi, 10, prec, big.ToNearestEven)
	split := func(v *big.Float, parts []float64) {
		rest := bf().Set(v)
		for i := range parts {
			parts[i], _ = rest.Float64()
			rest.Sub(rest, bf().SetFloat64(parts[i]))
		}
	}
	toDD := func(v *big.Float) dd {
		var p [2]float64
		split(v, p[:])
		return dd{p[0], p[1]}
	}
	h := bf().Quo(piF, bf().SetInt64(64))
	split(h, ddH[:])
	ddHPair = dd{ddH[0], ddH[1]}
	var pio2 [3]float64
	split(bf().Quo(piF, bf().SetInt64(2)), pio2[:])
	ddPio2Pair, ddPio2Lo = dd{pio2[0], pio2[1]}, pio2[2]
	for i := range 32 {
		x := bf().Mul(h, bf().SetInt64(int64(i)))
		x2 := bf().Mul(x, x)
		sin, cos := bf(), bf()
		for _, c := range []struct {
			sum, term *big.Float
			n         int64
		}{{sin, bf().Set(x), 1}, {cos, bf().SetInt64(1), 0}} {
			term := c.term
			for n := c.n; n < 80; n += 2 {
				c.sum.Add(c.sum, term)
				term = bf().Mul(term, x2)
				term.Quo(term, bf().SetInt64(-(n+1)*(n+2)))
			}
		}
		ddSinTab[i], ddCosTab[i] = toDD(sin), toDD(cos)
	}
	ddC3 = toDD(bf().Quo(bf().SetInt64(-1), bf().SetInt64(6)))
}

// ddSinCos is sin x and cos x in double-double, 0 <= x < geoTrigMax.
func ddSinCos(x float64) (sin, cos dd) {
	k := math.Round(x / ddH[0])
	r := dd{x, 0}
	if k != 0 {
		r = ddAdd(r, ddMulF(ddHPair, k).neg())
		r = ddAdd(r, dd{-k * ddH[2], 0})
	}
	// sin r = r + r*r2*(-1/6 + r2*p), cos r = 1 + r2*(-1/2 + r2*q), the
	// tails p and q in double: they weigh under 2^-25 of the result.
	r2 := ddMul(r, r)
	z := r2.hi
	p := 1.0/120 + z*(-1.0/5040+z*(1.0/362880+z*(-1.0/39916800)))
	q := 1.0/24 + z*(-1.0/720+z*(1.0/40320+z*(-1.0/3628800)))
	sr := ddAdd(r, ddMul(r, ddMul(r2, ddAdd(ddC3, dd{z * p, 0}))))
	cr := ddAdd(dd{1, 0}, ddMul(r2, ddAdd(dd{-0.5, 0}, dd{z * q, 0})))
	i := int64(k)
	s, c := ddSinTab[i&31], ddCosTab[i&31]
	// sin(a+r) = sin a cos r + cos a sin r; cos(a+r) = cos a cos r - sin a sin r
	sin = ddAdd(ddMul(s, cr), ddMul(c, sr))
	cos = ddAdd(ddMul(c, cr), ddMul(s, sr).neg())
	switch (i >> 5) & 3 {
	case 1:
		sin, cos = cos, sin.neg()
	case 2:
		sin, cos = sin.neg(), cos.neg()
	case 3:
		sin, cos = cos.neg(), sin
	}
	return sin, cos
}

func geoSin(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.Abs(x) >= geoTrigMax {
		return math.Sin(x)
	}
	s, _ := ddSinCos(math.Abs(x))
	v := s.hi + s.lo
	if x < 0 {
		v = -v
	}
	return v
}

func geoCos(x float64) float64 {
	if math.IsNaN(x) || math.Abs(x) >= geoTrigMax {
		return math.Cos(x)
	}
	_, c := ddSinCos(math.Abs(x))
	return c.hi + c.lo
}

// glibcAsinF are f1 ... f6 of glibc's asin for 2^-26 <= |x| < 1/8, as
// bits (minimax-adjusted Taylor coefficients: about 1/6, 3/40, 15/336,
// ...).
var glibcAsinF = [6]float64{
	math.Float64frombits(0x3fc55555555554f9), math.Float64frombits(0x3fb333333336127d),
	math.Float64frombits(0x3fa6db6dae42c0e4), math.Float64frombits(0x3f9f1c7e04f4ad99),
	math.Float64frombits(0x3f96e442c822d419), math.Float64frombits(0x3f9292d80f453c72),
}

// ddAsinSmall is asin y in double-double for 0 <= y <= 0.75: a Newton
// step from math.Asin's value.
func ddAsinSmall(y float64) dd {
	z0 := math.Asin(y)
	s, c := ddSinCos(z0)
	d := ddAdd(dd{y, 0}, s.neg())
	corr := (d.hi + d.lo) / (c.hi + c.lo)
	return ddAdd(dd{z0, 0}, dd{corr, 0})
}

// geoAsin is asin y, for y in [-1, 1] (NaN outside, as asin).
func geoAsin(y float64) float64 {
	switch {
	case math.IsNaN(y) || y > 1 || y < -1:
		return math.NaN()
	case y == 0:
		return y
	case y < 0:
		return -geoAsin(-y)
	case y < 0x1p-26:
		return y
	case y < 0.125:
		// glibc's own evaluation here (e_asin.c, as its FMA build runs
		// on x86-64 CPUs that have FMA): a degree-13 odd polynomial
		// with its coefficients, fused multiply-adds and all, so the
		// result is glibc's to the bit (checked against libm on 2
		// million arguments), not merely the nearest double.
		x2 := y * y
		p := math.FMA(math.FMA(math.FMA(math.FMA(math.FMA(glibcAsinF[5], x2, glibcAsinF[4]), x2, glibcAsinF[3]), x2, glibcAsinF[2]), x2, glibcAsinF[1]), x2, glibcAsinF[0])
		return math.FMA(p, x2*y, y)
	case y <= 0.5:
		r := ddAsinSmall(y)
		return r.hi + r.lo
	}
	// asin y = pi/2 - 2 asin(sqrt((1-y)/2)), the root in double-double.
	t := (1 - y) / 2 // exact for y in [0.5, 1]
	s0 := math.Sqrt(t)
	var s dd
	if s0 != 0 {
		sq := ddTwoProd(s0, s0)
		s = ddQuick(s0, (t-sq.hi-sq.lo)/(2*s0))
	}
	// asin(s) = asin(s.hi) + s.lo/sqrt(1-s^2), first order in s.lo.
	a := ddAsinSmall(s.hi)
	if s.lo != 0 {
		a = ddAdd(a, dd{s.lo / math.Sqrt(1-s.hi*s.hi), 0})
	}
	r := ddAdd(ddPio2Pair, ddMulF(a, 2).neg())
	r = ddAdd(r, dd{ddPio2Lo, 0})
	return r.hi + r.lo
}
