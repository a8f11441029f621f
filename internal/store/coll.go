package store

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
)

// Collections: a key holding a hash (or, later, a list, set or sorted set)
// is an item like any other, whose record says its kind and encoding in
// the meta byte (kind.go). A small collection is one block of bytes in
// the record, a listpack as Redis keeps it; it is rewritten whole on each
// change, which for at most a few hundred small elements costs less than
// any pointer structure would (and is what Redis does). One that grows
// past the encoding limits (Limits) becomes a big object, changed in
// place (object.go). Commands reach a collection through a handle (Hash)
// under the shard lock, for as long as a function they pass runs: every
// element they look at and every change they make is one atomic step, as
// a Redis command is.

// Limits are Redis's encoding parameters: how large a collection may grow
// before it leaves its compact encoding (CONFIG SET hash-max-listpack-
// entries and the others). A collection never goes back.
type Limits struct {
	HashEntries int64 // hash-max-listpack-entries; default 512
	HashValue   int64 // hash-max-listpack-value; default 64
	ZSetEntries int64 // zset-max-listpack-entries; default 128
	ZSetValue   int64 // zset-max-listpack-value; default 64

	SetIntsetEntries   int64 // set-max-intset-entries; default 512
	SetListpackEntries int64 // set-max-listpack-entries (Redis 7.2); default 128
	SetListpackValue   int64 // set-max-listpack-value (Redis 7.2); default 64

	ListPackSize int64 // list-max-listpack-size: < 0 a node's bytes (-2 = 8 KiB), > 0 its entries; default -2

	// ListCompressDepth is list-compress-depth: how many nodes at each
	// end of a big list stay plain, the others compressed (quicklist.go);
	// 0 compresses none. Default 1 (Redis's is 0; docs/redis.md).
	ListCompressDepth int64

	HLLSparseMaxBytes int64 // hll-sparse-max-bytes: a sparse HyperLogLog string turns dense past it; default 3000
}

// DefaultLimits are Redis 7.0's built-in defaults, what redis-server runs
// with when no config file sets them (the redis.conf Redis ships sets
// hash-max-listpack-entries to 128), except list-compress-depth: 1 here,
// 0 in Redis.
var DefaultLimits = Limits{HashEntries: 512, HashValue: 64, ZSetEntries: 128, ZSetValue: 64,
	SetIntsetEntries: 512, SetListpackEntries: 128, SetListpackValue: 64, ListPackSize: -2, ListCompressDepth: 1,
	HLLSparseMaxBytes: 3000}

// limits is the Store's Limits, read without a lock on every write.
type limits struct {
	hashEntries, hashValue atomic.Int64
	zsetEntries, zsetValue atomic.Int64

	setIntsetEntries, setListpackEntries, setListpackValue atomic.Int64

	listPackSize, listCompressDepth atomic.Int64

	hllSparseMaxBytes atomic.Int64
}

// SetLimits changes the encoding limits; collections already big stay big.
func (s *Store) SetLimits(l Limits) {
	s.lim.hashEntries.Store(l.HashEntries)
	s.lim.hashValue.Store(l.HashValue)
	s.lim.zsetEntries.Store(l.ZSetEntries)
	s.lim.zsetValue.Store(l.ZSetValue)
	s.lim.setIntsetEntries.Store(l.SetIntsetEntries)
	s.lim.setListpackEntries.Store(l.SetListpackEntries)
	s.lim.setListpackValue.Store(l.SetListpackValue)
	s.lim.listPackSize.Store(l.ListPackSize)
	s.lim.listCompressDepth.Store(l.ListCompressDepth)
	s.lim.hllSparseMaxBytes.Store(l.HLLSparseMaxBytes)
}

// Limits returns the encoding limits.
func (s *Store) Limits() Limits {
	return Limits{HashEntries: s.lim.hashEntries.Load(), HashValue: s.lim.hashValue.Load(),
		ZSetEntries: s.lim.zsetEntries.Load(), ZSetValue: s.lim.zsetValue.Load(),
		SetIntsetEntries: s.lim.setIntsetEntries.Load(), SetListpackEntries: s.lim.setListpackEntries.Load(),
		SetListpackValue: s.lim.setListpackValue.Load(), ListPackSize: s.lim.listPackSize.Load(),
		ListCompressDepth: s.lim.listCompressDepth.Load(),
		HLLSparseMaxBytes: s.lim.hllSparseMaxBytes.Load()}
}

var errFlat = errors.New("store: malformed collection encoding")

