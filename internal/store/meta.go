package store

import "strconv"

// Operations for memcached's meta commands (mg, ms, md, ma, me). They share
// the rules of the classic operations (expired means missing, a failed write
// changes nothing, CAS tokens come from the one counter) and add the
// per-item state the meta protocol exposes: last access time (l), hit-before
// (h), stale (X, set by invalidation), the recache win (W, and Z for the
// clients that lost it) and whether the key was written in base64 (b).

// MetaItem is a snapshot of an item as a meta command sees it. HitBefore and
// Idle are the values from before the operation, as protocol.txt asks.
type MetaItem struct {
	Item
	Idle      int64 // seconds since the last access
	HitBefore bool  // read by a get-type command since it was stored
	Stale     bool  // invalidated (md I, or ms I with an older CAS)
	Won       bool  // this caller won the right to recache (W)
	WinSent   bool  // another caller already holds the win (Z)
	BinaryKey bool  // the key was stored through a base64 (b) key
	Created   bool  // the item did not exist and was vivified by this call
}

// GetOptions modify MetaGet.
type GetOptions struct {
	NoBump         bool  // u: no recency bump (access count), no hit or access-time update
	Touch          bool  // T: set the deadline to Deadline
	Deadline       int64 // Unix ms, for Touch
	Vivify         bool  // N: on a miss create an empty item with VivifyDeadline
	VivifyDeadline int64 // Unix ms, for Vivify
	Recache        bool  // R: win if the item's remaining TTL is below RecacheBelow
	RecacheBelow   int64 // milliseconds, for Recache
	NewCAS         uint64
	HasNewCAS      bool // E: a vivified item takes NewCAS as its token
	BinaryKey      bool // the key came in base64; remembered by a vivified item
}

// MetaGet looks key up for mg. On a hit it refreshes recency and marks the
// item fetched unless NoBump, applies Touch, and settles the recache win:
// a stale item, or one whose remaining TTL is below RecacheBelow, is won by
// the first caller (Won) and reported as taken (WinSent) to the others. On a
// miss with Vivify it creates an empty item and the caller wins it; ok is
// then true and Created is set. Vivify fails silently (a miss) if there is
// no memory for the stub.
func (s *Store) MetaGet(key []byte, o GetOptions) (mi MetaItem, ok bool) {
	h := s.hash(key)
	sh := s.shardFor(h)
	clk := s.clock()
	if !s.withRoom(sh, &clk, func() (deficit int64) {
		mi, ok, deficit = s.metaGetLocked(sh, &clk, h, key, o)
		return deficit
	}) {
		return MetaItem{}, false
	}
	return mi, ok
}

func (s *Store) metaGetLocked(sh *shard, clk *clock, h uint64, key []byte, o GetOptions) (MetaItem, bool, int64) {
	var e entry
	if !s.lookupLocked(sh, h, key, clk, true, &e) {
		if !o.Vivify {
			return MetaItem{}, false, 0
		}
		if o.VivifyDeadline != 0 && o.VivifyDeadline <= clk.now() {
			return MetaItem{}, false, 0 // would be gone at once
		}
		p := put{tag: tagOf(h), deadline: o.VivifyDeadline, meta: metaWinSent, newCAS: o.NewCAS, hasNewCAS: o.HasNewCAS}
		if o.BinaryKey {
			p.meta |= metaBinaryKey
		}
		_, deficit, err := s.putLocked(sh, clk, nil, key, nil, nil, &p)
		if deficit > 0 || err != nil {
			return MetaItem{}, false, deficit
		}
		sh.findLocked(h, key, &e)
		mi := s.metaSnapshot(sh, &e, clk)
		mi.Won, mi.Created = true, true
		return mi, true, 0
	}
	mi := s.metaSnapshot(sh, &e, clk)
	if mi.Kind != KindString {
		return mi, true, 0 // the caller refuses it: nothing changes
	}
	if !o.NoBump {
		e.info |= infoFetched
		e.used()
		e.atime = s.stamp(&e, clk)
	}
	if o.Touch {
		e.deadline = o.Deadline
		mi.Deadline = o.Deadline
	}
	// The win: memcached 1.6 reports Z for a win already handed out, X for
	// a stale item, and hands a stale item's (or a recache candidate's) win
	// to the first caller that asks.
	switch {
	case e.meta&metaWinSent != 0:
		mi.WinSent = true
	case e.meta&metaStale != 0:
		mi.Won = true
	case o.Recache && e.deadline != 0 && e.deadline-clk.now() < o.RecacheBelow:
		mi.Won = true
	}
	if mi.Won {
		e.meta |= metaWinSent
	}
	sh.commitLocked(&e)
	if o.Touch {
		s.persistLocked(sh, &e)
	}
	return mi, true, 0
}

