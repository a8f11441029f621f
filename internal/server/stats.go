package server

import (
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// Stat names one of the per-connection counters every protocol bumps
// (Conn.Count). Its String is memcached's name for it.
type Stat int

// The counters. memcached's "stats" lists them under these names; INFO
// and /metrics read the same values.
const (
	StatCmdGet Stat = iota
	StatCmdSet
	StatCmdFlush
	StatCmdTouch
	StatGetHits
	StatGetMisses
	StatDeleteHits
	StatDeleteMisses
	StatIncrHits
	StatIncrMisses
	StatDecrHits
	StatDecrMisses
	StatCASHits
	StatCASMisses
	StatCASBadval
	StatTouchHits
	StatTouchMisses
	StatStoreTooLarge
	StatStoreNoMemory
	StatAuthCmds
	StatAuthErrors
	StatBytesRead
	StatBytesWritten
	StatIdleKicks
	StatConnYields
	StatCommandTimeouts
	StatWriteTimeouts
	StatOutputLimitKicks // connections closed over their output limit (Redis's client_output_buffer_limit_disconnections)
	StatCommands         // every command run, on every port (RESP total_commands_processed)
	StatDiskRefused      // writes refused while the disk was failed (durable mode), noreply ones too
	NumStats             // the number of counters
)

// statNames are memcached's names for the per-connection counters.
var statNames = [NumStats]string{
	StatCmdGet:           "cmd_get",
	StatCmdSet:           "cmd_set",
	StatCmdFlush:         "cmd_flush",
	StatCmdTouch:         "cmd_touch",
	StatGetHits:          "get_hits",
	StatGetMisses:        "get_misses",
	StatDeleteHits:       "delete_hits",
	StatDeleteMisses:     "delete_misses",
	StatIncrHits:         "incr_hits",
	StatIncrMisses:       "incr_misses",
	StatDecrHits:         "decr_hits",
	StatDecrMisses:       "decr_misses",
	StatCASHits:          "cas_hits",
	StatCASMisses:        "cas_misses",
	StatCASBadval:        "cas_badval",
	StatTouchHits:        "touch_hits",
	StatTouchMisses:      "touch_misses",
	StatStoreTooLarge:    "store_too_large",
	StatStoreNoMemory:    "store_no_memory",
	StatAuthCmds:         "auth_cmds",
	StatAuthErrors:       "auth_errors",
	StatBytesRead:        "bytes_read",
	StatBytesWritten:     "bytes_written",
	StatIdleKicks:        "idle_kicks",
	StatConnYields:       "conn_yields",
	StatCommandTimeouts:  "command_timeouts",
	StatWriteTimeouts:    "write_timeouts",
	StatOutputLimitKicks: "output_limit_kicks",
	StatCommands:         "total_commands",
	StatDiskRefused:      "disk_refused_writes",
}

// String is memcached's name for the counter.
func (st Stat) String() string { return statNames[st] }

type counters [NumStats]atomic.Uint64

func (c *counters) addFrom(o *counters) {
	for i := range o {
		c[i].Add(o[i].Load())
	}
}

// Snapshot is a consistent-enough copy of the server's counters: each value
// is read atomically, the set as a whole is not a single instant.
type Snapshot struct {
	Count      [NumStats]uint64 // the counters, indexed by Stat (Stat.String is memcached's name)
	CurrConns  int64
	TotalConns uint64
	Rejected   uint64
	Store      store.Stats
	Uptime     time.Duration
}

func (s *Server) sumCounters() [NumStats]uint64 {
	var sum [NumStats]uint64
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

// Stats returns the server's counters, for stats, INFO and operators'
// tools.
func (s *Server) Stats() Snapshot { return s.StatsOf(s.store) }

// StatsOf is Stats with the store's counters read through st: the view a
// Redis transaction runs on (store.Exclusive), whose shards the caller
// already holds.
func (s *Server) StatsOf(st *store.Store) Snapshot {
	return Snapshot{
		Count:      s.sumCounters(),
		CurrConns:  s.currConns.Load(),
		TotalConns: s.totalConns.Load(),
		Rejected:   s.rejected.Load(),
		Store:      st.Stats(),
		Uptime:     time.Since(s.start),
	}
}

// ResetCounters zeroes the counters of every connection, live and closed,
// and the connection totals ("stats reset", CONFIG RESETSTAT).
func (s *Server) ResetCounters() {
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
