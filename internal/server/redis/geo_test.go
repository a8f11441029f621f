package redis

import (
	"cmp"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// FuzzGeoArgs feeds the geo search argument parser arbitrary arguments
// for every search command, with and without a source key: it must never
// panic, and what it accepts must be a search that can run (a shape of
// known kind, a unit, a non-negative size, a centre within Redis's
// limits), which then goes through the cell arithmetic and the sorts.
func FuzzGeoArgs(f *testing.F) {
	f.Add("GEORADIUS k 15 37 200 km WITHDIST WITHCOORD COUNT 3 ANY ASC", uint64(3479099956230698))
	f.Add("GEOSEARCH k FROMMEMBER m BYBOX 1e10 0 mi COUNT 1 DESC WITHHASH", uint64(0))
	f.Add("GEOSEARCHSTORE d k FROMLONLAT -180 85.05112878 BYRADIUS inf ft STOREDIST", uint64(1<<52))
	f.Add("GEORADIUSBYMEMBER k m 0 M STORE d STOREDIST e COUNT 9223372036854775807", uint64(13510798882111488))
	f.Add("GEORADIUS_RO k 0x10 -0 1e-300 KM count -1", uint64(1))
	f.Fuzz(func(t *testing.T, args string, score uint64) {
		var argv [][]byte
		for _, a := range splitFuzzArgs(args) {
			argv = append(argv, []byte(a))
		}
		if len(argv) < 2 {
			return
		}
		variants := []struct {
			name  string
			flags int
			arity int
		}{
			{"georadius", geoFromCoords, 6}, {"georadius_ro", geoFromCoords | geoNoStore, 6},
			{"georadiusbymember", geoFromMember, 5}, {"georadiusbymember_ro", geoFromMember | geoNoStore, 5},
			{"geosearch", geoSearchCmd, 7}, {"geosearchstore", geoSearchCmd | geoSearchStore, 8},
		}
		lookup := func(m []byte) (float64, bool) { return float64(score), len(m)%2 == 0 }
		for _, v := range variants {
			if len(argv) < v.arity {
				continue
			}
			for _, exists := range []bool{false, true} {
				q, errMsg := parseGeoQuery(argv, v.flags, exists, lookup)
				if errMsg != "" || !exists {
					continue
				}
				s := &q.shape
				if s.kind != geoCircle && s.kind != geoRect || s.conversion <= 0 || s.radius < 0 || s.width < 0 || s.height < 0 ||
					s.lon < geoLongMin || s.lon > geoLongMax || s.lat < geoLatMin || s.lat > geoLatMax || q.count < 0 || q.any && q.count == 0 {
					t.Fatalf("%s %q: accepted %+v", v.name, args, q)
				}
				centre, n := geoAreas(s)
				for _, c := range append(n[:], centre) {
					if !c.zero() && c.step > 26 {
						t.Fatalf("%s %q: cell step %d", v.name, args, c.step)
					}
				}
				p := make([]geoPoint, 1+int(score%50))
				for i := range p {
					p[i].sc = float64((score + uint64(i)*7919) % (1 << 52))
					_, _, p[i].dist, p[i].exact, _ = geoWithin(s, p[i].sc)
				}
				geoSortPoints(s, p, q.sort|geoSortAsc, 1+int(score%uint64(len(p))))
			}
		}
	})
}

// TestGeoTrig checks sin, cos and asin against a 300-bit evaluation: the
// double nearest the exact value, always.
func TestGeoTrig(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	series := func(x float64, sin bool) float64 {
		X := new(big.Float).SetPrec(300).SetFloat64(x)
		X2 := new(big.Float).SetPrec(300).Mul(X, X)
		term := new(big.Float).SetPrec(300).SetInt64(1)
		n := 0
		if sin {
			term.Set(X)
			n = 1
		}
		sum := new(big.Float).SetPrec(300)
		for ; n < 200; n += 2 {
			sum.Add(sum, term)
			term.Mul(term, X2)
			term.Quo(term, new(big.Float).SetPrec(300).SetInt64(int64(-(n+1)*(n+2))))
		}
		f, _ := sum.Float64()
		return f
	}
	for range 3000 {
		x := (r.Float64()*2 - 1) * []float64{1e-6, 0.1, 1, 3.2, 10}[r.IntN(5)]
		if got, want := geoSin(x), series(x, true); got != want {
			t.Fatalf("sin(%v) = %v, want %v", x, got, want)
		}
		if got, want := geoCos(x), series(x, false); got != want {
			t.Fatalf("cos(%v) = %v, want %v", x, got, want)
		}
		// asin: the nearest double z has sin z closest to y of its
		// neighbours (sin is monotonic there).
		y := 0.125 + r.Float64()*[]float64{0.1, 0.375, 0.875}[r.IntN(3)] // below 1/8: glibc's (TestGeoAsinGlibc)
		z := geoAsin(y)
		dist := func(c float64) *big.Float {
			X := new(big.Float).SetPrec(300).SetFloat64(c)
			X2 := new(big.Float).SetPrec(300).Mul(X, X)
			term := new(big.Float).SetPrec(300).Set(X)
			sum := new(big.Float).SetPrec(300)
			for n := 1; n < 160; n += 2 {
				sum.Add(sum, term)
				term.Mul(term, X2)
				term.Quo(term, new(big.Float).SetPrec(300).SetInt64(int64(-(n+1)*(n+2))))
			}
			return sum.Abs(sum.Sub(sum, new(big.Float).SetFloat64(y)))
		}
		if y < 0.999 { // near 1 a one-ulp step in z barely moves sin z
			for _, c := range []float64{math.Nextafter(z, 0), math.Nextafter(z, 2)} {
				if dist(c).Cmp(dist(z)) < 0 {
					t.Fatalf("asin(%v) = %v, but %v is nearer", y, z, c)
				}
			}
		}
	}
}

// TestGeoAsinGlibc: below 1/8 the arcsine is glibc's to the bit (as its
// FMA build computes it), not always the nearest double: arguments and
// results from libm 2.36 on x86-64, the first two the near-halfway cases
// where a STOREDIST score once differed from Redis's.
func TestGeoAsinGlibc(t *testing.T) {
	for _, c := range [][2]float64{
		{0x1.42812b0dad631p-6, 0x1.4286802d711c8p-6}, {0x1.7167a4bc4be53p-7, 0x1.7169a58d288cp-7},
		{0x1.ef3286fbde651p-5, 0x1.ef7fdbf5fd12dp-5}, {0x1.b5ee674b6bdcdp-5, 0x1.b623ded86b2a5p-5},
		{0x1.680860fad010cp-5, 0x1.6826136933f57p-5}, {0x1.7ca9f742f953fp-23, 0x1.7ca9f742f9562p-23},
		{0x1.47ce01028f9cp-17, 0x1.47ce0102a6013p-17}, {0x1.46397e028c73p-23, 0x1.46397e028c746p-23},
		{0x1.cb37e4cb966fdp-5, 0x1.cb758cf2d51b3p-5}, {0x1.c9ba9cb793754p-17, 0x1.c9ba9cb7d06e3p-17},
		{0x1.193de802327bdp-11, 0x1.193de8e47d26ep-11}, {0x1.c52d79e38a5afp-6, 0x1.c53c462f0c8dp-6},
		{0x1.0648c7220c919p-15, 0x1.0648c722c41d7p-15}, {0x1.165f16d22cbe3p-5, 0x1.166ccf94f8991p-5},
		{0x1.06648b720cc91p-13, 0x1.06648b7d892bdp-13}, {0x1.d857116bb0ae2p-19, 0x1.d857116bb4de2p-19},
		{0x1.243d85aa487b1p-24, 0x1.243d85aa487b5p-24}, {0x1.a4bb4db34976ap-15, 0x1.a4bb4db63f123p-15},
		{0x1.9124bbcb22497p-8, 0x1.91255ff4df587p-8}, {0x1.f07cb4bfe0f97p-16, 0x1.f07cb4c118366p-16},
	} {
		if got := geoAsin(c[0]); got != c[1] {
			t.Errorf("asin(%x) = %x, glibc %x", c[0], got, c[1])
		}
		if got := geoAsin(-c[0]); got != -c[1] {
			t.Errorf("asin(%x) = %x, glibc %x", -c[0], got, -c[1])
		}
	}
}

// TestGeoPartialSort checks the partial sort: the first n results are
// the n nearest, in order, whatever the ties.
func TestGeoPartialSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		p := make([]geoPoint, 1+r.IntN(120))
		for i := range p {
			p[i].dist, p[i].exact = float64(r.IntN(1+len(p)/3)), true
		}
		want := slices.Clone(p)
		slices.SortStableFunc(want, func(a, b geoPoint) int { return cmp.Compare(a.dist, b.dist) })
		n := 1 + r.IntN(len(p))
		geoSortPoints(nil, p, geoSortAsc, n)
		for i := range n {
			if p[i].dist != want[i].dist {
				t.Fatalf("rank %d: %v, want %v", i, p[i].dist, want[i].dist)
			}
		}
	}
}

