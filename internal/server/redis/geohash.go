package redis

import (
	"math"
)

// The geohash arithmetic of Redis 7.0's geo commands (src/geohash.c,
// src/geohash_helper.c), reimplemented: a position is a 52-bit integer,
// latitude and longitude each cut into 2^26 cells over Redis's ranges
// (longitude -180..180, latitude -85.05112878..85.05112878, the Web
// Mercator limits), the latitude's cell bits at the even positions and
// the longitude's at the odd ones. That integer, as a double, is the
// member's score in the sorted set.
//
// Every step is done in the same float64 operations, in the same order,
// as the C code, so positions, cells and search areas come out bit for
// bit; explicit float64 conversions keep the compiler from fusing a
// multiply and an add that C computes with two roundings. Sines, cosines
// and arcsines are rounded to the nearest double as glibc's are
// (geomath.go).

const (
	geoLongMin  = -180.0
	geoLongMax  = 180.0
	geoLatMin   = -85.05112878
	geoLatMax   = 85.05112878
	geoStepMax  = 26
	geoEarthR   = 6372797.560856 // meters: Redis's EARTH_RADIUS_IN_METERS
	geoMercator = 20037726.37    // MERCATOR_MAX
)

// geoPi and geoDR are M_PI and M_PI/180.0 as C computes them: a double
// divided by a double (a Go constant expression would be exact first).
var (
	geoPi = math.Pi
	geoDR = geoPi / 180.0
)

func geoDegRad(a float64) float64 { return a * geoDR }
func geoRadDeg(a float64) float64 { return a / geoDR }

// geoHash is a cell: its interleaved bits and its step (bits per axis).
type geoHash struct {
	bits uint64
	step uint
}

func (h geoHash) zero() bool { return h.bits == 0 && h.step == 0 }

// geoRange is one axis's extent.
type geoRange struct{ min, max float64 }

// geoArea is a cell's extent.
type geoArea struct{ lon, lat geoRange }

var (
	geoLonRange = geoRange{geoLongMin, geoLongMax}
	geoLatRange = geoRange{geoLatMin, geoLatMax}
)

// geoSpread puts the low 32 bits of v at the even bit positions.
func geoSpread(v uint64) uint64 {
	v &= 0xFFFFFFFF
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	v = (v | v<<8) & 0x00FF00FF00FF00FF
	v = (v | v<<4) & 0x0F0F0F0F0F0F0F0F
	v = (v | v<<2) & 0x3333333333333333
	v = (v | v<<1) & 0x5555555555555555
	return v
}

// geoSqueeze gathers the even bit positions of v into its low 32 bits.
func geoSqueeze(v uint64) uint64 {
	v &= 0x5555555555555555
	v = (v | v>>1) & 0x3333333333333333
	v = (v | v>>2) & 0x0F0F0F0F0F0F0F0F
	v = (v | v>>4) & 0x00FF00FF00FF00FF
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	v = (v | v>>16) & 0x00000000FFFFFFFF
	return v
}

// geoEncode is geohashEncode: the cell of (lon, lat) at step over the
// ranges, or false when the point is outside them.
func geoEncode(lonR, latR geoRange, lon, lat float64, step uint) (geoHash, bool) {
	if step > 32 || step == 0 || lon > geoLongMax || lon < geoLongMin || lat > geoLatMax || lat < geoLatMin {
		return geoHash{}, false
	}
	if lat < latR.min || lat > latR.max || lon < lonR.min || lon > lonR.max {
		return geoHash{step: step}, false
	}
	latOff := (lat - latR.min) / (latR.max - latR.min)
	lonOff := (lon - lonR.min) / (lonR.max - lonR.min)
	latOff *= float64(uint64(1) << step)
	lonOff *= float64(uint64(1) << step)
	// C converts the offsets to uint32_t: truncation, in range here.
	return geoHash{bits: geoSpread(uint64(uint32(latOff))) | geoSpread(uint64(uint32(lonOff)))<<1, step: step}, true
}

