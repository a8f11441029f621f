package store

import (
	"hash/maphash"
	"log/slog"
	"math"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/offheap"
)

// Defaults for the zero fields of Config.
const (
	defaultMemoryLimit   = 64 << 20
	defaultMaxItemSize   = 1 << 20
	defaultSweepInterval = 100 * time.Millisecond
	minShards            = 16
	maxShards            = 1 << 16
)

// Store is the sharded in-memory cache. All methods are safe for concurrent
// use. See the package documentation for the design.
type Store struct {
	*core
	// excl is set in the view Exclusive hands out: that Tx holds every
	// shard, so the view's methods lock nothing.
	excl *Tx
	// maxItem is the largest item (key, value and ItemOverhead) this
	// view's writes may store: Config.MaxItemSize, or less in a view
	// WithMaxItemSize hands out.
	maxItem int64
	// frozen is the time (Unix ms) an Exclusive view's operations see:
	// the moment the section began, so a key does not expire in the
	// middle of a script or EXEC (Redis freezes its clock for them too).
	// Zero outside such a view: each operation reads the clock.
	frozen int64
	// frozenUs is the same instant in microseconds, for Redis's TIME,
	// which a script or EXEC sees stand still too (FrozenMicros).
	frozenUs int64
	// overdraw lets this view's writes go past the memory limit when
	// NoEvict forbids making room (AllowOOM).
	overdraw bool
}