// metaSnapshot is the MetaItem view of e, before any change.
func (s *Store) metaSnapshot(sh *shard, e *entry, clk *clock) MetaItem {
	return MetaItem{
		Item:      sh.snapshot(e),
		Idle:      s.idleOf(e, clk),
		HitBefore: e.fetched(),
		Stale:     e.meta&metaStale != 0,
		BinaryKey: e.meta&metaBinaryKey != 0,
	}
}

// MetaDebug returns the live item under key for me, without refreshing it.
func (s *Store) MetaDebug(key []byte) (MetaItem, bool) {
	clk := s.clock()
	var e entry
	sh, ok := s.lockLive(key, &clk, false, &e)
	defer s.unlock(sh)
	if !ok {
		return MetaItem{}, false
	}
	return s.metaSnapshot(sh, &e, &clk), true
}

// SetOptions modify MetaSet.
type SetOptions struct {
	Mode           Mode // ModeSet, ModeAdd, ModeReplace, ModeAppend or ModePrepend
	CompareCAS     uint64
	HasCompare     bool // C: the item must exist and carry CompareCAS
	Invalidate     bool // I: with C, an older CAS still stores, and the item is stale
	NewCAS         uint64
	HasNewCAS      bool  // E: the stored item takes NewCAS as its token
	Vivify         bool  // N: append/prepend on a missing key store the value alone
	VivifyDeadline int64 // Unix ms, for Vivify
	BinaryKey      bool  // the key came in base64
}

// MetaSet stores value under key for ms and returns the new CAS token and
// the stored value's length. Errors are those of Store: ErrNotStored,
// ErrNotFound (C on a missing key), ErrExists (C mismatch), ErrTooLarge,
// ErrNoMemory; a failed MetaSet changes nothing. Append and prepend keep the
// item's flags and deadline, as in Store.
func (s *Store) MetaSet(key, value []byte, flags uint32, deadline int64, o SetOptions) (cas uint64, size int, err error) {
	if o.Mode > ModePrepend {
		panic("store: invalid meta set mode " + strconv.Itoa(int(o.Mode)))
	}
	if s.tooLarge(len(key), len(value)) {
		return 0, 0, ErrTooLarge
	}
	h := s.hash(key)
	sh := s.shardFor(h)
	clk := s.clock()
	if !s.withRoom(sh, &clk, func() (deficit int64) {
		cas, size, deficit, err = s.metaSetLocked(sh, &clk, h, key, value, flags, deadline, o)
		return deficit
	}) {
		return 0, 0, ErrNoMemory
	}
	return cas, size, err
}

