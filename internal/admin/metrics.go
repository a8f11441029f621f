package admin

import (
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// namespace is memcached_exporter's, so dashboards and alerts written for
// memcached (Grafana 37, the memcached mixin) work on MiniKV unchanged.
const namespace = "memcached"

// metric describes one series family: its memcached_exporter name, help,
// type and labels.
type metric struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
}

func newMetric(name, help string, typ prometheus.ValueType, labels ...string) metric {
	return metric{prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil), typ}
}

// collector reads Server.Stats at scrape time; it keeps no state of its own,
// so a scrape never sees a value older than the scrape.
type collector struct {
	srv   *server.Server
	store *store.Store

	up, uptime, time, version                           metric
	rusageUser, rusageSystem                            metric
	commands                                            metric
	bytesRead, bytesWritten                             metric
	currConns, maxConns, connsTotal, connsRejected      metric
	connsYielded, listenerDisabled, accepting           metric
	currBytes, limitBytes, malloced                     metric
	segmentBytes, deadBytes, compactionMoves            metric
	currItems, itemsTotal, evicted, reclaimed           metric
	tooLarge, noMemory                                  metric
	slabItems, slabEvicted, slabReclaimed, slabOutOfMem metric
	slabExpiredUnfetched, slabEvictedUnfetched          metric
	diskWrites, diskHits, diskReadErrors                metric // durable mode only
	diskChanges, diskLastSave                           metric
	diskBytes, diskLimit, diskEvictions, diskStalls     metric
	diskStallTime, diskFsyncs, diskFsyncTime            metric
	diskRecovery, diskFlushes, diskCompactions          metric
	diskFlushing, diskCompacting                        metric
	diskRefusing, diskFailures, diskRecoveries          metric
	diskRefused, diskCompactionErrors                   metric
}

