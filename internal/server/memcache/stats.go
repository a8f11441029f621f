package memcache

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/server"
)

// statsCmd answers "stats [group]". Every group ends in END, which
// memcached_exporter waits for; an unknown group is ERROR as in memcached.
func (c *conn) statsCmd(req *memcache.Request, w *memcache.Writer) bool {
	group := ""
	if len(req.Args) > 0 {
		group = string(req.Args[0])
	}
	p := c.p
	switch group {
	case "":
		p.writeGeneralStats(w)
	case "settings":
		p.writeSettings(w)
	case "items":
		p.writeItems(w)
	case "slabs":
		p.writeSlabs(w)
	case "conns":
		c.writeConns(w)
	case "detail":
		// MiniKV keeps no per-prefix detail; accept the switches memcached
		// accepts so scripts that toggle it keep working.
		sub := ""
		if len(req.Args) > 1 {
			sub = string(req.Args[1])
		}
		switch sub {
		case "on", "off":
			w.Line(memcache.OK)
		case "dump":
			w.Line(memcache.End)
		default:
			w.Line("CLIENT_ERROR usage: stats detail on|off|dump")
		}
		return true
	case "reset":
		p.srv.ResetCounters()
		w.Line(memcache.ResetStats)
		return true
	default:
		w.Line(memcache.Error)
		return true
	}
	w.Line(memcache.End)
	return true
}

func (p *Protocol) writeGeneralStats(w *memcache.Writer) {
	s := p.srv
	now := time.Now()
	snap := s.Stats()
	sum, st := snap.Count, snap.Store
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)

	w.StatInt("pid", int64(os.Getpid()))
	w.StatInt("uptime", int64(now.Sub(s.Started())/time.Second))
	w.StatInt("time", now.Unix())
	w.Stat("version", server.Version)
	w.Stat("libevent", "none")
	w.StatInt("pointer_size", strconv.IntSize)
	w.Stat("rusage_user", fmt.Sprintf("%d.%06d", ru.Utime.Sec, ru.Utime.Usec))
	w.Stat("rusage_system", fmt.Sprintf("%d.%06d", ru.Stime.Sec, ru.Stime.Usec))
	w.StatInt("max_connections", int64(p.srv.MaxConns()))
	w.StatInt("curr_connections", snap.CurrConns)
	w.StatUint("total_connections", snap.TotalConns)
	w.StatUint("rejected_connections", snap.Rejected)
	w.StatInt("connection_structures", snap.CurrConns)
	for _, i := range []server.Stat{server.StatCmdGet, server.StatCmdSet, server.StatCmdFlush, server.StatCmdTouch, server.StatGetHits, server.StatGetMisses} {
		w.StatUint(i.String(), sum[i])
	}
	w.StatUint("get_expired", st.GetExpired)
	w.StatUint("get_flushed", st.GetFlushed)
	for i := server.StatDeleteHits; i < server.NumStats; i++ {
		if i == server.StatConnYields || i == server.StatIdleKicks || i == server.StatCommandTimeouts || i == server.StatWriteTimeouts || i == server.StatOutputLimitKicks || i == server.StatCommands || i == server.StatDiskRefused {
			continue
		}
		w.StatUint(i.String(), sum[i])
	}
	w.StatInt("limit_maxbytes", st.Limit)
	w.StatInt("accepting_conns", boolInt(!s.ShuttingDown()))
	w.StatInt("listen_disabled_num", 0)
	w.StatInt("threads", int64(p.cfg.Threads))
	w.StatUint("conn_yields", sum[server.StatConnYields])
	w.StatUint("idle_kicks", sum[server.StatIdleKicks])
	w.StatUint("command_timeouts", sum[server.StatCommandTimeouts])
	w.StatUint("write_timeouts", sum[server.StatWriteTimeouts])
	w.StatUint("output_limit_kicks", sum[server.StatOutputLimitKicks])
	w.StatUint("disk_refused_writes", sum[server.StatDiskRefused])
	w.StatInt("goroutines", int64(runtime.NumGoroutine()))
	w.StatInt("shards", int64(st.Shards))
	w.StatInt("bytes", st.Bytes)
	w.StatInt("curr_items", st.Items)
	w.StatUint("total_items", st.TotalItems)
	w.StatUint("expired_unfetched", st.ExpiredUnfetched)
	w.StatUint("evicted_unfetched", st.EvictedUnfetched)
	w.StatUint("evictions", st.Evictions)
	w.StatUint("reclaimed", st.Reclaimed)
	// Where the items live: segment bytes, the dead ones among them
	// (resident until compaction frees them) and the records moved.
	w.StatInt("segment_bytes", st.SegmentBytes)
	w.StatInt("dead_bytes", st.DeadBytes)
	w.StatUint("compaction_moves", st.CompactionMoves)
	if ds := p.st.DiskStats(); ds.Durable {
		// Durable mode (--data-dir): changes queued to the disk, memory
		// misses read back from it, failed reads, changes since SAVE.
		w.StatUint("disk_writes", ds.Writes)
		w.StatUint("disk_hits", ds.Hits)
		// The warm-up after the start: items loaded back into memory,
		// and its duration once it ended (0 while it runs).
		w.StatUint("disk_warmed", ds.Warmed)
		w.StatInt("disk_warm_up_ms", ds.WarmTime.Milliseconds())
		w.StatUint("disk_read_errors", ds.ReadErrors)
		w.StatUint("disk_changes_since_save", ds.ChangesSinceSave)
		w.StatInt("disk_last_save", ds.LastSave)
		// The data directory: its bytes and bound, items the bound
		// dropped for good, engine write stalls, log fsyncs, the time
		// the last start took to recover, and the engine's flushes and
		// compactions, done and running now.
		w.StatInt("disk_bytes", ds.Bytes)
		w.StatInt("disk_limit", ds.Limit)
		w.StatUint("disk_evictions", ds.Evictions)
		w.StatUint("disk_trims", ds.Trims)
		w.StatUint("disk_write_stalls", ds.WriteStalls)
		w.StatUint("disk_fsyncs", ds.Syncs)
		w.StatInt("disk_fsync_max_us", ds.MaxSync.Microseconds())
		w.StatInt("disk_recovery_ms", ds.OpenTime.Milliseconds())
		w.StatUint("disk_flushes", ds.Flushes)
		w.StatUint("disk_compactions", ds.Compactions)
		w.StatInt("disk_flushing", int64(ds.Flushing))
		w.StatInt("disk_compacting", int64(ds.Compacting))
		// The writes-refused state (docs/durability.md, "When the disk
		// fails"); disk_refused_writes is with the connection counters.
		w.StatInt("disk_writes_refused", boolInt(ds.WriteErr != nil))
		w.StatUint("disk_failures", ds.Failures)
		w.StatUint("disk_recoveries", ds.Recoveries)
		w.StatUint("disk_compaction_errors", ds.CompactionErrors)
	}
}

