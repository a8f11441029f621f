package redis

import (
	"bytes"
	"math"
	"strconv"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The sorted set commands (Redis 7.2's t_zset.c). Each single-key command
// is one store.UpdateZSet or ViewZSet call; the multi-key ones (zsetops.go)
// run in a store.Tx. Replies that need the set's contents are written
// inside the call. Scores are doubles: bulk strings in RESP2, RESP3
// doubles (resp.Writer.Double), in the shortest form, as Redis 7.2's
// addReplyDouble writes them.

const (
	errZMinMaxFloat = "ERR min or max is not a float"
	errZMinMaxLex   = "ERR min or max not valid string range item"
	errZNaN         = "ERR resulting score is not a number (NaN)"
)

func zsetCommands() []respCommand {
	wf, w, r, rf := []string{"write", "denyoom", "fast"}, []string{"write"}, []string{"readonly"}, []string{"readonly", "fast"}
	one := oneKey("sorted-set")
	members := docArg{name: "member", typ: "string", multiple: true}
	minmax := []docArg{key("key"), str("min"), str("max")}
	limit := opt(docArg{name: "limit", typ: "block", token: "LIMIT", sub: []docArg{integ("offset"), integ("count")}})
	ws := opt(token("WITHSCORES"))
	return append([]respCommand{
		one("zadd", -4, wf, "1.2.0", "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
			"Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.",
			[]docArg{key("key"), oneOf("condition", true, token("NX"), token("XX")), oneOf("comparison", true, token("GT"), token("LT")),
				opt(token("CH")), opt(token("INCR")),
				{name: "data", typ: "block", multiple: true, sub: []docArg{{name: "score", typ: "double"}, str("member")}}}, cmdZAdd),
		one("zincrby", 4, wf, "1.2.0", "O(log(N)) where N is the number of elements in the sorted set.",
			"Increments the score of a member in a sorted set.", []docArg{key("key"), integ("increment"), str("member")}, cmdZIncrBy),
		one("zrem", -3, []string{"write", "fast"}, "1.2.0", "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.",
			"Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", []docArg{key("key"), members}, cmdZRem),
		one("zcard", 2, rf, "1.2.0", "O(1)", "Returns the number of members in a sorted set.", []docArg{key("key")}, cmdZCard),
		one("zcount", 4, rf, "2.0.0", "O(log(N)) with N being the number of elements in the sorted set.",
			"Returns the count of members in a sorted set that have scores within a range.", minmax, cmdZCount),
		one("zlexcount", 4, rf, "2.8.9", "O(log(N)) with N being the number of elements in the sorted set.",
			"Returns the number of members in a sorted set within a lexicographical range.", minmax, cmdZLexCount),
		one("zscore", 3, rf, "1.2.0", "O(1)", "Returns the score of a member in a sorted set.", []docArg{key("key"), str("member")}, cmdZScore),
		one("zmscore", -3, rf, "6.2.0", "O(N) where N is the number of members being requested.",
			"Returns the score of one or more members in a sorted set.", []docArg{key("key"), members}, cmdZMScore),
		one("zrank", -3, rf, "2.0.0", "O(log(N))", "Returns the index of a member in a sorted set ordered by ascending scores.",
			[]docArg{key("key"), str("member"), opt(token("WITHSCORE"))}, cmdZRank),
		one("zrevrank", -3, rf, "2.0.0", "O(log(N))", "Returns the index of a member in a sorted set ordered by descending scores.",
			[]docArg{key("key"), str("member"), opt(token("WITHSCORE"))}, cmdZRevRank),
		one("zrange", -4, r, "1.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
			"Returns members in a sorted set within a range of indexes.",
			[]docArg{key("key"), str("start"), str("stop"), oneOf("sortby", true, token("BYSCORE"), token("BYLEX")), opt(token("REV")), limit, ws}, cmdZRange),
		one("zrevrange", -4, r, "1.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
			"Returns members in a sorted set within a range of indexes in reverse order.",
			[]docArg{key("key"), integ("start"), integ("stop"), ws}, cmdZRevRange),
		one("zrangebyscore", -4, r, "1.0.5", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned.",
			"Returns members in a sorted set within a range of scores.", []docArg{key("key"), {name: "min", typ: "double"}, {name: "max", typ: "double"}, ws, limit}, cmdZRangeByScore),
		one("zrevrangebyscore", -4, r, "2.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned.",
			"Returns members in a sorted set within a range of scores in reverse order.", []docArg{key("key"), {name: "max", typ: "double"}, {name: "min", typ: "double"}, ws, limit}, cmdZRevRangeByScore),
		one("zrangebylex", -4, r, "2.8.9", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned.",
			"Returns members in a sorted set within a lexicographical range.", []docArg{key("key"), str("min"), str("max"), limit}, cmdZRangeByLex),
		one("zrevrangebylex", -4, r, "2.8.9", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned.",
			"Returns members in a sorted set within a lexicographical range in reverse order.", []docArg{key("key"), str("max"), str("min"), limit}, cmdZRevRangeByLex),
		one("zremrangebyrank", 4, w, "2.0.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
			"Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.",
			[]docArg{key("key"), integ("start"), integ("stop")}, cmdZRemRangeByRank),
		one("zremrangebyscore", 4, w, "1.2.0", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
			"Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", minmax, cmdZRemRangeByScore),
		one("zremrangebylex", 4, w, "2.8.9", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
			"Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", minmax, cmdZRemRangeByLex),
		one("zpopmin", -2, []string{"write", "fast"}, "5.0.0", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
			"Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.",
			[]docArg{key("key"), opt(integ("count"))}, cmdZPopMin),
		one("zpopmax", -2, []string{"write", "fast"}, "5.0.0", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
			"Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.",
			[]docArg{key("key"), opt(integ("count"))}, cmdZPopMax),
		one("zrandmember", -2, r, "6.2.0", "O(N) where N is the number of members returned",
			"Returns one or more random members from a sorted set.",
			[]docArg{key("key"), {name: "options", typ: "block", optional: true, sub: []docArg{integ("count"), opt(token("WITHSCORES"))}}}, cmdZRandMember),
		one("zscan", -3, r, "2.8.0", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
			"Iterates over members and scores of a sorted set.",
			[]docArg{key("key"), integ("cursor"), opt(tokArg("MATCH", "pattern", "pattern")), opt(tokArg("COUNT", "count", "integer"))}, cmdZScan),
	}, zsetOpCommands()...)
}

// parseZScore reads a score as Redis's getDoubleFromObject does: strtod
// over the whole argument, no leading space, no NaN, no overflow and no
// underflow to zero.
func parseZScore(b []byte) (float64, bool) {
	if len(b) == 0 || isCSpace(b[0]) {
		return 0, false
	}
	return strtod(b, false)
}

// strtod converts b, which must be one number in strtod's syntax; lenient
// accepts overflow (±inf) and underflow (0) as zslParseRange does.
func strtod(b []byte, lenient bool) (float64, bool) {
	if len(b) >= ldMaxChars {
		return 0, false
	}
	n, ok := scanLongDouble(b)
	if !ok {
		return 0, false
	}
	if n.inf {
		if n.neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	var buf [64]byte
	s := b
	if n.hex && bytes.IndexAny(b, "pP") < 0 {
		s = append(append(buf[:0], b...), 'p', '0')
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil && !lenient {
		return 0, false // overflow
	}
	if f == 0 && n.digits > 0 && !lenient {
		return 0, false // underflow to zero
	}
	return f, true
}

// zScoreRange is a parsed min and max of ZRANGEBYSCORE.
type zScoreRange struct {
	min, max     float64
	minex, maxex bool
}

// parseRangeItem reads one end of a score range as zslParseRange does:
// "(" for exclusive, then strtod up to the first NUL, which may skip
// leading spaces, overflow, underflow, or read nothing at all (0).
func parseRangeItem(b []byte) (float64, bool, bool) {
	ex := len(b) > 0 && b[0] == '('
	if ex {
		b = b[1:]
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, ex, true
	}
	for len(b) > 0 && isCSpace(b[0]) {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, ex, false
	}
	f, ok := strtod(b, true)
	return f, ex, ok
}

func parseScoreRange(min, max []byte) (r zScoreRange, ok bool) {
	var ok1, ok2 bool
	r.min, r.minex, ok1 = parseRangeItem(min)
	r.max, r.maxex, ok2 = parseRangeItem(max)
	return r, ok1 && ok2
}

// ranks is the ranks [lo, hi) of the members in the range.
func (r *zScoreRange) ranks(z *store.ZSet) (lo, hi int) {
	lo = z.CountBelow(r.min, r.minex)
	hi = z.CountBelow(r.max, !r.maxex)
	return lo, max(lo, hi)
}

// zLexRange is a parsed min and max of ZRANGEBYLEX: each end a string, or
// "-" (inf < 0) or "+" (inf > 0).
type zLexRange struct {
	min, max       []byte
	minInf, maxInf int
	minex, maxex   bool
}

func parseLexItem(b []byte) (s []byte, inf int, ex bool, ok bool) {
	if len(b) == 0 {
		return nil, 0, false, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) > 1 && b[1] != 0 {
			return nil, 0, false, false
		}
		if b[0] == '+' {
			return nil, 1, true, true
		}
		return nil, -1, true, true
	case '(':
		return b[1:], 0, true, true
	case '[':
		return b[1:], 0, false, true
	}
	return nil, 0, false, false
}

func parseLexRange(min, max []byte) (r zLexRange, ok bool) {
	var ok1, ok2 bool
	r.min, r.minInf, r.minex, ok1 = parseLexItem(min)
	r.max, r.maxInf, r.maxex, ok2 = parseLexItem(max)
	return r, ok1 && ok2
}

func (r *zLexRange) ranks(z *store.ZSet) (lo, hi int) {
	n := z.Len()
	switch r.minInf {
	case -1:
		lo = 0
	case 1:
		lo = n
	default:
		lo = z.CountBelowLex(r.min, r.minex)
	}
	switch r.maxInf {
	case -1:
		hi = 0
	case 1:
		hi = n
	default:
		hi = z.CountBelowLex(r.max, !r.maxex)
	}
	return lo, max(lo, hi)
}

// zaddFlags are ZADD's options.
type zaddFlags struct {
	nx, xx, gt, lt, ch, incr bool
}

// cmdZAdd is ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...].
func cmdZAdd(rc *conn, argv [][]byte) {
	var f zaddFlags
	i := 2
	for ; i < len(argv); i++ {
		a := argv[i]
		switch {
		case is(a, "nx"):
			f.nx = true
		case is(a, "xx"):
			f.xx = true
		case is(a, "gt"):
			f.gt = true
		case is(a, "lt"):
			f.lt = true
		case is(a, "ch"):
			f.ch = true
		case is(a, "incr"):
			f.incr = true
		default:
			goto done
		}
	}
done:
	rc.zadd(argv, i, f)
}

// cmdZIncrBy is ZINCRBY key increment member.
func cmdZIncrBy(rc *conn, argv [][]byte) { rc.zadd(argv, 2, zaddFlags{incr: true}) }

func (rc *conn) zadd(argv [][]byte, at int, f zaddFlags) {
	elements := len(argv) - at
	switch {
	case elements == 0 || elements%2 != 0:
		rc.w.Error(errSyntax)
		return
	case f.nx && f.xx:
		rc.w.Error("ERR XX and NX options at the same time are not compatible")
		return
	case f.gt && f.nx || f.lt && f.nx || f.gt && f.lt:
		rc.w.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case f.incr && elements > 2:
		rc.w.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	for j := at; j < len(argv); j += 2 {
		if _, ok := parseZScore(argv[j]); !ok {
			rc.w.Error(errNotFloat)
			return
		}
	}
	var z store.ZSet
	added, updated, processed := 0, 0, 0
	var score float64
	nan := false
	err := rc.st.UpdateZSet(argv[1], &z, func() error {
		if !z.Exists() && f.xx {
			return nil
		}
		for j := at; j < len(argv); j += 2 {
			score, _ = parseZScore(argv[j])
			m := argv[j+1]
			cur, ok := z.Score(m)
			if !ok {
				if f.xx {
					continue
				}
				z.Set(m, score)
				added++
				processed++
				continue
			}
			if f.nx {
				continue
			}
			if f.incr {
				score += cur
				if math.IsNaN(score) {
					nan = true
					return nil
				}
			}
			if f.lt && score >= cur || f.gt && score <= cur {
				continue
			}
			processed++
			if score != cur {
				z.Set(m, score)
				updated++
			}
		}
		return nil
	})
	if err == nil && added+updated > 0 {
		event := "zadd"
		if f.incr {
			event = "zincr"
		}
		rc.notify(server.EventZSet, event, argv[1])
	}
	switch {
	case err != nil:
		rc.storeError(err)
	case nan:
		rc.w.Error(errZNaN)
	case f.incr && processed > 0:
		rc.w.Double(score)
	case f.incr:
		rc.w.Null()
	case f.ch:
		rc.w.Int(int64(added + updated))
	default:
		rc.w.Int(int64(added))
	}
}

// cmdZRem is ZREM key member [member ...].
func cmdZRem(rc *conn, argv [][]byte) {
	var z store.ZSet
	n, emptied := 0, false
	err := rc.st.UpdateZSet(argv[1], &z, func() error {
		for _, m := range argv[2:] {
			if z.Delete(m) {
				n++
			}
		}
		emptied = n > 0 && z.Len() == 0
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if n > 0 {
		rc.notify(server.EventZSet, "zrem", argv[1])
		rc.notifyEmptied(argv[1], emptied)
	}
	rc.w.Int(int64(n))
}

// cmdZCard is ZCARD key.
func cmdZCard(rc *conn, argv [][]byte) {
	var z store.ZSet
	rc.storeErrorIf(rc.st.ViewZSet(argv[1], &z, func() error {
		rc.w.Int(int64(z.Len()))
		return nil
	}))
}

// cmdZCount is ZCOUNT key min max.
func cmdZCount(rc *conn, argv [][]byte) {
	r, ok := parseScoreRange(argv[2], argv[3])
	if !ok {
		rc.w.Error(errZMinMaxFloat)
		return
	}
	var z store.ZSet
	rc.storeErrorIf(rc.st.ViewZSet(argv[1], &z, func() error {
		lo, hi := r.ranks(&z)
		rc.w.Int(int64(hi - lo))
		return nil
	}))
}

// cmdZLexCount is ZLEXCOUNT key min max.
func cmdZLexCount(rc *conn, argv [][]byte) {
	r, ok := parseLexRange(argv[2], argv[3])
	if !ok {
		rc.w.Error(errZMinMaxLex)
		return
	}
	var z store.ZSet
	rc.storeErrorIf(rc.st.ViewZSet(argv[1], &z, func() error {
		lo, hi := r.ranks(&z)
		rc.w.Int(int64(hi - lo))
		return nil
	}))
}

// cmdZScore is ZSCORE key member.
func cmdZScore(rc *conn, argv [][]byte) {
	var z store.ZSet
	rc.storeErrorIf(rc.st.ViewZSet(argv[1], &z, func() error {
		if s, ok := z.Score(argv[2]); ok {
			rc.w.Double(s)
		} else {
			rc.w.Null()
		}
		return nil
	}))
}

// cmdZMScore is ZMSCORE key member [member ...].
func cmdZMScore(rc *conn, argv [][]byte) {
	var z store.ZSet
	rc.storeErrorIf(rc.st.ViewZSet(argv[1], &z, func() error {
		rc.w.Array(len(argv) - 2)
		for _, m := range argv[2:] {
			if s, ok := z.Score(m); ok {
				rc.w.Double(s)
			} else {
				rc.w.Null()
			}
		}
		return nil
	}))
}

func cmdZRank(rc *conn, argv [][]byte)    { rc.zrank(argv, false) }
func cmdZRevRank(rc *conn, argv [][]byte) { rc.zrank(argv, true) }

// zrank is ZRANK/ZREVRANK key member [WITHSCORE] (WITHSCORE from Redis
// 7.2): the rank, or with WITHSCORE a pair of the rank and the score; a
// missing key or member is a null, a null array with WITHSCORE.
func (rc *conn) zrank(argv [][]byte, rev bool) {
	withScore := false
	switch {
	case len(argv) > 4:
		rc.w.Error("ERR wrong number of arguments for '" + lookupCommand(argv[0]).name + "' command")
		return
	case len(argv) == 4:
		if !is(argv[3], "withscore") {
			rc.w.Error(errSyntax)
			return
		}
		withScore = true
	}
	var z store.ZSet
	rc.storeErrorIf(rc.st.ViewZSet(argv[1], &z, func() error {
		r, score, ok := z.Rank(argv[2])
		switch {
		case !ok && withScore:
			rc.w.NullArray()
			return nil
		case !ok:
			rc.w.Null()
			return nil
		case rev:
			r = z.Len() - 1 - r
		}
		if withScore {
			rc.w.Array(2)
			rc.w.Int(int64(r))
			rc.w.Double(score)
		} else {
			rc.w.Int(int64(r))
		}
		return nil
	}))
}

// The kinds of range of ZRANGE.
const (
	zByAuto = iota
	zByRank
	zByScore
	zByLex
)

// zrangeSpec is a parsed ZRANGE (or one of its older forms).
type zrangeSpec struct {
	by            int
	rev           bool
	withScores    bool
	offset, limit int64
	start, end    int64
	score         zScoreRange
	lex           zLexRange
}

// parseZRange parses the range arguments from argv[from] (min, max, then
// options) as zrangeGenericCommand does, with by and rev fixed by the
// older commands (zByAuto, !revSet: ZRANGE's options choose). It writes
// the error and reports false on a bad argument.
func (rc *conn) parseZRange(argv [][]byte, from int, by int, rev, revSet bool) (sp zrangeSpec, ok bool) {
	sp.by, sp.rev, sp.limit = by, rev, -1
	for j := from + 2; j < len(argv); j++ {
		left := len(argv) - j - 1
		a := argv[j]
		switch {
		case is(a, "withscores"):
			sp.withScores = true
		case is(a, "limit") && left >= 2:
			var ok1, ok2 bool
			if sp.offset, ok1 = rc.parseInt(argv[j+1]); !ok1 {
				return sp, false
			}
			if sp.limit, ok2 = rc.parseInt(argv[j+2]); !ok2 {
				return sp, false
			}
			j += 2
		case !revSet && is(a, "rev"):
			sp.rev, revSet = true, true
		case sp.by == zByAuto && is(a, "bylex"):
			sp.by = zByLex
		case sp.by == zByAuto && is(a, "byscore"):
			sp.by = zByScore
		default:
			rc.w.Error(errSyntax)
			return sp, false
		}
	}
	if sp.by == zByAuto {
		sp.by = zByRank
	}
	if sp.limit != -1 && sp.by == zByRank {
		rc.w.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return sp, false
	}
	if sp.withScores && sp.by == zByLex {
		rc.w.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return sp, false
	}
	lo, hi := argv[from], argv[from+1]
	if sp.rev && sp.by != zByRank {
		lo, hi = hi, lo
	}
	switch sp.by {
	case zByRank:
		var ok1 bool
		if sp.start, ok1 = rc.parseInt(lo); !ok1 {
			return sp, false
		}
		if sp.end, ok1 = rc.parseInt(hi); !ok1 {
			return sp, false
		}
	case zByScore:
		if sp.score, ok = parseScoreRange(lo, hi); !ok {
			rc.w.Error(errZMinMaxFloat)
			return sp, false
		}
	case zByLex:
		if sp.lex, ok = parseLexRange(lo, hi); !ok {
			rc.w.Error(errZMinMaxLex)
			return sp, false
		}
	}
	return sp, true
}

// rankRange sanitizes a rank range against n members as Redis does and
// returns it as ascending ranks [lo, hi] (empty when lo > hi).
func rankRange(start, end int64, n int) (int, int) {
	l := int64(n)
	if start < 0 {
		start += l
	}
	if end < 0 {
		end += l
	}
	start = max(start, 0)
	if start > end || start >= l {
		return 0, -1
	}
	end = min(end, l-1)
	return int(start), int(end)
}

// span resolves the spec against z: the ascending ranks [lo, hi] to give,
// walked from hi down when rev.
func (sp *zrangeSpec) span(z *store.ZSet) (lo, hi int) {
	n := z.Len()
	if sp.by == zByRank {
		lo, hi = rankRange(sp.start, sp.end, n)
		if sp.rev && lo <= hi {
			lo, hi = n-1-hi, n-1-lo
		}
		return lo, hi
	}
	var a, b int // [a, b)
	if sp.by == zByScore {
		a, b = sp.score.ranks(z)
	} else {
		a, b = sp.lex.ranks(z)
	}
	if sp.offset < 0 || sp.offset > 0 && sp.offset >= int64(n) {
		return 0, -1
	}
	count := int64(b-a) - sp.offset
	if sp.limit >= 0 {
		count = min(count, sp.limit)
	}
	if count <= 0 {
		return 0, -1
	}
	if sp.rev {
		hi = b - 1 - int(sp.offset)
		return hi - int(count) + 1, hi
	}
	lo = a + int(sp.offset)
	return lo, lo + int(count) - 1
}

// writeZHeader starts a reply of n members, with their scores when
// withScores: pairs in RESP3, a flat array in RESP2.
func (rc *conn) writeZHeader(n int, withScores bool) {
	if withScores && !rc.w.RESP3() {
		n *= 2
	}
	rc.w.Array(n)
}

// writeZMember writes one member of such a reply.
func (rc *conn) writeZMember(m []byte, s float64, withScores bool) {
	if !withScores {
		rc.w.Bulk(m)
		return
	}
	if rc.w.RESP3() {
		rc.w.Array(2)
	}
	rc.w.Bulk(m)
	rc.w.Double(s)
}

// zrange runs a parsed range on key and replies with it.
func (rc *conn) zrange(key []byte, sp zrangeSpec) {
	var z store.ZSet
	rc.storeErrorIf(rc.st.ViewZSet(key, &z, func() error {
		lo, hi := sp.span(&z)
		if hi < lo {
			rc.w.Array(0)
			return nil
		}
		rc.writeZHeader(hi-lo+1, sp.withScores)
		z.Range(lo, hi, sp.rev, func(m []byte, s float64) bool {
			rc.writeZMember(m, s, sp.withScores)
			return true
		})
		return nil
	}))
}

func (rc *conn) zrangeCmd(argv [][]byte, by int, rev, revSet bool) {
	sp, ok := rc.parseZRange(argv, 2, by, rev, revSet)
	if !ok {
		return
	}
	rc.zrange(argv[1], sp)
}

func cmdZRange(rc *conn, argv [][]byte)        { rc.zrangeCmd(argv, zByAuto, false, false) }
func cmdZRevRange(rc *conn, argv [][]byte)     { rc.zrangeCmd(argv, zByRank, true, true) }
func cmdZRangeByScore(rc *conn, argv [][]byte) { rc.zrangeCmd(argv, zByScore, false, true) }
func cmdZRevRangeByScore(rc *conn, argv [][]byte) {
	rc.zrangeCmd(argv, zByScore, true, true)
}
func cmdZRangeByLex(rc *conn, argv [][]byte)    { rc.zrangeCmd(argv, zByLex, false, true) }
func cmdZRevRangeByLex(rc *conn, argv [][]byte) { rc.zrangeCmd(argv, zByLex, true, true) }

// zremrange removes the members in [lo, hi] that span gives and replies
// with their number.
func (rc *conn) zremrange(key []byte, event string, span func(z *store.ZSet) (int, int)) {
	var z store.ZSet
	n, emptied := 0, false
	err := rc.st.UpdateZSet(key, &z, func() error {
		if lo, hi := span(&z); lo <= hi {
			n = z.DeleteRange(lo, hi)
		}
		emptied = n > 0 && z.Len() == 0
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if n > 0 {
		rc.notify(server.EventZSet, event, key)
		rc.notifyEmptied(key, emptied)
	}
	rc.w.Int(int64(n))
}

// cmdZRemRangeByRank is ZREMRANGEBYRANK key start stop.
func cmdZRemRangeByRank(rc *conn, argv [][]byte) {
	start, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	end, ok := rc.parseInt(argv[3])
	if !ok {
		return
	}
	rc.zremrange(argv[1], "zremrangebyrank", func(z *store.ZSet) (int, int) { return rankRange(start, end, z.Len()) })
}

// cmdZRemRangeByScore is ZREMRANGEBYSCORE key min max.
func cmdZRemRangeByScore(rc *conn, argv [][]byte) {
	r, ok := parseScoreRange(argv[2], argv[3])
	if !ok {
		rc.w.Error(errZMinMaxFloat)
		return
	}
	rc.zremrange(argv[1], "zremrangebyscore", func(z *store.ZSet) (int, int) { lo, hi := r.ranks(z); return lo, hi - 1 })
}

// cmdZRemRangeByLex is ZREMRANGEBYLEX key min max.
func cmdZRemRangeByLex(rc *conn, argv [][]byte) {
	r, ok := parseLexRange(argv[2], argv[3])
	if !ok {
		rc.w.Error(errZMinMaxLex)
		return
	}
	rc.zremrange(argv[1], "zremrangebylex", func(z *store.ZSet) (int, int) { lo, hi := r.ranks(z); return lo, hi - 1 })
}

func cmdZPopMin(rc *conn, argv [][]byte) { rc.zpop(argv, false) }
func cmdZPopMax(rc *conn, argv [][]byte) { rc.zpop(argv, true) }

// zpop is ZPOPMIN/ZPOPMAX key [count].
func (rc *conn) zpop(argv [][]byte, maxSide bool) {
	if len(argv) > 3 {
		rc.w.Error(errSyntax)
		return
	}
	count := int64(-1)
	if len(argv) == 3 {
		n, ok := resp.ParseInt(argv[2])
		if !ok || n < 0 {
			rc.w.Error("ERR value is out of range, must be positive")
			return
		}
		count = n
	}
	nested := count >= 0 && rc.w.RESP3()
	var z store.ZSet
	popped, emptied := false, false
	rc.storeErrorIf(rc.st.UpdateZSet(argv[1], &z, func() error {
		if !z.Exists() || count == 0 {
			rc.w.Array(0)
			return nil
		}
		rc.zpopLocked(&z, max(count, 1), maxSide, nested)
		popped, emptied = true, z.Len() == 0
		return nil
	}))
	if popped {
		rc.notifyZPopped(argv[1], maxSide, emptied)
	}
}

// notifyZPopped reports members popped from a sorted set: "zpopmin" or
// "zpopmax", then "del" when that emptied it.
func (rc *conn) notifyZPopped(key []byte, maxSide, emptied bool) {
	event := "zpopmin"
	if maxSide {
		event = "zpopmax"
	}
	rc.notify(server.EventZSet, event, key)
	rc.notifyEmptied(key, emptied)
}

// zpopLocked pops count members from one side of z and writes them: a
// flat array of member, score, ... or, nested, of [member, score] pairs.
func (rc *conn) zpopLocked(z *store.ZSet, count int64, maxSide, nested bool) {
	n := int(min(count, int64(z.Len())))
	if nested {
		rc.w.Array(n)
	} else {
		rc.w.Array(2 * n)
	}
	for range n {
		var s float64
		rc.scratch, s = z.Pop(maxSide, rc.scratch[:0])
		if nested {
			rc.w.Array(2)
		}
		rc.w.Bulk(rc.scratch)
		rc.w.Double(s)
	}
}

// cmdZRandMember is ZRANDMEMBER key [count [WITHSCORES]].
func cmdZRandMember(rc *conn, argv [][]byte) {
	var z store.ZSet
	if len(argv) == 2 {
		rc.storeErrorIf(rc.st.ViewZSet(argv[1], &z, func() error {
			if z.Len() == 0 {
				rc.w.Null()
				return nil
			}
			m, _ := z.Random()
			rc.w.Bulk(m)
			return nil
		}))
		return
	}
	count, withScores, ok := rc.parseRandCount(argv, "withscores")
	if !ok {
		return
	}
	if rc.refuseHeldPicks(count) {
		return
	}
	type scored struct {
		m []byte
		s float64
	}
	var copied []scored // a big reply with repetition: written after the view (randreply.go)
	k := 0
	rc.storeErrorIf(rc.st.ViewZSet(argv[1], &z, func() error {
		n := z.Len()
		switch {
		case n == 0 || count == 0:
			rc.w.Array(0)
		case count < 0 || count == 1:
			var big bool
			if k, big = randPicks(count, n); big {
				copied = make([]scored, 0, n)
				z.Range(0, n-1, false, func(m []byte, s float64) bool {
					copied = append(copied, scored{append([]byte(nil), m...), s})
					return true
				})
				return nil
			}
			if count == 1 {
				k = 1
			}
			rc.writeZHeader(k, withScores)
			for range k {
				m, s := z.Random()
				rc.writeZMember(m, s, withScores)
			}
		case count >= int64(n):
			// The whole set, from the highest (Redis's zuiNext walks
			// from the tail).
			rc.writeZHeader(n, withScores)
			z.Range(0, n-1, true, func(m []byte, s float64) bool {
				rc.writeZMember(m, s, withScores)
				return true
			})
		default:
			k := int(count)
			rc.writeZHeader(k, withScores)
			picked := sampleIndexes(n, k)
			i := 0
			z.Range(0, n-1, false, func(m []byte, s float64) bool {
				if picked[i] {
					rc.writeZMember(m, s, withScores)
				}
				i++
				return true
			})
		}
		return nil
	}))
	if copied != nil {
		rc.writeZHeader(k, withScores)
		rc.writeRandPicks(k, len(copied), func(i int) { rc.writeZMember(copied[i].m, copied[i].s, withScores) })
	}
}

// cmdZScan is ZSCAN key cursor [MATCH pattern] [COUNT count].
func cmdZScan(rc *conn, argv [][]byte) {
	cursor, g, count, ok := rc.parseScanArgs(argv, 2)
	if !ok {
		return
	}
	var z store.ZSet
	var out keyList
	var next uint64
	err := rc.st.ViewZSet(argv[1], &z, func() error {
		next = z.Scan(cursor, count, func(m, s []byte) {
			if g == nil || g.match(m) {
				out.add(m)
				out.add(s)
			}
		})
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	rc.w.Array(2)
	rc.w.Bulk(strconv.AppendUint(rc.scratch[:0], next, 10))
	out.write(rc)
}
