package store

import (
	"errors"
	"math"
	"strconv"
)

// What RESTORE and DUMP need from the store beyond the handles: reading
// and building Redis's listpacks from outside the package (a DUMP payload
// carries them as they are), and putting a value of any kind under a key
// inside a Tx with the deadline and access state RESTORE gives it.

// ErrBadEncoding is returned for a listpack or intset that fails its
// checks.
var ErrBadEncoding = errors.New("store: malformed encoding")

// ListpackEach checks lp deeply (it may come from a client) and then
// calls fn with each entry's string form, in order; the slice is valid
// during the call only.
func ListpackEach(lp []byte, fn func(s []byte)) error {
	if lpValidate(lp) != nil {
		return ErrBadEncoding
	}
	var num [24]byte
	for p := lpFirst(lp); p >= 0; p = lpNext(lp, p) {
		en := lpGet(lp, p)
		if en.Str != nil {
			fn(en.Str)
		} else {
			fn(en.appendTo(num[:0]))
		}
	}
	return nil
}

// ListpackNew returns an empty listpack; ListpackAppend appends s to one
// (DUMP builds quicklist nodes with them).
func ListpackNew() []byte                { return lpNew() }
func ListpackAppend(lp, s []byte) []byte { return lpAppend(lp, s) }
func ListpackBytes(lp []byte) int        { return len(lp) }
func ListpackCount(lp []byte) int        { return lpCount(lp) }

// listpackOK reports whether lp, a well-formed listpack, is what the
// store builds for a value of kind from lp's elements, which it may then
// hold as it is (RestoreListpack): within the compact encoding's limits,
// and for a hash field, value pairs with no field twice, for a set
// members with none twice (a set of integers only too: Redis 7.2 keeps
// such a listpack, which SREM of its strings leaves), for a sorted set
// member, score pairs in the store's order (score, then member; which
// also rules out a pair twice) with no member twice and no score that is
// not a number. A list stays one listpack while each element pushed in
// turn fits (List.fits).
func listpackOK(kind Kind, lp []byte, l Limits) bool {
	n := lpCount(lp)
	switch {
	case n == 0:
		return false
	case kind == KindHash:
		if n%2 != 0 || int64(n/2) > l.HashEntries {
			return false
		}
	case kind == KindZSet:
		if n%2 != 0 || int64(n/2) > l.ZSetEntries {
			return false
		}
	case kind == KindSet:
		if int64(n) > l.SetListpackEntries {
			return false
		}
	case kind != KindList:
		return false
	}
	var keyBuf [16][]byte
	var intBuf [128]byte
	keys := keyBuf[:0]    // the fields or members, to find one twice
	ints := intBuf[:0]    // the string forms of those held as integers
	var prevScore float64 // the last pair's
	var member []byte     // the pair's
	i := 0
	for p := lpFirst(lp); p >= 0; p = lpNext(lp, p) {
		en := lpGet(lp, p)
		elem := en.Str
		if en.isInt() {
			at := len(ints)
			ints = strconv.AppendInt(ints, en.Int, 10)
			elem = ints[at:len(ints):len(ints)]
		}
		size := len(elem)
		switch kind {
		case KindHash:
			if int64(size) > l.HashValue {
				return false
			}
			if i%2 == 0 {
				keys = append(keys, elem)
			}
		case KindSet:
			if int64(size) > l.SetListpackValue {
				return false
			}
			keys = append(keys, elem)
		case KindZSet:
			if i%2 == 0 {
				if int64(size) > l.ZSetValue {
					return false
				}
				member = elem
				keys = append(keys, member)
				break
			}
			if !en.isInt() {
				if f, err := strconv.ParseFloat(string(en.Str), 64); math.IsNaN(f) || err != nil && !errors.Is(err, strconv.ErrRange) {
					return false
				}
			}
			score := lpScore(en)
			if i > 1 && zcmp(prevScore, keys[len(keys)-2], score, member) >= 0 {
				return false
			}
			prevScore = score
		case KindList:
			if listExceeds(l.ListPackSize, p+1+size, i+1) {
				return false
			}
		}
		i++
	}
	return !hasDup(keys)
}

// hasDup reports whether two of keys are equal.
func hasDup(keys [][]byte) bool {
	if len(keys) <= 16 {
		for i := range keys {
			for j := range i {
				if string(keys[i]) == string(keys[j]) {
					return true
				}
			}
		}
		return false
	}
	seen := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if _, dup := seen[string(k)]; dup {
			return true
		}
		seen[string(k)] = struct{}{}
	}
	return false
}

// RestoreListpack stores lp, the listpack of a small hash, set, sorted set
// or list from an RDB file or a DUMP payload, under key as it is, when it is
// well formed and what the store builds for those elements (listpackOK);
// it reports false, and stores nothing, otherwise (the caller then builds
// the value element by element). The key must not hold a value nor be
// open.
func (tx *Tx) RestoreListpack(key []byte, kind Kind, lp []byte) bool {
	c, ok := CheckListpack(kind, lp, tx.s.Limits())
	if ok {
		tx.RestoreChecked(key, c)
	}
	return ok
}

// CheckedListpack is a listpack that CheckListpack passed: a loader
// checks on one goroutine and stores on another (rdb.LoadBytes).
type CheckedListpack struct {
	kind Kind
	lp   []byte
	enc  uint8 // encCompact, or encIntset for CheckIntset's
}