func (s *Store) metaSetLocked(sh *shard, clk *clock, h uint64, key, value []byte, flags uint32, deadline int64, o SetOptions) (cas uint64, size int, deficit int64, err error) {
	var e entry
	found := s.lookupLocked(sh, h, key, clk, false, &e)
	old := &e
	if !found {
		old = nil
	}
	stale := false
	mode := o.Mode
	switch {
	case found && (mode == ModeAppend || mode == ModePrepend) && kindOf(old.meta) != KindString:
		return 0, 0, 0, ErrWrongType
	case mode == ModeAdd && found:
		// protocol.txt has memcached bump the item an add collided with;
		// MiniKV's rule is that a failed write changes nothing, recency
		// included (as for the classic add).
		return 0, 0, 0, ErrNotStored
	case !found && o.HasCompare:
		return 0, 0, 0, ErrNotFound
	case !found && (mode == ModeAppend || mode == ModePrepend) && o.Vivify:
		mode, deadline = ModeSet, o.VivifyDeadline
	case !found && mode != ModeSet && mode != ModeAdd:
		return 0, 0, 0, ErrNotStored
	case found && o.HasCompare && old.cas != o.CompareCAS:
		// I lets a set or replace with an older CAS through (as a stale
		// write, below); memcached still refuses an append or prepend.
		if !o.Invalidate || o.CompareCAS > old.cas || mode == ModeAppend || mode == ModePrepend {
			return 0, 0, 0, ErrExists
		}
		stale, deadline = true, old.deadline
	}
	a, b := value, []byte(nil)
	switch mode {
	case ModeAppend:
		a, b = sh.value(old), value
		flags, deadline = old.flags, old.deadline
	case ModePrepend:
		a, b = value, sh.value(old)
		flags, deadline = old.flags, old.deadline
	}
	if s.tooLarge(len(key), len(a)+len(b)) {
		return 0, 0, 0, ErrTooLarge
	}
	size = len(a) + len(b)
	if deadline != 0 && deadline <= clk.now() {
		if found {
			s.dropLocked(sh, old, dropDeleted)
		} else {
			s.notifyLocked(key, EventNew)
		}
		sh.totalItems++
		if o.HasNewCAS {
			return s.useCAS(o.NewCAS), size, 0, nil
		}
		return s.nextCAS(), size, 0, nil
	}
	p := put{tag: tagOf(h), flags: flags, deadline: deadline, newCAS: o.NewCAS, hasNewCAS: o.HasNewCAS}
	if stale {
		// As memcached 1.6's do_store_item: a stale write (I with an
		// older CAS) replaces the value but keeps the old item's deadline
		// (set above), and the item stays stale with its win token still
		// counted as sent, so the recache stays with the client that won it.
		p.meta |= metaStale | old.meta&metaWinSent
	}
	if o.BinaryKey {
		p.meta |= metaBinaryKey
	}
	cas, deficit, err = s.putLocked(sh, clk, old, key, a, b, &p)
	if deficit > 0 || err != nil {
		return 0, 0, deficit, err
	}
	return cas, size, 0, nil
}

// DeleteOptions modify MetaDelete.
type DeleteOptions struct {
	CompareCAS  uint64
	HasCompare  bool // C: delete only if the item carries CompareCAS
	Invalidate  bool // I: keep the item, mark it stale, give it a new token
	Touch       bool // T with I: set the deadline to Deadline
	Deadline    int64
	NewCAS      uint64
	HasNewCAS   bool // E: the token an invalidated or emptied item takes
	RemoveValue bool // x: keep the item (key, flags, deadline) with an empty value
}

// MetaDelete deletes or invalidates the live item under key for md. It
// returns ErrNotFound when there is none and ErrExists on a CAS mismatch.
func (s *Store) MetaDelete(key []byte, o DeleteOptions) error {
	clk := s.clock()
	var e entry
	sh, ok := s.lockLive(key, &clk, false, &e)
	defer s.unlock(sh)
	if !ok {
		return ErrNotFound
	}
	if o.HasCompare && e.cas != o.CompareCAS {
		return ErrExists
	}
	newCAS := func() uint64 {
		if o.HasNewCAS {
			return s.useCAS(o.NewCAS)
		}
		return s.nextCAS()
	}
	switch {
	case o.RemoveValue:
		// Shrinking never needs room, so this cannot fail.
		s.used.Add(-int64(e.vlen))
		sh.bytes -= int64(e.vlen)
		ne := e
		ne.cas = newCAS()
		if o.Invalidate {
			ne.meta = ne.meta&^metaWinSent | metaStale
		}
		if o.Invalidate && o.Touch {
			ne.deadline = o.Deadline
		}
		sh.replaceLocked(&ne, sh.key(&e), nil, nil, &e)
		s.persistLocked(sh, &ne)
	case o.Invalidate:
		e.meta = e.meta&^metaWinSent | metaStale
		e.cas = newCAS()
		if o.Touch {
			e.deadline = o.Deadline
		}
		sh.commitLocked(&e)
		s.persistLocked(sh, &e)
	default:
		s.dropLocked(sh, &e, dropDeleted)
	}
	s.assertShardLocked(sh, "MetaDelete")
	return nil
}

// ArithOptions modify MetaArith.
type ArithOptions struct {
	Decr           bool
	Delta          uint64
	CompareCAS     uint64
	HasCompare     bool // C: apply only if the item carries CompareCAS
	NewCAS         uint64
	HasNewCAS      bool   // E: the updated item takes NewCAS as its token
	Vivify         bool   // N: on a miss create the item holding Initial
	VivifyDeadline int64  // Unix ms, for Vivify
	Initial        uint64 // J
	Touch          bool   // T: on success set the deadline to Deadline
	Deadline       int64
	BinaryKey      bool
}