func newCollector(srv *server.Server, st *store.Store) *collector {
	counter, gauge := prometheus.CounterValue, prometheus.GaugeValue
	slab := func(name, help string, typ prometheus.ValueType) metric {
		return metric{prometheus.NewDesc(prometheus.BuildFQName(namespace, "slab", name), help, []string{"slab"}, nil), typ}
	}
	return &collector{
		srv:   srv,
		store: st,

		up:           newMetric("up", "Could the memcached server be reached.", gauge),
		uptime:       newMetric("uptime_seconds", "Number of seconds since the server started.", counter),
		time:         newMetric("time_seconds", "current UNIX time according to the server.", gauge),
		version:      newMetric("version", "The version of this memcached server.", gauge, "version"),
		rusageUser:   newMetric("process_user_cpu_seconds_total", "Accumulated user time for this process.", counter),
		rusageSystem: newMetric("process_system_cpu_seconds_total", "Accumulated system time for this process.", counter),
		commands: newMetric("commands_total",
			"Total number of all requests broken down by command (get, set, etc.) and status.", counter, "command", "status"),
		bytesRead:        newMetric("read_bytes_total", "Total number of bytes read by this server from network.", counter),
		bytesWritten:     newMetric("written_bytes_total", "Total number of bytes sent by this server to network.", counter),
		currConns:        newMetric("current_connections", "Current number of open connections.", gauge),
		maxConns:         newMetric("max_connections", "Maximum number of clients allowed.", gauge),
		connsTotal:       newMetric("connections_total", "Total number of connections opened since the server started running.", counter),
		connsRejected:    newMetric("connections_rejected_total", "Total number of connections rejected due to hitting the max connections limit.", counter),
		connsYielded:     newMetric("connections_yielded_total", "Total number of connections yielded running due to hitting the -R limit.", counter),
		listenerDisabled: newMetric("connections_listener_disabled_total", "Number of times that the server has hit its connections limit and disabled its listener.", counter),
		accepting:        newMetric("accepting_connections", "The server is currently accepting new connections.", gauge),
		currBytes:        newMetric("current_bytes", "Current number of bytes used to store items.", gauge),
		limitBytes:       newMetric("limit_bytes", "Number of bytes this server is allowed to use for storage.", gauge),
		segmentBytes:     newMetric("segment_bytes", "Bytes of the segments the items' records live in.", gauge),
		deadBytes:        newMetric("dead_bytes", "Segment bytes holding no live record, resident until compaction frees them.", gauge),
		compactionMoves:  newMetric("compaction_moves_total", "Records copied by compaction and the eviction walk.", counter),
		malloced:         newMetric("malloced_bytes", "Number of bytes of memory allocated to slab pages.", gauge),
		currItems:        newMetric("current_items", "Current number of items stored by this instance.", gauge),
		itemsTotal:       newMetric("items_total", "Total number of items stored during the life of this instance.", counter),
		evicted:          newMetric("items_evicted_total", "Total number of valid items removed from cache to free memory for new items.", counter),
		reclaimed:        newMetric("items_reclaimed_total", "Total number of times an entry was stored using memory from an expired entry.", counter),
		tooLarge:         newMetric("item_too_large_total", "The number of times an item exceeded the max-item-size when being stored.", counter),
		noMemory:         newMetric("item_no_memory_total", "The number of times an item could not be stored due to no more memory.", counter),

		// MiniKV has no slab classes; like "stats items" it reports the
		// whole store as slab class 1 so per-slab panels are not empty.
		slabItems:            slab("current_items", "Number of items currently stored in this slab class.", gauge),
		slabEvicted:          slab("items_evicted_total", "Total number of times an item had to be evicted from the LRU before it expired.", counter),
		slabReclaimed:        slab("items_reclaimed_total", "Total number of items reclaimed.", counter),
		slabOutOfMem:         slab("items_outofmemory_total", "Total number of items for this slab class that have triggered an out of memory error.", counter),
		slabExpiredUnfetched: slab("items_expired_unfetched_total", "Total number of valid items evicted from the LRU which were never touched after being set.", counter),
		slabEvictedUnfetched: slab("items_evicted_unfetched_total", "Total nmber of items evicted and never fetched.", counter),

		// Durable mode (--data-dir) only; absent from a pure cache.
		diskWrites:     newMetric("disk_writes_total", "Changes written to the data directory (durable mode).", counter),
		diskHits:       newMetric("disk_hits_total", "Lookups that missed in memory and were read back from disk (durable mode).", counter),
		diskReadErrors: newMetric("disk_read_errors_total", "Disk reads that failed (durable mode).", counter),
		diskChanges:    newMetric("disk_changes_since_save", "Changes since the last SAVE/BGSAVE or start (durable mode).", gauge),
		diskLastSave:   newMetric("disk_last_save_timestamp_seconds", "Unix time of the last successful SAVE/BGSAVE, or of the start (durable mode).", gauge),
		diskBytes:      newMetric("disk_bytes", "Bytes the data directory holds: tables and log (durable mode).", gauge),
		diskLimit:      newMetric("disk_limit_bytes", "The --disk-limit bound on the data directory; 0 = none (durable mode).", gauge),
		diskEvictions:  newMetric("disk_evictions_total", "Items dropped for good to keep the data directory under --disk-limit (durable mode).", counter),
		diskStalls:     newMetric("disk_write_stalls_total", "Commits that waited for the engine's flushes or compactions (durable mode).", counter),
		diskStallTime:  newMetric("disk_write_stall_seconds_total", "Time commits waited for the engine's flushes or compactions (durable mode).", counter),
		diskFsyncs:     newMetric("disk_fsyncs_total", "fsyncs of the write-ahead log (durable mode).", counter),
		diskFsyncTime:  newMetric("disk_fsync_seconds_total", "Time spent in fsyncs of the write-ahead log (durable mode).", counter),
		diskRecovery:   newMetric("disk_recovery_seconds", "How long the last start took to recover the data directory (durable mode).", gauge),

		// The engine's background work: done, and running at the scrape.
		diskFlushes:          newMetric("disk_flushes_total", "Memtables the engine wrote out as tables (durable mode).", counter),
		diskCompactions:      newMetric("disk_compactions_total", "Compactions the engine finished, trivial moves included (durable mode).", counter),
		diskFlushing:         newMetric("disk_flushing", "Memtable flushes running now (durable mode).", gauge),
		diskCompacting:       newMetric("disk_compacting", "Compactions running now (durable mode).", gauge),
		diskRefusing:         newMetric("disk_writes_refused", "1 while the disk is failed and writes are refused, reads served (durable mode).", gauge),
		diskFailures:         newMetric("disk_failures_total", "Times the disk failed and writes were refused (durable mode).", counter),
		diskRecoveries:       newMetric("disk_recoveries_total", "Times writes resumed after a disk failure, without a restart (durable mode).", counter),
		diskRefused:          newMetric("disk_refused_writes_total", "Writes refused while the disk was failed, noreply ones included (durable mode).", counter),
		diskCompactionErrors: newMetric("disk_compaction_errors_total", "Compactions that failed (no room for their output, a read error) and were retried later; writes go on (durable mode).", counter),
	}
}

