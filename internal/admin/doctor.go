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
	now := time.Now()
	checks := []Check{
		a.listenersCheck(),
		memoryCheck(snap.Store, a.cfg.MemoryHighWater),
		shardBalanceCheck(snap.Store, a.cfg.MaxShardImbalance),
		evictionRateCheck(a.evictionRate(snap.Store.Evictions, snap.Uptime, now), a.cfg.MaxEvictionRate),
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

// evictionRate is evictions per second over a window of at least
// evictionWindow ending now: it keeps two samples at least evictionWindow
// apart and measures from the older one. Before the first sample the server's
// start (eviction count 0) stands in for it.
func (a *Server) evictionRate(ev uint64, uptime time.Duration, now time.Time) float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.newer.at.IsZero() {
		start := sample{at: now.Add(-uptime)}
		a.older, a.newer = start, start
	}
	if now.Sub(a.newer.at) >= evictionWindow {
		a.older, a.newer = a.newer, sample{ev: ev, at: now}
	}
	since := now.Sub(a.older.at)
	if since <= 0 || ev < a.older.ev {
		return 0
	}
	return float64(ev-a.older.ev) / since.Seconds()
}

// sample is the store's eviction count at one moment.
type sample struct {
	ev uint64
	at time.Time
}
