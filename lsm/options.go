package lsm

import (
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// SyncMode says when the write-ahead log is fsynced. In every mode a write
// has reached the operating system (write(2) on the log) before Put, Delete
// or Apply returns, so a process crash (kill -9) never loses an acknowledged
// write; the modes differ only in what survives power loss.
type SyncMode int

const (
	// SyncNone never fsyncs the log; the OS writes it back when it likes.
	SyncNone SyncMode = iota
	// SyncEverySecond fsyncs the log once a second in the background: power
	// loss loses at most about the last second of acknowledged writes.
	SyncEverySecond
	// SyncAlways fsyncs before acknowledging. Concurrent writers share one
	// fsync (group commit): while one group syncs, the next one gathers.
	SyncAlways
)

func (m SyncMode) String() string {
	switch m {
	case SyncNone:
		return "none"
	case SyncEverySecond:
		return "everysec"
	case SyncAlways:
		return "always"
	}
	return "unknown"
}

// Options configures a DB. The zero value of every field means its default.
type Options struct {
	// FS is the filesystem; vfs.Default (the OS) if nil.
	FS vfs.FS
	// Sync is the WAL sync mode; SyncNone by default.
	Sync SyncMode
	// MemTableSize is the arena size of a memtable (default
	// DefaultMemTableSize).
	MemTableSize int
	// MaxImmutableMemTables is how many full memtables may wait for their
	// flush before writes stall (default 2).
	MaxImmutableMemTables int
	// BlockSize is the target size of a data block (default 4 KiB).
	BlockSize int
	// BloomBitsPerKey sizes the filter of each table (default 10; negative
	// disables filters).
	BloomBitsPerKey int
	// BlockCacheSize is the block cache budget in bytes (default 8 MiB;
	// negative disables the cache).
	BlockCacheSize int64
	// L0CompactionTrigger is the L0 file count that starts a compaction
	// (default 4).
	L0CompactionTrigger int
	// L0StopWrites is the L0 file count at which writes stall until a
	// compaction catches up (default 12).
	L0StopWrites int
	// LBaseMaxBytes is the size target of L1; each deeper level is 10× the
	// one above (default 64 MiB).
	LBaseMaxBytes int64
	// TargetFileSize splits compaction outputs (default 4 MiB).
	TargetFileSize uint64
	// MappedWAL backs each write-ahead log with a shared memory mapping of
	// a preallocated file (Linux only; elsewhere, and on filesystems that
	// cannot map, the log uses write(2)). A commit then costs a memcpy into
	// the kernel's page cache instead of a write(2) system call; the data is
	// in the same page cache either way, so a process crash loses nothing
	// acknowledged, and Sync modes still decide about power loss (msync).
	// The kernel writes a mapping's dirty pages back in any order, so a
	// power cut can leave holes in the part not yet synced: mapped logs are
	// written in the recyclable record format (see RecycleWAL), in which
	// such a hole is a torn tail, not damage.
	// The cost: a log file reserves 2×MemTableSize+1 MiB of disk while live.
	// It is the default in SyncNone when neither RecycleWAL nor WriteWAL is
	// set: there a commit is a memcpy, and the write(2) path measured about
	// twice Pebble's write time (docs/benchmarks.md, "Mapped logs").
	MappedWAL bool
	// WriteWAL keeps the write(2) log in SyncNone, where MappedWAL is
	// otherwise the default: for a directory that must stay readable by an
	// engine that predates the recyclable format, or a disk too small for
	// a preallocated log.
	WriteWAL bool
	// PipelinedSync, in SyncAlways, lets a commit group's fsync overlap the
	// next group's: once a group is in the log and the memtable, its leader
	// hands the commit queue on and fsyncs, so the next group's write(2) and
	// fsync run while the first is in flight (two fsyncs at most). Groups
	// are still acknowledged strictly in order, a write is visible only
	// once acknowledged, and a failed fsync fails its group and every group
	// after it. It pays where the disk completes overlapping fsyncs faster
	// than one after the other and CPU is spare; on a 2-core VM with an ext4
	// virtio disk it measured slower (more, smaller fsyncs, more CPU per
	// commit: docs/durability.md), so it is off by default. Logs written
	// with write(2) only (not MappedWAL).
	PipelinedSync bool
	// RecycleWAL keeps up to this many write-ahead logs, once obsolete
	// (their memtable flushed), for reuse as later logs, and prepares the
	// first ones in the background (written full of zeros and synced), as
	// Pebble's WAL recycling does. A log then overwrites blocks its file
	// already has instead of growing it, so an fsync of it flushes data
	// only, without a filesystem journal commit for the file's new size
	// (on ext4 about half the cost of an fdatasync after an append). The
	// logs are written in the recyclable record format (record.go), which
	// tells a record from a previous use of the file and an unsynced tail
	// torn by power loss from damage; the manifest records the format, and
	// engines that predate it refuse such a directory. Not with MappedWAL.
	// 0 or negative: off (logs are created and deleted).
	RecycleWAL int
	// OpenFailedOnWriteError lets Open start on a disk that takes no
	// writes (full, over quota, read-only, failing): when recovery has read
	// everything but one of its writes fails (writing a replayed log's
	// memtable to a table, creating the new log, writing the new manifest
	// and CURRENT) with an error that is not ErrCorrupt, Open returns a DB
	// that is failed instead of the error. Err returns the write's error
	// (wrapped), writes are refused with it, reads see every replayed write
	// (the memtables stay in memory) and every table; nothing the next Open
	// needs is removed or changed. Resume, once the disk takes writes
	// again, writes the memtables to tables, starts a log and a fresh
	// manifest, removes the replayed logs, and the DB takes writes: a
	// server killed on a full disk comes back serving reads, not in a crash
	// loop. Errors reading the directory still fail Open; without the
	// option every recovery error does.
	OpenFailedOnWriteError bool
	// DisableAutoCompaction turns off background compactions (tests use it
	// to shape the tree); Compact still works.
	DisableAutoCompaction bool
	// Drop, if set, is asked by compactions about the newest live value of
	// each key they rewrite (value without its expiry), and about the
	// older values they keep for live snapshots; when it returns true
	// that value is deleted as if it had expired, for snapshots too. It
	// lets the owner forget records by a rule of its own (MiniKV's flush
	// fence). It is called from compaction goroutines, concurrently, and
	// must be quick and must not call back into the DB.
	Drop func(key, value []byte) bool

	// Testing knobs, unexported: the period of SyncEverySecond's
	// background fsync (0: a second), and the first delay before a failed
	// background compaction is retried (0: a second; compactLoop).
	syncPeriod   time.Duration
	compactRetry time.Duration
}

// DefaultMemTableSize is Options.MemTableSize when it is left zero.
const DefaultMemTableSize = 4 << 20

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.MemTableSize <= 0 {
		o.MemTableSize = DefaultMemTableSize
	}
	if o.MaxImmutableMemTables <= 0 {
		o.MaxImmutableMemTables = 2
	}
	if o.BlockSize <= 0 {
		o.BlockSize = 4 << 10
	}
	if o.BloomBitsPerKey == 0 {
		o.BloomBitsPerKey = 10
	}
	if o.BloomBitsPerKey < 0 {
		o.BloomBitsPerKey = 0
	}
	if o.BlockCacheSize == 0 {
		o.BlockCacheSize = 8 << 20
	}
	if o.L0CompactionTrigger <= 0 {
		o.L0CompactionTrigger = 4
	}
	if o.L0StopWrites <= 0 {
		o.L0StopWrites = 12
	}
	if o.L0StopWrites <= o.L0CompactionTrigger {
		o.L0StopWrites = o.L0CompactionTrigger + 1
	}
	if o.LBaseMaxBytes <= 0 {
		o.LBaseMaxBytes = 64 << 20
	}
	if o.TargetFileSize == 0 {
		o.TargetFileSize = 4 << 20
	}
	if o.Sync == SyncNone && o.RecycleWAL <= 0 && !o.WriteWAL {
		o.MappedWAL = true
	}
	return o
}