func (c *collector) metrics() []metric {
	return []metric{
		c.up, c.uptime, c.time, c.version, c.rusageUser, c.rusageSystem, c.commands,
		c.bytesRead, c.bytesWritten, c.currConns, c.maxConns, c.connsTotal, c.connsRejected,
		c.connsYielded, c.listenerDisabled, c.accepting, c.currBytes, c.limitBytes, c.malloced,
		c.segmentBytes, c.deadBytes, c.compactionMoves,
		c.currItems, c.itemsTotal, c.evicted, c.reclaimed, c.tooLarge, c.noMemory,
		c.slabItems, c.slabEvicted, c.slabReclaimed, c.slabOutOfMem,
		c.slabExpiredUnfetched, c.slabEvictedUnfetched,
		c.diskWrites, c.diskHits, c.diskReadErrors, c.diskChanges, c.diskLastSave,
		c.diskBytes, c.diskLimit, c.diskEvictions, c.diskStalls, c.diskStallTime, c.diskFsyncs,
		c.diskFsyncTime, c.diskRecovery, c.diskFlushes, c.diskCompactions, c.diskFlushing, c.diskCompacting,
		c.diskRefusing, c.diskFailures, c.diskRecoveries, c.diskRefused, c.diskCompactionErrors,
	}
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.metrics() {
		ch <- m.desc
	}
}

