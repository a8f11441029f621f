package store

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"strconv"
	"unsafe"

	"github.com/minikv/minikv/internal/dtoa"
)

// ZSet is a sorted set value, as the function given to Store.UpdateZSet or
// ViewZSet sees it with the key's shard locked. Members are ordered by
// score, then bytewise by member, as in Redis; ranks count from 0 in that
// order. Slices it returns alias the store's memory or the handle's and
// are valid until the next call on the handle and never after the
// function returns.
//
// A small sorted set is a listpack of member, score, member, score, ... in
// order, the score written as Redis 7.2 writes it (an integer when the
// double is one, else d2string's shortest form); one with more than ZSetEntries members or a
// member longer than ZSetValue bytes is a bigZSet.
type ZSet struct {
	c   coll
	buf [32]byte // a score's text
}

// UpdateZSet runs fn with the sorted set under key for reading and
// writing; see collection for the rules.
func (s *Store) UpdateZSet(key []byte, z *ZSet, fn func() error) error {
	return s.collection(key, KindZSet, true, &z.c, fn)
}

// ViewZSet runs fn with the sorted set under key for reading only.
func (s *Store) ViewZSet(key []byte, z *ZSet, fn func() error) error {
	return s.collection(key, KindZSet, false, &z.c, fn)
}

// ZSet opens the sorted set under key in the Tx, as UpdateZSet (write) or
// ViewZSet would.
func (tx *Tx) ZSet(key []byte, z *ZSet, write bool) error {
	return tx.open(key, KindZSet, write, &z.c)
}

// DoneZSet settles z now: its key may be opened again.
func (tx *Tx) DoneZSet(z *ZSet) { tx.done(&z.c) }

// Exists reports whether the key held a sorted set when the call began.
func (z *ZSet) Exists() bool { return z.c.found }

// Len is the number of members.
func (z *ZSet) Len() int {
	if z.c.obj != nil {
		return z.c.obj.len()
	}
	return z.c.length() / 2
}

// Encoding is the encoding's name in OBJECT ENCODING: listpack or
// skiplist, as Redis names them.
func (z *ZSet) Encoding() string {
	if z.c.obj != nil {
		return "skiplist"
	}
	return "listpack"
}

func (z *ZSet) big() *bigZSet {
	if z.c.obj == nil {
		return nil
	}
	return z.c.obj.(*bigZSet)
}

// zcmp orders (score, member) pairs as Redis does.
func zcmp(s1 float64, m1 []byte, s2 float64, m2 []byte) int {
	switch {
	case s1 < s2:
		return -1
	case s1 > s2:
		return 1
	}
	return bytes.Compare(m1, m2)
}

// AppendListpackScore appends score as a small sorted set's listpack holds
// it (Redis's zzlInsertAt: double2ll, else d2string).
func appendLPScore(dst []byte, score float64) []byte {
	if score >= -float64(math.MaxInt64/2) && score <= float64(math.MaxInt64/2) && score == float64(int64(score)) {
		return strconv.AppendInt(dst, int64(score), 10)
	}
	return AppendD2String(dst, score)
}

// AppendD2String appends score as Redis 7.2's d2string writes it (a
// small sorted set's scores in its listpack, and so in ZSCAN):
// dtoa.AppendDouble72.
func AppendD2String(dst []byte, v float64) []byte {
	return dtoa.AppendDouble72(dst, v)
}

