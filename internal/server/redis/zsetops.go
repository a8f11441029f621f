package redis

import (
	"bytes"
	"cmp"
	"math"
	"slices"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The sorted set commands over several keys (ZUNION, ZINTER, ZDIFF and
// their STORE forms, ZINTERCARD, ZRANGESTORE, ZMPOP), each one store.Tx
// holding every key's shard: atomic against every other command.

func zsetOpCommands() []respCommand {
	w, r := []string{"write", "denyoom"}, []string{"readonly"}
	nk := func(name string, arity int, flags []string, dst bool, since, summary string, args []docArg, run func(*conn, [][]byte)) respCommand {
		c := respCommand{name: name, arity: arity, flags: append(slices.Clone(flags), "movablekeys"), group: "sorted-set", since: since,
			complexity: "O(N) where N is the total number of elements in the input sorted sets", summary: summary, args: args, run: run}
		if dst {
			c.keysOf = numKeys(2, 1)
			c.firstKey, c.lastKey, c.step = 1, 1, 1 // the destination, as Redis lists it
		} else {
			c.keysOf = numKeys(1)
		}
		return c
	}
	weights := opt(docArg{name: "weight", typ: "integer", token: "WEIGHTS", multiple: true})
	aggr := opt(docArg{name: "aggregate", typ: "oneof", token: "AGGREGATE", sub: []docArg{token("SUM"), token("MIN"), token("MAX")}})
	ws := opt(token("WITHSCORES"))
	srcs := []docArg{integ("numkeys"), keys("key")}
	withDst := func(a ...docArg) []docArg { return append([]docArg{key("destination")}, a...) }
	return []respCommand{
		nk("zunion", -3, r, false, "6.2.0", "Returns the union of multiple sorted sets.", append(slices.Clone(srcs), weights, aggr, ws), cmdZUnion),
		nk("zinter", -3, r, false, "6.2.0", "Returns the intersect of multiple sorted sets.", append(slices.Clone(srcs), weights, aggr, ws), cmdZInter),
		nk("zdiff", -3, r, false, "6.2.0", "Returns the difference between multiple sorted sets.", append(slices.Clone(srcs), ws), cmdZDiff),
		nk("zunionstore", -4, w, true, "2.0.0", "Stores the union of multiple sorted sets in a key.", withDst(append(slices.Clone(srcs), weights, aggr)...), cmdZUnionStore),
		nk("zinterstore", -4, w, true, "2.0.0", "Stores the intersect of multiple sorted sets in a key.", withDst(append(slices.Clone(srcs), weights, aggr)...), cmdZInterStore),
		nk("zdiffstore", -4, w, true, "6.2.0", "Stores the difference of multiple sorted sets in a key.", withDst(srcs...), cmdZDiffStore),
		nk("zintercard", -3, r, false, "7.0.0", "Returns the number of members of the intersect of multiple sorted sets.",
			append(slices.Clone(srcs), opt(tokArg("LIMIT", "limit", "integer"))), cmdZInterCard),
		nk("zmpop", -4, []string{"write"}, false, "7.0.0", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.",
			append(slices.Clone(srcs), oneOf("where", false, token("MIN"), token("MAX")), opt(tokArg("COUNT", "count", "integer"))), cmdZMPop),
		{name: "zrangestore", arity: -5, flags: w, firstKey: 1, lastKey: 2, step: 1, group: "sorted-set", since: "6.2.0",
			complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.",
			summary:    "Stores a range of members from sorted set in a key.",
			args: []docArg{key("dst"), key("src"), str("min"), str("max"), oneOf("sortby", true, token("BYSCORE"), token("BYLEX")), opt(token("REV")),
				opt(docArg{name: "limit", typ: "block", token: "LIMIT", sub: []docArg{integ("offset"), integ("count")}})},
			run: cmdZRangeStore},
	}
}

// The operations of zsetOp.
const (
	zopUnion = iota
	zopInter
	zopDiff
)

// Aggregates.
const (
	zaggSum = iota
	zaggMin
	zaggMax
)

// zsrc is one input: its members and scores, copied out (a plain set's
// members score 1), and its weight.
type zsrc struct {
	key    []byte
	ms     keyList
	scores []float64
	weight float64
	index  map[string]float64 // built for lookups when needed
}

func (s *zsrc) len() int { return len(s.scores) }

func (s *zsrc) each(fn func(m []byte, sc float64)) {
	start := 0
	for i, end := range s.ms.offs {
		fn(s.ms.buf[start:end], s.scores[i])
		start = end
	}
}

func (s *zsrc) find(m []byte) (float64, bool) {
	if s.index == nil {
		s.index = make(map[string]float64, s.len())
		s.each(func(m []byte, sc float64) { s.index[string(m)] = sc })
	}
	v, ok := s.index[string(m)]
	return v, ok
}

// zread copies the sorted set (or set) under key out of the Tx, and
// reports whether there was one.
func zread(tx *store.Tx, key []byte, out *zsrc) (bool, error) {
	out.key = key
	kind, ok := tx.Kind(key)
	if !ok {
		return false, nil
	}
	switch kind {
	case store.KindZSet:
		var z store.ZSet
		if err := tx.ZSet(key, &z, false); err != nil {
			return true, err
		}
		if n := z.Len(); n > 0 {
			z.Range(0, n-1, false, func(m []byte, sc float64) bool {
				out.ms.add(m)
				out.scores = append(out.scores, sc)
				return true
			})
		}
		tx.DoneZSet(&z)
	case store.KindSet:
		var st store.Set
		if err := tx.Set(key, &st, false); err != nil {
			return true, err
		}
		st.Each(func(m []byte) bool {
			out.ms.add(m)
			out.scores = append(out.scores, 1)
			return true
		})
		tx.DoneSet(&st)
	default:
		return true, store.ErrWrongType
	}
	return true, nil
}

func zaggregate(target *float64, val float64, agg int) {
	switch agg {
	case zaggSum:
		*target += val
		if math.IsNaN(*target) {
			*target = 0
		}
	case zaggMin:
		if val < *target {
			*target = val
		}
	case zaggMax:
		if val > *target {
			*target = val
		}
	}
}

// zresult is a computed sorted set, in order.
type zresult struct {
	ms     [][]byte
	scores []float64
	hint   int // the longest member, or 0 (ZRANGESTORE, which creates by count alone)
}

func (r *zresult) Len() int { return len(r.ms) }

func (r *zresult) sort() {
	idx := make([]int, len(r.ms))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(r.scores[a], r.scores[b]); c != 0 {
			return c
		}
		return bytes.Compare(r.ms[a], r.ms[b])
	})
	ms, sc := make([][]byte, len(idx)), make([]float64, len(idx))
	for i, j := range idx {
		ms[i], sc[i] = r.ms[j], r.scores[j]
	}
	r.ms, r.scores = ms, sc
}

