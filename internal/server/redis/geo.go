package redis

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The geo commands (Redis 7.0's src/geo.c) over sorted sets: a member's
// score is its position's 52-bit geohash (geohash.go). GEOADD is ZADD
// with computed scores; the searches read the cells around the centre as
// score ranges, as Redis does, so their replies, their order included,
// are Redis's. Command metadata (flags, key specs, docs) comes from
// cmddata.go like every other command's.

func geoCommands() []respCommand {
	r, w := []string{"readonly"}, []string{"write", "denyoom"}
	one := oneKey("geo")
	radius := func(name string, arity int, flags []string, run func(*conn, [][]byte)) respCommand {
		c := one(name, arity, flags, "3.2.0", "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.",
			"Queries a geospatial index for members within a distance from a coordinate or member.", nil, run)
		if slices.Contains(flags, "write") {
			c.flags = append(slices.Clone(flags), "movablekeys")
			c.keysOf = georadiusKeys
		}
		return c
	}
	return []respCommand{
		one("geoadd", -5, w, "3.2.0", "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
			"Adds one or more members to a geospatial index. The key is created if it doesn't exist.", nil, cmdGeoAdd),
		one("geodist", -4, r, "3.2.0", "O(log(N))", "Returns the distance between two members of a geospatial index.", nil, cmdGeoDist),
		one("geohash", -2, r, "3.2.0", "O(log(N)) for each member requested.", "Returns members from a geospatial index as geohash strings.", nil, cmdGeoHash),
		one("geopos", -2, r, "3.2.0", "O(1) for each member requested.", "Returns the longitude and latitude of members from a geospatial index.", nil, cmdGeoPos),
		radius("georadius", -6, w, cmdGeoRadius),
		radius("georadius_ro", -6, r, cmdGeoRadiusRO),
		radius("georadiusbymember", -5, w, cmdGeoRadiusByMember),
		radius("georadiusbymember_ro", -5, r, cmdGeoRadiusByMemberRO),
		one("geosearch", -7, r, "6.2.0", "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape",
			"Queries a geospatial index for members inside an area of a box or a circle.", nil, cmdGeoSearch),
		{name: "geosearchstore", arity: -8, flags: w, firstKey: 1, lastKey: 2, step: 1, group: "geo", since: "6.2.0",
			complexity: "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape",
			summary:    "Queries a geospatial index for members inside an area of a box or a circle, optionally stores the result.", run: cmdGeoSearchStore},
	}
}

// georadiusKeys are the keys of GEORADIUS and GEORADIUSBYMEMBER as their
// key specs find them (what cluster routing checks): the source, and the
// argument after the first STORE and after the first STOREDIST from the
// options on (neither being the last argument).
func georadiusKeys(argv [][]byte, dst [][]byte) ([][]byte, bool) {
	dst = append(dst, argv[1])
	from := 6
	if is(argv[0], "georadiusbymember") {
		from = 5
	}
	for _, kw := range []string{"store", "storedist"} {
		for i := from; i < len(argv)-1; i++ {
			if is(argv[i], kw) {
				dst = append(dst, argv[i+1])
				break
			}
		}
	}
	return dst, true
}

// Errors.
const (
	errGeoMember = "ERR could not decode requested zset member"
	errGeoUnit   = "ERR unsupported unit provided. please use M, KM, FT, MI"
)

// geoCFloat formats x as C's "%f" does.
func geoCFloat(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'f', 6, 64)
}

// geoLonLat reads a longitude and a latitude as extractLongLatOrReply.
func geoLonLat(lon, lat []byte) (x, y float64, errMsg string) {
	var ok bool
	if x, ok = parseZScore(lon); !ok {
		return 0, 0, errNotFloat
	}
	if y, ok = parseZScore(lat); !ok {
		return 0, 0, errNotFloat
	}
	if x < geoLongMin || x > geoLongMax || y < geoLatMin || y > geoLatMax {
		return 0, 0, "ERR invalid longitude,latitude pair " + geoCFloat(x) + "," + geoCFloat(y)
	}
	return x, y, ""
}

// geoUnit is extractUnitOrReply: meters per unit, or 0.
func geoUnit(u []byte) float64 {
	switch {
	case is(u, "m"):
		return 1
	case is(u, "km"):
		return 1000
	case is(u, "ft"):
		return 0.3048
	case is(u, "mi"):
		return 1609.34
	}
	return 0
}