// geoDecode is geohashDecode: the cell's extent.
func geoDecode(lonR, latR geoRange, h geoHash) (geoArea, bool) {
	if h.zero() {
		return geoArea{}, false
	}
	ilat := uint32(geoSqueeze(h.bits))
	ilon := uint32(geoSqueeze(h.bits >> 1))
	latScale := latR.max - latR.min
	lonScale := lonR.max - lonR.min
	div := float64(uint64(1) << h.step)
	var a geoArea
	// ilat+1 is a uint32_t sum in C: it wraps.
	a.lat.min = latR.min + float64(float64(ilat)*1.0/div*latScale)
	a.lat.max = latR.min + float64(float64(ilat+1)*1.0/div*latScale)
	a.lon.min = lonR.min + float64(float64(ilon)*1.0/div*lonScale)
	a.lon.max = lonR.min + float64(float64(ilon+1)*1.0/div*lonScale)
	return a, true
}

// geoCUint64 is C's (uint64_t) conversion of a double as gcc compiles it
// for x86-64: below 2^63 a truncating conversion to int64 (anything out of
// its range, or -inf, giving 0x8000000000000000), else the same of
// x - 2^63 with the top bit flipped.
func geoCUint64(x float64) uint64 {
	const two63 = 9223372036854775808.0
	trunc := func(v float64) uint64 {
		if v >= -two63 && v < two63 {
			return uint64(int64(v))
		}
		return 1 << 63
	}
	if x < two63 {
		return trunc(x)
	}
	return trunc(x-two63) ^ 1<<63
}

// geoDecodeScore is decodeGeohash: the position a score stands for, the
// centre of its cell, held to the ranges.
func geoDecodeScore(score float64) (lon, lat float64) {
	a, ok := geoDecode(geoLonRange, geoLatRange, geoHash{bits: geoCUint64(score), step: geoStepMax})
	if !ok { // a step of 26 is never zero: kept for the shape of the C
		return 0, 0
	}
	lon = (a.lon.min + a.lon.max) / 2
	lon = min(max(lon, geoLongMin), geoLongMax)
	lat = (a.lat.min + a.lat.max) / 2
	lat = min(max(lat, geoLatMin), geoLatMax)
	return lon, lat
}

// geoLatOf and geoLonOf are geoDecodeScore's latitude and longitude of
// a score's bits (geoCUint64), each decoded alone with the same
// arithmetic.
func geoLatOf(bits uint64) float64 {
	ilat := uint32(geoSqueeze(bits))
	scale := geoLatRange.max - geoLatRange.min
	div := float64(uint64(1) << geoStepMax)
	lo := geoLatRange.min + float64(float64(ilat)*1.0/div*scale)
	hi := geoLatRange.min + float64(float64(ilat+1)*1.0/div*scale)
	return min(max((lo+hi)/2, geoLatMin), geoLatMax)
}

func geoLonOf(bits uint64) float64 {
	ilon := uint32(geoSqueeze(bits >> 1))
	scale := geoLonRange.max - geoLonRange.min
	div := float64(uint64(1) << geoStepMax)
	lo := geoLonRange.min + float64(float64(ilon)*1.0/div*scale)
	hi := geoLonRange.min + float64(float64(ilon+1)*1.0/div*scale)
	return min(max((lo+hi)/2, geoLongMin), geoLongMax)
}

// geoScore is the score GEOADD gives (lon, lat), already checked.
func geoScore(lon, lat float64) uint64 {
	h, _ := geoEncode(geoLonRange, geoLatRange, lon, lat, geoStepMax)
	return h.bits << (52 - h.step*2)
}