// TestGeoScore checks scores against ones redis-server 7.0.15 gave.
func TestGeoScore(t *testing.T) {
	for _, c := range []struct {
		lon, lat float64
		want     uint64
	}{{13.361389, 38.115556, 3479099956230698}, {15.087269, 37.502669, 3479447370796909}, {180, 85.05112878, 13510798882111488}} {
		if got := geoScore(c.lon, c.lat); got != c.want {
			t.Errorf("geoScore(%v, %v) = %d, want %d", c.lon, c.lat, got, c.want)
		}
	}
}

// TestGeoLatLonOf: decoding a score's latitude and longitude apart gives
// geoDecodeScore's values bit for bit.
func TestGeoLatLonOf(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 200000 {
		score := float64(r.Uint64() >> 12) // 52-bit scores
		if i < 4 {
			score = []float64{0, 1<<52 - 1, 3479099956230698, 1 << 51}[i]
		}
		lon, lat := geoDecodeScore(score)
		bits := geoCUint64(score)
		if gl, gt := geoLonOf(bits), geoLatOf(bits); math.Float64bits(gl) != math.Float64bits(lon) || math.Float64bits(gt) != math.Float64bits(lat) {
			t.Fatalf("score %v: geoLonOf/geoLatOf %v %v, geoDecodeScore %v %v", score, gl, gt, lon, lat)
		}
	}
}