// geoDouble reads a double as getDoubleFromObjectOrReply with msg.
func geoDouble(b []byte, msg string) (float64, string) {
	v, ok := parseZScore(b)
	if !ok {
		return 0, "ERR " + msg
	}
	return v, ""
}

// cmdGeoAdd is GEOADD key [NX|XX] [CH] longitude latitude member ...: ZADD
// of the members with their positions' scores.
func cmdGeoAdd(rc *conn, argv [][]byte) {
	var f zaddFlags
	i := 2
options:
	for ; i < len(argv); i++ {
		switch a := argv[i]; {
		case is(a, "nx"):
			f.nx = true
		case is(a, "xx"):
			f.xx = true
		case is(a, "ch"):
			f.ch = true
		default:
			break options
		}
	}
	if (len(argv)-i)%3 != 0 || f.nx && f.xx {
		rc.w.Error(errSyntax)
		return
	}
	zargv := make([][]byte, 2, 2+(len(argv)-i)/3*2)
	zargv[0], zargv[1] = []byte("zadd"), argv[1]
	for j := i; j < len(argv); j += 3 {
		lon, lat, errMsg := geoLonLat(argv[j], argv[j+1])
		if errMsg != "" {
			rc.w.Error(errMsg)
			return
		}
		zargv = append(zargv, strconv.AppendUint(nil, geoScore(lon, lat), 10), argv[j+2])
	}
	rc.zadd(zargv, 2, f)
}

