package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// Check is one named /doctor finding.
type Check struct {
	Name      string  `json:"name"`
	OK        bool    `json:"ok"`
	Detail    string  `json:"detail"`
	Value     float64 `json:"value"`     // the measured quantity
	Threshold float64 `json:"threshold"` // where it starts to fail
}

// Report is the /doctor answer. Status is "ok" or "fail"; failing checks
// come first so the cause is the first thing an operator reads.
type Report struct {
	Status string  `json:"status"`
	Checks []Check `json:"checks"`
}

// Check names, in the order they are reported when all pass.
const (
	CheckListeners    = "listeners"
	CheckMemory       = "memory"
	CheckShardBalance = "shard_balance"
	CheckEvictionRate = "eviction_rate"
	CheckDeadBytes    = "dead_bytes"

	// Durable mode only.
	CheckDiskSpace  = "disk_space"
	CheckDiskStalls = "disk_write_stalls"
	CheckDiskFsync  = "disk_fsync"
	CheckDiskErrors = "disk_errors"
)

// minItemsPerShard is the average shard population below which the shard
// balance is not judged: with few items, max/min is dominated by chance (an
// empty shard makes it infinite) and says nothing about the hash.
const minItemsPerShard = 1000

// evictionWindow is the shortest interval the eviction rate is measured
// over. Two /doctor calls closer than this share the older sample, so a
// burst of probes does not turn a handful of evictions into a huge rate.
const evictionWindow = time.Second

// Diagnose runs every check now.
func (a *Server) Diagnose() Report {
	snap := a.srv.Stats()
	ds := a.store.DiskStats()
	cur := sample{ev: snap.Store.Evictions, stall: ds.StallTime, syncs: ds.Syncs, syncTime: ds.SyncTime, at: time.Now()}
	old := a.windowStart(cur, snap.Uptime)
	checks := []Check{
		a.listenersCheck(),
		memoryCheck(snap.Store, a.cfg.MemoryHighWater),
		shardBalanceCheck(snap.Store, a.cfg.MaxShardImbalance),
		evictionRateCheck(rate(old, cur), a.cfg.MaxEvictionRate),
		deadBytesCheck(snap.Store),
	}
	if ds.Durable {
		checks = append(checks,
			a.diskSpaceCheck(ds),
			stallCheck(old, cur, a.cfg.MaxStallShare),
			fsyncCheck(old, cur, ds.MaxSync, a.cfg.MaxFsyncLatency),
			diskErrorsCheck(ds),
		)
	}
	// Stable, so failures keep their relative order too.
	slices.SortStableFunc(checks, func(x, y Check) int {
		switch {
		case x.OK == y.OK:
			return 0
		case !x.OK:
			return -1
		default:
			return 1
		}
	})
	r := Report{Status: "ok", Checks: checks}
	if !checks[0].OK {
		r.Status = "fail"
	}
	return r
}