func geoMoveX(h *geoHash, d int) {
	if d == 0 {
		return
	}
	x := h.bits & 0xaaaaaaaaaaaaaaaa
	y := h.bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - h.step*2)
	if d > 0 {
		x = x + (zz + 1)
	} else {
		x = x | zz
		x = x - (zz + 1)
	}
	x &= 0xaaaaaaaaaaaaaaaa >> (64 - h.step*2)
	h.bits = x | y
}

func geoMoveY(h *geoHash, d int) {
	if d == 0 {
		return
	}
	x := h.bits & 0xaaaaaaaaaaaaaaaa
	y := h.bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - h.step*2)
	if d > 0 {
		y = y + (zz + 1)
	} else {
		y = y | zz
		y = y - (zz + 1)
	}
	y &= 0x5555555555555555 >> (64 - h.step*2)
	h.bits = x | y
}

// The neighbours, in the order Redis searches them after the centre.
const (
	geoNorth = iota
	geoSouth
	geoEast
	geoWest
	geoNorthEast
	geoNorthWest
	geoSouthEast
	geoSouthWest
)

func geoNeighbors(h geoHash) [8]geoHash {
	var n [8]geoHash
	moves := [8][2]int{geoNorth: {0, 1}, geoSouth: {0, -1}, geoEast: {1, 0}, geoWest: {-1, 0},
		geoNorthEast: {1, 1}, geoNorthWest: {-1, 1}, geoSouthEast: {1, -1}, geoSouthWest: {-1, -1}}
	for i, m := range moves {
		n[i] = h
		geoMoveX(&n[i], m[0])
		geoMoveY(&n[i], m[1])
	}
	return n
}

// Shapes.
const (
	geoCircle = iota + 1
	geoRect
)

// geoShape is a search area: a circle (radius) or a box (width, height)
// in the query's unit, conversion meters per unit, around lon, lat.
type geoShape struct {
	kind                  int
	lon, lat              float64
	conversion            float64
	radius, width, height float64
	// The centre in radians and its latitude's cosine, set by geoWithin.
	prepared                       bool
	lonr, latr, cosLat, cosLatFast float64
	// A circle's radius as bounds on the haversine term a (the square
	// of the sine of half the central angle): a point whose a is over
	// aHi is clearly outside, one under aLo clearly inside, with no
	// arcsine (aOK: the radius is under a quarter of the globe, where a
	// grows with the distance).
	aOK        bool
	aLo, aHi   float64
	hiAngle    float64 // the half central angle aHi is the squared sine of
	sinLatFast float64 // the centre latitude's sine, for geoCosNear
	lonK       float64 // a lower bound of cos lat1 cos lat2 in the band (geoWithin)
}

// geoSinSmall is sin x for the quick estimate: a Taylor polynomial for
// small x (|x| < 0.05: error under 2e-13 relative), math.Sin otherwise.
func geoSinSmall(x float64) float64 {
	if x > -0.05 && x < 0.05 {
		// Multiplications by the reciprocals: a division takes as
		// long as the rest of the polynomial (14 % of GEOSEARCH's
		// profile was this function).
		x2 := x * x
		return x * (1 - x2*(1.0/6)*(1-x2*(1.0/20)*(1-x2*(1.0/42))))
	}
	return math.Sin(x)
}

// geoAsinSmall is asin x for the quick estimate, 0 <= x: a Taylor
// polynomial for small x (x < 0.05, distances under about 600 km: error
// under 2e-12 relative), math.Asin otherwise.
func geoAsinSmall(x float64) float64 {
	if x < 0.05 {
		x2 := x * x
		return x * (1 + x2*(1.0/6+x2*(3.0/40+x2*(5.0/112+x2*35.0/1152))))
	}
	return math.Asin(x)
}

// geoCosNear is cos(c+d) for the quick estimate, from cos c and sin c:
// polynomials in d when it is small (|d| < 0.01: error under 1e-12),
// math.Cos otherwise.
func geoCosNear(cosc, sinc, c, d float64) float64 {
	if d > -0.01 && d < 0.01 {
		d2 := d * d
		return cosc*(1-d2*0.5*(1-d2*(1.0/12))) - sinc*d*(1-d2*(1.0/6)*(1-d2*(1.0/20)))
	}
	return math.Cos(c + d)
}