// cmdGeoDist is GEODIST key member1 member2 [M|KM|FT|MI].
func cmdGeoDist(rc *conn, argv [][]byte) {
	toMeter := 1.0
	if len(argv) == 5 {
		if toMeter = geoUnit(argv[4]); toMeter == 0 {
			rc.w.Error(errGeoUnit)
			return
		}
	} else if len(argv) > 5 {
		rc.w.Error(errSyntax)
		return
	}
	var z store.ZSet
	var s1, s2 float64
	found := false
	err := rc.st.ViewZSet(argv[1], &z, func() error {
		var ok1, ok2 bool
		s1, ok1 = z.Score(argv[2])
		s2, ok2 = z.Score(argv[3])
		found = ok1 && ok2
		return nil
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case !found:
		rc.w.Null()
	default:
		lon1, lat1 := geoDecodeScore(s1)
		lon2, lat2 := geoDecodeScore(s2)
		rc.geoWriteDist(geoDistance(lon1, lat1, lon2, lat2) / toMeter)
	}
}

// geoWriteDist writes a distance as Redis 7.2's addReplyDoubleDistance:
// fixedpoint_d2string with 4 decimals (geoAppendDist), a bulk string in
// RESP3 too.
func (rc *conn) geoWriteDist(d float64) {
	rc.w.Bulk(geoAppendDist(rc.num[:0], d)) // rc.num: no allocation per distance
}

// geoPrintedDist is the distance WITHDIST prints for p, in the query's
// unit: the quick estimate when every value its error allows prints the
// same four decimals (so the exact one does too), else the exact one.
// Four decimals of a meter or more leave the estimate's error (1e-9)
// far from a rounding boundary but for about one point in 10^4.
func geoPrintedDist(s *geoShape, p *geoPoint) float64 {
	d := p.dist / s.conversion
	if !p.exact {
		// d±eps print alike when they round to the same ten-thousandth:
		// tested on d*10^4, whose own rounding error (1e-16 relative) is
		// far below the margin kept from the boundary.
		eps := 4 * (p.dist*1e-9 + 1e-9) / s.conversion
		lo, hi := (d-eps)*1e4+0.5, (d+eps)*1e4+0.5
		margin := 1e-9 * max(hi, 1)
		if d-eps < 0 || hi > 1<<52 || math.Floor(lo-margin) != math.Floor(hi+margin) {
			geoExact(s, p)
			d = p.dist / s.conversion
		}
	}
	return d
}

func geoAppendDist(dst []byte, d float64) []byte {
	// fixedpoint_d2string(d, 4): llrint(d * 10^4), rounding half to even,
	// its digits with a point before the last four. llrint of a NaN, an
	// infinity or a value past int64 gives x86's "integer indefinite",
	// LLONG_MIN (Go's conversion is unspecified there: done by hand).
	if d == 0 {
		return append(dst, "0.0000"...)
	}
	r := math.RoundToEven(d * 1e4)
	v := uint64(1) << 63 // LLONG_MIN's magnitude
	neg := true
	if r >= -(1<<63) && r < 1<<63 {
		sv := int64(r)
		neg = sv < 0
		v = uint64(sv)
		if neg {
			v = -v
		}
	}
	if neg {
		dst = append(dst, '-')
	}
	var digits [20]byte
	num := strconv.AppendUint(digits[:0], v, 10)
	if len(num) <= 4 { // "0.0042"
		dst = append(dst, '0', '.')
		for range 4 - len(num) {
			dst = append(dst, '0')
		}
		return append(dst, num...)
	}
	dst = append(dst, num[:len(num)-4]...)
	dst = append(dst, '.')
	return append(dst, num[len(num)-4:]...)
}

// geoWriteCoord writes a coordinate as addReplyHumanLongDouble: "%.17Lf"
// with trailing zeros cut, a bulk string in RESP2, a double in RESP3.
func (rc *conn) geoWriteCoord(x float64) {
	var buf [64]byte
	b := strconv.AppendFloat(buf[:0], x, 'f', 17, 64)
	n := len(b)
	for b[n-1] == '0' {
		n--
	}
	if b[n-1] == '.' {
		n--
	}
	b = b[:n]
	if string(b) == "-0" {
		b = append(b[:0], '0')
	}
	if rc.w.RESP3() {
		rc.w.Raw([]byte{','})
		rc.w.Raw(b)
		rc.w.Raw([]byte("\r\n"))
		return
	}
	rc.w.Bulk(b)
}

// geoLookup reads the scores of members (argv[2:]) of key, reporting
// which were found.
func (rc *conn) geoLookup(argv [][]byte) (scores []float64, found []bool, err error) {
	var z store.ZSet
	n := len(argv) - 2
	scores, found = make([]float64, n), make([]bool, n)
	err = rc.st.ViewZSet(argv[1], &z, func() error {
		for i, m := range argv[2:] {
			scores[i], found[i] = z.Score(m)
		}
		return nil
	})
	return scores, found, err
}

// cmdGeoPos is GEOPOS key [member ...].
func cmdGeoPos(rc *conn, argv [][]byte) {
	scores, found, err := rc.geoLookup(argv)
	if err != nil {
		rc.storeError(err)
		return
	}
	rc.w.Array(len(scores))
	for i, s := range scores {
		if !found[i] {
			rc.w.NullArray()
			continue
		}
		lon, lat := geoDecodeScore(s)
		rc.w.Array(2)
		rc.geoWriteCoord(lon)
		rc.geoWriteCoord(lat)
	}
}

const geoAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// cmdGeoHash is GEOHASH key [member ...]: each position as the standard
// 11-character geohash (latitude over -90..90), the last character 0.
func cmdGeoHash(rc *conn, argv [][]byte) {
	scores, found, err := rc.geoLookup(argv)
	if err != nil {
		rc.storeError(err)
		return
	}
	rc.w.Array(len(scores))
	for i, s := range scores {
		if !found[i] {
			rc.w.Null()
			continue
		}
		lon, lat := geoDecodeScore(s)
		h, _ := geoEncode(geoRange{-180, 180}, geoRange{-90, 90}, lon, lat, 26)
		var buf [11]byte
		for j := range 10 {
			buf[j] = geoAlphabet[(h.bits>>(52-(j+1)*5))&0x1f]
		}
		buf[10] = geoAlphabet[0]
		rc.w.Bulk(buf[:])
	}
}

// The search variants (georadiusGeneric's flags).
const (
	geoFromCoords  = 1 << iota // GEORADIUS: the centre is given
	geoFromMember              // GEORADIUSBYMEMBER: the centre is a member
	geoNoStore                 // the _RO forms
	geoSearchCmd               // GEOSEARCH and GEOSEARCHSTORE's syntax
	geoSearchStore             // GEOSEARCHSTORE
)

// Orders.
const (
	geoSortNone = iota
	geoSortAsc
	geoSortDesc
)

// geoQuery is a parsed search.
type geoQuery struct {
	shape                         geoShape
	store                         []byte
	storeDist                     bool
	withDist, withHash, withCoord bool
	any                           bool
	sort                          int
	count                         int64
}

// parseGeoQuery parses a search's arguments as georadiusGeneric does, in
// its order, with the source's existence and a score lookup for the
// members named (exists false: no source, whose members are not looked
// up). It returns Redis's error for the first bad argument, or "".
func parseGeoQuery(argv [][]byte, flags int, exists bool, score func(m []byte) (float64, bool)) (q geoQuery, errMsg string) {
	base := 0
	switch {
	case flags&geoFromCoords != 0:
		base = 6
		q.shape.kind = geoCircle
		if q.shape.lon, q.shape.lat, errMsg = geoLonLat(argv[2], argv[3]); errMsg != "" {
			return q, errMsg
		}
		if errMsg = q.shape.parseRadius(argv[4], argv[5]); errMsg != "" {
			return q, errMsg
		}
	case flags&geoFromMember != 0 && !exists:
		base = 5
	case flags&geoFromMember != 0:
		base = 5
		q.shape.kind = geoCircle
		s, ok := score(argv[2])
		if !ok {
			return q, errGeoMember
		}
		q.shape.lon, q.shape.lat = geoDecodeScore(s)
		if errMsg = q.shape.parseRadius(argv[3], argv[4]); errMsg != "" {
			return q, errMsg
		}
	default: // GEOSEARCH, GEOSEARCHSTORE
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			q.store = argv[1]
		}
	}
	search := flags&geoSearchCmd != 0
	storeOK := flags&(geoNoStore|geoSearchCmd) == 0
	fromMember, fromLoc, byRadius, byBox := false, false, false, false
	opts := argv[base:]
	for i := 0; i < len(opts); i++ {
		a, rest := opts[i], len(opts)-i-1
		switch {
		case is(a, "withdist"):
			q.withDist = true
		case is(a, "withhash"):
			q.withHash = true
		case is(a, "withcoord"):
			q.withCoord = true
		case is(a, "any"):
			q.any = true
		case is(a, "asc"):
			q.sort = geoSortAsc
		case is(a, "desc"):
			q.sort = geoSortDesc
		case is(a, "count") && rest >= 1:
			n, ok := resp.ParseInt(opts[i+1])
			if !ok {
				return q, errNotInt
			}
			if n <= 0 {
				return q, "ERR COUNT must be > 0"
			}
			q.count = n
			i++
		case is(a, "store") && rest >= 1 && storeOK:
			q.store, q.storeDist = opts[i+1], false
			i++
		case is(a, "storedist") && rest >= 1 && storeOK:
			q.store, q.storeDist = opts[i+1], true
			i++
		case is(a, "storedist") && search && flags&geoSearchStore != 0:
			q.storeDist = true
		case is(a, "frommember") && rest >= 1 && search && !fromLoc:
			if exists {
				s, ok := score(opts[i+1])
				if !ok {
					return q, errGeoMember
				}
				q.shape.lon, q.shape.lat = geoDecodeScore(s)
			}
			fromMember = true
			i++
		case is(a, "fromlonlat") && rest >= 2 && search && !fromMember:
			if q.shape.lon, q.shape.lat, errMsg = geoLonLat(opts[i+1], opts[i+2]); errMsg != "" {
				return q, errMsg
			}
			fromLoc = true
			i += 2
		case is(a, "byradius") && rest >= 2 && search && !byBox:
			if errMsg = q.shape.parseRadius(opts[i+1], opts[i+2]); errMsg != "" {
				return q, errMsg
			}
			q.shape.kind = geoCircle
			byRadius = true
			i += 2
		case is(a, "bybox") && rest >= 3 && search && !byRadius:
			if errMsg = q.shape.parseBox(opts[i+1], opts[i+2], opts[i+3]); errMsg != "" {
				return q, errMsg
			}
			q.shape.kind = geoRect
			byBox = true
			i += 3
		default:
			return q, errSyntax
		}
	}
	switch {
	case q.store != nil && (q.withDist || q.withHash || q.withCoord):
		if flags&geoSearchStore != 0 {
			return q, "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
		}
		return q, "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
	case search && !fromMember && !fromLoc:
		return q, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(argv[0])
	case search && !byRadius && !byBox:
		return q, "ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(argv[0])
	case q.any && q.count == 0:
		return q, "ERR the ANY argument requires COUNT argument"
	}
	if q.count != 0 && q.sort == geoSortNone && !q.any {
		q.sort = geoSortAsc
	}
	return q, ""
}