// CheckListpack does RestoreListpack's checks on lp under the limits l,
// without a store.
func CheckListpack(kind Kind, lp []byte, l Limits) (CheckedListpack, bool) {
	if lpValidate(lp) != nil || !listpackOK(kind, lp, l) {
		return CheckedListpack{}, false
	}
	return CheckedListpack{kind: kind, lp: lp}, true
}

// CheckIntset checks is, a set's intset from an RDB file or a DUMP
// payload, as Redis's intsetValidateIntegrity does deeply (a known
// width, a length that matches the size, at least one element, strictly
// ascending) and against set-max-intset-entries: an intset that passes is
// kept as it came (RestoreChecked), its width included, as Redis keeps
// one (which never narrows: SREM of the widest member leaves it).
func CheckIntset(is []byte, l Limits) (CheckedListpack, bool) {
	if isValidate(is) != nil || int64(isLen(is)) > l.SetIntsetEntries {
		return CheckedListpack{}, false
	}
	return CheckedListpack{kind: KindSet, lp: is, enc: encIntset}, true
}

// RestoreIntset stores is under key as it is when CheckIntset passes it
// under the store's limits, and reports whether it did; the key must not
// hold a value nor be open.
func (tx *Tx) RestoreIntset(key, is []byte) bool {
	c, ok := CheckIntset(is, tx.s.Limits())
	if ok {
		tx.RestoreChecked(key, c)
	}
	return ok
}

// RestoreChecked stores c under key as RestoreListpack does. The key must
// not hold a value nor be open.
func (tx *Tx) RestoreChecked(key []byte, c CheckedListpack) {
	tx.put(key, typeMeta(c.kind, c.enc), c.lp)
}

// RestoreHashListpack is RestoreListpack for a hash.
func (tx *Tx) RestoreHashListpack(key, lp []byte) bool { return tx.RestoreListpack(key, KindHash, lp) }

// PutString stores value as key's string, under a new CAS token and
// without a deadline (RESTORE of a string). The key must not hold a value
// nor be open. ErrTooLarge when the item exceeds the item size limit.
func (tx *Tx) PutString(key, value []byte) error {
	if tx.s.tooLarge(len(key), len(value)) {
		return ErrTooLarge
	}
	tx.put(key, 0, value)
	return nil
}

// put inserts a new record of meta holding value under key.
func (tx *Tx) put(key []byte, meta uint8, value []byte) {
	s := tx.s
	sh, h := tx.lockedShard(key)
	e := entry{tag: tagOf(h), meta: meta}
	e.cas = s.nextCAS()
	e.atime = s.stamp(nil, &tx.clk)
	cost := int64(len(key)+len(value)) + ItemOverhead
	sh.insertLocked(&e, key, value, nil)
	s.notifyLocked(key, EventNew)
	sh.bytes += cost
	s.used.Add(cost)
	sh.totalItems++
	s.persistLocked(sh, &e)
}

// SetRestored gives the live value under key RESTORE's deadline (Unix ms,
// 0 for none) and access state, as Redis's objectSetLRUOrLFU: outside
// LFU mode idle seconds since its last use (<0 to leave it just used) and
// an access count for the eviction walk (freq, saturating at the record's
// 3; <0 to leave it); in LFU mode only freq (0-255, <0 to leave it) as
// the LFU counter, last decremented now, and idle is ignored. The key
// must not be open. It reports whether there was a value.
func (tx *Tx) SetRestored(key []byte, deadline, idle int64, freq int) bool {
	s := tx.s
	sh, h := tx.lockedShard(key)
	var e entry
	if !s.lookupLocked(sh, h, key, &tx.clk, false, &e) {
		return false
	}
	e.deadline = deadline
	switch {
	case s.lfu.Load():
		if freq >= 0 {
			e.atime = lfuWord(lfuMinutes(s.nowSec(&tx.clk)), uint8(min(freq, 255)))
		}
	default:
		if idle >= 0 {
			now := int64(s.nowSec(&tx.clk))
			e.atime = uint32(max(now-idle, 0))
		}
		if freq >= 0 {
			e.setFreq(uint8(min(freq, maxFreq)))
		}
	}
	sh.commitLocked(&e)
	s.persistLocked(sh, &e)
	return true
}

// HashListpack returns a small hash's listpack (Redis's bytes, which DUMP
// writes as they are), or nil for a big hash.
func (h *Hash) HashListpack() []byte {
	if h.c.obj != nil {
		return nil
	}
	return h.c.lp
}

// Intset returns a small all-integer set's intset (Redis's bytes, which
// DUMP writes as they are), or nil for a set in another encoding.
func (st *Set) Intset() []byte {
	if !st.isIntset() {
		return nil
	}
	return st.c.lp
}

// Listpack returns a small set's listpack of members in insertion order
// (Redis 7.2's bytes, which DUMP writes as they are), or nil for an
// intset or a big set.
func (st *Set) Listpack() []byte {
	if st.c.obj != nil || st.isIntset() {
		return nil
	}
	return st.c.lp
}

// Listpack returns a small list's listpack (Redis's bytes; DUMP writes it
// as one quicklist node), or nil for a big list.
func (l *List) Listpack() []byte {
	if l.c.obj != nil {
		return nil
	}
	return l.c.lp
}

// Listpack returns a small sorted set's listpack of member, score pairs
// (Redis's bytes, which DUMP writes as they are), or nil for a big one.
func (z *ZSet) Listpack() []byte {
	if z.c.obj != nil {
		return nil
	}
	return z.c.lp
}
