package store

import (
	"errors"
	"log/slog"
	"time"
)

// Sentinel errors returned by the Store. The server maps each one to its
// wire form in a single place.
var (
	ErrNotFound   = errors.New("store: not found")
	ErrNotStored  = errors.New("store: not stored")
	ErrExists     = errors.New("store: cas mismatch")
	ErrTooLarge   = errors.New("store: item too large")
	ErrNoMemory   = errors.New("store: out of memory")
	ErrNotNumeric = errors.New("store: value is not a number")
)

// Mode selects the storage rule of Store.Store.
type Mode uint8

// Storage modes, as memcached's set family.
const (
	ModeSet     Mode = iota // store unconditionally
	ModeAdd                 // only if the key is missing (or expired)
	ModeReplace             // only if the key exists
	ModeAppend              // existing value + new bytes; flags and deadline kept
	ModePrepend             // new bytes + existing value; flags and deadline kept
	ModeCAS                 // only if the key exists and its CAS equals the given one
)

// NoMemoryLimit as Config.MemoryLimit stores without a memory limit.
const NoMemoryLimit = -1

// Config sets up a Store. As in server.Config and lsm.Options, the zero
// value of every field is its default, and a negative one turns the thing
// off where off is not the default.
type Config struct {
	MemoryLimit   int64         // bytes; default 64 MiB; < 0 (NoMemoryLimit) = no limit
	MaxItemSize   int64         // key+value+ItemOverhead must fit; default 1 MiB; capped at 4 GiB-1
	Shards        int           // 0 = auto (next power of two of 4*GOMAXPROCS); rounded up to a power of two in [16, 65536]
	NoEvict       bool          // memory full is an error instead of evicting live items (dead items are still reclaimed)
	SweepInterval time.Duration // active expiry tick; default 100ms; <0 disables the sweeper and the disk limit's loop (tests call TrimDisk)
	DiskLimit     int64         // durable mode: bytes the Disk may hold (disklimit.go); default (0): no limit
	Logger        *slog.Logger  // durable mode: where disk failures and recoveries are logged; nil: nowhere
	DiskRetry     time.Duration // durable mode: how often a failed disk is retried (diskfail.go); default 1 s
	NoWarmUp      bool          // durable mode: do not load the disk back into memory after the start (warmup.go)
	OffHeapMin    int           // big collections' slices of this many bytes or more are mapped outside the Go heap (bigmem.go); 0 = default (16 KiB), < 0 = never
}

// Item is a snapshot of one stored entry. Value aliases the store's copy,
// which is never modified after it is stored: callers must not write to it.
// An item whose Kind is not KindString is a collection: its Value is the
// store's encoding of it, which only the collection handles read.
type Item struct {
	Value    []byte
	Flags    uint32
	CAS      uint64
	Deadline int64 // Unix milliseconds; 0 = never expires
	Kind     Kind
}

// Stats are the store's counters.
type Stats struct {
	Items            int64  // live + not yet reclaimed items
	Bytes            int64  // accounted bytes (sum of key+value+ItemOverhead)
	Limit            int64  // MemoryLimit; 0 = no limit
	TotalItems       uint64 // successful Store and Incr calls since start
	Evictions        uint64 // live items removed to make room
	Reclaimed        uint64 // expired/flushed items removed (lazily, by the sweeper, by pressure or by FlushAll)
	ExpiredUnfetched uint64 // expired items reclaimed that no Get or GetAndTouch had read
	EvictedUnfetched uint64 // live items evicted that no Get or GetAndTouch had read
	GetExpired       uint64 // reads that found an expired item
	GetFlushed       uint64 // reads that found a flushed item
	Flushes          uint64 // FlushAll calls
	Shards           int    // number of shards
	MinShardItems    int64  // items in the emptiest shard
	MaxShardItems    int64  // items in the fullest shard
	OffHeap          int64  // bytes of big collections mapped outside the Go heap (counted in Bytes too)
	SegmentBytes     int64  // bytes of the shards' segments, where records live
	DeadBytes        int64  // bytes of SegmentBytes holding no live record: overwritten, deleted or evicted, until compaction or the eviction walk frees them
	CompactionMoves  uint64 // records copied by compaction and the eviction walk
}