// parseRadius is extractDistanceOrReply.
func (s *geoShape) parseRadius(r, unit []byte) string {
	v, errMsg := geoDouble(r, "need numeric radius")
	if errMsg != "" {
		return errMsg
	}
	if v < 0 {
		return "ERR radius cannot be negative"
	}
	s.radius = v
	if s.conversion = geoUnit(unit); s.conversion == 0 {
		return errGeoUnit
	}
	return ""
}

// parseBox is extractBoxOrReply.
func (s *geoShape) parseBox(w, h, unit []byte) string {
	wv, errMsg := geoDouble(w, "need numeric width")
	if errMsg != "" {
		return errMsg
	}
	hv, errMsg := geoDouble(h, "need numeric height")
	if errMsg != "" {
		return errMsg
	}
	if hv < 0 || wv < 0 {
		return "ERR height or width cannot be negative"
	}
	s.width, s.height = wv, hv
	if s.conversion = geoUnit(unit); s.conversion == 0 {
		return errGeoUnit
	}
	return ""
}

// geoPoint is one result: its member (in geoResults.buf), position,
// distance and score.
type geoPoint struct {
	start, end         int
	lon, lat, dist, sc float64
	exact              bool // dist is the exact distance, not the quick one
}

// geoExact makes p's distance the exact one.
func geoExact(s *geoShape, p *geoPoint) {
	if !p.exact {
		p.dist, p.exact = geoExactDist(s, p.sc), true
	}
}

