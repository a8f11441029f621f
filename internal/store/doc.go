// Package store is MiniKV's in-memory engine: a sharded map of items with
// exact memory accounting, deadlines, eviction and CAS tokens. Both
// protocol front ends map their commands onto it; it uses only the
// standard library.
//
// # Sharding
//
// The keyspace is split into a power-of-two number of shards, at least 16
// and by default four per GOMAXPROCS, each a sync.Mutex over a map, an
// intrusive LRU list and a min-heap of deadlines. A key's shard comes from
// a per-Store seeded maphash, so no client can aim its keys at one lock.
// Every request takes exactly one shard lock, and no code path holds two:
// work that spans shards (eviction elsewhere, the sweeper, FlushAll, Stats)
// visits them one at a time.
//
// # Items and accounting
//
// An item costs len(key) + len(value) + ItemOverhead bytes, where
// ItemOverhead is the measured cost of the item struct, its map slot and
// allocation rounding (see its comment and TestItemOverheadMatchesHeap).
// Key and value share one immutable allocation: a read hands out the value
// without copying it, and every update (set, append, incr) builds a new
// one, so a value returned by Get stays valid after the lock is released.
//
// One global atomic counter holds the bytes charged; it is a counter, not
// a lock. A write reserves the bytes it adds with a compare-and-swap that
// refuses to pass MemoryLimit, before it changes anything and while it
// holds its shard lock, so concurrent writers cannot overshoot and a
// failed write leaves nothing behind. The budget is global rather than
// split per shard, so one item may use as much of it as it needs.
//
// # Expiry
//
// Expired means missing: every operation that finds an item past its
// deadline treats the key as absent and reclaims the item on the spot
// (lazy expiry). Items with a deadline also sit in their shard's min-heap,
// so the earliest one is known in O(1) and removed in O(log n). A sweeper
// goroutine wakes every SweepInterval and, one shard lock at a time,
// removes at most a small batch of expired items from the top of each
// heap; it skips shards whose earliest deadline (published through an
// atomic) is still ahead. It never scans live items, so it never holds a
// lock for long.
//
// Expiry work never runs on the write path: a write looks at expired
// items only when it cannot reserve memory, and then it pops them off a
// heap instead of scanning for them. (A write that swept on every call is
// what made an earlier MiniKV slow under load.)
//
// # Flush
//
// CAS tokens are handed out in store order by one atomic counter, so
// FlushAll needs no per-item timestamp: it raises a fence to the current
// token, and items at or below the fence are dead. A FlushAll for now
// raises the fence and swaps each shard's map for an empty one; a delayed
// one is armed and raises the fence at the first operation on or after its
// time. Dead items hidden by the fence collect at the tail of their
// shard's LRU list, since nothing can refresh them, where the sweeper and
// eviction pick them up without scanning.
//
// # Eviction
//
// When a write cannot reserve its bytes, room is made from expired and
// flushed items first, in its own shard and then in the others, and only
// then from the least recently used live items, own shard first. The LRU
// order is exact within a shard and approximate across shards: a live item
// is evicted only when it is the oldest of its shard, not necessarily of
// the whole store. A global order would need either one list locked by
// every read or a protocol that compares shard tails under several locks;
// with well-spread keys the per-shard order is close enough, and memcached
// itself keeps per-slab-class LRUs. Eviction in another shard happens
// after the writer has released its own lock, after which it redoes its
// checks from the start. The item a write replaces is never evicted for
// it; NoEvict turns off the eviction of live items; an item larger than
// the whole MemoryLimit is refused without evicting anything.
//
// # Recency and CAS
//
// Get, GetAndTouch and Touch refresh an item's recency; a successful
// Store or Incr does too; Delete and every failed operation do not. Every
// successful Store and Incr gets a new CAS token, never reused for the
// Store's lifetime, even across delete and re-create; Touch and
// GetAndTouch keep the token, as memcached does.
package store
