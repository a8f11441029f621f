package store

import "math/rand/v2"

// Reads that Redis-style commands need beyond memcached's: a look that does
// not count as a use, an atomic get-and-delete, and walks over the keyspace
// that hold one shard lock at a time.

// Peek returns the live item under key without refreshing its recency or
// marking it fetched (TTL, EXISTS, TYPE and STRLEN-style reads).
func (s *Store) Peek(key []byte) (Item, bool) {
	var clk clock
	var e entry
	sh, ok := s.lockLive(key, &clk, false, &e)
	defer sh.mu.Unlock()
	if !ok {
		return Item{}, false
	}
	return sh.snapshot(&e), true
}

// Take removes the live item under key and returns it, atomically (GETDEL).
func (s *Store) Take(key []byte) (Item, bool) {
	var clk clock
	var e entry
	sh, ok := s.lockLive(key, &clk, true, &e)
	defer sh.mu.Unlock()
	if !ok {
		return Item{}, false
	}
	snap := sh.snapshot(&e)
	s.dropLocked(sh, &e, dropDeleted)
	return snap, true
}

// NumShards is the number of shards; ScanShard takes 0..NumShards()-1.
func (s *Store) NumShards() int { return len(s.shards) }

// ScanShard calls fn with the key of every live item of shard i, under that
// shard's lock: fn must be quick and must not call back into the Store. The
// key aliases the item and stays valid (it is never modified), but copy it
// if it must outlive the item. fn returns false to stop early. Walking the
// shards 0..NumShards()-1 visits every key that stays present throughout,
// which is the guarantee Redis's SCAN gives.
func (s *Store) ScanShard(i int, fn func(key []byte) bool) {
	var clk clock
	s.pollFlush(&clk)
	sh := &s.shards[i]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	slots := sh.index.slots
	// Start at a random slot so RandomKey does not keep returning the
	// same key.
	start := rand.IntN(len(slots))
	var e entry
	for j := range slots {
		v := slots[(start+j)%len(slots)]
		if v == 0 {
			continue
		}
		e.seg = slotSeg(v)
		decodeHeader(&sh.segs[e.seg], slotOff(v), &e)
		if s.stateOf(&e, &clk) != live {
			continue
		}
		if !fn(sh.key(&e)) {
			return
		}
	}
}

// RandomKey returns a copy of the key of some live item, or false when the
// store holds none. Shards are tried from a random one onwards; inside a
// shard the walk over the index starts at a random slot.
func (s *Store) RandomKey() ([]byte, bool) {
	start := rand.IntN(len(s.shards))
	for n := range len(s.shards) {
		var key []byte
		found := false
		s.ScanShard((start+n)&int(s.mask), func(k []byte) bool {
			key, found = append([]byte{}, k...), true // the empty key too
			return false
		})
		if found {
			return key, true
		}
	}
	return nil, false
}