// geoPointCmp orders two points by distance as the exact distances do:
// the quick ones when they are far enough apart, else the exact ones.
func geoPointCmp(s *geoShape, a, b *geoPoint) int {
	if (!a.exact || !b.exact) && geoNear(a.dist, b.dist) {
		geoExact(s, a)
		geoExact(s, b)
	}
	return cmp.Compare(a.dist, b.dist)
}

type geoResults struct {
	buf    []byte
	points []geoPoint
}

func (r *geoResults) member(p *geoPoint) []byte { return r.buf[p.start:p.end] }

// geoCollect finds the members of z in q's area as membersOfAllNeighbors
// does: the centre cell, then the neighbours in Redis's order, each a
// score range read in order, skipping a cell equal to the one searched
// before, stopping at limit results (ANY) when limit > 0.
func geoCollect(z *store.ZSet, s *geoShape, limit int, res *geoResults) {
	centre, n := geoAreas(s)
	cells := [9]geoHash{centre, n[geoNorth], n[geoSouth], n[geoEast], n[geoWest],
		n[geoNorthEast], n[geoNorthWest], n[geoSouthEast], n[geoSouthWest]}
	last := 0
	for i, c := range cells {
		if c.zero() {
			continue
		}
		// Redis compares with the last cell searched only once that is
		// not the centre (its index 0 reads as "none").
		if last != 0 && c == cells[last] {
			continue
		}
		if limit > 0 && len(res.points) >= limit {
			break
		}
		lo := float64(c.bits << (52 - c.step*2))
		hi := float64((c.bits + 1) << (52 - c.step*2))
		z.RangeFromScore(lo, func(m []byte, sc float64) bool {
			if sc >= hi {
				return false
			}
			if lon, lat, dist, exact, ok := geoWithin(s, sc); ok {
				start := len(res.buf)
				res.buf = append(res.buf, m...)
				res.points = append(res.points, geoPoint{start: start, end: len(res.buf), lon: lon, lat: lat, dist: dist, sc: sc, exact: exact})
			}
			return !(limit > 0 && len(res.points) >= limit)
		})
		last = i
	}
}

