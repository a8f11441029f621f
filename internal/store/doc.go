// Package store is MiniKV's in-memory engine: a sharded cache of items with
// exact memory accounting, deadlines, eviction and CAS tokens. Both
// protocol front ends map their commands onto it; it uses only the
// standard library.
//
// # Sharding and lookups
//
// The keyspace is split into a power-of-two number of shards, at least 16
// and by default four per GOMAXPROCS, each a sync.Mutex over an index and
// a list of segments. A key's 64-bit hash (a per-Store seeded maphash, so
// no client can aim its keys at one lock) is computed once per operation:
// its low bits pick the shard and its top 28 bits are the index tag. Every
// request takes exactly one shard lock, and no code path holds two: work
// that spans shards (eviction elsewhere, the sweeper, FlushAll, Stats)
// visits them one at a time.
//
// An item is one record in a segment, holding its metadata, key and value
// (record.go). The index slot of an item holds its tag and the record's
// location (index.go):
//
//	index slot (8 B)                      record, in a segment
//	+-----+---------+--------+           +------+-----+-------+--------------+------+------+-----+-------+
//	| tag | segment | offset | --------> | info | CAS | atime | [dl][fl][mt] | klen | vlen | key | value |
//	| 28b | 20 b    | 16 b   |           | 1 B  | 8 B | 4 B   | 0-13 B       | 1-2  | 1-5  |     |       |
//	+-----+---------+--------+           +------+-----+-------+--------------+------+------+-----+-------+
//
// So a lookup reads a slot (a probe of a few slots on one cache line),
// then the record, where it compares the key and finds every field: two
// dependent cache misses. A record costs 15 B of header when it has no
// deadline, flags or meta bits, and the index about 10 B more at its usual
// load (see ItemOverhead).
//
// # Segments
//
// Records are appended to per-shard byte slices of 8-64 KiB, kept in a
// list in the order they were opened; a record above 64 KiB gets a segment
// of its own. Nothing in a shard but the segments' byte slices is a Go
// pointer, so the collector has a few hundred objects to look at whatever
// the item count. Key and value bytes are never written after a record is
// built, and a segment is dropped, never reused, once nothing live is in
// it: a read hands out the value without copying it, and the value stays
// valid after the lock is released. Only header fields change in place
// (access bits, CAS, access time, a deadline that stays set), and the
// bytes of a compact collection (a listpack or intset), whose elements are
// read only under the lock: a single-key write that leaves one the same
// size overwrites it, as Redis changes a listpack in place; a change
// that adds or removes a header field (a first deadline, a meta bit)
// rewrites the record into the open segment. Dead records are reclaimed
// by compaction, which copies the live records of the segment with the
// most dead bytes forward once a quarter of a shard's segment bytes are
// dead (half, while its segments take less than half of its share of the
// memory limit), and by the eviction walk.
//
// # Accounting
//
// An item costs len(key) + len(value) + ItemOverhead bytes, where
// ItemOverhead is the measured cost of its header, its index slot and
// segment slack (TestItemOverheadMatchesHeap). One global atomic counter
// holds the bytes charged; it is a counter, not a lock. A write reserves
// the bytes it adds with a compare-and-swap that refuses to pass
// MemoryLimit, before it changes anything and while it holds its shard
// lock, so concurrent writers cannot overshoot and a failed write leaves
// nothing behind. The budget is global rather than split per shard, so one
// item may use as much of it as it needs.
//
// # Expiry
//
// Expired means missing: every operation that finds an item past its
// deadline treats the key as absent and reclaims the item on the spot
// (lazy expiry). Each segment keeps a summary of its live records: how
// many have a deadline, and lower bounds of their deadlines and of their
// CAS tokens. A sweeper goroutine wakes every SweepInterval and, one shard
// lock at a time, walks only the segments whose summary says they may hold
// an expired (or flushed) record, removing at most a small batch per shard
// and reading a bounded number of records; a walk that stops resumes
// there on the next tick, and a segment walked to its end gets an exact
// summary. It skips shards whose earliest deadline (a lower bound,
// published through an atomic) is still ahead. It never walks the whole
// keyspace under a lock.
//
// Expiry work never runs on the write path: a write looks for expired
// items only when it cannot reserve memory, and then it walks the same
// summaries instead of scanning. (A write that swept on every call is what
// made an earlier MiniKV slow under load.)
//
// # Flush
//
// CAS tokens are handed out in store order by one atomic counter, so
// FlushAll needs no per-item timestamp: it raises a fence to the current
// token, and items at or below the fence are dead. A FlushAll for now
// raises the fence and swaps each shard's tables for empty ones, one shard
// lock at a time; a delayed one is armed and raises the fence at the first
// operation on or after its time. Records hidden by the fence are found
// through the segments' lowest-CAS summaries by the sweeper and by writers
// under memory pressure.
//
// # Eviction
//
// When a write cannot reserve its bytes, room is made from expired and
// flushed items first, in its own shard and then in the others, and only
// then from live items, own shard first, chosen by a second-chance walk
// over the records in write order with a two-bit access count per record
// (evict.go): an unused record is evicted, a used one has its count
// lowered and is copied forward. The policy is per shard: a live item is
// evicted when the walk of its own shard reaches it, not when it is the
// least valuable of the whole store. With well-spread keys that is close
// enough, and on a zipf workload it keeps a higher hit ratio than an exact
// global LRU of the same size (BenchmarkHitRatio). Eviction in another
// shard happens after the writer has released its own lock, after which
// it redoes its checks from the start. The item a write replaces is never
// evicted for it; NoEvict turns off the eviction of live items; an item
// larger than the whole MemoryLimit is refused without evicting anything.
//
// # Recency and CAS
//
// Get, GetAndTouch and Touch count as a use of an item (its access count
// goes up); a successful Store or Incr does too; Delete and every failed
// operation do not. Every successful Store and Incr gets a new CAS token,
// never reused for the Store's lifetime, even across delete and
// re-create; Touch and GetAndTouch keep the token, as memcached does.
package store