// geoEstimateSteps is geohashEstimateStepsByRadius.
func geoEstimateSteps(meters, lat float64) uint {
	if meters == 0 {
		return 26
	}
	step := 1
	for meters < geoMercator {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint(min(max(step, 1), 26))
}

// geoBounds is geohashBoundingBox: min lon, min lat, max lon, max lat.
func geoBounds(s *geoShape) [4]float64 {
	var height, width float64
	if s.kind == geoCircle {
		height, width = s.conversion*s.radius, s.conversion*s.radius
	} else {
		height, width = s.conversion*(s.height/2), s.conversion*(s.width/2)
	}
	latDelta := geoRadDeg(height / geoEarthR)
	lonDeltaTop := geoRadDeg(width / geoEarthR / geoCos(geoDegRad(s.lat+latDelta)))
	lonDeltaBottom := geoRadDeg(width / geoEarthR / geoCos(geoDegRad(s.lat-latDelta)))
	var b [4]float64
	if s.lat < 0 {
		b[0], b[2] = s.lon-lonDeltaBottom, s.lon+lonDeltaBottom
	} else {
		b[0], b[2] = s.lon-lonDeltaTop, s.lon+lonDeltaTop
	}
	b[1], b[3] = s.lat-latDelta, s.lat+latDelta
	return b
}

// geoAreas is geohashCalculateAreasByShapeWGS84: the centre cell and its
// neighbours to search, the useless ones zeroed.
func geoAreas(s *geoShape) (geoHash, [8]geoHash) {
	b := geoBounds(s)
	minLon, minLat, maxLon, maxLat := b[0], b[1], b[2], b[3]
	var meters float64
	if s.kind == geoCircle {
		meters = s.radius
	} else {
		meters = math.Sqrt(float64(s.width/2*(s.width/2)) + float64(s.height/2*(s.height/2)))
	}
	meters *= s.conversion
	steps := geoEstimateSteps(meters, s.lat)
	h, _ := geoEncode(geoLonRange, geoLatRange, s.lon, s.lat, steps)
	n := geoNeighbors(h)
	area, _ := geoDecode(geoLonRange, geoLatRange, h)

	decrease := false
	north, _ := geoDecode(geoLonRange, geoLatRange, n[geoNorth])
	south, _ := geoDecode(geoLonRange, geoLatRange, n[geoSouth])
	east, _ := geoDecode(geoLonRange, geoLatRange, n[geoEast])
	west, _ := geoDecode(geoLonRange, geoLatRange, n[geoWest])
	if north.lat.max < maxLat || south.lat.min > minLat || east.lon.max < maxLon || west.lon.min > minLon {
		decrease = true
	}
	if steps > 1 && decrease {
		steps--
		h, _ = geoEncode(geoLonRange, geoLatRange, s.lon, s.lat, steps)
		n = geoNeighbors(h)
		area, _ = geoDecode(geoLonRange, geoLatRange, h)
	}
	if steps >= 2 {
		if area.lat.min < minLat {
			n[geoSouth], n[geoSouthWest], n[geoSouthEast] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.lat.max > maxLat {
			n[geoNorth], n[geoNorthEast], n[geoNorthWest] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.lon.min < minLon {
			n[geoWest], n[geoSouthWest], n[geoNorthWest] = geoHash{}, geoHash{}, geoHash{}
		}
		if area.lon.max > maxLon {
			n[geoEast], n[geoSouthEast], n[geoNorthEast] = geoHash{}, geoHash{}, geoHash{}
		}
	}
	return h, n
}

// geoDistance is geohashGetDistance of Redis 7.0: the haversine formula
// on a sphere of Redis's earth radius.
func geoDistance(lon1, lat1, lon2, lat2 float64) float64 {
	lat1r, lat2r := geoDegRad(lat1), geoDegRad(lat2)
	return geoHaversine(geoDegRad(lon1), lat1r, geoDegRad(lon2), lat2r, geoCos(lat1r), geoCos(lat2r))
}

// geoHaversine is geoDistance from radians, the latitudes' cosines
// given (a search computes its centre's once).
func geoHaversine(lon1r, lat1r, lon2r, lat2r, cos1, cos2 float64) float64 {
	u := geoSin((lat2r - lat1r) / 2)
	v := geoSin((lon2r - lon1r) / 2)
	a := float64(u*u) + float64(float64(cos1*cos2*v)*v)
	return 2.0 * geoEarthR * geoAsin(math.Sqrt(a))
}

// geoClearlyOver reports whether a distance computed with the math
// package's sine, cosine and arcsine (a few ulps from the rounded ones)
// is past limit by far more than that error: then the exact distance is
// past it too, and the point is left out without computing it.
func geoClearlyOver(fast, limit float64) bool {
	return fast > limit*(1+1e-9)+1e-9
}

// geoHaversineFast is geoHaversine with the math package's functions.
func geoHaversineFast(lon1r, lat1r, lon2r, lat2r, cos1, cos2 float64) float64 {
	u := math.Sin((lat2r - lat1r) / 2)
	v := math.Sin((lon2r - lon1r) / 2)
	return 2.0 * geoEarthR * math.Asin(math.Sqrt(u*u+cos1*cos2*v*v))
}

// geoWithin is geoWithinShape: whether the point of score is in s, with
// its position and its distance from s's centre in meters. The box test
// measures along the point's parallel and along its meridian first, as
// Redis 7.0 does. A point clearly outside by a quick estimate is left
// out before the exact computation, and one clearly inside keeps the
// estimate (exact false): the exact distance, glibc's digit for digit,
// is computed later only if a reply prints it or an order needs it
// (geoExact, geoPointCmp).
func geoWithin(s *geoShape, score float64) (lon, lat, dist float64, exact, ok bool) {
	s.prepare()
	var lonr, latr float64
	decoded := false
	if s.kind == geoCircle && s.aOK {
		// The test on a, then the arcsine only for the points kept. A
		// point whose half latitude difference alone exceeds hiAngle is
		// out without a sine (u = sin of it, and sin increases), and
		// without decoding its longitude.
		bits := geoCUint64(score)
		lat = geoLatOf(bits)
		latr = geoDegRad(lat)
		half := (latr - s.latr) / 2
		if half > s.hiAngle || -half > s.hiAngle {
			return 0, lat, 0, false, false
		}
		lon = geoLonOf(bits)
		lonr, decoded = geoDegRad(lon), true
		// The longitude alone: a >= cos lat1 cos lat2 sin^2(t), t half
		// the longitude difference, where cos lat2 >= lonK's bound
		// (lat2 is within the band) and sin t >= t - t^3/6 >= 0 for
		// 0 <= t < 2. Most of the cells' points beyond the circle go
		// here, without a sine.
		if t := math.Abs(lonr-s.lonr) / 2; t < 2 {
			st := t * (1 - t*t*(1.0/6))
			if s.lonK*st*st > s.aHi {
				return lon, lat, 0, false, false
			}
		}
		u := geoSinSmall(half)
		if u*u > s.aHi {
			return lon, lat, 0, false, false // too far north or south already
		}
		v := geoSinSmall((lonr - s.lonr) / 2)
		a := u*u + s.cosLatFast*geoCosNear(s.cosLatFast, s.sinLatFast, s.latr, latr-s.latr)*v*v
		if a > s.aHi {
			return lon, lat, 0, false, false
		}
		if a < s.aLo {
			return lon, lat, 2.0 * geoEarthR * geoAsinSmall(math.Sqrt(a)), false, true
		}
	}
	if !decoded {
		lon, lat = geoDecodeScore(score)
		lonr, latr = geoDegRad(lon), geoDegRad(lat)
	}
	cosFast := math.Cos(latr)
	if s.kind == geoCircle {
		limit := s.radius * s.conversion
		fast := geoHaversineFast(s.lonr, s.latr, lonr, latr, s.cosLatFast, cosFast)
		if geoClearlyOver(fast, limit) {
			return lon, lat, 0, false, false
		}
		if geoClearlyUnder(fast, limit) {
			return lon, lat, fast, false, true
		}
		dist = geoHaversine(s.lonr, s.latr, lonr, latr, s.cosLat, geoCos(latr))
		return lon, lat, dist, true, !(dist > limit)
	}
	w, h := s.width*s.conversion, s.height*s.conversion
	if geoClearlyOver(geoHaversineFast(lonr, latr, s.lonr, latr, cosFast, cosFast), w/2) ||
		geoClearlyOver(geoHaversineFast(lonr, latr, lonr, s.latr, cosFast, s.cosLatFast), h/2) {
		return lon, lat, 0, false, false
	}
	cosLat := geoCos(latr)
	lonDist := geoHaversine(lonr, latr, s.lonr, latr, cosLat, cosLat)
	latDist := geoHaversine(lonr, latr, lonr, s.latr, cosLat, s.cosLat)
	if lonDist > w/2 || latDist > h/2 {
		return lon, lat, 0, false, false
	}
	return lon, lat, geoHaversineFast(s.lonr, s.latr, lonr, latr, s.cosLatFast, cosFast), false, true
}

// prepare computes the centre's radians and cosines once per query.
func (s *geoShape) prepare() {
	if !s.prepared {
		s.lonr, s.latr = geoDegRad(s.lon), geoDegRad(s.lat)
		s.cosLat = geoCos(s.latr)
		s.cosLatFast = math.Cos(s.latr)
		s.sinLatFast = math.Sin(s.latr)
		if limit := s.radius * s.conversion; s.kind == geoCircle && limit >= 0 {
			// The bounds on a for the distances geoClearlyOver and
			// geoClearlyUnder let through, a little wider still.
			hi := (limit*(1+2e-9) + 2e-9) / (2 * geoEarthR)
			lo := (limit*(1-2e-9) - 2e-9) / (2 * geoEarthR)
			if hi < 1.5 {
				sh := math.Sin(hi)
				s.aHi, s.hiAngle = sh*sh, hi
				// cos lat1 times the least cos lat2 in the band
				// geoWithin keeps, a hair smaller for rounding.
				s.lonK = s.cosLatFast * math.Cos(min(math.Abs(s.latr)+2*hi, math.Pi/2)) * (1 - 1e-12)
				if lo > 0 {
					sl := math.Sin(lo)
					s.aLo = sl * sl
				}
				s.aOK = true
			}
		}
		s.prepared = true
	}
}

// geoClearlyUnder reports whether a quick distance is under limit by far
// more than its error (geoClearlyOver's bound), so the exact one is too.
func geoClearlyUnder(fast, limit float64) bool {
	return fast < limit*(1-1e-9)-1e-9
}

// geoNear reports whether two distances, either of them quick, are too
// close for the quick ones to order them as the exact ones would.
func geoNear(a, b float64) bool {
	return math.Abs(a-b) <= 2*(max(math.Abs(a), math.Abs(b))*1e-9+1e-9)
}

// geoExactDist is the exact distance from s's centre to the point of
// score, as geoWithin computes it when it must.
func geoExactDist(s *geoShape, score float64) float64 {
	s.prepare()
	lon, lat := geoDecodeScore(score)
	lonr, latr := geoDegRad(lon), geoDegRad(lat)
	return geoHaversine(s.lonr, s.latr, lonr, latr, s.cosLat, geoCos(latr))
}
