package store

import (
	"bytes"
	"encoding/binary"
	"slices"
	"time"
)

// Tx is a command's hold on several keys at once (LMOVE, SMOVE,
// SINTERSTORE, ZUNIONSTORE, RENAME, ...): the shards of its keys are
// locked together, in shard order so that two Tx never wait on each
// other, for one function call, which is one atomic step for every other
// command. Inside it, handles are opened on the keys as with UpdateHash,
// and settled (stored, recharged, or deleted when empty) when the
// function returns or when a handle's Done method (DoneHash, ...) is called.
//
// While a Tx holds a shard, no record of the shard moves: compaction
// waits for the end of the Tx and the eviction walk does not run there
// (memory is made afterwards, as after any collection write), so every
// open handle's record stays where its handle found it.
type Tx struct {
	s      *Store
	clk    clock
	shards []*shard
	opened []*coll
	nested bool // run inside Exclusive, whose Tx holds the shards
	excl   bool // Exclusive's own Tx: its hold on the Disk is HoldExclusive's
	held   Feed // the Feed holdDisk held, released by end

	// cleared are the keys Clear removed a value from: a collection
	// stored there afterwards replaces it (a *STORE destination), which is
	// no EventNew, as Redis's setKey overwrites.
	cleared [][]byte
}

// maxTxShards bounds the shards one Tx locks; beyond it the Tx locks
// every shard (a command over thousands of keys).
const maxTxShards = 64

// Tx runs fn with the shards of keys locked. Keys opened inside fn must
// be among keys. A write that overdraws the memory budget is paid for
// after the shards are unlocked, by eviction as for any collection write.
func (s *Store) Tx(keys [][]byte, fn func(tx *Tx) error) error {
	if s.excl != nil {
		// Inside Exclusive: every shard is held already; only keep
		// records in place while the handles are open.
		tx := &Tx{s: s, clk: s.clock(), shards: s.excl.shards, nested: true}
		s.pollFlush(&tx.clk)
		for _, sh := range tx.shards {
			sh.walking = true
			sh.txDepth++
		}
		defer tx.end()
		return fn(tx)
	}
	tx := &Tx{s: s}
	s.pollFlush(&tx.clk)
	if len(keys) > maxTxShards {
		for i := range s.shards {
			tx.shards = append(tx.shards, &s.shards[i])
		}
	} else {
		for _, k := range keys {
			sh := s.shardFor(s.hash(k))
			if !slices.Contains(tx.shards, sh) {
				tx.shards = append(tx.shards, sh)
			}
		}
		slices.SortFunc(tx.shards, func(a, b *shard) int { return s.shardIndex(a) - s.shardIndex(b) })
	}
	for _, sh := range tx.shards {
		sh.mu.Lock()
		sh.walking = true
		sh.txDepth++
	}
	tx.held = s.holdDisk(false)
	defer tx.end()
	return fn(tx)
}

// diskScan is Disk.Scan (which commits what is queued first) from this
// Store or a view of it (unheld).
func (s *Store) diskScan(from []byte, fn func(key, rec []byte, deadline int64) bool) error {
	return s.unheld(func() error { return s.disk.Scan(from, fn) })
}

// unheld runs fn, a Disk call that commits what is queued first (Scan,
// Checkpoint), outside an Exclusive section's hold on the Disk: the
// section is the caller's own (a SCAN or SAVE inside EXEC), and its commit
// would otherwise wait for the section's end. The section's changes so
// far then commit in one batch and the rest in a later one.
func (s *Store) unheld(fn func() error) error {
	if s.excl == nil || s.excl.nested || s.disk == nil {
		return fn()
	}
	s.disk.EndExclusive()
	s.disk.Release()
	defer s.disk.HoldExclusive()
	return fn()
}

// Hold begins a section whose changes, made by any number of calls,
// reach the Disk in one batch and a Feed as one step, until the returned
// function is called: for a caller that must make several changes atomic
// on disk (a replica applying its primary's command and recording its
// offset with SetAux). Nothing in the section may wait for a Sync.
//
// The sections of the calls made inside it nest in it: they begin
// without waiting for a Sync that waits for this section to end
// (Disk.HoldCalls).
func (s *Store) Hold() (release func()) {
	if s.disk != nil {
		s.disk.HoldCalls()
	}
	f := s.holdFeed()
	return func() {
		if s.disk != nil {
			s.disk.ReleaseCalls()
		}
		if f != nil {
			f.Release()
		}
	}
}