// appendScanScore appends score as Redis 7.2's ZSCAN writes a big sorted
// set's scores (ld2string LD_STR_AUTO: "%.17Lg" of the double, with inf
// and -inf).
func appendScanScore(dst []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(dst, "inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, v, 'g', 17, 64)
}

// lpScore reads a listpack score entry.
func lpScore(en lpEntry) float64 {
	if en.Str == nil {
		return float64(en.Int)
	}
	f, err := strconv.ParseFloat(string(en.Str), 64)
	if err != nil {
		switch string(en.Str) {
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
	}
	return f
}

// lpZFind returns the offset of member's entry, or -1.
func lpZFind(lp []byte, member []byte) int {
	if lp == nil {
		return -1
	}
	for p := lpFirst(lp); p >= 0; {
		if lpGet(lp, p).equal(member) {
			return p
		}
		p = lpNext(lp, lpNext(lp, p))
	}
	return -1
}

// Score returns member's score.
func (z *ZSet) Score(member []byte) (float64, bool) {
	if b := z.big(); b != nil {
		return b.score(member)
	}
	lp := z.c.lp
	p := lpZFind(lp, member)
	if p < 0 {
		return 0, false
	}
	return lpScore(lpGet(lp, lpNext(lp, p))), true
}

// Set gives member score, adding it if it is new, and reports whether it
// was added. score must not be NaN.
func (z *ZSet) Set(member []byte, score float64) bool {
	u := z.c.unrecorded
	added := z.setScore(member, score)
	z.c.unrecorded = u
	var buf [32]byte
	z.c.record("ZADD", formatScore(buf[:0], score), member)
	return added
}

func (z *ZSet) setScore(member []byte, score float64) bool {
	c := &z.c
	if !c.write {
		panic("store: ZSet.Set in ViewZSet")
	}
	if b := z.big(); b != nil {
		c.dirty, c.unrecorded = true, true
		return b.set(member, score)
	}
	p := lpZFind(c.lp, member)
	if p >= 0 {
		if old := lpScore(lpGet(c.lp, lpNext(c.lp, p))); old == score && math.Signbit(old) == math.Signbit(score) {
			return false
		}
	}
	s := c.s
	if p < 0 && (int64(len(member)) > s.lim.zsetValue.Load() || int64(z.Len()+1) > s.lim.zsetEntries.Load()) {
		z.toBig().set(member, score)
		return true
	}
	c.own()
	if p >= 0 {
		c.lp = lpDelete(c.lp, lpNext(c.lp, p))
		c.lp = lpDelete(c.lp, p)
	}
	// The first pair ordered after (score, member).
	at := len(c.lp) - 1
	for q := lpFirst(c.lp); q >= 0; {
		sp := lpNext(c.lp, q)
		en := lpGet(c.lp, q)
		var m []byte
		if en.Str != nil {
			m = en.Str
		} else {
			m = en.appendTo(c.num[:0])
		}
		if zcmp(lpScore(lpGet(c.lp, sp)), m, score, member) > 0 {
			at = q
			break
		}
		q = lpNext(c.lp, sp)
	}
	sc := appendLPScore(z.buf[:0], score)
	c.lp = lpInsert(c.lp, at, sc)
	c.lp = lpInsert(c.lp, at, member)
	c.keep()
	return p < 0
}

// Reserve makes an empty sorted set big at once when it is to hold n
// members, the longest maxLen bytes, past the listpack limits, as Redis
// creates the result of ZUNIONSTORE or ZRANGESTORE in its final encoding
// (so a -0 score stays -0, which a listpack would write as 0).
func (z *ZSet) Reserve(n, maxLen int) {
	s := z.c.s
	if z.c.obj == nil && z.Len() == 0 && (int64(n) > s.lim.zsetEntries.Load() || int64(maxLen) > s.lim.zsetValue.Load()) {
		z.toBig()
	}
}

// toBig turns the listpack into a bigZSet.
func (z *ZSet) toBig() *bigZSet {
	c := &z.c
	b := newBigZSet(&c.s.mem, c.sh.seed, z.Len()+1)
	if c.lp != nil {
		for p := lpFirst(c.lp); p >= 0; {
			m := lpGet(c.lp, p).appendTo(c.fnum[:0])
			p = lpNext(c.lp, p)
			b.appendSorted(m, lpScore(lpGet(c.lp, p)))
			p = lpNext(c.lp, p)
		}
	}
	c.obj, c.enc, c.lp, c.dirty, c.unrecorded = b, encBig, nil, true, true
	return b
}

// Delete removes member and reports whether it was there.
func (z *ZSet) Delete(member []byte) bool {
	u := z.c.unrecorded
	if !z.del(member) {
		return false
	}
	z.c.unrecorded = u
	z.c.record("ZREM", member)
	return true
}

func (z *ZSet) del(member []byte) bool {
	c := &z.c
	if b := z.big(); b != nil {
		if b.del(member) {
			c.dirty, c.unrecorded = true, true
			return true
		}
		return false
	}
	p := lpZFind(c.lp, member)
	if p < 0 {
		return false
	}
	c.own()
	c.lp = lpDelete(c.lp, lpNext(c.lp, p))
	c.lp = lpDelete(c.lp, p)
	return true
}

// Rank returns member's rank in ascending order and its score.
func (z *ZSet) Rank(member []byte) (int, float64, bool) {
	if b := z.big(); b != nil {
		return b.rank(member)
	}
	lp := z.c.lp
	if lp == nil {
		return 0, 0, false
	}
	r := 0
	for p := lpFirst(lp); p >= 0; r++ {
		sp := lpNext(lp, p)
		if lpGet(lp, p).equal(member) {
			return r, lpScore(lpGet(lp, sp)), true
		}
		p = lpNext(lp, sp)
	}
	return 0, 0, false
}

// Range calls fn for the members of ranks start to end (inclusive,
// 0 <= start <= end < Len), ascending, or descending from end when rev,
// until fn returns false. fn must not change the set.
func (z *ZSet) Range(start, end int, rev bool, fn func(member []byte, score float64) bool) {
	if start > end || start < 0 || end >= z.Len() {
		return
	}
	if b := z.big(); b != nil {
		b.walk(start, end, rev, fn)
		return
	}
	lp := z.c.lp
	if rev {
		// Walk back from the end: the pair of rank end is (Len-1-end)
		// pairs before it.
		p := lpLast(lp) // the last score
		for i := z.Len() - 1; i > end; i-- {
			p = lpPrev(lp, lpPrev(lp, p))
		}
		for i := end; i >= start; i-- {
			mp := lpPrev(lp, p)
			if !fn(z.c.element(lpGet(lp, mp)), lpScore(lpGet(lp, p))) {
				return
			}
			p = lpPrev(lp, mp)
		}
		return
	}
	p := lpFirst(lp)
	for i := 0; i < start; i++ {
		p = lpNext(lp, lpNext(lp, p))
	}
	for i := start; i <= end; i++ {
		sp := lpNext(lp, p)
		if !fn(z.c.element(lpGet(lp, p)), lpScore(lpGet(lp, sp))) {
			return
		}
		p = lpNext(lp, sp)
	}
}

// CountBelow is the number of members whose score is below x, or at most
// x when inclusive: the first rank of a score range.
func (z *ZSet) CountBelow(x float64, inclusive bool) int {
	return z.partition(func(m []byte, s float64) bool { return s < x || inclusive && s == x })
}

// RangeFromScore calls fn with the members whose score is at least x,
// in order, until fn returns false: a range by score that starts where
// the scores do, without counting ranks (GEOSEARCH reads nine such
// ranges a query; CountBelow and then Range walked the chunks to a rank
// and back, twice per range).
func (z *ZSet) RangeFromScore(x float64, fn func(member []byte, score float64) bool) {
	if b := z.big(); b != nil {
		b.rangeFromScore(x, fn)
		return
	}
	lp := z.c.lp
	if lp == nil {
		return
	}
	for p := lpFirst(lp); p >= 0; {
		sp := lpNext(lp, p)
		s := lpScore(lpGet(lp, sp))
		if s >= x && !fn(z.c.element(lpGet(lp, p)), s) {
			return
		}
		p = lpNext(lp, sp)
	}
}

// CountBelowLex is the number of members bytewise below m, or at most m
// when inclusive, the set's scores being all equal (ZRANGEBYLEX).
func (z *ZSet) CountBelowLex(m []byte, inclusive bool) int {
	return z.partition(func(mm []byte, _ float64) bool {
		c := bytes.Compare(mm, m)
		return c < 0 || inclusive && c == 0
	})
}

// partition is the number of leading members for which below holds, by
// binary search over the order (below holds for a prefix of it).
func (z *ZSet) partition(below func(m []byte, s float64) bool) int {
	if b := z.big(); b != nil {
		return b.partition(below)
	}
	lp := z.c.lp
	if lp == nil {
		return 0
	}
	n := 0
	for p := lpFirst(lp); p >= 0; n++ {
		sp := lpNext(lp, p)
		if !below(z.c.element(lpGet(lp, p)), lpScore(lpGet(lp, sp))) {
			break
		}
		p = lpNext(lp, sp)
	}
	return n
}

// Pop removes the member of the lowest rank, or of the highest when
// maxSide, appends it to dst and returns it with its score; the set must
// not be empty. The member is copied, so nothing returned aliases z (a
// caller's handle stays on its stack: ZPOPMIN allocates nothing).
func (z *ZSet) Pop(maxSide bool, dst []byte) ([]byte, float64) {
	u := z.c.unrecorded
	n := len(dst)
	dst, score := z.pop(maxSide, dst)
	z.c.unrecorded = u
	z.c.record("ZREM", dst[n:])
	return dst, score
}

func (z *ZSet) pop(maxSide bool, dst []byte) ([]byte, float64) {
	r := 0
	if maxSide {
		r = z.Len() - 1
	}
	var score float64
	if b := z.big(); b != nil {
		b.walk(r, r, false, func(m []byte, s float64) bool {
			dst, score = append(dst, m...), s
			return false
		})
	} else {
		lp := z.c.lp
		p := lpFirst(lp)
		if maxSide {
			p = lpPrev(lp, lpLast(lp))
		}
		dst = lpGet(lp, p).appendTo(dst)
		score = lpScore(lpGet(lp, lpNext(lp, p)))
	}
	z.DeleteRange(r, r)
	return dst, score
}

// DeleteRange removes the members of ranks start to end (inclusive) and
// returns how many it removed.
func (z *ZSet) DeleteRange(start, end int) int {
	n := z.Len()
	start, end = max(start, 0), min(end, n-1)
	if start > end {
		return 0
	}
	c := &z.c
	if b := z.big(); b != nil {
		c.dirty, c.unrecorded = true, true
		return b.delRange(start, end)
	}
	c.own()
	p := lpFirst(c.lp)
	for i := 0; i < start; i++ {
		p = lpNext(c.lp, lpNext(c.lp, p))
	}
	for i := start; i <= end; i++ {
		c.lp = lpDelete(c.lp, p)
		c.lp = lpDelete(c.lp, p)
	}
	return end - start + 1
}

// Scan calls fn for a batch of about count members from cursor on, with
// the score as ZSCAN shows it, and returns the next cursor, 0 at the end.
// A small set is given whole.
func (z *ZSet) Scan(cursor uint64, count int, fn func(member, score []byte)) uint64 {
	if b := z.big(); b != nil {
		return b.t.scan(cursor, count, func(m, v []byte) {
			fn(m, appendScanScore(z.buf[:0], math.Float64frombits(binary.LittleEndian.Uint64(v))))
		})
	}
	lp := z.c.lp
	if lp == nil {
		return 0
	}
	for p := lpFirst(lp); p >= 0; {
		m := lpGet(lp, p).appendTo(z.c.fnum[:0])
		p = lpNext(lp, p)
		fn(m, z.c.element(lpGet(lp, p)))
		p = lpNext(lp, p)
	}
	return 0
}

// Random returns a member chosen uniformly at random and its score; the
// set must not be empty.
func (z *ZSet) Random() (member []byte, score float64) {
	if b := z.big(); b != nil {
		for {
			if m, v, ok := b.t.at(rand.IntN(len(b.t.slots))); ok {
				return m, math.Float64frombits(binary.LittleEndian.Uint64(v))
			}
		}
	}
	r := rand.IntN(z.Len())
	z.Range(r, r, false, func(m []byte, s float64) bool { member, score = m, s; return false })
	return member, score
}

// bigZSet is a big sorted set: a table from member to its 8-byte score
// (little-endian bits), and the order as a list of chunks, each a run of
// entries | 8-byte score | uvarint len | member | sorted by (score,
// member), with its count. A chunk is split past zChunkMax bytes and
// merged into its neighbour when small, so an insert moves at most a few
// KiB; finding a chunk is a binary search on the chunks' first entries,
// a rank a sum over the chunk counts before it. No Go pointer per
// member: one per chunk.
type bigZSet struct {
	t       *table
	chunks  []zchunk
	bytes   int64    // capacity of the chunks' data
	retired [][]byte // slab slots the chunks let go of, back to the slab at reclaim
	pb      *baseRun // the key's durable base record, for patches (patch.go)
}

type zchunk struct {
	data []byte
	n    int
	slot bool // data is a slot of the store's chunk slab (bigmem.go), not on the heap
	// marked says marks hold where the chunk's entries are: marks[k-1]
	// is the offset of the first entry that starts at or after
	// k*zChunkMax/zMarks, len(data) if none. Every change of data's
	// entries (each one changes n too) clears it; a range read that
	// starts inside the chunk sets it (mark) and walks from the last
	// mark before its start instead of from the first entry.
	marked bool
	marks  [zMarks - 1]uint16
}

const (
	zChunkMax      = 4096
	zMarks         = 8
	zChunkOverhead = int64(unsafe.Sizeof(zchunk{})) // a zchunk in the chunk slice
)

func newBigZSet(m *bigMem, seed maphash.Seed, n int) *bigZSet {
	return &bigZSet{t: newTable(m, seed, n)}
}

// reclaim gives back what the sorted set let go of while a handle was
// out: the table's slices and the chunks' slots (bigmem.go's rule: a
// command may still read them until its function returns).
func (b *bigZSet) reclaim() {
	b.t.reclaim()
	for i, d := range b.retired {
		b.t.mem.freeChunk(d, false)
		b.retired[i] = nil
	}
	b.retired = b.retired[:0]
}

// free gives back all the sorted set's memory.
func (b *bigZSet) free() {
	b.t.free()
	for _, ch := range b.chunks {
		if ch.slot {
			b.t.mem.freeChunk(ch.data, true)
		}
	}
	for _, d := range b.retired {
		b.t.mem.freeChunk(d, true)
	}
	b.chunks, b.retired = nil, nil
}

// chunkData returns an empty buffer for a chunk of n bytes: a slot of the
// store's chunk slab when n fits one (its capacity is then zChunkMax),
// else a heap slice of n bytes.
func (b *bigZSet) chunkData(n int) ([]byte, bool) {
	if n <= zChunkMax {
		if d, ok := b.t.mem.chunk(); ok {
			return d, true
		}
	}
	return make([]byte, 0, n), false
}

// drop lets go of a chunk's buffer: a slot goes back to the slab at
// reclaim, a heap slice to the collector.
func (b *bigZSet) drop(d []byte, slot bool) {
	if slot {
		b.retired = append(b.retired, d)
	}
}

func (b *bigZSet) size() int64 {
	return b.t.size() + b.bytes + int64(cap(b.chunks))*zChunkOverhead
}
func (b *bigZSet) len() int { return b.t.n }

// zentry decodes the entry at off in d and returns its end.
func zentry(d []byte, off int) (score float64, member []byte, end int) {
	score = math.Float64frombits(binary.LittleEndian.Uint64(d[off:]))
	l, k := binary.Uvarint(d[off+8:])
	s := off + 8 + k
	return score, d[s : s+int(l) : s+int(l)], s + int(l)
}

func zentryLen(member []byte) int { return 8 + uvarintLen(uint64(len(member))) + len(member) }

func appendZEntry(d []byte, score float64, member []byte) []byte {
	d = binary.LittleEndian.AppendUint64(d, math.Float64bits(score))
	d = binary.AppendUvarint(d, uint64(len(member)))
	return append(d, member...)
}

func (b *bigZSet) score(member []byte) (float64, bool) {
	v, ok := b.t.get(member)
	if !ok {
		return 0, false
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(v)), true
}

// chunkFor returns the chunk where (score, member) is or belongs: the last
// one whose first entry is not after it (the first chunk if none).
func (b *bigZSet) chunkFor(score float64, member []byte) int {
	lo, hi := 1, len(b.chunks) // find the first chunk whose first entry is after
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		s, m, _ := zentry(b.chunks[mid].data, 0)
		if zcmp(s, m, score, member) > 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo - 1
}

// find returns the chunk, offset and position in it of the first entry not
// before (score, member), and whether it is that entry.
func (b *bigZSet) find(score float64, member []byte) (ci, off, pos int, found bool) {
	if len(b.chunks) == 0 {
		return 0, 0, 0, false
	}
	ci = b.chunkFor(score, member)
	d := b.chunks[ci].data
	for off < len(d) {
		s, m, end := zentry(d, off)
		if c := zcmp(s, m, score, member); c >= 0 {
			return ci, off, pos, c == 0
		}
		off = end
		pos++
	}
	return ci, off, pos, false
}

func (b *bigZSet) setData(ci int, d []byte, slot bool) {
	ch := &b.chunks[ci]
	b.bytes += int64(cap(d) - cap(ch.data))
	b.drop(ch.data, ch.slot)
	ch.data, ch.slot = d, slot
}

// insert puts (score, member) in the order; it must not be there.
//
// A chunk that would pass zChunkMax makes room first. An entry after the
// last one (or before the first) starts a new chunk of its own, leaving
// the full one full, so that members added in order (ZADD of increasing
// scores, the usual way a big sorted set is built) fill their chunks
// whole. Anywhere else the chunk first shares its entries with a
// neighbour that has room (rebalance), and splits in halves only when
// neither has: members added in random order then fill chunks to about
// 87 % on average instead of 72 % (a B*-tree's rule; each chunk is a
// slot of zChunkMax bytes however full, so this is 18 % fewer bytes).
// Chunks are allocated at zChunkMax once they are that large, so they are
// not regrown (which would leave the smaller copies to the collector).
func (b *bigZSet) insert(score float64, member []byte) {
	n := zentryLen(member)
	if len(b.chunks) == 0 {
		b.chunks = append(b.chunks, zchunk{})
	}
	ci, off, _, _ := b.find(score, member)
	if ch := &b.chunks[ci]; ch.n > 0 && len(ch.data)+n > zChunkMax {
		switch {
		case ci == len(b.chunks)-1 && off == len(ch.data):
			ci, off = b.addChunk(ci+1, n), 0
		case ci == 0 && off == 0:
			ci, off = b.addChunk(0, n), 0
		default:
			if b.rebalance(ci, n) {
				ci, off, _, _ = b.find(score, member)
			}
			if ch := &b.chunks[ci]; len(ch.data)+n > zChunkMax && ch.n > 1 {
				if mid := b.split(ci); off > mid {
					ci, off = ci+1, off-mid
				}
			}
		}
	}
	b.pb.touch(ci, b.nodeLen)
	ch := &b.chunks[ci]
	d := b.room(ci, n)
	d = d[:len(d)+n]
	copy(d[off+n:], d[off:])
	appendZEntry(d[off:off], score, member)
	ch.data = d
	ch.n++
	ch.marked = false
}

// addChunk inserts an empty chunk at ci with room for zChunkMax bytes
// (or an n-byte entry) and returns ci.
func (b *bigZSet) addChunk(ci, n int) int {
	b.pb.insert(ci, b.nodeLen)
	b.chunks = append(b.chunks, zchunk{})
	copy(b.chunks[ci+1:], b.chunks[ci:])
	b.chunks[ci] = zchunk{}
	d, slot := b.chunkData(max(zChunkMax, n))
	b.setData(ci, d, slot)
	return ci
}

// room returns chunk ci's data, made able to take n more bytes: doubled
// while the chunk is small, then up to zChunkMax (or what one large entry
// needs).
func (b *bigZSet) room(ci, n int) []byte {
	d := b.chunks[ci].data
	if len(d)+n <= cap(d) {
		return d
	}
	nd, slot := b.chunkData(max(len(d)+n, min(max(2*cap(d), 256), zChunkMax)))
	nd = nd[:len(d)]
	copy(nd, d)
	b.setData(ci, nd, slot)
	return nd
}

// split halves chunk ci (of at least two entries) into two and returns
// the offset in it where the second half began.
func (b *bigZSet) split(ci int) int {
	b.pb.touch(ci, b.nodeLen)
	b.pb.insert(ci+1, b.nodeLen)
	d := b.chunks[ci].data
	half, off := b.chunks[ci].n/2, 0
	for range half {
		_, _, off = zentry(d, off)
	}
	right, slot := b.chunkData(max(zChunkMax, len(d)-off))
	right = right[:len(d)-off]
	copy(right, d[off:])
	b.bytes += int64(cap(right))
	b.chunks = append(b.chunks, zchunk{})
	copy(b.chunks[ci+2:], b.chunks[ci+1:])
	b.chunks[ci+1] = zchunk{data: right, n: b.chunks[ci].n - half, slot: slot}
	b.chunks[ci].data = d[:off]
	b.chunks[ci].n = half
	b.chunks[ci].marked = false
	return off
}

// rebalance moves entries of chunk ci, too full to take an entry of n
// bytes, to a neighbour that can take at least two such entries, the
// left one first: as many as leave the two about equally full. It
// reports whether it moved any.
func (b *bigZSet) rebalance(ci, n int) bool {
	if n > zChunkMax/4 {
		return false
	}
	d := b.chunks[ci].data
	if ci > 0 && len(b.chunks[ci-1].data)+2*n <= zChunkMax {
		// The first entries, up to half the difference in bytes.
		want := (len(d) - len(b.chunks[ci-1].data)) / 2
		cut, k := 0, 0
		for cut < len(d) {
			_, _, e := zentry(d, cut)
			if e > want {
				break
			}
			cut, k = e, k+1
		}
		if k > 0 {
			b.pb.touch(ci-1, b.nodeLen)
			b.pb.touch(ci, b.nodeLen)
			ld := b.room(ci-1, cut)
			b.chunks[ci-1].data = append(ld, d[:cut]...)
			b.chunks[ci-1].n += k
			b.chunks[ci].data = d[:copy(d, d[cut:])]
			b.chunks[ci].n -= k
			b.chunks[ci-1].marked, b.chunks[ci].marked = false, false
			return true
		}
	}
	if ci+1 < len(b.chunks) && len(b.chunks[ci+1].data)+2*n <= zChunkMax {
		// The last entries, up to half the difference in bytes.
		want := (len(d) - len(b.chunks[ci+1].data)) / 2
		cut, k := 0, b.chunks[ci].n
		for cut < len(d) && len(d)-cut > want {
			_, _, cut = zentry(d, cut)
			k--
		}
		if moved := len(d) - cut; k > 0 && moved > 0 {
			b.pb.touch(ci, b.nodeLen)
			b.pb.touch(ci+1, b.nodeLen)
			rd := b.room(ci+1, moved)
			old := len(rd)
			rd = rd[:old+moved]
			copy(rd[moved:], rd[:old])
			copy(rd, d[cut:])
			b.chunks[ci+1].data = rd
			b.chunks[ci+1].n += k
			b.chunks[ci].data = d[:cut]
			b.chunks[ci].n -= k
			b.chunks[ci].marked, b.chunks[ci+1].marked = false, false
			return true
		}
	}
	return false
}

// remove deletes the entry at off of chunk ci.
func (b *bigZSet) remove(ci, off int) {
	b.pb.touch(ci, b.nodeLen)
	ch := &b.chunks[ci]
	_, _, end := zentry(ch.data, off)
	ch.data = append(ch.data[:off], ch.data[end:]...)
	ch.n--
	ch.marked = false
	b.tidy(ci)
}

// tidy drops chunk ci when it is empty and merges it with the next one
// when both fit in one.
func (b *bigZSet) tidy(ci int) {
	ch := &b.chunks[ci]
	if ch.n == 0 {
		b.pb.remove(ci, ci+1, b.nodeLen)
		b.bytes -= int64(cap(ch.data))
		b.drop(ch.data, ch.slot)
		b.chunks = append(b.chunks[:ci], b.chunks[ci+1:]...)
		b.chunks[len(b.chunks):cap(b.chunks)][0] = zchunk{}
		return
	}
	for _, j := range []int{ci, ci - 1} {
		if j < 0 || j+1 >= len(b.chunks) {
			continue
		}
		l, r := &b.chunks[j], &b.chunks[j+1]
		if len(l.data)+len(r.data) <= zChunkMax/2 {
			b.pb.touch(j, b.nodeLen)
			if len(l.data)+len(r.data) > cap(l.data) {
				nd, slot := b.chunkData(zChunkMax)
				nd = nd[:len(l.data)]
				copy(nd, l.data)
				b.setData(j, nd, slot)
			}
			l.data = append(l.data, r.data...)
			l.n += r.n
			r.n = 0
			l.marked = false
			b.tidy(j + 1)
			return
		}
	}
}

func (b *bigZSet) set(member []byte, score float64) bool {
	var v [8]byte
	if old, ok := b.score(member); ok {
		if old == score && math.Signbit(old) == math.Signbit(score) {
			return false
		}
		ci, off, _, _ := b.find(old, member)
		b.remove(ci, off)
		binary.LittleEndian.PutUint64(v[:], math.Float64bits(score))
		b.t.set(member, v[:])
		b.insert(score, member)
		return false
	}
	binary.LittleEndian.PutUint64(v[:], math.Float64bits(score))
	b.t.set(member, v[:])
	b.insert(score, member)
	return true
}

// appendSorted adds a member after all others (building from an ordered
// source).
func (b *bigZSet) appendSorted(member []byte, score float64) {
	var v [8]byte
	binary.LittleEndian.PutUint64(v[:], math.Float64bits(score))
	b.t.set(member, v[:])
	n := len(b.chunks)
	if n == 0 || len(b.chunks[n-1].data)+zentryLen(member) > zChunkMax*3/4 && b.chunks[n-1].n > 0 {
		b.pb.insert(n, b.nodeLen)
		b.chunks = append(b.chunks, zchunk{})
		n++
		d, slot := b.chunkData(max(zChunkMax, zentryLen(member)))
		b.setData(n-1, d, slot)
	}
	b.pb.touch(n-1, b.nodeLen)
	ch := &b.chunks[n-1]
	if len(ch.data)+zentryLen(member) > cap(ch.data) {
		nd, slot := b.chunkData(len(ch.data) + zentryLen(member))
		nd = nd[:len(ch.data)]
		copy(nd, ch.data)
		b.setData(n-1, nd, slot)
	}
	ch.data = appendZEntry(ch.data, score, member)
	ch.n++
	ch.marked = false
}

func (b *bigZSet) del(member []byte) bool {
	old, ok := b.score(member)
	if !ok {
		return false
	}
	ci, off, _, _ := b.find(old, member)
	b.remove(ci, off)
	b.t.del(member)
	return true
}

// before is the number of members in the chunks before ci.
func (b *bigZSet) before(ci int) int {
	r := 0
	if ci <= len(b.chunks)/2 {
		for _, ch := range b.chunks[:ci] {
			r += ch.n
		}
		return r
	}
	r = b.t.n
	for _, ch := range b.chunks[ci:] {
		r -= ch.n
	}
	return r
}

func (b *bigZSet) rank(member []byte) (int, float64, bool) {
	s, ok := b.score(member)
	if !ok {
		return 0, 0, false
	}
	ci, _, pos, _ := b.find(s, member)
	return b.before(ci) + pos, s, true
}

// locate returns the chunk holding rank r and r's position in it.
func (b *bigZSet) locate(r int) (ci, pos int) {
	if r <= b.t.n/2 {
		for ci = 0; r >= b.chunks[ci].n; ci++ {
			r -= b.chunks[ci].n
		}
		return ci, r
	}
	r = b.t.n - r // members from r to the end
	for ci = len(b.chunks) - 1; r > b.chunks[ci].n; ci-- {
		r -= b.chunks[ci].n
	}
	return ci, b.chunks[ci].n - r
}

// offsets returns the start offsets of chunk ci's entries (into buf).
func (b *bigZSet) offsets(ci int, buf []int) []int {
	d := b.chunks[ci].data
	for off := 0; off < len(d); {
		buf = append(buf, off)
		_, _, off = zentry(d, off)
	}
	return buf
}

func (b *bigZSet) walk(start, end int, rev bool, fn func(member []byte, score float64) bool) {
	if !rev {
		ci, pos := b.locate(start)
		off := 0
		d := b.chunks[ci].data
		for range pos {
			_, _, off = zentry(d, off)
		}
		for i := start; i <= end; i++ {
			for off >= len(d) {
				ci++
				d, off = b.chunks[ci].data, 0
			}
			s, m, e := zentry(d, off)
			if !fn(m, s) {
				return
			}
			off = e
		}
		return
	}
	ci, pos := b.locate(end)
	var stack [512]int
	offs := b.offsets(ci, stack[:0])
	i := end
	for {
		for ; pos >= 0; pos-- {
			s, m, _ := zentry(b.chunks[ci].data, offs[pos])
			if !fn(m, s) {
				return
			}
			if i--; i < start {
				return
			}
		}
		ci--
		offs = b.offsets(ci, offs[:0])
		pos = len(offs) - 1
	}
}

func (b *bigZSet) partition(below func(m []byte, s float64) bool) int {
	// The first chunk whose first entry is not below, then within the
	// chunk before it.
	lo, hi := 0, len(b.chunks)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		s, m, _ := zentry(b.chunks[mid].data, 0)
		if below(m, s) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return 0
	}
	ci := lo - 1
	d := b.chunks[ci].data
	pos := 0
	for off := 0; off < len(d); pos++ {
		s, m, e := zentry(d, off)
		if !below(m, s) {
			break
		}
		off = e
	}
	return b.before(ci) + pos
}

func (b *bigZSet) rangeFromScore(x float64, fn func(member []byte, score float64) bool) {
	// The first chunk whose first score is not below x; the range may
	// begin in the chunk before it.
	lo, hi := 0, len(b.chunks)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s, _, _ := zentry(b.chunks[mid].data, 0); s < x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for ci := max(lo-1, 0); ci < len(b.chunks); ci++ {
		d := b.chunks[ci].data
		off := 0
		if ci == lo-1 {
			off = zskipBelow(d, b.chunks[ci].markBelow(x), x)
		}
		for off < len(d) {
			s, m, e := zentry(d, off)
			if !fn(m, s) {
				return
			}
			off = e
		}
	}
}

// markBelow returns the offset of an entry of the chunk whose score is
// below x, as late as the marks tell (0 when none is), marking the chunk
// first if it is not: where a walk to x may start.
func (ch *zchunk) markBelow(x float64) int {
	d := ch.data
	if !ch.marked && !ch.mark() {
		return 0
	}
	if invariantsOn {
		ch.checkMarks()
	}
	for k := len(ch.marks) - 1; k >= 0; k-- {
		if m := int(ch.marks[k]); m < len(d) && math.Float64frombits(binary.LittleEndian.Uint64(d[m:])) < x {
			return m
		}
	}
	return 0
}

// mark sets the chunk's marks from its entries; a chunk too large for
// 16-bit offsets (a member past zChunkMax alone in its chunk) is not
// marked.
func (ch *zchunk) mark() bool {
	d := ch.data
	if len(d) > math.MaxUint16 {
		return false
	}
	k := 1
	for off := 0; off < len(d) && k < zMarks; {
		for k < zMarks && off >= k*zChunkMax/zMarks {
			ch.marks[k-1] = uint16(off)
			k++
		}
		_, _, off = zentry(d, off)
	}
	for ; k < zMarks; k++ {
		ch.marks[k-1] = uint16(len(d))
	}
	ch.marked = true
	return true
}

// checkMarks panics if the marks are not what mark would set now: a
// change of the chunk's entries that did not clear marked (invariants
// builds only).
func (ch *zchunk) checkMarks() {
	was := ch.marks
	ch.mark()
	if ch.marks != was {
		panic("store: a sorted set chunk's marks are stale")
	}
}

// zskipBelow returns the offset of the first entry of chunk data d, from
// the entry at from, whose score is not below x (len(d) if none): the
// walk to where a range starts in the chunk before the first one starting
// at or after x, most of a narrow range query's entries (GEOSEARCH's
// cells), so it reads no member and decodes a one-byte length without
// Uvarint.
func zskipBelow(d []byte, from int, x float64) int {
	off := from
	for off+9 <= len(d) {
		if math.Float64frombits(binary.LittleEndian.Uint64(d[off:])) >= x {
			return off
		}
		if l := d[off+8]; l < 0x80 {
			off += 9 + int(l)
			continue
		}
		l, k := binary.Uvarint(d[off+8:])
		if k <= 0 {
			break // not the store's bytes
		}
		off += 8 + k + int(l)
	}
	return len(d)
}

func (b *bigZSet) delRange(start, end int) int {
	n := 0
	for i := end; i >= start; {
		ci, pos := b.locate(i)
		// Remove positions max(0, pos-(i-start)) .. pos of chunk ci.
		from := max(0, pos-(i-start))
		d := b.chunks[ci].data
		off := 0
		for range from {
			_, _, off = zentry(d, off)
		}
		stop := off
		for range pos - from + 1 {
			_, m, e := zentry(d, stop)
			b.t.del(m)
			stop = e
		}
		b.pb.touch(ci, b.nodeLen)
		ch := &b.chunks[ci]
		ch.data = append(d[:off], d[stop:]...)
		ch.n -= pos - from + 1
		ch.marked = false
		n += pos - from + 1
		i -= pos - from + 1
		b.tidy(ci)
	}
	return n
}

// appendFlat appends | uvarint count | then per member in order:
// uvarint len | member | 8-byte score |.
func (b *bigZSet) appendFlat(d []byte) []byte {
	d = b.appendFlatHead(d)
	for j := range b.chunks {
		d = b.appendNode(d, j)
	}
	return d
}

// zsetFromFlat rebuilds a bigZSet from appendFlat's bytes, checking them.
// Its mapped memory is freed when the bytes are refused.
func zsetFromFlat(m *bigMem, seed maphash.Seed, b []byte) (*bigZSet, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, errFlat
	}
	b = b[k:]
	z := newBigZSet(m, seed, int(n))
	if !z.addFlat(b, n) {
		z.free()
		return nil, errFlat
	}
	return z, nil
}

// addFlat adds the n members b holds, in order, reporting false for bytes
// that are not exactly that.
func (z *bigZSet) addFlat(b []byte, n uint64) bool {
	var ps float64
	var pm []byte
	for i := uint64(0); i < n; i++ {
		m, rest, ok := cutFlat(b)
		if !ok || len(rest) < 8 {
			return false
		}
		s := math.Float64frombits(binary.LittleEndian.Uint64(rest))
		b = rest[8:]
		if math.IsNaN(s) || i > 0 && zcmp(ps, pm, s, m) >= 0 {
			return false
		}
		if _, dup := z.t.get(m); dup {
			return false
		}
		z.appendSorted(m, s)
		ps, pm = s, m
	}
	return len(b) == 0
}