// coll is the state a handle shares with Store.collection: the record,
// its encoding, and what the function changed.
type coll struct {
	s       *Store
	sh      *shard
	key     []byte
	h       uint64 // key's hash
	kind    Kind
	clk     clock // one reading of the time for the whole call
	write   bool
	found   bool  // the key held a collection of the kind when the call began
	e       entry // its record, when found
	enc     uint8
	lp      []byte   // encCompact, encIntset: the encoding; the record's bytes until owned
	owned   bool     // lp is a private copy, changed in place
	scratch bool     // that copy is the shard's scratch buffer
	obj     object   // encBig
	dropped []object // objects made during the call and let go of in it (Set.Clear), freed when it settles
	dirty   bool
	num     [24]byte // an integer element in its string form, for one read
	fnum    [24]byte // and an integer field beside it

	// replaces: a Tx cleared the key for this collection (a *STORE
	// destination), so storing it creates no key (no EventNew).
	replaces bool

	// keepCAS: a change Redis does not count as modifying the key (a
	// stream's consumer groups read or acknowledged): WATCH holds.
	keepCAS bool

	// feeding: a Feed was attached when the call began, so its changes
	// may go to the Feed as commands (props, propN of them: Propagate)
	// instead of the key's whole state. A call that changed the key and
	// propagated nothing sends the whole state; one that marked itself
	// propagated (Stream.Propagated) with no command sends nothing.
	feeding    bool
	propagated bool // the call's changes for the Feed are props, if any
	shardProps bool // props is the shard's buffer (sh.props), a Tx's handle's
	props      []byte
	propN      int
	// unrecorded: the call changed the collection other than through a
	// method that records its change as a command (record): the Feed
	// gets the whole state. Every change marks it (own, and wherever
	// dirty is set); a recording method puts back what it found.
	unrecorded bool
}

// collection runs fn with the collection of kind under key, with the shard
// locked. A key holding another kind is ErrWrongType, and fn does not run;
// a missing key is an empty collection. A write (write set) that left the
// collection changed is stored under a new CAS token, keeping the key's
// deadline; one that left it empty deletes the key.
//
// A write is never refused for memory once fn has run (that would undo it
// halfway): memory is made afterwards, evicting as any write would. With
// NoEvict the budget may stay overdrawn by that write; callers refuse
// writes that may grow memory up front while Full, as Redis refuses its
// denyoom commands with -OOM.
func (s *Store) collection(key []byte, kind Kind, write bool, c *coll, fn func() error) (err error) {
	h := s.hash(key)
	sh := s.shardFor(h)
	*c = coll{s: s, sh: sh, write: write, key: key, h: h, kind: kind}
	clk := &c.clk
	s.pollFlush(clk)
	s.lock(sh)
	if c.feeding = write && s.commandFeeder() != nil; c.feeding {
		c.props = sh.props[:0]
	}
	unlocked := false
	defer func() {
		if !unlocked {
			s.unlock(sh)
		}
	}()
	if s.lookupLocked(sh, h, key, clk, !write, &c.e) {
		if k := kindOf(c.e.meta); k != kind {
			return ErrWrongType
		}
		c.found = true
		c.enc = encOf(c.e.meta)
		if c.enc == encBig {
			c.obj = sh.object(&c.e)
		} else {
			c.lp = sh.value(&c.e)
		}
	}
	err = fn()
	switch {
	case c.dirty && s.rewriteLocked(c):
	case c.dirty:
		s.settleLocked(c, key, h, kind)
	case c.found && !write:
		sh.markUsedLocked(&c.e, s.stamp(&c.e, clk))
	case c.found: // a write that changed nothing: still a use, as Redis's lookupKeyWrite
		sh.markTouchedLocked(&c.e, s.stamp(&c.e, clk))
	}
	if c.obj != nil {
		sh.reclaimLocked(c.obj) // fn has returned: what it read is not needed
	}
	if c.feeding && cap(c.props) <= maxDiskRecBuf {
		sh.props = c.props[:0] // the Feed has copied them
	}
	s.assertShardLocked(sh, "collection")
	sh.scratchBusy = false
	if sh.scratchTooBig() {
		sh.scratch = nil
	}
	s.unlock(sh)
	unlocked = true
	if over := s.used.Load() - s.limit.Load(); over > 0 && c.dirty {
		s.shed(sh, over)
	}
	return err
}

// settleLocked stores what fn left in c: a new record for a compact
// encoding or a new object, the new size of an object changed in place,
// or the key's removal when the collection is empty.
func (s *Store) settleLocked(c *coll, key []byte, h uint64, kind Kind) {
	sh := c.sh
	for i, o := range c.dropped {
		sh.freeObjectLocked(o)
		c.dropped[i] = nil
	}
	c.dropped = c.dropped[:0]
	if c.length() == 0 {
		if c.obj != nil && !c.storedObj(c.obj) {
			sh.freeObjectLocked(c.obj) // made during the call, emptied in it
		}
		if c.found {
			s.dropLocked(sh, &c.e, dropDeleted)
		}
		return
	}
	if c.found && c.e.isBig() && c.obj == sh.object(&c.e) {
		slot := &sh.objs[sh.objID(&c.e)]
		grow := c.obj.size() - slot.charged
		slot.charged += grow
		sh.bytes += grow
		s.used.Add(grow)
		s.changedInPlaceLocked(c)
		return
	}
	e := entry{tag: tagOf(h), meta: typeMeta(kind, c.enc)}
	var idBuf [4]byte
	value := c.lp
	cost := int64(len(key)) + ItemOverhead
	if c.enc == encBig {
		size := c.obj.size()
		binary.LittleEndian.PutUint32(idBuf[:], sh.newObjLocked(c.obj, size))
		value = idBuf[:]
		cost += size
	}
	cost += int64(len(value))
	e.cas = s.nextCAS()
	var oldCost int64
	if c.found {
		e.atime = s.stamp(&c.e, &c.clk)
		e.deadline = c.e.deadline
		e.setFreq(c.e.freq() + 1)
		oldCost = sh.costOf(&c.e)
		sh.replaceLocked(&e, key, value, nil, &c.e)
	} else {
		e.atime = s.stamp(nil, &c.clk)
		sh.insertLocked(&e, key, value, nil)
		if !c.replaces {
			s.notifyLocked(key, EventNew)
		}
	}
	sh.bytes += cost - oldCost
	s.used.Add(cost - oldCost)
	s.persistCollLocked(sh, &e, c)
	sh.totalItems++
}