// zsetOpArgs is a parsed ZUNION/ZINTER/ZDIFF/ZINTERCARD.
type zsetOpArgs struct {
	op, agg    int
	withScores bool
	card       bool // ZINTERCARD
	store      bool // the STORE forms, which take no WITHSCORES
	limit      int64
	keys       [][]byte
	opts       [][]byte // after the keys
}

// zsetOp runs a parsed command in tx: it reads the inputs (WRONGTYPE
// before any option is looked at, as Redis does), then parses the
// options, writing the error and reporting false on a bad one.
func (rc *conn) zsetOp(tx *store.Tx, a *zsetOpArgs, res *zresult, card *int64) (bool, error) {
	src := make([]zsrc, len(a.keys))
	for i, k := range a.keys {
		found, err := zread(tx, k, &src[i])
		if err != nil {
			return false, err
		}
		if !found {
			rc.keymiss(k)
		}
		src[i].weight = 1
	}
	opts := a.opts
	for len(opts) > 0 {
		o := opts[0]
		switch {
		case a.op != zopDiff && !a.card && len(opts) >= len(src)+1 && is(o, "weights"):
			for i := range src {
				w, ok := parseZScore(opts[1+i])
				if !ok {
					rc.w.Error("ERR weight value is not a float")
					return false, nil
				}
				src[i].weight = w
			}
			opts = opts[1+len(src):]
		case a.op != zopDiff && !a.card && len(opts) >= 2 && is(o, "aggregate"):
			switch {
			case is(opts[1], "sum"):
				a.agg = zaggSum
			case is(opts[1], "min"):
				a.agg = zaggMin
			case is(opts[1], "max"):
				a.agg = zaggMax
			default:
				rc.w.Error(errSyntax)
				return false, nil
			}
			opts = opts[2:]
		case !a.card && !a.store && is(o, "withscores"):
			a.withScores = true
			opts = opts[1:]
		case a.card && len(opts) >= 2 && is(o, "limit"):
			n, ok := resp.ParseInt(opts[1])
			if !ok || n < 0 {
				rc.w.Error("ERR LIMIT can't be negative")
				return false, nil
			}
			a.limit = n
			opts = opts[2:]
		default:
			rc.w.Error(errSyntax)
			return false, nil
		}
	}
	if a.op != zopDiff {
		slices.SortStableFunc(src, func(x, y zsrc) int { return cmp.Compare(x.len(), y.len()) })
	}
	switch a.op {
	case zopInter:
		if src[0].len() == 0 {
			break
		}
		src[0].each(func(m []byte, sc float64) {
			if a.card && a.limit > 0 && *card >= a.limit {
				return
			}
			score := src[0].weight * sc
			if math.IsNaN(score) {
				score = 0
			}
			for j := 1; j < len(src); j++ {
				v, ok := src[j].find(m)
				if !ok {
					return
				}
				zaggregate(&score, v*src[j].weight, a.agg)
			}
			if a.card {
				*card++
				return
			}
			res.ms = append(res.ms, m)
			res.scores = append(res.scores, score)
		})
	case zopUnion:
		acc := map[string]int{}
		for i := range src {
			src[i].each(func(m []byte, sc float64) {
				score := src[i].weight * sc
				if math.IsNaN(score) {
					score = 0
				}
				if j, ok := acc[string(m)]; ok {
					zaggregate(&res.scores[j], score, a.agg)
					return
				}
				acc[string(m)] = len(res.ms)
				res.ms = append(res.ms, m)
				res.scores = append(res.scores, score)
			})
		}
	case zopDiff:
		src[0].each(func(m []byte, sc float64) {
			for j := 1; j < len(src); j++ {
				if _, ok := src[j].find(m); ok {
					return
				}
			}
			res.ms = append(res.ms, m)
			res.scores = append(res.scores, sc)
		})
	}
	res.sort()
	for _, m := range res.ms {
		res.hint = max(res.hint, len(m))
	}
	return true, nil
}