// geoSortPoints orders the results as Redis does: a stable sort by
// distance (glibc's qsort is a merge sort) when all are returned, else
// Redis's partial quicksort (pqsort.c) of the first n, whose order among
// equal distances is its own.
func geoSortPoints(s *geoShape, p []geoPoint, order int, n int) {
	c := func(a, b *geoPoint) int { return geoPointCmp(s, a, b) }
	if order == geoSortDesc {
		c = func(a, b *geoPoint) int { return -geoPointCmp(s, a, b) }
	}
	if n == len(p) {
		// SortStableFunc passes copies: make the distances exact
		// where the comparison needs them on the points themselves.
		slices.SortStableFunc(p, func(a, b geoPoint) int {
			if (!a.exact || !b.exact) && geoNear(a.dist, b.dist) {
				a.dist, b.dist = geoExactDist(s, a.sc), geoExactDist(s, b.sc)
			}
			r := cmp.Compare(a.dist, b.dist)
			if order == geoSortDesc {
				r = -r
			}
			return r
		})
		return
	}
	pqsort(p, c, 0, n-1)
}

// pqsort is Redis 7.0's pqsort (the NetBSD qsort, Bentley and
// McIlroy's, made to sort only what overlaps the ranks lrange..rrange,
// without the later switch to insertion sort after a partition that
// swapped nothing), over elements rather than bytes.
func pqsort(p []geoPoint, cmpf func(a, b *geoPoint) int, lrange, rrange int) {
	pqsortRange(p, 0, len(p), cmpf, lrange, rrange)
}

