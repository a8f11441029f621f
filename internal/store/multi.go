package store

import "slices"

// AddAll stores each keys[i] with values[i] (flags 0, no deadline) if none
// of the keys holds a live item, and reports whether it did: Redis's
// MSETNX. It is atomic: the shards of all the keys are locked together (in
// shard order, so two calls cannot deadlock), no other write of those keys
// falls between the check and the writes, and no reader sees some of the
// keys written and not the others. The keys must be distinct.
//
// A value too large for MaxItemSize fails the call with ErrTooLarge before
// anything is looked at. When the writes need memory that other shards
// must give up, the writes made so far are taken back before the locks are
// released (nobody saw them), room is made, and the call starts over, up
// to the same number of attempts as a single write; ErrNoMemory if room
// cannot be made. Either way nothing is left written on failure.
//
// AddAll reports no EventNew: every key it writes is new, and its caller
// reports them in the order its command names them.
func (s *Store) AddAll(keys, values [][]byte) (bool, error) {
	for i := range keys {
		if s.tooLarge(len(keys[i]), len(values[i])) {
			return false, ErrTooLarge
		}
	}
	hashes, order := s.keyShards(keys, nil, nil)

	for attempt := 0; ; attempt++ {
		clk := s.clock()
		s.pollFlush(&clk)
		for _, i := range order {
			s.lock(&s.shards[i])
		}
		added, short, deficit, err := s.addAllLocked(&clk, keys, values, hashes)
		for _, i := range slices.Backward(order) {
			s.unlock(&s.shards[i])
		}
		if deficit == 0 || err != nil {
			return added, err
		}
		if attempt == maxRoomAttempts || !s.makeRoom(short, deficit) {
			return false, ErrNoMemory
		}
	}
}

// addAllLocked is one attempt of AddAll with every shard of keys locked.
// A positive deficit (with short, the shard that lacked it) means nothing
// was left written and the attempt must be repeated once that many bytes
// have been freed elsewhere.
func (s *Store) addAllLocked(clk *clock, keys, values [][]byte, hashes []uint64) (added bool, short *shard, deficit int64, err error) {
	var e entry
	for i, k := range keys {
		if s.lookupLocked(s.shardFor(hashes[i]), hashes[i], k, clk, false, &e) {
			return false, nil, 0, nil
		}
	}
	for i, k := range keys {
		sh := s.shardFor(hashes[i])
		p := put{tag: tagOf(hashes[i]), quiet: true} // see AddAll
		_, d, perr := s.putLocked(sh, clk, nil, k, values[i], nil, &p)
		if d == 0 && perr == nil {
			continue
		}
		// Take back the writes of this attempt: under the locks, so no one
		// has seen them.
		for j := range i {
			o := s.shardFor(hashes[j])
			if o.findLocked(hashes[j], keys[j], &e) {
				s.dropLocked(o, &e, dropDeleted)
				o.totalItems--
			}
		}
		return false, sh, d, perr
	}
	return true, nil, 0, nil
}

// SetAll stores each keys[i] with values[i] (flags 0, no deadline) over
// whatever the key held, of any kind, as Redis's MSET does with SET's
// rules. The shards of all the keys are locked together, in shard order,
// so no reader sees some of the keys written and not the others. The keys
// must be distinct: a caller given a key twice passes its last value, the
// key's state after the whole command. created, if not nil, has an entry
// per key, set when the key held nothing live before; SetAll reports no
// EventNew itself (its caller reports them in its command's order).
//
// A value too large for MaxItemSize fails the call with ErrTooLarge before
// anything is written. When a write needs memory that other shards must
// give up, the writes made so far stay (each is its key's final value),
// the locks are released while room is made, and the remaining keys are
// written afterwards: only then can a reader see part of the call. If room
// cannot be made the call fails with ErrNoMemory and the keys before the
// one that needed it stay written.
func (s *Store) SetAll(keys, values [][]byte, created []bool) error {
	for i := range keys {
		if s.tooLarge(len(keys[i]), len(values[i])) {
			return ErrTooLarge
		}
	}
	var hbuf [16]uint64
	var obuf [16]int
	hashes, order := s.keyShards(keys, hbuf[:0], obuf[:0])
	next, attempt := 0, 0
	for {
		clk := s.clock()
		s.pollFlush(&clk)
		for _, i := range order {
			s.lock(&s.shards[i])
		}
		start := next
		var short *shard
		var deficit int64
		var err error
		for ; next < len(keys); next++ {
			sh := s.shardFor(hashes[next])
			var old entry
			oldp := &old
			if !s.lookupLocked(sh, hashes[next], keys[next], &clk, false, &old) {
				oldp = nil
			}
			p := put{tag: tagOf(hashes[next]), quiet: true}
			var d int64
			if _, d, err = s.putLocked(sh, &clk, oldp, keys[next], values[next], nil, &p); err != nil || d > 0 {
				short, deficit = sh, d
				break
			}
			if created != nil {
				created[next] = oldp == nil
			}
		}
		for _, i := range slices.Backward(order) {
			s.assertShardLocked(&s.shards[i], "SetAll")
			s.unlock(&s.shards[i])
		}
		if err != nil || deficit == 0 {
			return err
		}
		if next > start {
			attempt = 0
		}
		if attempt == maxRoomAttempts || !s.makeRoom(short, deficit) {
			return ErrNoMemory
		}
		attempt++
	}
}

// keyShards appends the hash of each key to hashes and the indexes of
// their shards, ascending and distinct (the order to lock them in), to
// order.
func (s *Store) keyShards(keys [][]byte, hashes []uint64, order []int) ([]uint64, []int) {
	for _, k := range keys {
		h := s.hash(k)
		hashes = append(hashes, h)
		order = append(order, int(h&s.mask))
	}
	slices.Sort(order)
	return hashes, slices.Compact(order)
}