func (p *Protocol) writeSettings(w *memcache.Writer) {
	st := p.st.Stats()
	cfg := &p.cfg
	w.StatInt("maxbytes", st.Limit)
	w.StatInt("maxconns", int64(p.srv.MaxConns()))
	w.StatInt("tcpport", int64(p.tcpPort()))
	w.StatInt("udpport", 0)
	w.StatInt("verbosity", p.verbosity.Load())
	w.StatInt("num_threads", int64(cfg.Threads))
	w.Stat("cas_enabled", yesNo(!cfg.DisableCAS))
	w.Stat("flush_enabled", yesNo(!cfg.DisableFlushAll))
	w.Stat("evictions", onOff(!p.st.NoEvict()))
	w.StatInt("item_size_max", cfg.MaxItemSize)
	w.StatInt("reqs_per_event", int64(cfg.ReqsPerEvent))
	w.StatInt("idle_timeout", int64(p.srv.IdleTimeout()/time.Second))
	w.StatInt("shutdown_timeout", int64(cfg.ShutdownTimeout/time.Second))
	w.Stat("binding_protocol", "ascii")
	w.StatInt("shards", int64(st.Shards))
}

// writeSlabs answers "stats slabs". MiniKV has no slab allocator: each item
// is one record of exactly its own size. "stats slabs" and "stats items"
// describe the whole store as slab class 1, listed only while it holds
// items (memcached lists a class once it has memory), with memcached 1.6's
// fields in memcached's order, so memcached_exporter and other slab tools
// find every field they read. A field MiniKV has no counterpart for is a
// constant, documented where it is written.
func (p *Protocol) writeSlabs(w *memcache.Writer) {
	st := p.st.Stats()
	if st.Items > 0 {
		sum := p.srv.Stats().Count
		for _, f := range []struct {
			name string
			v    uint64
		}{
			// A chunk is one item's record, so its size is the mean
			// accounted item size, rounded up, and a page holds one chunk.
			// Memory is charged per item: no chunk is ever free.
			{"chunk_size", uint64((st.Bytes + st.Items - 1) / st.Items)},
			{"chunks_per_page", 1},
			{"total_pages", uint64(st.Items)},
			{"total_chunks", uint64(st.Items)},
			{"used_chunks", uint64(st.Items)},
			{"free_chunks", 0},
			{"free_chunks_end", 0},
			// The one class sees every command: the server's counters.
			{"get_hits", sum[server.StatGetHits]},
			{"cmd_set", sum[server.StatCmdSet]},
			{"delete_hits", sum[server.StatDeleteHits]},
			{"incr_hits", sum[server.StatIncrHits]},
			{"decr_hits", sum[server.StatDecrHits]},
			{"cas_hits", sum[server.StatCASHits]},
			{"cas_badval", sum[server.StatCASBadval]},
			{"touch_hits", sum[server.StatTouchHits]},
		} {
			w.StatUint("1:"+f.name, f.v)
		}
	}
	w.StatInt("active_slabs", min(st.Items, 1))
	w.StatInt("total_malloced", st.Bytes)
}