func pqsortRange(p []geoPoint, a, n int, cmpf func(a, b *geoPoint) int, lr, rr int) {
	c := func(i, j int) int { return cmpf(&p[i], &p[j]) }
	swap := func(i, j int) { p[i], p[j] = p[j], p[i] }
	vecswap := func(i, j, k int) {
		for x := range k {
			swap(i+x, j+x)
		}
	}
	med3 := func(x, y, z int) int {
		if c(x, y) < 0 {
			if c(y, z) < 0 {
				return y
			}
			if c(x, z) < 0 {
				return z
			}
			return x
		}
		if c(y, z) > 0 {
			return y
		}
		if c(x, z) < 0 {
			return x
		}
		return z
	}
	insertion := func() {
		for pm := a + 1; pm < a+n; pm++ {
			for pl := pm; pl > a && c(pl-1, pl) > 0; pl-- {
				swap(pl, pl-1)
			}
		}
	}
	outside := func(s, k int) bool { return lr < s && rr < s || lr >= s+k && rr >= s+k }
	for {
		if n < 7 {
			insertion()
			return
		}
		pm := a + n/2
		if n > 7 {
			pl, pn := a, a+n-1
			if n > 40 {
				d := n / 8
				pl = med3(pl, pl+d, pl+2*d)
				pm = med3(pm-d, pm, pm+d)
				pn = med3(pn-2*d, pn-d, pn)
			}
			pm = med3(pl, pm, pn)
		}
		swap(a, pm)
		pa, pb := a+1, a+1
		pc, pd := a+n-1, a+n-1
		for {
			for pb <= pc {
				r := c(pb, a)
				if r > 0 {
					break
				}
				if r == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := c(pc, a)
				if r < 0 {
					break
				}
				if r == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		pn := a + n
		r := min(pa-a, pb-pa)
		vecswap(a, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		vecswap(pb, pn-r, r)
		if r = pb - pa; r > 1 && !outside(a, r) {
			pqsortRange(p, a, r, cmpf, lr, rr)
		}
		if r = pd - pc; r > 1 {
			a, n = pn-r, r
			if !outside(a, r) {
				continue
			}
		}
		return
	}
}

func cmdGeoRadius(rc *conn, argv [][]byte)   { rc.geoSearch(argv, 1, geoFromCoords) }
func cmdGeoRadiusRO(rc *conn, argv [][]byte) { rc.geoSearch(argv, 1, geoFromCoords|geoNoStore) }
func cmdGeoRadiusByMember(rc *conn, argv [][]byte) {
	rc.geoSearch(argv, 1, geoFromMember)
}
func cmdGeoRadiusByMemberRO(rc *conn, argv [][]byte) {
	rc.geoSearch(argv, 1, geoFromMember|geoNoStore)
}
func cmdGeoSearch(rc *conn, argv [][]byte)      { rc.geoSearch(argv, 1, geoSearchCmd) }
func cmdGeoSearchStore(rc *conn, argv [][]byte) { rc.geoSearch(argv, 2, geoSearchCmd|geoSearchStore) }

// geoSearchRun parses and runs a search over z (opened, maybe missing),
// filling res and returning the number of results to give.
func geoSearchRun(argv [][]byte, flags int, z *store.ZSet, q *geoQuery, res *geoResults) (int, string) {
	exists := z.Exists()
	var errMsg string
	*q, errMsg = parseGeoQuery(argv, flags, exists, z.Score)
	if errMsg != "" || !exists {
		return 0, errMsg
	}
	limit := 0
	if q.any {
		limit = int(min(q.count, math.MaxInt32))
	}
	geoCollect(z, &q.shape, limit, res)
	n := len(res.points)
	if q.count != 0 && int64(n) > q.count {
		n = int(q.count)
	}
	if q.sort != geoSortNone && n > 0 {
		geoSortPoints(&q.shape, res.points, q.sort, n)
	}
	return n, ""
}

// geoSearch is georadiusGeneric: GEORADIUS, GEORADIUSBYMEMBER, their _RO
// forms, GEOSEARCH and GEOSEARCHSTORE, the source at argv[src].
func (rc *conn) geoSearch(argv [][]byte, src int, flags int) {
	var q geoQuery
	res := rc.geoRes // reused: a search's points and names, cleared after
	if res == nil {
		res = new(geoResults)
	}
	defer func() {
		res.buf, res.points = res.buf[:0], res.points[:0]
		if cap(res.buf) <= 1<<20 && cap(res.points) <= 1<<14 {
			rc.geoRes = res // a huge result is not kept
		}
	}()
	var z store.ZSet
	n := 0
	errMsg := ""
	if flags&(geoNoStore) != 0 || flags&geoSearchCmd != 0 && flags&geoSearchStore == 0 {
		err := rc.st.ViewZSet(argv[src], &z, func() error {
			n, errMsg = geoSearchRun(argv, flags, &z, &q, res)
			return nil
		})
		switch {
		case err != nil:
			rc.storeError(err)
		case errMsg != "":
			rc.w.Error(errMsg)
		default:
			rc.geoReply(&q, res, n)
		}
		return
	}
	// A form that may store: one Tx over the source and every key that
	// may be the destination.
	keys := [][]byte{argv[src]}
	if flags&geoSearchStore != 0 {
		keys = append(keys, argv[1])
	}
	for i := src + 1; i < len(argv)-1; i++ {
		if is(argv[i], "store") || is(argv[i], "storedist") {
			keys = append(keys, argv[i+1])
		}
	}
	stored, cleared := 0, false
	err := rc.st.Tx(keys, func(tx *store.Tx) error {
		if err := tx.ZSet(argv[src], &z, false); err != nil {
			return err
		}
		n, errMsg = geoSearchRun(argv, flags, &z, &q, res)
		tx.DoneZSet(&z)
		if errMsg != "" || q.store == nil {
			return nil
		}
		var zr zresult
		for _, p := range res.points[:n] {
			m := res.member(&p)
			zr.ms = append(zr.ms, m)
			if q.storeDist {
				geoExact(&q.shape, &p)
				zr.scores = append(zr.scores, p.dist/q.shape.conversion)
			} else {
				zr.scores = append(zr.scores, p.sc)
			}
			zr.hint = max(zr.hint, len(m))
		}
		stored = n
		var err error
		cleared, err = zstore(tx, q.store, &zr, n)
		return err
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case errMsg != "":
		rc.w.Error(errMsg)
	case q.store == nil:
		rc.geoReply(&q, res, n)
	default:
		event := "georadiusstore"
		if flags&geoSearchCmd != 0 {
			event = "geosearchstore"
		}
		rc.notifyStored(server.EventZSet, event, q.store, stored > 0, cleared)
		rc.w.Int(int64(stored))
	}
}

// geoReply writes the first n results.
func (rc *conn) geoReply(q *geoQuery, res *geoResults, n int) {
	opts := 0
	for _, on := range []bool{q.withDist, q.withHash, q.withCoord} {
		if on {
			opts++
		}
	}
	rc.w.Array(n)
	for i := range n {
		p := &res.points[i]
		if opts > 0 {
			rc.w.Array(opts + 1)
		}
		rc.w.Bulk(res.member(p))
		if q.withDist {
			rc.geoWriteDist(geoPrintedDist(&q.shape, p))
		}
		if q.withHash {
			rc.w.Int(int64(p.sc))
		}
		if q.withCoord {
			rc.w.Array(2)
			rc.geoWriteCoord(p.lon)
			rc.geoWriteCoord(p.lat)
		}
	}
}