// holdDisk begins a Tx's section on the Disk, which commits its changes
// in one batch (Disk.Hold, or HoldExclusive for Exclusive's Tx: every
// shard is locked), and on the Feed, which it returns; the Tx's end
// releases both once every change is queued (the Feed it held, even if
// another was attached meanwhile).
func (s *Store) holdDisk(exclusive bool) Feed {
	switch {
	case s.disk == nil:
	case exclusive:
		s.disk.HoldExclusive()
	default:
		s.disk.Hold()
	}
	return s.holdFeed()
}

// holdFeed begins a section on the Feed, if one is attached, and returns
// it.
func (s *Store) holdFeed() Feed {
	f := s.feeder()
	if f != nil {
		f.Hold()
	}
	return f
}

// shardIndex is sh's position in s.shards.
func (s *Store) shardIndex(sh *shard) int {
	for i := range s.shards {
		if &s.shards[i] == sh {
			return i
		}
	}
	panic("store: shard not in its store")
}

// end settles what is still open, frees the mapped memory the function
// may have been reading (before any shard is unlocked: an object may have
// moved to another of the Tx's shards), lets compaction catch up, unlocks
// in the reverse order and makes room if the Tx overdrew the budget.
func (tx *Tx) end() {
	s := tx.s
	for len(tx.opened) > 0 {
		tx.done(tx.opened[len(tx.opened)-1])
	}
	for _, sh := range tx.shards {
		sh.endTxLocked()
	}
	if tx.nested {
		for _, sh := range tx.shards {
			sh.walking = false // the exclusive Tx unlocks and makes room
		}
		return
	}
	// Exclusive's Tx is reused by the next Exclusive call as soon as the
	// last shard is unlocked: nothing of it is read after the loop.
	held := tx.held
	if tx.excl && s.disk != nil {
		// Before any shard is unlocked: from then on other changes queue
		// behind the section's, and replies must wait for them again.
		s.disk.EndExclusive()
	}
	if held != nil {
		// Also before: a section is never open on the Feed while no
		// shard is held, so a full resync's snapshot, which holds them
		// all, marks the stream between sections (replication.Source.Mark).
		held.Release()
	}
	for i := len(tx.shards) - 1; i >= 0; i-- {
		sh := tx.shards[i]
		sh.walking = false
		sh.compactLocked()
		sh.scratchBusy = false
		if sh.scratchTooBig() {
			sh.scratch = nil
		}
		s.assertShardLocked(sh, "Tx")
		sh.mu.Unlock()
	}
	if s.disk != nil {
		s.disk.Release() // every change is queued: settled above
	}
	if over := s.used.Load() - s.limit.Load(); over > 0 {
		s.shed(nil, over)
	}
}

// lockedShard returns key's shard and hash, which the Tx must hold.
func (tx *Tx) lockedShard(key []byte) (*shard, uint64) {
	h := tx.s.hash(key)
	sh := tx.s.shardFor(h)
	if !slices.Contains(tx.shards, sh) {
		panic("store: Tx used a key it did not lock")
	}
	return sh, h
}

