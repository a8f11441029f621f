package lsm

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

type metricsCounters struct {
	walBytes atomic.Int64
	// logsRecycled counts obsolete logs reused as new ones,
	// logsPreallocated logs written full of zeros ahead of need.
	logsRecycled     atomic.Int64
	logsPreallocated atomic.Int64
	walSyncs         atomic.Int64
	commits          atomic.Int64
	userBytes        atomic.Int64
	flushes          atomic.Int64
	flushBytes       atomic.Int64
	compactions      atomic.Int64
	moves            atomic.Int64
	compactRead      atomic.Int64
	compactWritten   atomic.Int64
	expiredDropped   atomic.Int64
	filterDropped    atomic.Int64
	stalls           atomic.Int64
	syncs            atomic.Int64
	syncNanos        atomic.Int64
	maxSyncNanos     atomic.Int64
	stallNanos       atomic.Int64
	bloomUseful      atomic.Int64
	flushing         atomic.Int64 // flushes running now
	backgroundErrors atomic.Int64
	resumes          atomic.Int64
	compactionErrors atomic.Int64
	compacting       atomic.Int64 // compactions (and trivial moves) running now
}

// LevelMetrics describes one level of the tree.
type LevelMetrics struct {
	Files int
	Bytes int64
}

// Metrics is a snapshot of the engine's state and counters.
type Metrics struct {
	Levels        [numLevels]LevelMetrics
	MemTables     int   // mutable plus immutable
	MemTableBytes int64 // arena bytes in use
	// UserBytes counts the bytes of committed batches; WALBytes the bytes
	// appended to write-ahead logs.
	UserBytes int64
	WALBytes  int64
	// LogsRecycled counts write-ahead logs that reused an obsolete log's
	// file, LogsPreallocated logs prepared full of zeros in the background
	// (Options.RecycleWAL).
	LogsRecycled     int64
	LogsPreallocated int64
	// Commits counts committed batches, WALSyncs the fsyncs SyncAlways
	// made for them: with concurrent writers a group shares one fsync, so
	// WALSyncs < Commits.
	Commits  int64
	WALSyncs int64
	// Flushes and FlushBytes count memtable flushes and the bytes of the
	// tables they wrote.
	Flushes    int64
	FlushBytes int64
	// Flushing and Compacting are the flushes and the compactions
	// (trivial moves included) running at the time of the snapshot: 0 or
	// 1 each, as flushes run one at a time and so do compactions. The
	// server's kill test reads them to know it kills in the middle of one.
	Flushing   int
	Compacting int
	// Compactions counts merging compactions, Moves trivial moves (a table
	// moved down a level without rewriting).
	Compactions          int64
	Moves                int64
	CompactionBytesRead  int64
	CompactionBytesWrite int64
	// ExpiredDropped counts expired entries compactions discarded or turned
	// into tombstones.
	ExpiredDropped int64
	// FilterDropped counts entries compactions deleted because
	// Options.Drop said so.
	FilterDropped int64
	// WriteAmp is (WAL + flush + compaction bytes written) / user bytes.
	WriteAmp float64
	// LogSyncs counts every fsync of a write-ahead log (SyncAlways's and
	// SyncEverySecond's), LogSyncTime their total time and MaxLogSync the
	// longest one since Open.
	LogSyncs    int64
	LogSyncTime time.Duration
	MaxLogSync  time.Duration
	// WriteStalls counts commits that waited for a flush or compaction.
	WriteStalls   int64
	StallDuration time.Duration
	CacheHits     int64
	CacheMisses   int64
	CacheBytes    int64
	CacheCapacity int64
	// BloomUseful counts table lookups a filter answered without a read.
	BloomUseful int64
	// BackgroundErrors counts the times the DB failed, refusing writes
	// until a Resume (DB.Err); Resumes counts the Resumes that brought it
	// back. CompactionErrors counts background compactions that failed
	// and were put off to be retried (the DB goes on taking writes),
	// those whose manifest write failed included (which also fail the DB).
	BackgroundErrors int64
	Resumes          int64
	CompactionErrors int64
}

