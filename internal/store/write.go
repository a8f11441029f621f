package store

import "strconv"

// Store writes value under key according to mode, with memcached's rules,
// and returns the item's new CAS token:
//
//	ModeSet      store unconditionally
//	ModeAdd      only if no live item is there, else ErrNotStored
//	ModeReplace  only if a live item is there, else ErrNotStored
//	ModeAppend   old value + value, else ErrNotStored; flags, deadline kept
//	ModePrepend  value + old value, else ErrNotStored; flags, deadline kept
//	ModeCAS      only if a live item is there (else ErrNotFound) and its
//	             token equals cas (else ErrExists)
//
// An item whose key, value and ItemOverhead exceed MaxItemSize is refused
// with ErrTooLarge (for append and prepend, the combined value counts), and
// one that cannot be given memory with ErrNoMemory. A failed Store changes
// nothing: the old item keeps its value, flags, deadline, CAS token and
// recency, and no counter moves. (Other keys may be affected: an expired
// item found on the way is reclaimed, and ErrNoMemory may come after other
// items were evicted in the attempt to make room.)
//
// key and value are copied; the caller may reuse them. A deadline that has
// already passed behaves as memcached does: the write succeeds and the key
// is gone at once. An unknown mode is a programming error and panics.
func (s *Store) Store(mode Mode, key, value []byte, flags uint32, deadline int64, cas uint64) (uint64, error) {
	if mode > ModeCAS {
		panic("store: invalid mode " + strconv.Itoa(int(mode)))
	}
	if s.tooLarge(len(key), len(value)) {
		return 0, ErrTooLarge
	}
	h := s.hash(key)
	sh := s.shardFor(h)
	var newCAS uint64
	var err error
	clk := s.clock()
	if !s.withRoom(sh, &clk, func() (deficit int64) {
		newCAS, deficit, err = s.storeLocked(sh, &clk, h, mode, key, value, flags, deadline, cas)
		return deficit
	}) {
		return 0, ErrNoMemory
	}
	return newCAS, err
}

// storeLocked is one attempt of Store under sh.mu. A positive deficit means
// nothing was changed and the attempt must be repeated once that many bytes
// have been freed in other shards.
func (s *Store) storeLocked(sh *shard, clk *clock, h uint64, mode Mode, key, value []byte, flags uint32, deadline int64, cas uint64) (newCAS uint64, deficit int64, err error) {
	var old entry
	found := s.lookupLocked(sh, h, key, clk, false, &old)
	switch mode {
	case ModeAdd:
		if found {
			return 0, 0, ErrNotStored
		}
	case ModeReplace, ModeAppend, ModePrepend:
		if !found {
			return 0, 0, ErrNotStored
		}
		if mode != ModeReplace && kindOf(old.meta) != KindString {
			return 0, 0, ErrWrongType
		}
	case ModeCAS:
		if !found {
			return 0, 0, ErrNotFound
		}
		if old.cas != cas {
			return 0, 0, ErrExists
		}
	}
	a, b := value, []byte(nil)
	switch mode {
	case ModeAppend:
		a, b = sh.value(&old), value
		flags, deadline = old.flags, old.deadline
	case ModePrepend:
		a, b = value, sh.value(&old)
		flags, deadline = old.flags, old.deadline
	}
	if s.tooLarge(len(key), len(a)+len(b)) {
		return 0, 0, ErrTooLarge
	}
	oldp := &old
	if !found {
		oldp = nil
	}
	if deadline != 0 && deadline <= clk.now() {
		// Stored and expired in the same instant: drop the old item instead
		// of spending (or evicting for) memory on an invisible one.
		if found {
			s.dropLocked(sh, oldp, dropDeleted)
		} else {
			s.notifyLocked(key, EventNew)
		}
		sh.totalItems++
		return s.nextCAS(), 0, nil
	}
	p := put{tag: tagOf(h), flags: flags, deadline: deadline}
	return s.putLocked(sh, clk, oldp, key, a, b, &p)
}

// put is what a write sets besides the key and value.
type put struct {
	tag       uint32
	flags     uint32
	deadline  int64
	meta      uint8  // metaStale, metaWinSent, metaBinaryKey
	newCAS    uint64 // with hasNewCAS: the token the item takes (meta E)
	hasNewCAS bool
	quiet     bool // no EventNew (AddAll)
}