func (a *Server) doctor(w http.ResponseWriter, _ *http.Request) {
	r := a.Diagnose()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if r.Status != "ok" {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(r) // the client went away; nothing to do
}

func (a *Server) listenersCheck() Check {
	c := Check{Name: CheckListeners, Threshold: 1}
	addrs := a.srv.ListenerAddrs()
	c.Value = float64(len(addrs))
	c.OK = a.srv.Listening()
	switch {
	case c.OK:
		c.Detail = "serving on " + strings.Join(addrs, ", ")
	case len(addrs) == 0:
		c.Detail = "no listener has been started"
	default:
		c.Detail = "shutting down; listeners closed: " + strings.Join(addrs, ", ")
	}
	return c
}

// memoryCheck fails when the accounted bytes reach highWater of the limit.
// With eviction on, a warm cache sits near its limit by design; a failure
// here with a low eviction rate is fine, with a high one the cache is too
// small for its working set. With -M (no eviction) it means sets are about
// to fail with SERVER_ERROR out of memory.
func memoryCheck(st store.Stats, highWater float64) Check {
	c := Check{Name: CheckMemory, Threshold: highWater, OK: true}
	if st.Limit <= 0 {
		c.Detail = "no memory limit"
		return c
	}
	c.Value = float64(st.Bytes) / float64(st.Limit)
	c.OK = c.Value < highWater
	c.Detail = fmt.Sprintf("%d of %d bytes used (%.1f%%)", st.Bytes, st.Limit, 100*c.Value)
	return c
}

// maxDeadShare is the share of segment bytes dead past which /doctor
// fails: compaction starts at a tenth (half in a shard below 2 MiB), so
// more than half means it does not keep up.
const maxDeadShare = 0.5

// deadBytesCheck reports the segment bytes that hold no live record:
// resident memory beyond the items, until compaction frees it.
func deadBytesCheck(st store.Stats) Check {
	c := Check{Name: CheckDeadBytes, Threshold: maxDeadShare, OK: true}
	if st.SegmentBytes > 0 {
		c.Value = float64(st.DeadBytes) / float64(st.SegmentBytes)
	}
	c.OK = c.Value <= maxDeadShare
	c.Detail = fmt.Sprintf("%d of %d segment bytes dead (%.1f%%), %d records moved by compaction",
		st.DeadBytes, st.SegmentBytes, 100*c.Value, st.CompactionMoves)
	return c
}

// shardBalanceCheck fails when the fullest shard holds more than maxRatio
// times the items of the emptiest. The store hashes keys with a per-process
// seeded maphash, so a skew means a broken hash or a bug, not unlucky keys.
func shardBalanceCheck(st store.Stats, maxRatio float64) Check {
	c := Check{Name: CheckShardBalance, Threshold: maxRatio, OK: true}
	c.Value = float64(st.MaxShardItems) / float64(max(st.MinShardItems, 1))
	if st.Shards <= 0 || st.Items < int64(st.Shards)*minItemsPerShard {
		c.Detail = fmt.Sprintf("%d items over %d shards: too few to judge (min %d, max %d per shard)",
			st.Items, st.Shards, st.MinShardItems, st.MaxShardItems)
		return c
	}
	c.OK = c.Value <= maxRatio
	c.Detail = fmt.Sprintf("%d shards, %d to %d items per shard (max/min %.2f)",
		st.Shards, st.MinShardItems, st.MaxShardItems, c.Value)
	return c
}

func evictionRateCheck(rate, maxRate float64) Check {
	return Check{
		Name:      CheckEvictionRate,
		OK:        rate <= maxRate,
		Value:     rate,
		Threshold: maxRate,
		Detail:    fmt.Sprintf("%.1f evictions/s", rate),
	}
}

// windowStart records cur and returns the sample a window of at least
// evictionWindow ending at cur starts from: it keeps two samples at least
// evictionWindow apart and measures from the older one. Before the first
// sample the server's start (every count 0) stands in for it.
func (a *Server) windowStart(cur sample, uptime time.Duration) sample {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.newer.at.IsZero() {
		start := sample{at: cur.at.Add(-uptime)}
		a.older, a.newer = start, start
	}
	if cur.at.Sub(a.newer.at) >= evictionWindow {
		a.older, a.newer = a.newer, cur
	}
	return a.older
}

// evictionRate is evictions per second over the window ending now.
func (a *Server) evictionRate(ev uint64, uptime time.Duration, now time.Time) float64 {
	cur := sample{ev: ev, at: now}
	return rate(a.windowStart(cur, uptime), cur)
}

// rate is evictions per second from old to cur.
func rate(old, cur sample) float64 {
	since := cur.at.Sub(old.at)
	if since <= 0 || cur.ev < old.ev {
		return 0
	}
	return float64(cur.ev-old.ev) / since.Seconds()
}

// sample is the counters the windowed checks read, at one moment.
type sample struct {
	ev       uint64        // evictions
	stall    time.Duration // time commits waited for the engine
	syncs    uint64        // log fsyncs
	syncTime time.Duration // their total time
	at       time.Time
}

// diskSpaceCheck fails when the filesystem of the data directory has less
// than minFree of its size free: the engine needs room for compaction
// outputs before it deletes their inputs, and a full disk fails every
// write. The detail also shows the directory's bytes and --disk-limit.
func (a *Server) diskSpaceCheck(ds store.DiskStats) Check {
	c := Check{Name: CheckDiskSpace, Threshold: a.cfg.MinDiskFree, OK: true}
	limit := "no --disk-limit"
	if ds.Limit > 0 {
		limit = fmt.Sprintf("--disk-limit %d", ds.Limit)
	}
	free, total, err := diskSpace(a.cfg.DataDir)
	if err != nil || total == 0 {
		c.Detail = fmt.Sprintf("data directory holds %d bytes (%s); free space unknown: %v", ds.Bytes, limit, err)
		return c
	}
	c.Value = float64(free) / float64(total)
	c.OK = c.Value >= a.cfg.MinDiskFree
	c.Detail = fmt.Sprintf("%d of %d bytes free (%.1f%%) on the data directory's filesystem; the directory holds %d bytes (%s)",
		free, total, 100*c.Value, ds.Bytes, limit)
	return c
}

// stallCheck fails when, over the window, writes spent more than maxShare
// of the time waiting for the engine's flushes and compactions: the disk
// does not keep up with the write rate.
func stallCheck(old, cur sample, maxShare float64) Check {
	c := Check{Name: CheckDiskStalls, Threshold: maxShare, OK: true}
	if since := cur.at.Sub(old.at); since > 0 && cur.stall >= old.stall {
		c.Value = float64(cur.stall-old.stall) / float64(since)
	}
	c.OK = c.Value <= maxShare
	c.Detail = fmt.Sprintf("writes waited for the engine %.1f%% of the last %s",
		100*c.Value, cur.at.Sub(old.at).Round(time.Millisecond))
	return c
}

// fsyncCheck fails when the log's fsyncs took more than maxMean on average
// over the window: with --fsync always every reply waits for one, with
// everysec the loss window on power failure grows (Redis logs "fsync is
// taking too long" past 2 s).
func fsyncCheck(old, cur sample, maxSync, maxMean time.Duration) Check {
	c := Check{Name: CheckDiskFsync, Threshold: maxMean.Seconds(), OK: true}
	n := cur.syncs - old.syncs
	if cur.syncs < old.syncs || n == 0 {
		c.Detail = fmt.Sprintf("no log fsync in the window; longest ever %s", maxSync)
		return c
	}
	mean := (cur.syncTime - old.syncTime) / time.Duration(n)
	c.Value = mean.Seconds()
	c.OK = mean <= maxMean
	c.Detail = fmt.Sprintf("%d log fsyncs, %s on average; longest ever %s", n, mean, maxSync)
	return c
}

// diskErrorsCheck fails while the disk is failed (writes refused, reads
// served, retried every second: the data directory's disk is full or
// broken), once a SAVE failed, or a read from disk failed.
func diskErrorsCheck(ds store.DiskStats) Check {
	c := Check{Name: CheckDiskErrors, OK: true}
	switch {
	case ds.WriteErr != nil:
		c.OK, c.Value = false, 1
		c.Detail = fmt.Sprintf("the disk failed %s ago: writes refused, reads served, retried every second: %v",
			time.Since(ds.FailedSince).Round(time.Second), ds.WriteErr)
		if ds.RetryErr != nil {
			c.Detail += fmt.Sprintf("; the last retry: %v", ds.RetryErr)
		}
	case ds.SaveErr != nil:
		c.OK, c.Value = false, 1
		c.Detail = "the last SAVE failed: " + ds.SaveErr.Error()
	case ds.ReadErrors > 0:
		c.OK, c.Value = false, float64(ds.ReadErrors)
		c.Detail = fmt.Sprintf("%d reads from disk failed (read as misses); the last: %v", ds.ReadErrors, ds.LastReadErr)
	default:
		c.Detail = "no disk error"
	}
	return c
}