// core is a Store's state, shared by the Store and the views Exclusive
// hands out.
type core struct {
	shards  []shard
	mask    uint64
	seed    maphash.Seed
	limit   atomic.Int64 // bytes the items may take (noLimit: none); SetMemoryLimit changes it
	noEvict atomic.Bool  // SetNoEvict changes it

	// LFU mode (lfu.go): lfu is SetLFU's; lfuLogFactor and lfuDecayTime
	// are SetLFUParams's, lfuDecayTime stored +1 so 0 means never set.
	lfu          atomic.Bool
	lfuLogFactor atomic.Int64
	lfuDecayTime atomic.Int64
	lim          limits // collections' encoding limits (coll.go)
	mem          bigMem // big collections' large slices (bigmem.go)

	segs      segTotal    // every shard's segment bytes, and when to give memory back (expiry.go)
	releasing atomic.Bool // a releaseMemory is running (expiry.go)
	freeOS    func()      // releaseMemory's call, debug.FreeOSMemory when nil (tests count)

	used   atomic.Int64  // bytes charged to stored items; never above limit
	cas    atomic.Uint64 // last CAS token handed out
	victim atomic.Uint32 // rotates the first shard makeRoom evicts from

	noExpiryUntil atomic.Int64 // no shard had an expired item until this time; see expiredElsewhere

	// noPrefetch: the store is small enough that its index and records
	// stay in the CPU cache, so Prefetch would only cost (PrefetchPays).
	noPrefetch atomic.Bool

	// secs is a coarse clock in Unix seconds, advanced by the sweeper on
	// every tick, for items' last-access times: a Get of an item without a
	// deadline then needs no time.Now. 0 when the sweeper is off.
	secs atomic.Uint32

	// Flush state. fence and flushAt are read on every operation; flushMu
	// only serialises FlushAll and the moment an armed flush takes effect.
	flushMu sync.Mutex
	fence   atomic.Uint64 // items with cas <= fence are flushed
	flushAt atomic.Int64  // armed FlushAll time in Unix ms; 0 = none
	flushes atomic.Uint64

	// Durable mode (disk.go): nil disk means a plain cache.
	disk       Disk
	ds         diskState
	diskHits   atomic.Uint64 // lookups that found an item on disk, not in memory
	warmed     atomic.Uint64 // items the warm-up loaded (warmup.go)
	warmTime   atomic.Int64  // the warm-up's duration once done, ns
	diskErrors atomic.Uint64 // disk reads that failed (read as misses)
	diskWrites atomic.Uint64 // changes queued to the disk
	cursors    *scanCursors  // where SCAN walks over the disk stand (diskscan.go)

	notify    notifyState // keyspace events (notify.go)
	feedState             // replication's change feed (feed.go)

	// exclTx and exclView are the Tx and the view of Exclusive, reused
	// from one call to the next: only a caller holding every shard lock
	// touches them (Tx.end reads nothing of them after the last unlock).
	exclTx   Tx
	exclView Store

	quit      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// New builds a Store from cfg, filling in defaults for zero fields, and
// starts its expiry sweeper unless cfg.SweepInterval is negative. Call
// Close to stop the sweeper.
//
// MaxItemSize is capped at 4 GiB - 1, the largest item the record
// header's lengths can describe.
func New(cfg Config) *Store {
	s, _ := open(cfg, nil)
	return s
}

// Open builds a durable Store over d (see disk.go): the items d holds are
// read back as they are looked up, and tokens, the flush fence and an
// armed flush go on from d's state record. Call Sync before acknowledging
// changes, and Close, then close d, at the end.
func Open(cfg Config, d Disk) (*Store, error) {
	return open(cfg, d)
}

func open(cfg Config, d Disk) (*Store, error) {
	switch {
	case cfg.MemoryLimit == 0:
		cfg.MemoryLimit = defaultMemoryLimit
	case cfg.MemoryLimit < 0:
		cfg.MemoryLimit = noLimit
	}
	if cfg.MaxItemSize <= 0 {
		cfg.MaxItemSize = defaultMaxItemSize
	}
	cfg.MaxItemSize = min(cfg.MaxItemSize, math.MaxUint32)
	if cfg.SweepInterval == 0 {
		cfg.SweepInterval = defaultSweepInterval
	}
	n := shardCount(cfg.Shards)
	s := &Store{core: &core{
		shards: make([]shard, n),
		mask:   uint64(n - 1),
		seed:   maphash.MakeSeed(),
		quit:   make(chan struct{}),
		disk:   d,
	}, maxItem: cfg.MaxItemSize}
	s.segs.release = s.releaseMemory
	if least := cfg.OffHeapMin; least >= 0 {
		if least == 0 {
			least = defaultOffHeapMin
		}
		s.mem = bigMem{a: offheap.New(0), min: least, slab: &chunkSlab{}}
		// Nothing but the Store's objects refers to their mapped memory:
		// once the collector finds the Store unreachable, unmap it (a
		// process's only Store lives until exit; tests build many).
		runtime.AddCleanup(s.core, (*offheap.Allocator).Release, s.mem.a)
	}
	s.limit.Store(cfg.MemoryLimit)
	s.noEvict.Store(cfg.NoEvict)
	s.SetLimits(DefaultLimits)
	for i := range s.shards {
		s.shards[i].init(s.seed, &s.segs)
	}
	if d != nil {
		s.cursors = new(scanCursors)
		if err := s.loadDisk(); err != nil {
			return nil, err
		}
		s.ds.limit = cfg.DiskLimit
		log := cfg.Logger
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		retry := cfg.DiskRetry
		if retry <= 0 {
			retry = diskRetryInterval
		}
		s.wg.Add(1)
		go s.diskWatch(log, retry)
		if !cfg.NoWarmUp {
			s.wg.Add(1)
			go s.warmUp()
		}
		if cfg.DiskLimit > 0 && cfg.SweepInterval > 0 {
			s.wg.Add(1)
			go s.diskLoop()
		}
	}
	if cfg.SweepInterval > 0 {
		s.secs.Store(uint32(time.Now().Unix()))
		s.wg.Add(1)
		go s.sweepLoop(cfg.SweepInterval)
	}
	return s, nil
}

// shardCount turns Config.Shards into a power of two in [16, 65536]. The
// automatic count, four shards per P, keeps the chance that two running
// goroutines want the same lock low; the floor of 16 keeps small machines
// from serialising on a handful of locks.
func shardCount(want int) int {
	if want <= 0 {
		want = 4 * runtime.GOMAXPROCS(0)
	}
	want = min(max(want, minShards), maxShards)
	return 1 << bits.Len(uint(want-1))
}

// Close stops the sweeper and waits for it to exit. It is idempotent and
// always returns nil. The Store stays usable without the sweeper; expired
// items are then reclaimed only on access and under memory pressure.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.quit) })
	s.wg.Wait()
	return nil
}