// noteSync counts one fsync of a write-ahead log that took d.
func (c *metricsCounters) noteSync(d time.Duration) {
	c.syncs.Add(1)
	c.syncNanos.Add(int64(d))
	for {
		m := c.maxSyncNanos.Load()
		if int64(d) <= m || c.maxSyncNanos.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// Metrics returns a snapshot of the engine's metrics.
func (d *DB) Metrics() Metrics {
	var m Metrics
	d.mu.Lock()
	if d.current != nil {
		for level, files := range d.current.levels {
			m.Levels[level].Files = len(files)
			for _, f := range files {
				m.Levels[level].Bytes += int64(f.size)
			}
		}
	}
	if d.mem != nil {
		m.MemTables = 1 + len(d.imm)
		m.MemTableBytes = int64(d.mem.size())
	}
	for _, im := range d.imm {
		m.MemTableBytes += int64(im.size())
	}
	d.mu.Unlock()
	c := &d.m
	m.UserBytes = c.userBytes.Load()
	m.WALBytes = c.walBytes.Load()
	m.LogsRecycled = c.logsRecycled.Load()
	m.LogsPreallocated = c.logsPreallocated.Load()
	m.Commits = c.commits.Load()
	m.WALSyncs = c.walSyncs.Load()
	m.Flushes = c.flushes.Load()
	m.FlushBytes = c.flushBytes.Load()
	m.Flushing = int(c.flushing.Load())
	m.Compacting = int(c.compacting.Load())
	m.Compactions = c.compactions.Load()
	m.Moves = c.moves.Load()
	m.CompactionBytesRead = c.compactRead.Load()
	m.CompactionBytesWrite = c.compactWritten.Load()
	m.ExpiredDropped = c.expiredDropped.Load()
	m.FilterDropped = c.filterDropped.Load()
	if m.UserBytes > 0 {
		m.WriteAmp = float64(m.WALBytes+m.FlushBytes+m.CompactionBytesWrite) / float64(m.UserBytes)
	}
	m.WriteStalls = c.stalls.Load()
	m.LogSyncs = c.syncs.Load()
	m.LogSyncTime = time.Duration(c.syncNanos.Load())
	m.MaxLogSync = time.Duration(c.maxSyncNanos.Load())
	m.StallDuration = time.Duration(c.stallNanos.Load())
	if d.cache != nil {
		m.CacheHits = d.cache.hits.Load()
		m.CacheMisses = d.cache.misses.Load()
		m.CacheBytes = d.cache.size()
		m.CacheCapacity = d.opts.BlockCacheSize
	}
	m.BloomUseful = c.bloomUseful.Load()
	m.BackgroundErrors = c.backgroundErrors.Load()
	m.Resumes = c.resumes.Load()
	m.CompactionErrors = c.compactionErrors.Load()
	return m
}

// String formats the metrics as a small table.
func (m Metrics) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "level  files        bytes\n")
	for i, l := range m.Levels {
		fmt.Fprintf(&b, "L%d    %6d %12d\n", i, l.Files, l.Bytes)
	}
	fmt.Fprintf(&b, "memtables %d (%d B)  flushes %d (%d B)  compactions %d  moves %d  compacted r/w %d/%d B\n",
		m.MemTables, m.MemTableBytes, m.Flushes, m.FlushBytes, m.Compactions, m.Moves,
		m.CompactionBytesRead, m.CompactionBytesWrite)
	fmt.Fprintf(&b, "commits %d  WAL syncs %d  ", m.Commits, m.WALSyncs)
	fmt.Fprintf(&b, "write-amp %.2f  stalls %d (%v)  cache hits %d misses %d (%d/%d B)  bloom useful %d  expired dropped %d\n",
		m.WriteAmp, m.WriteStalls, m.StallDuration, m.CacheHits, m.CacheMisses, m.CacheBytes, m.CacheCapacity,
		m.BloomUseful, m.ExpiredDropped)
	if m.BackgroundErrors+m.Resumes+m.CompactionErrors > 0 {
		fmt.Fprintf(&b, "background errors %d  resumes %d  compaction errors %d\n",
			m.BackgroundErrors, m.Resumes, m.CompactionErrors)
	}
	return b.String()
}