// rewriteLocked stores a compact collection changed to an encoding of
// the same kind and the same size (HSET of a field to a value as long as
// the old one, a pop and a push of equal elements) over its record's
// bytes, as Redis changes a listpack in place: no new record, no index
// update, no dead bytes for compaction. It reports whether it did; the
// caller settles otherwise.
//
// Only collection() calls it: a Tx's handles may alias one record twice
// (LMOVE k k). Rewriting a value in place is safe because a compact
// collection's bytes are read only under the shard lock, inside a
// handle's function (a string's value, handed out without the lock,
// never is: doc.go, "Segments").
func (s *Store) rewriteLocked(c *coll) bool {
	if !c.found || c.obj != nil || c.e.isBig() || c.enc != encOf(c.e.meta) || len(c.lp) != int(c.e.vlen) || len(c.dropped) > 0 || c.length() == 0 {
		return false
	}
	copy(c.sh.value(&c.e), c.lp)
	s.changedInPlaceLocked(c)
	return true
}

// changedInPlaceLocked settles a collection changed where its record
// points (a big object, or compact bytes rewritten over the record's): a
// new CAS token, the access, the header written back, the disk told.
func (s *Store) changedInPlaceLocked(c *coll) {
	sh := c.sh
	if !c.keepCAS {
		c.e.cas = s.nextCAS()
	}
	c.e.atime = s.stamp(&c.e, &c.clk)
	c.e.used()
	sh.commitLocked(&c.e)
	s.persistCollLocked(sh, &c.e, c)
	sh.totalItems++
}

// shed brings the budget back under the limit after a collection write
// overdrew it: dead and then live items in other shards, then in sh.
func (s *Store) shed(sh *shard, over int64) {
	if s.makeRoom(sh, over) && s.used.Load() <= s.limit.Load() || s.noEvict.Load() || sh == nil {
		return
	}
	clk := s.clock()
	s.lock(sh)
	for s.used.Load() > s.limit.Load() && s.evictOneLocked(sh, &clk, nil) > 0 {
	}
	s.assertShardLocked(sh, "shed")
	s.unlock(sh)
}

// storedObj reports whether o is the object the key's record held when
// the call began (which goes with the record), not one made during it.
func (c *coll) storedObj(o object) bool {
	return c.found && c.e.isBig() && c.sh.object(&c.e) == o
}

// length is the number of elements in c: of entries in a listpack (two
// per hash field), of members or fields in an object.
func (c *coll) length() int {
	switch {
	case c.obj != nil:
		return c.obj.len()
	case c.lp == nil:
		return 0
	case c.enc == encIntset:
		return isLen(c.lp)
	default:
		return lpCount(c.lp)
	}
}

// own makes c.lp a private copy that may be changed in place (the
// record's bytes change only when the call settles), creating an empty listpack for a new
// collection, and marks c changed.
func (c *coll) own() {
	c.dirty, c.unrecorded = true, true
	if c.owned {
		return
	}
	c.owned = true
	src := c.lp
	if src == nil {
		src = lpNew()
	}
	if c.sh.scratchBusy {
		c.lp = append([]byte(nil), src...) // a second collection of the shard in one step
		return
	}
	c.sh.scratchBusy, c.scratch = true, true
	c.lp = append(c.sh.scratch[:0], src...)
}

// keep hands c.lp back to the shard as its scratch buffer once an append
// may have moved it, so the next command reuses the larger buffer.
func (c *coll) keep() {
	if c.scratch {
		c.sh.scratch = c.lp
	}
}

// scratchTooBig reports whether the scratch buffer is larger than worth
// keeping between commands.
func (sh *shard) scratchTooBig() bool { return cap(sh.scratch) > 64<<10 }

// element returns the string form of a listpack entry; an integer is
// formatted into c.num, valid until the next call.
func (c *coll) element(en lpEntry) []byte {
	if en.Str != nil {
		return en.Str
	}
	return en.appendTo(c.num[:0])
}