// hash is key's 64-bit hash, computed once per operation: its low bits
// pick the shard and its top bits are the index tag (index.go). maphash
// is seeded per Store, so clients cannot choose keys that pile onto one
// shard or one index run.
func (s *Store) hash(key []byte) uint64 {
	return maphash.Bytes(s.seed, key)
}

// shardFor maps a key's hash to its shard.
func (s *Store) shardFor(h uint64) *shard {
	return &s.shards[h&s.mask]
}

// Changes counts the writes so far: every write that stores a value takes
// a new CAS token, so the token counter is the count (Redis's dirty
// counter, for rdb_changes_since_last_save). Deletes, expiries and
// evictions take none and are not counted; in durable mode the count
// jumps at start, where the tokens resume.
func (s *Store) Changes() uint64 { return s.cas.Load() }

// nextCAS hands out a token no item of this Store has had before.
func (s *Store) nextCAS() uint64 {
	c := s.cas.Add(1)
	if s.disk != nil && c >= s.ds.casLimit.Load() {
		s.coverCAS(c)
	}
	return c
}

// lookupLocked decodes the live item under key (hash h) into e and
// reports whether there is one. A dead (expired or flushed) item found on
// the way is reclaimed, so expired means missing for every caller; read
// says whether to count it as a get that found one.
func (s *Store) lookupLocked(sh *shard, h uint64, key []byte, clk *clock, read bool, e *entry) bool {
	if !sh.findLocked(h, key, e) {
		if s.disk != nil && s.loadLocked(sh, h, key, clk, e) {
			return true
		}
		if read {
			s.notifyLocked(key, EventKeyMiss)
		}
		return false
	}
	state := s.stateOf(e, clk)
	if state == live {
		return true
	}
	if read && state == expired {
		sh.getExpired++
	} else if read {
		sh.getFlushed++
	}
	s.dropDeadLocked(sh, e, state)
	if read {
		s.notifyLocked(key, EventKeyMiss)
	}
	return false
}

// lockLive locks key's shard and returns it, with the live item under key
// decoded into e when there is one (a dead one found on the way is
// reclaimed). read says whether to count an expired or flushed find as a
// get. The caller unlocks sh.mu.
func (s *Store) lockLive(key []byte, clk *clock, read bool, e *entry) (*shard, bool) {
	s.pollFlush(clk)
	h := s.hash(key)
	sh := s.shardFor(h)
	s.lock(sh)
	ok := s.lookupLocked(sh, h, key, clk, read, e)
	s.assertShardLocked(sh, "lookup")
	return sh, ok
}

// Get returns the live item under key and records the use for the
// eviction walk. The returned Value must not be modified.
func (s *Store) Get(key []byte) (Item, bool) {
	clk := s.clock()
	var e entry
	sh, ok := s.lockLive(key, &clk, true, &e)
	defer s.unlock(sh)
	if !ok {
		return Item{}, false
	}
	sec := s.nowSec(&clk) // s.stamp, by hand: the call costs Get 2-4 %
	if s.lfu.Load() {
		sec = s.lfuStamp(&e, sec)
	}
	sh.markUsedLocked(&e, sec)
	return sh.snapshot(&e), true
}

// GetAndTouch sets the deadline of the live item under key, records the
// use and returns it with the new deadline (memcached's gat). The CAS
// token does not change. A deadline in the past makes the item expire
// right after this read.
func (s *Store) GetAndTouch(key []byte, deadline int64) (Item, bool) {
	clk := s.clock()
	var e entry
	sh, ok := s.lockLive(key, &clk, true, &e)
	defer s.unlock(sh)
	if !ok {
		return Item{}, false
	}
	if kindOf(e.meta) != KindString {
		return sh.snapshot(&e), true // the caller refuses it: nothing changes
	}
	e.info |= infoFetched
	e.used()
	e.atime = s.stamp(&e, &clk)
	e.deadline = deadline
	sh.commitLocked(&e)
	s.persistLocked(sh, &e)
	s.assertShardLocked(sh, "GetAndTouch")
	return sh.snapshot(&e), true
}

