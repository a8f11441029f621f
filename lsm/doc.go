// Package lsm is MiniKV's durable engine: a log-structured merge tree.
//
// # API
//
//	db, err := lsm.Open(dir, lsm.Options{Sync: lsm.SyncAlways})
//	err = db.Put(key, value)
//	err = db.PutExpiring(key, value, time.Now().Add(time.Hour))
//	v, err := db.Get(key)                  // lsm.ErrNotFound if absent or expired
//	err = db.Delete(key)
//	var b lsm.Batch; b.Put(k1, v1); b.Delete(k2); err = db.Apply(&b) // atomic
//	it, err := db.NewIter(&lsm.IterOptions{LowerBound: lo, UpperBound: hi})
//	for ok := it.First(); ok; ok = it.Next() {} // or Last/Prev, SeekGE/SeekLT, mixed
//	s := db.NewSnapshot(); v, err = s.Get(key); it, err = s.NewIter(nil); s.Close()
//	err = db.DeleteRange(start, end)     // atomic; cost grows with the keys in range
//	err = db.Flush(); err = db.Compact(); m := db.Metrics(); err = db.Close()
//	err = db.Err(); err = db.Resume()    // after a disk error: see "Disk errors and Resume"
//
// Errors are sentinels to test with errors.Is: ErrNotFound (absent or
// expired), ErrClosed (after Close), ErrCorrupt (damage, wrapped with the
// file's name and the reason), ErrBatchTooLarge (a batch over
// MaxBatchSize, 2 GiB - 1, refused whole; the DB goes on). A DB and a Snapshot are safe for concurrent
// use by many goroutines; an Iterator or a Batch is not.
//
// # Compatibility
//
// Before 1.0 the Go API may change between minor versions; each change is
// named in the commit history and docs/lsm.md. The on-disk formats are
// versioned: a table's footer carries a format version (1 today) that Open
// checks, refusing a version it does not know with an error that names the
// table, and the manifest and log framing below are checked record by
// record. A directory written by this version will be opened by every later
// one; a later version that changes a format keeps reading the old one or
// refuses it with a clear error, never misreads it. The recyclable log
// format (Options.RecycleWAL, below) is such a change: it is recorded in
// the manifest (edit tag 6), which engines that predate it refuse ("malformed
// version edit") rather than misread the logs; this version reads both.
//
// # Write path
//
// A write is framed into the write-ahead log with one write(2) per commit
// group, then inserted into the memtable (an arena of entries under a hash
// index, put in key order when an iterator or the flush asks). The call
// returns only after the write(2), so a process crash never loses an
// acknowledged write; SyncMode decides about power loss (none, every second,
// or fsync before the ack with group commit). With Options.MappedWAL the log
// is a shared mapping of a preallocated file and the write(2) becomes a
// memcpy into the same page cache (the crash guarantees do not change; see
// Options.MappedWAL). That is the default in SyncNone unless RecycleWAL or
// WriteWAL is set; the other modes write(2). A full memtable is rotated:
// a new log and memtable take over and the old pair is flushed to an L0
// table in the background. Too many memtables waiting, or too many L0
// tables, stall writers until the background catches up.
//
// With Options.RecycleWAL a log whose memtable is flushed is kept as a
// spare (up to RecycleWAL of them) and a later rotation renames it to the
// new log's number and overwrites it from the start; while no spare is
// ready (the first logs), a background goroutine writes one full of zeros
// and syncs it, ahead of need. Writes then overwrite blocks the file
// already has, so an fdatasync flushes data only, without the journal
// commit a growing file needs. Such logs use the recyclable record format.
//
// # Read path
//
// Get looks in the memtables (newest first), then in every L0 table whose
// range holds the key (newest first), then in at most one table per deeper
// level. Each table answers "absent" from its bloom filter without a read
// most of the time; otherwise one index search and one data block (through
// the block cache) decide. Readers never take the write lock: they pin an
// immutable read state (memtables plus version) with a reference count.
//
// # Files
//
//	dir/
//	  LOCK             flock(2)ed while a process has the database open
//	  CURRENT          name of the live manifest ("MANIFEST-000007\n")
//	  MANIFEST-000007  log of version edits (record framing below)
//	  000009.log       write-ahead log of the live memtable (with
//	                   RecycleWAL also the spare logs: obsolete or zeros)
//	  000004.sst ...   tables, named by file number
//
// File numbers come from one counter. CURRENT is replaced atomically (write
// CURRENT.tmp, fsync, rename, fsync the directory). New tables are fsynced,
// and the directory too, before a manifest edit names them; obsolete files
// are deleted only after the edit that drops them is durable and no reader
// pins them.
//
// # Record framing (WAL and manifest)
//
//	+---------+------------+-------------+-------------------+
//	| crc (4) | length (4) | ^length (4) | payload (length)  |
//	+---------+------------+-------------+-------------------+
//
// The CRC-32C (masked) covers both length words and the payload. Recovery
// drops a torn tail — a record cut short by the end of the file, an all-zero
// tail, or a checksum failure in the final record — and reports any other
// damage as ErrCorrupt, so a flipped byte never silently truncates the log.
//
// With Options.RecycleWAL the log's records are recyclable: the header
// also holds the low 32 bits of the log's number and the offset up to
// which the log had been fsynced when the record was written, the CRC
// covers both, and the length word's high bit marks the format:
//
//	+---------+------------------+--------------------+-------------+------------+---------+
//	| crc (4) | length|1<<31 (4) | ^(length|1<<31) (4)| log num (4) | synced (4) | payload |
//	+---------+------------------+--------------------+-------------+------------+---------+
//
// Reading such a log stops at the first position that holds no whole record
// of this log: the previous use's records (another log number), zeros, or
// a torn write. If a later record of this log says the log had been synced
// past that position when it was written, that position was durable and
// is damage (ErrCorrupt); otherwise it is a torn tail: after power loss the
// unsynced part of an overwritten file may hold any mix of new and old
// sectors, and none of it was acknowledged in SyncAlways. A recycled log's
// stale records are never replayed.
//
// A WAL payload is a batch:
//
//	+---------+-----------+----------------------------------------------+
//	| seq (8) | count (4) | kind (1) | uvarint klen | key | uvarint vlen | value | ...
//	+---------+-----------+----------------------------------------------+
//
// A manifest payload is a version edit: tagged uvarint fields (log number,
// next file number, last sequence, deleted tables, added tables with their
// level, size, entry counts and smallest/largest internal keys).
//
// # Internal keys
//
//	+----------+--------------------------------+
//	| user key | trailer (8, LE): seq<<8 | kind |
//	+----------+--------------------------------+
//
// Kinds: 0 delete, 1 set, 2 set with expiry (the value starts with the 8-byte
// expiry, a little-endian int64). Internal keys sort by user key, then newest
// first. The expiry is Unix nanoseconds when it is >= 0; a time after
// 2262-04-11T23:47:16.854775807Z, past int64 nanoseconds, is -(Unix
// milliseconds), always <= -9223372036854 (PutExpiring keeps such a time to
// the millisecond). Files written before that form held nanoseconds only, so
// they read as they did; a time before 1970 is written as 1 ns after the epoch.
//
// # SSTable
//
//	+--------------+-----+--------------+--------------+-------------+------------+
//	| data block 0 | ... | data block n | filter block | index block | footer(48) |
//	+--------------+-----+--------------+--------------+-------------+------------+
//
// Each block is followed by its masked CRC-32C, verified before the block is
// used or cached. Data blocks (4 KiB) prefix-compress keys with a restart
// point every 16 entries; each entry starts with its three lengths:
//
//	| shared (uvarint) | unshared (uvarint) | vlen (uvarint) | key[shared:] | value |
//	... | restart offsets (4 B each) | restart count (4) |
//
// The index block maps each data block's last key to uvarint offset and
// length. The filter is a cache-line-blocked bloom filter over user keys (see
// bloom.go). The footer holds the filter and index handles, a format version
// (readers reject versions they do not know), its own CRC and a magic number.
//
// # Compaction
//
// Leveled, as in LevelDB: L0 holds flushed tables that may overlap; L1..L6
// are sorted runs, each level's byte target 10× the one above (L1: 64 MiB by
// default). When L0 reaches L0CompactionTrigger tables, or a level exceeds its
// target, a background compaction merges a table (for L0, the oldest table
// and every L0 table overlapping it) with the overlapping tables of the next
// level; a table that overlaps nothing below moves down without a rewrite.
// Compactions keep only the newest version of each key, turn expired values
// into tombstones, and drop tombstones when no deeper level can hold the key.
// A live Snapshot splits the versions of a key into stripes at its sequence
// number: compactions and flushes keep the newest version in each stripe,
// and drop a tombstone only when no snapshot is older than it.
// Compact merges everything into the last level.
//
// # Damaged files
//
// Damage is never read as absence. Open fails, wrapping ErrCorrupt and
// naming the file, the offset and the reason, when CURRENT is missing while
// tables exist or names a missing manifest; when the manifest's first record
// (a snapshot of the tree) is incomplete, a record before the last fails its
// checksum, or an edit does not decode; when a table the manifest lists is
// missing or not the size the manifest recorded, or its footer, index block
// (every handle checked) or filter block fails its checksum; and when a
// write-ahead log record other than the last is damaged.
//
// Open does not read data blocks: checking every one would read the whole
// directory at start-up. A damaged data block fails the Get or iterator that
// reaches it with ErrCorrupt naming the table (never ErrNotFound), and any
// compaction that reads it (a background one is retried with growing delays,
// below; writes go on until L0 fills up and stalls them).
//
// The last record of a log is the one exception: a record cut short, zeros,
// or a checksum failure with nothing but zeros after it is what a crash in
// the middle of an append leaves (a mapped log is preallocated with zeros
// and its pages reach the disk in any order), so recovery drops it silently,
// as LevelDB and Pebble do. The manifest is appended with write(2) and
// fsync, never preallocated: there only a last record cut short or holding
// a zeroed sector is dropped, and a whole last record failing its checksum
// is damage. (A manifest cut exactly at a record boundary still looks like a
// shorter, valid one.) A bad record followed by valid ones is reported,
// where LevelDB (without paranoid checks) skips it, RocksDB's default
// recovery mode stops replaying there and Pebble stops at it in the newest
// log: dropping acknowledged writes from the middle of a log is a decision
// for an operator (restore, or move the log aside), not for start-up.
//
// A recyclable log (RecycleWAL) ends at its first position without a whole
// record of its own, unless a later record was written after the log was
// synced past it (Record framing, above): damage to synced records is
// reported wherever a later record vouches for them (in SyncAlways, every
// commit group's but the last one's; in SyncEverySecond, those synced
// before the last group was written), while damage to a part not yet
// synced when the last record was written cannot be told from a torn write
// and ends the log there.
//
// Check verifies a directory that no process has open completely, every
// data block included, and reports every damaged file at once; Inspect
// reads one without writing (scans, gets, stats) and ReadManifest decodes
// its version edits. The minikv-lsm command (cmd/minikv-lsm) wraps them.
//
// # Disk errors and Resume
//
// A disk error on the write path fails the DB: the error is kept, Err
// returns it, and every write (Apply, Put, Delete, DeleteRange, Flush)
// returns it, while reads (Get, iterators, snapshots) go on from the
// memtables and tables. These fail the DB:
//
//   - a log write(2) or fsync (a commit's, a pipelined group's, or
//     SyncEverySecond's background one), or creating a log when the
//     memtable rotates: the group that met it gets the error;
//   - a flush (writing, syncing or closing a memtable's table or log):
//     writes cannot make room without flushes;
//   - a manifest write or fsync, or the directory fsync before it (any
//     edit's: a flush's, a compaction's, a Resume's).
//
// A background compaction that fails otherwise (it cannot create, write or
// sync an output, or reads a damaged block) does not: it removes its
// outputs, leaves its inputs, counts itself in Metrics.CompactionErrors and
// is retried after a second, the delay doubling with each failure in a
// row up to 32 s. A manual Compact returns its error to its caller. Failing
// to remove an obsolete file is ignored (Open removes it later).
//
// Resume brings a failed DB back. It waits until no commit is in flight
// (pipelined fsyncs fail with the DB's error), writes every memtable to an
// fsynced L0 table, starts a new log and logs the tables and the new log's
// number in one manifest edit; then writes are taken again. Writes get the
// error until then; reads go on throughout. Resume is safe to call at any
// time (on a healthy DB it returns nil at once), repeatedly, and
// concurrently with readers and writers. When a step fails (the disk is
// still full) it returns the error, removes the tables it wrote, and leaves
// the DB failed as it was, for a later Resume to try again. A fault Resume
// does not meet (a log append's) shows again at the next write, which
// fails the DB anew.
//
// Nothing a failed write left behind is ever trusted (PostgreSQL's
// "fsyncgate": after a failed fsync, the kernel may have dropped the dirty
// pages and marked them clean, so a later fsync that succeeds proves
// nothing about them). A write that returned an error is never
// acknowledged and never becomes visible: a pipelined group in the
// memtable, or a group that reached the log before its fsync failed, sits
// above the last acknowledged sequence number; Resume hides such entries
// for good (readers that pinned the memtables earlier included), leaves
// them out of its tables, and never reuses their sequence numbers. Since
// Resume's tables hold every acknowledged write and its manifest edit moves
// the log number past every older log, no log written before it is replayed
// again: their bytes past the last good fsync are never used. A crash
// before Resume replays the logs as usual, so a write that got an error
// may or may not be there after it (as with any write in flight at a
// crash); after Resume it never is. In SyncEverySecond, Resume so also
// makes durable the acknowledged writes a failed background fsync left
// unsynced.
//
// After a failed manifest write the manifest's tail is suspect (the edit
// may be in it, whole or torn, and an edit appended after a torn record
// would make it unreadable), so the DB appends no further edit: Resume
// writes a fresh manifest holding the whole tree and switches CURRENT to it
// atomically. The failed edit's new tables stay on disk until then, as the
// suspect manifest may name them. Metrics counts BackgroundErrors (times the
// DB failed) and Resumes (successful ones).
//
// Open writes too (the replayed logs' memtables to tables, a new log, a new
// manifest and CURRENT), so on a full or failing disk it fails, unless
// Options.OpenFailedOnWriteError is set: then a recovery write that fails
// (with an error other than ErrCorrupt) leaves the DB failed instead, the
// replayed writes readable from memtables and nothing the next Open needs
// changed, and Resume brings it back as above (a fresh manifest, after
// which the replayed logs are removed).
//
// # Testing seams
//
// All file access goes through package vfs; its MemFS simulates power loss
// (keeping only synced bytes and synced directory entries) and injects
// errors.
package lsm