// TestGeoQuickTrig: the quick estimate's polynomials stay within their
// stated errors of the math package's functions (the margins of
// geoClearlyOver and geoClearlyUnder are a thousand times wider).
func TestGeoQuickTrig(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		x := (r.Float64()*2 - 1) * 0.06
		if got, want := geoSinSmall(x), math.Sin(x); math.Abs(got-want) > 2e-13*math.Abs(want)+1e-300 {
			t.Fatalf("geoSinSmall(%v) = %v, math.Sin %v", x, got, want)
		}
		if y := r.Float64() * 0.06; true {
			if got, want := geoAsinSmall(y), math.Asin(y); math.Abs(got-want) > 2e-12*want+1e-300 {
				t.Fatalf("geoAsinSmall(%v) = %v, math.Asin %v", y, got, want)
			}
		}
		c := (r.Float64()*2 - 1) * 1.5
		d := (r.Float64()*2 - 1) * 0.012
		if got, want := geoCosNear(math.Cos(c), math.Sin(c), c, d), math.Cos(c+d); math.Abs(got-want) > 1e-12 {
			t.Fatalf("geoCosNear(%v, %v) = %v, math.Cos %v", c, d, got, want)
		}
	}
}

// TestGeoPrintedDist: the distance WITHDIST prints from the quick
// estimate is the exact distance's, digit for digit, in every unit.
func TestGeoPrintedDist(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, conv := range []float64{1, 1000, 1609.34, 0.3048} {
		for range 20000 {
			s := &geoShape{kind: geoCircle, lon: r.Float64()*360 - 180, lat: r.Float64()*170 - 85, conversion: conv, radius: 1e9}
			s.prepare()
			lon := s.lon + (r.Float64()*2-1)*r.Float64()
			lat := max(-85, min(85, s.lat+(r.Float64()*2-1)*r.Float64()))
			sc := float64(geoScore(lon, lat))
			lonD, latD := geoDecodeScore(sc)
			p := &geoPoint{sc: sc, dist: geoHaversineFast(s.lonr, s.latr, geoDegRad(lonD), geoDegRad(latD), s.cosLatFast, math.Cos(geoDegRad(latD)))}
			got := string(geoAppendDist(nil, geoPrintedDist(s, p)))
			want := string(geoAppendDist(nil, geoExactDist(s, sc)/conv))
			if got != want {
				t.Fatalf("unit %v: printed %s, exact %s", conv, got, want)
			}
		}
	}
}

// TestGeoAppendDist: distances print as Redis 7.2's fixedpoint_d2string
// with 4 decimals prints them (its own unit test's cases), rounding
// d*10^4 half to even where "%.4f" (Redis 7.0) rounds the exact decimal.
func TestGeoAppendDist(t *testing.T) {
	for _, c := range []struct {
		d    float64
		want string
	}{
		{0, "0.0000"}, {math.Copysign(0, -1), "0.0000"}, {0.0001, "0.0001"}, {6.0642951598391699e-05, "0.0001"},
		{0.01, "0.0100"}, {-0.01, "-0.0100"}, {10.01, "10.0100"}, {1e-9, "0.0000"}, {-1e-9, "0.0000"},
		{18919844.58907, "18919844.5891"},
		// Ties after the multiplication: "%.4f" gives 0.0001, 0.0003, 0.0005.
		{5.0000000000000002e-05, "0.0000"}, {0.00025000000000000001, "0.0002"}, {0.00045000000000000004, "0.0004"},
		{0.00035, "0.0004"}, // "%.4f": 0.0003
		// llrint's LLONG_MIN for what has no int64.
		{math.Inf(1), "-922337203685477.5808"}, {math.NaN(), "-922337203685477.5808"}, {1e300, "-922337203685477.5808"},
	} {
		if got := string(geoAppendDist(nil, c.d)); got != c.want {
			t.Errorf("geoAppendDist(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