// Touch sets the deadline of the live item under key and records the use.
// It reports whether the item was there. The CAS token does not change.
func (s *Store) Touch(key []byte, deadline int64) bool {
	clk := s.clock()
	var e entry
	sh, ok := s.lockLive(key, &clk, false, &e)
	defer s.unlock(sh)
	if !ok {
		return false
	}
	e.used()
	e.atime = s.stamp(&e, &clk)
	e.deadline = deadline
	sh.commitLocked(&e)
	s.persistLocked(sh, &e)
	s.assertShardLocked(sh, "Touch")
	return true
}

// Delete removes the live item under key. It returns ErrNotFound if there
// is none (an expired or flushed item counts as none).
func (s *Store) Delete(key []byte) error {
	clk := s.clock()
	var e entry
	sh, ok := s.lockLive(key, &clk, false, &e)
	defer s.unlock(sh)
	if !ok {
		return ErrNotFound
	}
	s.dropLocked(sh, &e, dropDeleted)
	s.assertShardLocked(sh, "Delete")
	return nil
}

// MaxValueLen is the largest value that can be stored under a key of
// keyLen bytes: MaxItemSize - keyLen - ItemOverhead, and never below 0.
func (s *Store) MaxValueLen(keyLen int) int {
	return int(max(s.maxItem-int64(keyLen)-ItemOverhead, 0))
}

// WithMaxItemSize returns a view of the same store whose writes refuse
// items larger than n bytes (key, value and ItemOverhead) with
// ErrTooLarge, as they refuse those over MaxItemSize, and whose
// MaxValueLen follows n. n above MaxItemSize is MaxItemSize. Reads are
// the store's: an item stored through a view with a larger limit is read
// whole. It lets each protocol keep its own item size over one store:
// memcached's -I while the RESP port stores up to proto-max-bulk-len.
func (s *Store) WithMaxItemSize(n int64) *Store {
	v := *s
	v.maxItem = min(max(n, 0), s.maxItem)
	return &v
}

// AllowOOM returns a view of s whose writes succeed past the memory
// limit when NoEvict forbids making room, where s's would fail with
// ErrNoMemory: a Redis script flagged allow-oom, which Redis lets write
// past maxmemory. With eviction, room is made as always.
func (s *Store) AllowOOM() *Store {
	v := *s
	v.overdraw = true
	return &v
}

// tooLarge reports whether an item of these sizes exceeds MaxItemSize.
func (s *Store) tooLarge(keyLen, valueLen int) bool {
	return int64(keyLen)+int64(valueLen)+ItemOverhead > s.maxItem
}

// Stats returns the counters. It locks one shard at a time, so under
// concurrent writes the figures come from slightly different instants;
// at rest, Items and Bytes are exact.
func (s *Store) Stats() Stats {
	st := Stats{
		Limit:         reportedLimit(s.limit.Load()),
		Shards:        len(s.shards),
		Flushes:       s.flushes.Load(),
		MinShardItems: math.MaxInt64,
	}
	if s.mem.a != nil {
		st.OffHeap = s.mem.a.Mapped()
	}
	for i := range s.shards {
		sh := &s.shards[i]
		s.lock(sh)
		n := int64(sh.len())
		st.Items += n
		st.Bytes += sh.bytes
		st.TotalItems += sh.totalItems
		st.Evictions += sh.evictions
		st.Reclaimed += sh.reclaimed
		st.ExpiredUnfetched += sh.expiredUnfetched
		st.EvictedUnfetched += sh.evictedUnfetched
		st.GetExpired += sh.getExpired
		st.GetFlushed += sh.getFlushed
		st.SegmentBytes += sh.segBytes
		st.DeadBytes += sh.dead
		st.CompactionMoves += sh.moves
		st.MinShardItems = min(st.MinShardItems, n)
		st.MaxShardItems = max(st.MaxShardItems, n)
		s.unlock(sh)
	}
	return st
}