// putLocked installs key with value a+b, replacing old (the live item under
// key, or nil), records the use and returns the new CAS token. It first
// reserves the memory the write adds; see reserveLocked for the deficit.
// Nothing is changed unless it succeeds.
func (s *Store) putLocked(sh *shard, clk *clock, old *entry, key, a, b []byte, p *put) (newCAS uint64, deficit int64, err error) {
	cost := int64(len(key)+len(a)+len(b)) + ItemOverhead
	if cost > s.limit.Load() && !(s.overdraw && s.noEvict.Load()) {
		return 0, 0, ErrNoMemory // could not fit even in an empty store
	}
	var oldCost int64
	if old != nil {
		oldCost = sh.costOf(old)
	}
	if grow := cost - oldCost; grow > 0 {
		// The eviction walk may move old (and then updates it); a and b
		// stay readable, as segments are never written over.
		if deficit := s.reserveLocked(sh, clk, grow, old); deficit > 0 {
			return 0, deficit, nil
		}
	} else {
		s.used.Add(grow)
	}
	e := entry{tag: p.tag, flags: p.flags, deadline: p.deadline, meta: p.meta}
	e.cas = s.nextCAS()
	if p.hasNewCAS {
		e.cas = s.useCAS(p.newCAS)
	}
	e.atime = s.nowSec(clk) // s.stamp, by hand, as in Get
	if s.lfu.Load() {
		e.atime = s.lfuStamp(old, e.atime)
	}
	if old != nil {
		e.setFreq(old.freq() + 1)
		sh.replaceLocked(&e, key, a, b, old)
	} else {
		sh.insertLocked(&e, key, a, b)
		if !p.quiet {
			s.notifyLocked(key, EventNew)
		}
	}
	if s.recording() {
		s.persistItem(sh, key, a, b, &e)
	}
	sh.bytes += cost - oldCost
	sh.totalItems++
	return e.cas, 0, nil
}

// Incr adds delta to the decimal number stored under key, or subtracts it
// when decr is set, with memcached's rules: the value must be 1 to 20 ASCII
// digits holding an unsigned 64-bit number (else ErrNotNumeric), incr wraps
// around at 2^64 and decr stops at 0. The result is stored as its decimal
// digits without padding, under a new CAS token, keeping flags and
// deadline; Incr returns the result and the token. A missing, expired or
// flushed key gives ErrNotFound. The item's recency is refreshed only when
// the update succeeds.
func (s *Store) Incr(key []byte, delta uint64, decr bool) (value uint64, cas uint64, err error) {
	h := s.hash(key)
	sh := s.shardFor(h)
	clk := s.clock()
	if !s.withRoom(sh, &clk, func() (deficit int64) {
		value, cas, deficit, err = s.incrLocked(sh, &clk, h, key, delta, decr)
		return deficit
	}) {
		return 0, 0, ErrNoMemory
	}
	return value, cas, err
}

// incrLocked is one attempt of Incr under sh.mu, with storeLocked's deficit.
func (s *Store) incrLocked(sh *shard, clk *clock, h uint64, key []byte, delta uint64, decr bool) (value, cas uint64, deficit int64, err error) {
	var it entry
	if !s.lookupLocked(sh, h, key, clk, false, &it) {
		return 0, 0, 0, ErrNotFound
	}
	if kindOf(it.meta) != KindString {
		return 0, 0, 0, ErrWrongType
	}
	n, ok := parseDecimal(sh.value(&it))
	if !ok {
		return 0, 0, 0, ErrNotNumeric
	}
	switch {
	case !decr:
		n += delta // wraps at 2^64, as memcached does
	case delta > n:
		n = 0
	default:
		n -= delta
	}
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], n, 10)
	if s.tooLarge(len(key), len(digits)) {
		return 0, 0, 0, ErrTooLarge
	}
	p := put{tag: it.tag, flags: it.flags, deadline: it.deadline}
	cas, deficit, err = s.putLocked(sh, clk, &it, key, digits, nil, &p)
	if deficit > 0 || err != nil {
		return 0, 0, deficit, err
	}
	return n, cas, 0, nil
}

// parseDecimal reads a stored value as memcached's safe_strtoull does:
// optional leading whitespace and '+', decimal digits that fit in a uint64,
// then the end or whitespace (so "12 ", a value memcached itself pads, and
// " 12" both count as 12). No '-', underscore or base prefix.
func parseDecimal(b []byte) (uint64, bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i < len(b) && b[i] == '+' {
		i++
	}
	start := i
	var n uint64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if i == start || i < len(b) && !isSpace(b[i]) {
		return 0, false
	}
	return n, true
}

// isSpace is C's isspace: what strtoull skips before a number and what may
// follow one.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
