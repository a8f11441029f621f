package store

// Read-modify-write under the shard lock: the store's answer to Redis's
// incrDecrCommand and t_string.c's getset paths. A caller reads the item,
// decides, and the decision is applied in the same critical section, so no
// other write of the key (from either port, or expiry, eviction, flush)
// can fall between the read and the write: no compare-and-retry loops, no
// rollbacks, in the server.

// Op is what an Update does with the key after reading it.
type Op uint8

const (
	// Keep writes nothing: the item (or its absence) stays as it was.
	Keep Op = iota
	// Put stores Value+Suffix with Flags and Deadline under a new CAS
	// token, replacing the item if there was one.
	Put
	// Remove deletes the item (nothing if there was none).
	Remove
	// Retime sets the live item's deadline to Deadline, keeping its value,
	// flags and CAS token, and records the use, as Touch does (nothing if
	// there was no item). A deadline already passed expires the item.
	Retime
)

// Change is an Update function's decision.
type Change struct {
	Op Op
	// Value and Suffix are concatenated into the new value (Put). Either
	// may alias the old item's Value, or the caller's memory: the store
	// copies them before Update returns.
	Value, Suffix []byte
	Flags         uint32
	Deadline      int64 // Unix milliseconds; 0 = never expires (Put, Retime)
}

// Update reads the live item under key and applies fn's decision about it,
// both under the key's shard lock: nothing else changes the key in
// between. fn gets the item (old.Value aliases the store's memory: never
// modify it; it stays readable after fn returns, as Get's values do,
// because records are never written over) and whether there was one (an
// expired or flushed item counts as none). fn runs with the shard locked
// and must not call back into the Store.
//
// fn may run more than once: when a Put needs memory that other shards
// must give up first, the lock is released, room is made and the read is
// done again (the item may have changed meanwhile). The decision of the
// last call is the one applied, so fn's effects beyond its result (a reply
// written, a counter bumped) belong after Update returns, or on a path
// where it returns Keep or Remove, which are never repeated.
//
// Keep, Remove and Retime never fail. Update returns the new CAS token
// after a Put (0 otherwise), and the error of a Put that cannot be done: ErrTooLarge when key, value and
// ItemOverhead exceed MaxItemSize, ErrNoMemory when no room can be made.
// A failed Put changes nothing. A Put whose deadline has already passed
// succeeds and leaves the key absent, as Store does.
func (s *Store) Update(key []byte, fn func(old Item, found bool) Change) (cas uint64, err error) {
	h := s.hash(key)
	sh := s.shardFor(h)
	clk := s.clock()
	if !s.withRoom(sh, &clk, func() (deficit int64) {
		cas, deficit, err = s.updateLocked(sh, &clk, h, key, fn)
		return deficit
	}) {
		return 0, ErrNoMemory
	}
	return cas, err
}

// updateLocked is one attempt of Update under sh.mu, with storeLocked's
// deficit.
func (s *Store) updateLocked(sh *shard, clk *clock, h uint64, key []byte, fn func(Item, bool) Change) (cas uint64, deficit int64, err error) {
	var old entry
	found := s.lookupLocked(sh, h, key, clk, false, &old)
	var it Item
	if found {
		it = sh.snapshot(&old)
	}
	c := fn(it, found)
	switch c.Op {
	case Keep:
		return 0, 0, nil
	case Remove:
		if found {
			s.dropLocked(sh, &old, dropDeleted)
		}
		return 0, 0, nil
	case Retime:
		if found {
			old.used()
			old.atime = s.stamp(&old, clk)
			old.deadline = c.Deadline
			sh.commitLocked(&old)
			s.persistLocked(sh, &old)
		}
		return 0, 0, nil
	case Put:
	default:
		panic("store: invalid Update op")
	}
	if s.tooLarge(len(key), len(c.Value)+len(c.Suffix)) {
		return 0, 0, ErrTooLarge
	}
	oldp := &old
	if !found {
		oldp = nil
	}
	if c.Deadline != 0 && c.Deadline <= clk.now() {
		// Stored and expired in the same instant, as in storeLocked.
		if found {
			s.dropLocked(sh, oldp, dropDeleted)
		} else {
			s.notifyLocked(key, EventNew)
		}
		sh.totalItems++
		return s.nextCAS(), 0, nil
	}
	p := put{tag: tagOf(h), flags: c.Flags, deadline: c.Deadline}
	return s.putLocked(sh, clk, oldp, key, c.Value, c.Suffix, &p)
}