// Collect implements prometheus.Collector. Values follow memcached_exporter's
// mapping of the "stats" fields one for one, so a MiniKV scraped in-process
// and one scraped through memcached_exporter report the same numbers.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	snap := c.srv.Stats()
	st, n := snap.Store, &snap.Count
	emit := func(m metric, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(m.desc, m.typ, v, labels...)
	}
	u := func(st server.Stat) float64 { return float64(n[st]) }

	emit(c.up, boolFloat(c.srv.Listening()))
	emit(c.uptime, float64(snap.Uptime/time.Second))
	emit(c.time, float64(time.Now().Unix()))
	emit(c.version, 1, server.Version)
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		emit(c.rusageUser, timeval(ru.Utime))
		emit(c.rusageSystem, timeval(ru.Stime))
	}

	for _, op := range []struct {
		name         string
		hits, misses server.Stat
	}{
		{"get", server.StatGetHits, server.StatGetMisses},
		{"delete", server.StatDeleteHits, server.StatDeleteMisses},
		{"incr", server.StatIncrHits, server.StatIncrMisses},
		{"decr", server.StatDecrHits, server.StatDecrMisses},
		{"cas", server.StatCASHits, server.StatCASMisses},
		{"touch", server.StatTouchHits, server.StatTouchMisses},
	} {
		emit(c.commands, u(op.hits), op.name, "hit")
		emit(c.commands, u(op.misses), op.name, "miss")
	}
	emit(c.commands, u(server.StatCASBadval), "cas", "badval")
	emit(c.commands, u(server.StatCmdFlush), "flush", "hit")
	// cmd_set counts cas commands too, as memcached's does; the exporter
	// takes them out again.
	emit(c.commands, u(server.StatCmdSet)-u(server.StatCASMisses)-u(server.StatCASHits)-u(server.StatCASBadval), "set", "hit")

	emit(c.bytesRead, u(server.StatBytesRead))
	emit(c.bytesWritten, u(server.StatBytesWritten))
	emit(c.currConns, float64(snap.CurrConns))
	emit(c.maxConns, float64(c.srv.MaxConns()))
	emit(c.connsTotal, float64(snap.TotalConns))
	emit(c.connsRejected, float64(snap.Rejected))
	emit(c.connsYielded, u(server.StatConnYields))
	emit(c.listenerDisabled, 0) // MiniKV answers and closes instead of disabling accept
	emit(c.accepting, boolFloat(c.srv.Listening()))

	emit(c.currBytes, float64(st.Bytes))
	emit(c.limitBytes, float64(st.Limit))
	emit(c.malloced, float64(st.Bytes))
	emit(c.segmentBytes, float64(st.SegmentBytes))
	emit(c.deadBytes, float64(st.DeadBytes))
	emit(c.compactionMoves, float64(st.CompactionMoves))
	emit(c.currItems, float64(st.Items))
	emit(c.itemsTotal, float64(st.TotalItems))
	emit(c.evicted, float64(st.Evictions))
	emit(c.reclaimed, float64(st.Reclaimed))
	emit(c.tooLarge, u(server.StatStoreTooLarge))
	emit(c.noMemory, u(server.StatStoreNoMemory))

	if ds := c.store.DiskStats(); ds.Durable {
		emit(c.diskWrites, float64(ds.Writes))
		emit(c.diskHits, float64(ds.Hits))
		emit(c.diskReadErrors, float64(ds.ReadErrors))
		emit(c.diskChanges, float64(ds.ChangesSinceSave))
		emit(c.diskLastSave, float64(ds.LastSave))
		emit(c.diskBytes, float64(ds.Bytes))
		emit(c.diskLimit, float64(ds.Limit))
		emit(c.diskEvictions, float64(ds.Evictions))
		emit(c.diskStalls, float64(ds.WriteStalls))
		emit(c.diskStallTime, ds.StallTime.Seconds())
		emit(c.diskFsyncs, float64(ds.Syncs))
		emit(c.diskFsyncTime, ds.SyncTime.Seconds())
		emit(c.diskRecovery, ds.OpenTime.Seconds())
		emit(c.diskFlushes, float64(ds.Flushes))
		emit(c.diskCompactions, float64(ds.Compactions))
		emit(c.diskFlushing, float64(ds.Flushing))
		emit(c.diskCompacting, float64(ds.Compacting))
		emit(c.diskRefusing, boolFloat(ds.WriteErr != nil))
		emit(c.diskFailures, float64(ds.Failures))
		emit(c.diskRecoveries, float64(ds.Recoveries))
		emit(c.diskRefused, u(server.StatDiskRefused))
		emit(c.diskCompactionErrors, float64(ds.CompactionErrors))
	}

	if st.Items > 0 { // "stats items" lists slab 1 only when it holds items
		emit(c.slabItems, float64(st.Items), "1")
		emit(c.slabEvicted, float64(st.Evictions), "1")
		emit(c.slabReclaimed, float64(st.Reclaimed), "1")
		emit(c.slabOutOfMem, u(server.StatStoreNoMemory), "1")
		emit(c.slabExpiredUnfetched, float64(st.ExpiredUnfetched), "1")
		emit(c.slabEvictedUnfetched, float64(st.EvictedUnfetched), "1")
	}
}

func timeval(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