// parseNumKeys reads numkeys at argv[at] and splits the keys from the
// options, answering Redis's errors.
func (rc *conn) parseZNumKeys(argv [][]byte, at int) (keys, opts [][]byte, ok bool) {
	n, ok := rc.parseInt(argv[at])
	if !ok {
		return nil, nil, false
	}
	if n < 1 {
		rc.w.Error("ERR at least 1 input key is needed for '" + string(bytes.ToLower(argv[0])) + "' command")
		return nil, nil, false
	}
	if n > int64(len(argv)-at-1) {
		rc.w.Error(errSyntax)
		return nil, nil, false
	}
	return argv[at+1 : at+1+int(n)], argv[at+1+int(n):], true
}

func (rc *conn) zsetOpRead(argv [][]byte, op int, card bool) {
	keys, opts, ok := rc.parseZNumKeys(argv, 1)
	if !ok {
		return
	}
	a := zsetOpArgs{op: op, card: card, keys: keys, opts: opts}
	var res zresult
	var n int64
	replied := false
	err := rc.st.Tx(keys, func(tx *store.Tx) error {
		ok, err := rc.zsetOp(tx, &a, &res, &n)
		replied = !ok
		return err
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case replied:
	case card:
		rc.w.Int(n)
	default:
		rc.writeZHeader(res.Len(), a.withScores)
		for i, m := range res.ms {
			rc.writeZMember(m, res.scores[i], a.withScores)
		}
	}
}

func (rc *conn) zsetOpStore(argv [][]byte, op int) {
	keys, opts, ok := rc.parseZNumKeys(argv, 2)
	if !ok {
		return
	}
	dst := argv[1]
	a := zsetOpArgs{op: op, store: true, keys: keys, opts: opts}
	var res zresult
	replied, cleared := false, false
	err := rc.st.Tx(append([][]byte{dst}, keys...), func(tx *store.Tx) (err error) {
		ok, err := rc.zsetOp(tx, &a, &res, nil)
		if replied = !ok; replied || err != nil {
			return err
		}
		cleared, err = zstore(tx, dst, &res, res.Len())
		return err
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case replied:
	default:
		rc.notifyStored(server.EventZSet, zopStoreEvents[op], dst, res.Len() > 0, cleared)
		rc.w.Int(int64(res.Len()))
	}
}

var zopStoreEvents = [...]string{zopUnion: "zunionstore", zopInter: "zinterstore", zopDiff: "zdiffstore"}

// zstore replaces whatever dst holds with res (deleting dst when res is
// empty), and reports whether dst held a value.
func zstore(tx *store.Tx, dst []byte, res *zresult, n int) (cleared bool, err error) {
	cleared = tx.Clear(dst)
	if res.Len() == 0 {
		return cleared, nil
	}
	var z store.ZSet
	if err := tx.ZSet(dst, &z, true); err != nil {
		return cleared, err
	}
	z.Reserve(n, res.hint)
	for i, m := range res.ms {
		z.Set(m, res.scores[i])
	}
	tx.DoneZSet(&z)
	return cleared, nil
}

func cmdZUnion(rc *conn, argv [][]byte)      { rc.zsetOpRead(argv, zopUnion, false) }
func cmdZInter(rc *conn, argv [][]byte)      { rc.zsetOpRead(argv, zopInter, false) }
func cmdZDiff(rc *conn, argv [][]byte)       { rc.zsetOpRead(argv, zopDiff, false) }
func cmdZInterCard(rc *conn, argv [][]byte)  { rc.zsetOpRead(argv, zopInter, true) }
func cmdZUnionStore(rc *conn, argv [][]byte) { rc.zsetOpStore(argv, zopUnion) }
func cmdZInterStore(rc *conn, argv [][]byte) { rc.zsetOpStore(argv, zopInter) }
func cmdZDiffStore(rc *conn, argv [][]byte)  { rc.zsetOpStore(argv, zopDiff) }

// cmdZRangeStore is ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV]
// [LIMIT offset count].
func cmdZRangeStore(rc *conn, argv [][]byte) {
	sp, ok := rc.parseZRange(argv, 3, zByAuto, false, false)
	if !ok {
		return
	}
	if sp.withScores {
		rc.w.Error(errSyntax)
		return
	}
	dst, src := argv[1], argv[2]
	var res zresult
	cleared := false
	err := rc.st.Tx([][]byte{dst, src}, func(tx *store.Tx) (err error) {
		var z store.ZSet
		if err := tx.ZSet(src, &z, false); err != nil {
			return err
		}
		if lo, hi := sp.span(&z); lo <= hi {
			var ms keyList
			z.Range(lo, hi, sp.rev, func(m []byte, s float64) bool {
				ms.add(m)
				res.scores = append(res.scores, s)
				return true
			})
			start := 0
			for _, end := range ms.offs {
				res.ms = append(res.ms, ms.buf[start:end])
				start = end
			}
		}
		tx.DoneZSet(&z)
		// Redis 7.2 sizes the result by its count for a rank range and
		// makes a score or lex range's big whatever it holds (its
		// zsetTypeCreate gets -1 as a size_t for an unknown length).
		n := math.MaxInt
		if sp.by == zByRank {
			n = res.Len()
		}
		cleared, err = zstore(tx, dst, &res, n)
		return err
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	rc.notifyStored(server.EventZSet, "zrangestore", dst, res.Len() > 0, cleared)
	rc.w.Int(int64(res.Len()))
}

// cmdZMPop is ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]: the
// first non-empty sorted set's name and up to count members popped.
func cmdZMPop(rc *conn, argv [][]byte) {
	keys, maxSide, count, ok := rc.parseMPop(argv, "max", "min")
	if !ok {
		return
	}
	popped, emptied := false, false
	var from []byte
	err := rc.st.Tx(keys, func(tx *store.Tx) error {
		var z store.ZSet
		for _, k := range keys {
			if err := tx.ZSet(k, &z, true); err != nil {
				return err
			}
			if z.Len() == 0 {
				tx.DoneZSet(&z)
				continue
			}
			popped = true
			rc.w.Array(2)
			rc.w.Bulk(userKey(k))
			rc.zpopLocked(&z, count, maxSide, true)
			from, emptied = k, z.Len() == 0
			return nil
		}
		return nil
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case !popped:
		rc.w.NullArray()
	default:
		rc.notifyZPopped(from, maxSide, emptied)
	}
}