// MetaArith is incr/decr for ma: it returns the new number, the item's new
// CAS token and deadline, and whether N created the item. A miss is ErrNotFound, or with Vivify creates the
// item holding Initial (the delta is not applied). ErrExists on a CAS
// mismatch, ErrNotNumeric as Incr, ErrNotStored if a vivified item would
// expire at once.
func (s *Store) MetaArith(key []byte, o ArithOptions) (ArithResult, error) {
	h := s.hash(key)
	sh := s.shardFor(h)
	var res ArithResult
	var err error
	clk := s.clock()
	if !s.withRoom(sh, &clk, func() (deficit int64) {
		res, deficit, err = s.metaArithLocked(sh, &clk, h, key, o)
		return deficit
	}) {
		return ArithResult{}, ErrNoMemory
	}
	return res, err
}

// ArithResult is the outcome of a successful MetaArith.
type ArithResult struct {
	Value    uint64 // the number now stored
	CAS      uint64 // the item's new token
	Deadline int64  // the item's deadline (Unix ms, 0 = never)
	Created  bool   // the key was missing and N created it holding Initial
}

func (s *Store) metaArithLocked(sh *shard, clk *clock, h uint64, key []byte, o ArithOptions) (res ArithResult, deficit int64, err error) {
	var e entry
	found := s.lookupLocked(sh, h, key, clk, false, &e)
	it := &e
	if !found {
		it = nil
	}
	var n uint64
	var deadline int64
	flags := uint32(0)
	switch {
	case it != nil && kindOf(it.meta) != KindString:
		return res, 0, ErrWrongType
	case it == nil && !o.Vivify:
		return res, 0, ErrNotFound
	case it == nil:
		n, deadline = o.Initial, o.VivifyDeadline
		if deadline != 0 && deadline <= clk.now() {
			return res, 0, ErrNotStored
		}
		res.Created = true
	default:
		if o.HasCompare && it.cas != o.CompareCAS {
			return res, 0, ErrExists
		}
		var ok bool
		if n, ok = parseDecimal(sh.value(it)); !ok {
			return res, 0, ErrNotNumeric
		}
		switch {
		case !o.Decr:
			n += o.Delta // wraps at 2^64, as memcached does
		case o.Delta > n:
			n = 0
		default:
			n -= o.Delta
		}
		flags, deadline = it.flags, it.deadline
		if o.Touch {
			deadline = o.Deadline
		}
	}
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], n, 10)
	if s.tooLarge(len(key), len(digits)) {
		return ArithResult{}, 0, ErrTooLarge
	}
	res.Value, res.Deadline = n, deadline
	if it != nil && deadline != 0 && deadline <= clk.now() {
		// T with a past time: the update succeeds and the key is gone.
		s.dropLocked(sh, it, dropDeleted)
		sh.totalItems++
		res.CAS = s.nextCAS()
		return res, 0, nil
	}
	p := put{tag: tagOf(h), flags: flags, deadline: deadline, newCAS: o.NewCAS, hasNewCAS: o.HasNewCAS}
	if it != nil && it.meta&metaBinaryKey != 0 || o.BinaryKey {
		p.meta |= metaBinaryKey
	}
	cas, deficit, err := s.putLocked(sh, clk, it, key, digits, nil, &p)
	if deficit > 0 || err != nil {
		return ArithResult{}, deficit, err
	}
	res.CAS = cas
	return res, 0, nil
}

// useCAS makes a client-chosen token (the E flag) the item's token and
// raises the counter to it, so every token handed out later is still larger
// than every token in the store: the flush fence depends on that order. A
// client that picks a token at or below the fence of an earlier flush_all
// makes its item read as flushed; a token picked twice is the client's own
// reuse.
func (s *Store) useCAS(e uint64) uint64 {
	if s.disk != nil && e >= s.ds.casLimit.Load() {
		s.coverCAS(e)
	}
	for {
		cur := s.cas.Load()
		if cur >= e || s.cas.CompareAndSwap(cur, e) {
			return e
		}
	}
}
