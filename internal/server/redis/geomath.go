package redis

import (
	"math"
	"math/big"
)

// Sine, cosine and arcsine rounded to the nearest double, as glibc's
// (whose results are correctly rounded but for extremely rare cases)
// rather than Go's math package, which may be an ulp or two off: a
// distance redis-server prints with 17 digits (STOREDIST scores, a point
// just at a radius) then comes out the same. They work in double-double
// arithmetic (a value as an unevaluated sum hi+lo, about 106 bits):
// reduction by pi/2 held in three doubles, Taylor series past 2^-110,
// and a Newton step for the arcsine. Beyond geoTrigMax (only the
// bounding box of an absurd radius gets there) and for non-finite input
// they defer to the math package.

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

// geoTrigMax bounds the arguments reduced here: k*pi/2 with k below 2^20
// keeps the reduction exact enough.
const geoTrigMax = 1 << 19

var (
	ddPio2         [3]float64 // pi/2 = [0]+[1]+[2]
	ddPio2Pair     dd
	ddSinC, ddCosC []dd // -1/3!, 1/5!, ...; -1/2!, 1/4!, ...
)

func init() {
	const pio2 = "1.570796326794896619231321691639751442098584699687552910487472296153908203143104499314017412671058534"
	v, _, _ := big.ParseFloat(pio2, 10, 300, big.ToNearestEven)
	rest := new(big.Float).SetPrec(300).Set(v)
	for i := range ddPio2 {
		ddPio2[i], _ = rest.Float64()
		rest.Sub(rest, new(big.Float).SetFloat64(ddPio2[i]))
	}
	ddPio2Pair = dd{ddPio2[0], ddPio2[1]}
	toDD := func(x *big.Float) dd {
		hi, _ := x.Float64()
		lo, _ := new(big.Float).SetPrec(300).Sub(x, new(big.Float).SetFloat64(hi)).Float64()
		return dd{hi, lo}
	}
	fact := new(big.Float).SetPrec(300).SetInt64(1)
	for n := 1; n <= 36; n++ {
		fact.Mul(fact, new(big.Float).SetInt64(int64(n)))
		inv := new(big.Float).SetPrec(300).Quo(new(big.Float).SetPrec(300).SetInt64(1), fact)
		if (n/2)%2 == 1 {
			inv.Neg(inv)
		}
		if n == 1 {
			continue
		}
		if n%2 == 1 {
			ddSinC = append(ddSinC, toDD(inv)) // 1/3!, 1/5!, ... with signs
		} else {
			ddCosC = append(ddCosC, toDD(inv)) // 1/2!, 1/4!, ...
		}
	}
}

// ddSinCosReduced returns sin r and cos r for |r| <= pi/4.
func ddSinCosReduced(r dd) (sin, cos dd) {
	r2 := ddMul(r, r)
	s := ddSinC[len(ddSinC)-1]
	for i := len(ddSinC) - 2; i >= 0; i-- {
		s = ddAdd(ddSinC[i], ddMul(r2, s))
	}
	sin = ddAdd(r, ddMul(r, ddMul(r2, s)))
	c := ddCosC[len(ddCosC)-1]
	for i := len(ddCosC) - 2; i >= 0; i-- {
		c = ddAdd(ddCosC[i], ddMul(r2, c))
	}
	cos = ddAdd(dd{1, 0}, ddMul(r2, c))
	return sin, cos
}

// ddSinCos is sin x and cos x in double-double, |x| < geoTrigMax.
func ddSinCos(x float64) (sin, cos dd) {
	k := math.Round(x / ddPio2[0])
	r := dd{x, 0}
	if k != 0 {
		r = ddAdd(r, ddMulF(ddPio2Pair, k).neg())
		r = ddAdd(r, dd{-k * ddPio2[2], 0})
	}
	s, c := ddSinCosReduced(r)
	switch int64(k) & 3 {
	case 0:
		return s, c
	case 1:
		return c, s.neg()
	case 2:
		return s.neg(), c.neg()
	default:
		return c.neg(), s
	}
}

func geoSin(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.Abs(x) >= geoTrigMax {
		return math.Sin(x)
	}
	s, _ := ddSinCos(x)
	return s.hi + s.lo
}

func geoCos(x float64) float64 {
	if math.IsNaN(x) || math.Abs(x) >= geoTrigMax {
		return math.Cos(x)
	}
	_, c := ddSinCos(x)
	return c.hi + c.lo
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
	r = ddAdd(r, dd{ddPio2[2], 0})
	return r.hi + r.lo
}