// writeItems answers "stats items" for the one class of writeSlabs.
// mem_requested is here, not in "stats slabs", as in memcached 1.6:
// memcached_exporter maps both to one series, and a scrape that has it
// twice fails.
func (p *Protocol) writeItems(w *memcache.Writer) {
	st := p.st.Stats()
	if st.Items == 0 {
		return
	}
	sum := p.srv.Stats().Count
	for _, f := range []struct {
		name string
		v    uint64
	}{
		// One LRU, reported as COLD: no HOT or WARM segments, so their
		// counts, ages and hits are 0 and every hit is a hit to COLD.
		{"number", uint64(st.Items)},
		{"number_hot", 0},
		{"number_warm", 0},
		{"number_cold", uint64(st.Items)},
		{"age_hot", 0},
		{"age_warm", 0},
		{"age", 0}, // the oldest item's last access is not tracked
		{"mem_requested", uint64(st.Bytes)},
		{"evicted", st.Evictions},
		{"evicted_nonzero", 0}, // not counted apart from evicted
		{"evicted_time", 0},    // not tracked
		{"outofmemory", sum[server.StatStoreNoMemory]},
		{"tailrepairs", 0}, // no item refcounts to repair
		{"reclaimed", st.Reclaimed},
		{"expired_unfetched", st.ExpiredUnfetched},
		{"evicted_unfetched", st.EvictedUnfetched},
		{"evicted_active", 0}, // the CLOCK walk spares used items rather than evict them
		// No LRU crawler (the sweeper's removals count in reclaimed), no
		// segment moves, no direct reclaims counted apart from evictions.
		{"crawler_reclaimed", 0},
		{"crawler_items_checked", 0},
		{"lrutail_reflocked", 0},
		{"moves_to_cold", 0},
		{"moves_to_warm", 0},
		{"moves_within_lru", 0},
		{"direct_reclaims", 0},
		{"hits_to_hot", 0},
		{"hits_to_warm", 0},
		{"hits_to_cold", sum[server.StatGetHits]},
		{"hits_to_temp", 0},
	} {
		w.StatUint("items:1:"+f.name, f.v)
	}
}

// tcpPort is the port of the first listener, as memcached's "tcpport".
func (p *Protocol) tcpPort() int {
	for _, a := range p.srv.ListenerAddrs() {
		if _, port, err := net.SplitHostPort(a); err == nil {
			if n, err := strconv.Atoi(port); err == nil {
				return n
			}
		}
	}
	return 0
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
