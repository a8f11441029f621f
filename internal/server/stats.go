package server

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/store"
)

// statNames are memcached's names for the per-connection counters.
var statNames = [numStats]string{
	statCmdGet:          "cmd_get",
	statCmdSet:          "cmd_set",
	statCmdFlush:        "cmd_flush",
	statCmdTouch:        "cmd_touch",
	statGetHits:         "get_hits",
	statGetMisses:       "get_misses",
	statDeleteHits:      "delete_hits",
	statDeleteMisses:    "delete_misses",
	statIncrHits:        "incr_hits",
	statIncrMisses:      "incr_misses",
	statDecrHits:        "decr_hits",
	statDecrMisses:      "decr_misses",
	statCASHits:         "cas_hits",
	statCASMisses:       "cas_misses",
	statCASBadval:       "cas_badval",
	statTouchHits:       "touch_hits",
	statTouchMisses:     "touch_misses",
	statStoreTooLarge:   "store_too_large",
	statStoreNoMemory:   "store_no_memory",
	statAuthCmds:        "auth_cmds",
	statAuthErrors:      "auth_errors",
	statBytesRead:       "bytes_read",
	statBytesWritten:    "bytes_written",
	statIdleKicks:       "idle_kicks",
	statConnYields:      "conn_yields",
	statCommandTimeouts: "command_timeouts",
	statWriteTimeouts:   "write_timeouts",
	statCommands:        "total_commands",
}

// Snapshot is a consistent-enough copy of the server's counters: each value
// is read atomically, the set as a whole is not a single instant.
type Snapshot struct {
	Counters   map[string]uint64
	CurrConns  int64
	TotalConns uint64
	Rejected   uint64
	Store      store.Stats
	Uptime     time.Duration
}

func (s *Server) sumCounters() [numStats]uint64 {
	var sum [numStats]uint64
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range sum {
		sum[i] = s.closed[i].Load()
	}
	for c := range s.conns {
		for i := range sum {
			sum[i] += c.stats[i].Load()
		}
	}
	return sum
}

// Stats returns the server's counters, for stats and for operators' tools.
func (s *Server) Stats() Snapshot {
	sum := s.sumCounters()
	m := make(map[string]uint64, numStats)
	for i, v := range sum {
		m[statNames[i]] = v
	}
	return Snapshot{
		Counters:   m,
		CurrConns:  s.currConns.Load(),
		TotalConns: s.totalConns.Load(),
		Rejected:   s.rejected.Load(),
		Store:      s.store.Stats(),
		Uptime:     time.Since(s.start),
	}
}

// statsCmd answers "stats [group]". Every group ends in END, which
// memcached_exporter waits for; an unknown group is ERROR as in memcached.
func (c *conn) statsCmd(req *memcache.Request, w *memcache.Writer) bool {
	group := ""
	if len(req.Args) > 0 {
		group = string(req.Args[0])
	}
	s := c.srv
	switch group {
	case "":
		s.writeGeneralStats(w)
	case "settings":
		s.writeSettings(w)
	case "items":
		s.writeItems(w)
	case "slabs":
		s.writeSlabs(w)
	case "conns":
		s.writeConns(w)
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
		s.resetCounters()
		w.Line(memcache.ResetStats)
		return true
	default:
		w.Line(memcache.Error)
		return true
	}
	w.Line(memcache.End)
	return true
}

