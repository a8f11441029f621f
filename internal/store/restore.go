package store

import "errors"

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
func listpackHashOK(lp []byte, l Limits) bool {
	n := lpCount(lp)
	if n == 0 || n%2 != 0 || int64(n/2) > l.HashEntries {
		return false
	}
	seen := make(map[string]struct{}, n/2)
	i := 0
	for p := lpFirst(lp); p >= 0; p = lpNext(lp, p) {
		en := lpGet(lp, p)
		s := en.appendTo(nil)
		if int64(len(s)) > l.HashValue {
			return false
		}
		if i%2 == 0 {
			if _, dup := seen[string(s)]; dup {
				return false
			}
			seen[string(s)] = struct{}{}
		}
		i++
	}
	return true
}

// RestoreHashListpack stores lp, a hash's listpack from a DUMP payload,
// under key as it is, when it is a well-formed hash (field, value pairs,
// no field twice) that fits the compact encoding's limits; it reports
// false, and stores nothing, otherwise (the caller then builds the hash
// field by field). The key must not hold a value nor be open.
func (tx *Tx) RestoreHashListpack(key, lp []byte) bool {
	if lpValidate(lp) != nil || !listpackHashOK(lp, tx.s.Limits()) {
		return false
	}
	tx.put(key, typeMeta(KindHash, encCompact), lp)
	return true
}

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