// open binds c to the collection of kind under key, as collection does:
// ErrWrongType for another kind, an empty collection for a missing key.
// A key may be open in one handle at a time.
func (tx *Tx) open(key []byte, kind Kind, write bool, c *coll) error {
	for _, o := range tx.opened {
		if bytes.Equal(o.key, key) {
			panic("store: Tx opened a key twice")
		}
	}
	sh, h := tx.lockedShard(key)
	*c = coll{s: tx.s, sh: sh, write: write, clk: tx.clk, key: key, h: h, kind: kind}
	// The shard's buffer for the Feed's commands, unless another handle
	// of the Tx in the shard has it (LMOVE's source and destination).
	if c.feeding = write && tx.s.commandFeeder() != nil; c.feeding &&
		!slices.ContainsFunc(tx.opened, func(o *coll) bool { return o.sh == sh && o.shardProps }) {
		c.props, c.shardProps = sh.props[:0], true
	}
	c.replaces = slices.ContainsFunc(tx.cleared, func(k []byte) bool { return bytes.Equal(k, key) })
	if tx.s.lookupLocked(sh, h, key, &c.clk, !write, &c.e) {
		if kindOf(c.e.meta) != kind {
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
	tx.opened = append(tx.opened, c)
	return nil
}

// done settles a handle opened in the Tx now: its key may then be opened
// again, and the handle must not be used.
func (tx *Tx) done(c *coll) {
	i := slices.Index(tx.opened, c)
	if i < 0 {
		return
	}
	tx.opened = slices.Delete(tx.opened, i, i+1)
	switch {
	case c.dirty:
		tx.s.settleLocked(c, c.key, c.h, c.kind)
		if c.shardProps && cap(c.props) <= maxDiskRecBuf {
			c.sh.props = c.props[:0] // the Feed has copied them
		}
	case c.found && !c.write:
		c.sh.markUsedLocked(&c.e, tx.s.stamp(&c.e, &c.clk))
	case c.found: // a write that changed nothing: still a use, as Redis's lookupKeyWrite
		c.sh.markTouchedLocked(&c.e, tx.s.stamp(&c.e, &c.clk))
	}
	if c.obj != nil {
		c.sh.reclaimLocked(c.obj) // when the Tx ends
	}
}

// Kind reports the kind of the live value under key, if there is one.
// The key must not be open.
func (tx *Tx) Kind(key []byte) (Kind, bool) {
	sh, h := tx.lockedShard(key)
	var e entry
	if !tx.s.lookupLocked(sh, h, key, &tx.clk, false, &e) {
		return 0, false
	}
	return kindOf(e.meta), true
}

// Use records a use of the live value under key, as Store.Use does:
// Redis's lookup of a key the command then leaves as it is (a refused
// RENAMENX or MOVE, RENAME of a key to itself). It reports whether there
// was a value. The key must not be open.
func (tx *Tx) Use(key []byte) bool {
	sh, h := tx.lockedShard(key)
	var e entry
	if !tx.s.lookupLocked(sh, h, key, &tx.clk, false, &e) {
		return false
	}
	sh.markTouchedLocked(&e, tx.s.stamp(&e, &tx.clk))
	return true
}

// Clear deletes whatever key holds (a *STORE destination, which Redis
// overwrites whatever its type) and reports whether it held anything. The
// key must not be open.
func (tx *Tx) Clear(key []byte) bool {
	sh, h := tx.lockedShard(key)
	var e entry
	if !tx.s.lookupLocked(sh, h, key, &tx.clk, false, &e) {
		return false
	}
	tx.s.dropLocked(sh, &e, dropDeleted)
	tx.cleared = append(tx.cleared, key)
	return true
}

// Delete deletes whatever key holds, as Clear does, and reports whether
// it held anything; but a value stored under key afterwards in the Tx is
// created anew (EventNew), as Redis's RESTORE REPLACE deletes the key and
// adds it again. The key must not be open.
func (tx *Tx) Delete(key []byte) bool {
	sh, h := tx.lockedShard(key)
	var e entry
	if !tx.s.lookupLocked(sh, h, key, &tx.clk, false, &e) {
		return false
	}
	tx.s.dropLocked(sh, &e, dropDeleted)
	return true
}

// Hash opens the hash under key in the Tx, as UpdateHash (write) or
// ViewHash would.
func (tx *Tx) Hash(key []byte, h *Hash, write bool) error {
	return tx.open(key, KindHash, write, &h.c)
}

// DoneHash settles h now: its key may be opened again, and h must not be
// used.
func (tx *Tx) DoneHash(h *Hash) { tx.done(&h.c) }

// Copy copies the value under src, of any kind, with its deadline and
// flags, to dst under a new CAS token (Redis's COPY; replace says whether
// a value already under dst is overwritten). It reports whether it
// copied: not when src is missing or dst exists without replace. Neither
// key may be open; src and dst differ.
func (tx *Tx) Copy(src, dst []byte, replace bool) bool {
	return tx.transfer(src, dst, replace, false, false)
}

// Rename moves the value under src, of any kind, with its deadline and
// flags, to dst (Redis's RENAME and MOVE; nx refuses when dst exists). It
// reports whether it moved. The value arrives with a new value's access
// state (LFU counter 5), as Redis 7.2's dbAdd gives it one
// (initObjectLRUOrLFU); 7.0 kept the counter. Neither key may be open;
// src and dst differ.
func (tx *Tx) Rename(src, dst []byte, nx bool) bool {
	return tx.transfer(src, dst, !nx, true, false)
}

// Relabel moves the value under src to dst, which must not exist, as
// Rename does but keeping its access state as it was: SWAPDB, where Redis
// swaps two tables and touches no key. It reports whether src existed.
func (tx *Tx) Relabel(src, dst []byte) bool {
	return tx.transfer(src, dst, false, true, true)
}

func (tx *Tx) transfer(src, dst []byte, replace, move, keepAccess bool) bool {
	s := tx.s
	ssh, sh := tx.lockedShard(src)
	dsh, dh := tx.lockedShard(dst)
	var se, de entry
	if !s.lookupLocked(ssh, sh, src, &tx.clk, false, &se) {
		return false
	}
	found := s.lookupLocked(dsh, dh, dst, &tx.clk, false, &de)
	if found && !replace {
		return false
	}
	if found {
		s.dropLocked(dsh, &de, dropDeleted)
	}
	// The source's record may not have moved: the Tx holds its shard.
	e := entry{tag: tagOf(dh), meta: se.meta &^ metaWinSent, flags: se.flags, deadline: se.deadline}
	e.cas = s.nextCAS()
	if keepAccess {
		e.atime = se.atime
	} else {
		e.atime = s.stamp(nil, &tx.clk) // COPY, RENAME: a new value
	}
	value := ssh.value(&se)
	var cost int64
	if se.isBig() {
		var obj object
		if move {
			obj = ssh.detachObjLocked(&se) // not freed with the source's record
		} else {
			o, err := s.decodeFlat(dsh.seed, kindOf(se.meta), ssh.object(&se).appendFlat(nil))
			if err != nil {
				panic("store: a big value does not read back its own encoding")
			}
			obj = o
		}
		size := obj.size()
		var id [4]byte
		binary.LittleEndian.PutUint32(id[:], dsh.newObjLocked(obj, size))
		value = id[:]
		cost = size
	}
	cost += int64(len(dst)+len(value)) + ItemOverhead
	dsh.insertLocked(&e, dst, value, nil)
	s.notifyLocked(dst, EventNew) // also over a value it replaced, as Redis's dbAdd
	dsh.bytes += cost
	s.used.Add(cost)
	dsh.totalItems++
	s.persistLocked(dsh, &e)
	if move {
		s.dropLocked(ssh, &se, dropDeleted)
	}
	return true
}

// Full reports whether the memory budget is spent and NoEvict forbids
// making room by eviction: the moment Redis refuses commands that may
// grow memory (its denyoom flag) with -OOM.
func (s *Store) Full() bool { return s.noEvict.Load() && s.used.Load() >= s.limit.Load() }

// lock and unlock take and release a shard's lock, except in a view from
// Exclusive, whose Tx already holds every shard.
func (s *Store) lock(sh *shard) {
	if s.excl == nil {
		sh.mu.Lock()
	}
}

func (s *Store) unlock(sh *shard) {
	if s.excl == nil {
		sh.mu.Unlock()
	}
}

// Exclusive runs fn with every shard locked, handing it a view of the
// Store whose methods take no lock, since the caller holds them all: a
// Redis transaction (EXEC) is one step for every other client, on either
// port, as in Redis's single thread. The view is valid only inside fn and
// only on the calling goroutine; a Tx started on it nests in the
// exclusive one. Writes inside fn evict as they do outside it.
func (s *Store) Exclusive(fn func(v *Store) error) error {
	start := time.Now()
	clk := clock{ms: start.UnixMilli()} // the view's frozen time (Store.Now)
	s.pollFlush(&clk)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.txDepth++ // commands may keep what they read until EXEC ends
	}
	// Every shard is held: the core's Tx and view are this call's. They
	// are reused because a script takes the store exclusively on every
	// EVALSHA, and two allocations plus a growing slice per call showed
	// in its profile (docs/benchmarks.md, issue 38).
	tx := &s.exclTx
	clear(tx.cleared)
	*tx = Tx{s: s, clk: clk, excl: true, shards: tx.shards[:0], opened: tx.opened[:0], cleared: tx.cleared[:0]}
	for i := range s.shards {
		tx.shards = append(tx.shards, &s.shards[i])
	}
	tx.held = s.holdDisk(true) // an EXEC is one batch on disk (and for replicas) too
	defer tx.end()
	v := &s.exclView
	*v = Store{core: s.core, excl: tx, maxItem: s.maxItem, frozen: clk.ms, frozenUs: start.UnixMicro()}
	return fn(v)
}

// Refreeze moves the frozen time of an Exclusive view to now: a section
// that runs several scripts one after the other (a pipelined batch) gives
// each its own instant, as Redis freezes the clock per command. Outside
// such a view it does nothing.
func (s *Store) Refreeze() {
	if s.excl == nil || s.frozen == 0 {
		return
	}
	now := time.Now()
	s.frozen, s.frozenUs = now.UnixMilli(), now.UnixMicro()
	s.excl.clk = clock{ms: s.frozen}
}