func (s *Server) writeGeneralStats(w *memcache.Writer) {
	now := time.Now()
	sum := s.sumCounters()
	st := s.store.Stats()
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)

	w.StatInt("pid", int64(os.Getpid()))
	w.StatInt("uptime", int64(now.Sub(s.start)/time.Second))
	w.StatInt("time", now.Unix())
	w.Stat("version", Version)
	w.Stat("libevent", "none")
	w.StatInt("pointer_size", strconv.IntSize)
	w.Stat("rusage_user", fmt.Sprintf("%d.%06d", ru.Utime.Sec, ru.Utime.Usec))
	w.Stat("rusage_system", fmt.Sprintf("%d.%06d", ru.Stime.Sec, ru.Stime.Usec))
	w.StatInt("max_connections", int64(s.cfg.MaxConns))
	w.StatInt("curr_connections", s.currConns.Load())
	w.StatUint("total_connections", s.totalConns.Load())
	w.StatUint("rejected_connections", s.rejected.Load())
	w.StatInt("connection_structures", s.currConns.Load())
	for _, i := range []int{statCmdGet, statCmdSet, statCmdFlush, statCmdTouch, statGetHits, statGetMisses} {
		w.StatUint(statNames[i], sum[i])
	}
	w.StatUint("get_expired", st.GetExpired)
	w.StatUint("get_flushed", st.GetFlushed)
	for i := statDeleteHits; i < numStats; i++ {
		if i == statConnYields || i == statIdleKicks || i == statCommandTimeouts || i == statWriteTimeouts || i == statCommands {
			continue
		}
		w.StatUint(statNames[i], sum[i])
	}
	w.StatInt("limit_maxbytes", st.Limit)
	w.StatInt("accepting_conns", boolInt(!s.shuttingDown.Load()))
	w.StatInt("listen_disabled_num", 0)
	w.StatInt("threads", int64(s.cfg.Threads))
	w.StatUint("conn_yields", sum[statConnYields])
	w.StatUint("idle_kicks", sum[statIdleKicks])
	w.StatUint("command_timeouts", sum[statCommandTimeouts])
	w.StatUint("write_timeouts", sum[statWriteTimeouts])
	w.StatInt("goroutines", int64(runtime.NumGoroutine()))
	w.StatInt("shards", int64(st.Shards))
	w.StatInt("bytes", st.Bytes)
	w.StatInt("curr_items", st.Items)
	w.StatUint("total_items", st.TotalItems)
	w.StatUint("expired_unfetched", st.ExpiredUnfetched)
	w.StatUint("evicted_unfetched", st.EvictedUnfetched)
	w.StatUint("evictions", st.Evictions)
	w.StatUint("reclaimed", st.Reclaimed)
	if ds := s.store.DiskStats(); ds.Durable {
		// Durable mode (--data-dir): changes queued to the disk, memory
		// misses read back from it, failed reads, changes since SAVE.
		w.StatUint("disk_writes", ds.Writes)
		w.StatUint("disk_hits", ds.Hits)
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
	}
}

func (s *Server) writeSettings(w *memcache.Writer) {
	st := s.store.Stats()
	w.StatInt("maxbytes", st.Limit)
	w.StatInt("maxconns", int64(s.cfg.MaxConns))
	w.StatInt("tcpport", int64(s.tcpPort()))
	w.StatInt("udpport", 0)
	w.StatInt("verbosity", s.verbosity.Load())
	w.StatInt("num_threads", int64(s.cfg.Threads))
	w.Stat("cas_enabled", yesNo(!s.cfg.DisableCAS))
	w.Stat("flush_enabled", yesNo(!s.cfg.DisableFlushAll))
	w.Stat("evictions", onOff(!s.cfg.NoEvict))
	w.StatInt("item_size_max", s.cfg.MaxItemSize)
	w.StatInt("reqs_per_event", int64(s.cfg.ReqsPerEvent))
	w.StatInt("idle_timeout", int64(s.cfg.IdleTimeout/time.Second))
	w.StatInt("shutdown_timeout", int64(s.cfg.ShutdownTimeout/time.Second))
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
func (s *Server) writeSlabs(w *memcache.Writer) {
	st := s.store.Stats()
	if st.Items > 0 {
		sum := s.sumCounters()
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
			{"get_hits", sum[statGetHits]},
			{"cmd_set", sum[statCmdSet]},
			{"delete_hits", sum[statDeleteHits]},
			{"incr_hits", sum[statIncrHits]},
			{"decr_hits", sum[statDecrHits]},
			{"cas_hits", sum[statCASHits]},
			{"cas_badval", sum[statCASBadval]},
			{"touch_hits", sum[statTouchHits]},
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
func (s *Server) writeItems(w *memcache.Writer) {
	st := s.store.Stats()
	if st.Items == 0 {
		return
	}
	sum := s.sumCounters()
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
		{"outofmemory", sum[statStoreNoMemory]},
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
		{"hits_to_cold", sum[statGetHits]},
		{"hits_to_temp", 0},
	} {
		w.StatUint("items:1:"+f.name, f.v)
	}
}

func (s *Server) writeConns(w *memcache.Writer) {
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ln := range s.listeners {
		w.Stat("listen:listen_addr", "tcp:"+ln.Addr().String())
	}
	for c := range s.conns {
		id := strconv.FormatUint(c.id, 10)
		w.Stat(id+":addr", "tcp:"+c.nc.RemoteAddr().String())
		w.Stat(id+":listen_addr", "tcp:"+c.nc.LocalAddr().String())
		w.Stat(id+":state", "conn_parse_cmd")
		w.StatInt(id+":secs_since_last_cmd", (now-c.lastCmd.Load())/int64(time.Second))
	}
}

// tcpPort is the port of the first listener, as memcached's "tcpport".
func (s *Server) tcpPort() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ln := range s.listeners {
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			return a.Port
		}
	}
	return 0
}

func (s *Server) resetCounters() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.closed {
		s.closed[i].Store(0)
	}
	for c := range s.conns {
		for i := range c.stats {
			c.stats[i].Store(0)
		}
	}
	s.totalConns.Store(uint64(len(s.conns)))
	s.rejected.Store(0)
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
