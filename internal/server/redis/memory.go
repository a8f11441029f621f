package redis

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/minikv/minikv/internal/store"
)

// MEMORY USAGE|STATS|DOCTOR|MALLOC-STATS|PURGE|HELP with Redis 7.0's
// replies, over MiniKV's own figures:
//
//   - USAGE is what the store charges the key against the memory limit
//     (store.ObjectInfo.Bytes): its key, its value or collection, and the
//     per-item overhead, exactly, so SAMPLES changes nothing (Redis
//     estimates a collection from samples).
//   - STATS names Redis's fields. The allocator is Go's: allocated is the
//     live heap plus the big collections mapped outside it, active the
//     heap's spans in use, resident what the heap holds from the system.
//     The dataset is the store's keys and values; the overhead the rest.
//     clients.*, cluster.links and aof.buffer are 0 (not tracked).
//   - DOCTOR applies Redis's checks and texts to those figures.
//   - MALLOC-STATS is Go's runtime.MemStats; PURGE returns freed memory
//     to the system (debug.FreeOSMemory).

func memoryCommands() []respCommand {
	ro := []string{"readonly"}
	return []respCommand{
		{name: "memory", arity: -2, group: "server", since: "4.0.0", complexity: "Depends on subcommand.",
			summary: "A container for memory diagnostics commands.", subs: []*respCommand{
				{name: "memory|doctor", arity: 2, group: "server", since: "4.0.0", complexity: "O(1)", summary: "Outputs a memory problems report.",
					usage: "DOCTOR", help: "Return memory problems reports.", run: cmdMemoryDoctor},
				{name: "memory|malloc-stats", arity: 2, group: "server", since: "4.0.0", complexity: "Depends on how much memory is allocated, could be slow",
					summary: "Returns the allocator statistics.", usage: "MALLOC-STATS", help: "Return internal statistics report from the memory allocator.",
					run: cmdMemoryMallocStats},
				{name: "memory|purge", arity: 2, group: "server", since: "4.0.0", complexity: "Depends on how much memory is allocated, could be slow",
					summary: "Asks the allocator to release memory.", usage: "PURGE", help: "Attempt to purge dirty pages for reclamation by the allocator.",
					run: cmdMemoryPurge},
				{name: "memory|stats", arity: 2, flags: ro, group: "server", since: "4.0.0", complexity: "O(1)", summary: "Returns details about memory usage.",
					usage: "STATS", help: "Return information about the memory usage of the server.", run: cmdMemoryStats},
				{name: "memory|usage", arity: -3, flags: ro, firstKey: 2, lastKey: 2, step: 1, group: "server", since: "4.0.0", complexity: "O(N) where N is the number of samples.",
					summary: "Estimates the memory usage of a key.", usage: "USAGE <key> [SAMPLES <count>]",
					help: "Return memory in bytes used by <key> and its value. Nested values are\nsampled up to <count> times (default: 5, 0 means sample all).",
					args: []docArg{key("key"), {name: "count", typ: "integer", token: "SAMPLES", optional: true}}, run: cmdMemoryUsage},
				{name: "memory|help", arity: 2, flags: []string{"loading", "stale"}, group: "server", since: "4.0.0", complexity: "O(1)",
					summary: "Returns helpful text about the different subcommands.", usage: "HELP", help: "Print this help.", run: cmdHelp},
			}},
	}
}

// cmdMemoryUsage is MEMORY USAGE key [SAMPLES count]: the options are
// checked first, as Redis does, then the key (null when missing).
func cmdMemoryUsage(rc *conn, argv [][]byte) {
	for j := 3; j < len(argv); j++ {
		if !is(argv[j], "samples") || j+1 == len(argv) {
			rc.w.Error(errSyntax)
			return
		}
		n, err := strconv.ParseInt(string(argv[j+1]), 10, 64)
		if err != nil {
			rc.w.Error(errNotInt)
			return
		}
		if n < 0 {
			rc.w.Error(errSyntax)
			return
		}
		j++
	}
	oi, ok := rc.st.Object(argv[2])
	if !ok {
		rc.w.Null()
		return
	}
	rc.w.Int(oi.Bytes)
}

// memOverhead is what MEMORY STATS and DOCTOR report (Redis's
// redisMemOverhead).
type memOverhead struct {
	peak, total, startup, backlog, lua, functions int64
	keys, dbMain, overhead, dataset, perKey       int64
	datasetPct, peakPct                           float64
	allocated, active, resident, rss              int64
	scripts                                       int
}

// memPeak is the largest total.allocated MEMORY STATS, DOCTOR or INFO
// has seen; startupHeap the live heap when the protocol started.
var memPeak, startupHeap atomic.Int64

func init() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	startupHeap.Store(int64(ms.HeapAlloc))
}

func (rc *conn) memOverhead() memOverhead {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := rc.st.Stats()
	m := memOverhead{total: int64(ms.HeapAlloc) + st.OffHeap, startup: startupHeap.Load()}
	for {
		old := memPeak.Load()
		if m.total <= old || memPeak.CompareAndSwap(old, m.total) {
			m.peak = max(old, m.total)
			break
		}
	}
	rc.p.repl.mu.Lock()
	if rc.p.repl.backlog != nil {
		m.backlog = rc.p.repl.backlogSize.Load()
	}
	rc.p.repl.mu.Unlock()
	sst, fst := rc.p.scripts.Stats(), rc.p.functions.Stats()
	m.lua, m.functions, m.scripts = sst.ScriptBytes, fst.Bytes, sst.Scripts
	m.keys = st.Items
	m.dbMain = st.Items * store.ItemOverhead
	m.dataset = max(st.Bytes-m.dbMain, 0)
	m.overhead = max(m.total-m.dataset, 0)
	net := m.total - m.startup
	if m.keys > 0 {
		m.perKey = max(net, 0) / m.keys
	}
	if net > 0 {
		m.datasetPct = float64(m.dataset) * 100 / float64(net)
	}
	if m.peak > 0 {
		m.peakPct = float64(m.total) * 100 / float64(m.peak)
	}
	m.allocated, m.active, m.resident = int64(ms.HeapAlloc), int64(ms.HeapInuse), int64(ms.HeapSys-ms.HeapReleased)
	m.rss = processRSS()
	if m.rss == 0 {
		m.rss = int64(ms.Sys - ms.HeapReleased)
	}
	return m
}

// processRSS is the process's resident set in bytes (/proc/self/statm),
// or 0 where it cannot be read.
func processRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// cmdMemoryStats is MEMORY STATS: Redis 7.0's 27 fields and a db.0 map
// when the store holds keys, ratios as doubles.
func cmdMemoryStats(rc *conn, _ [][]byte) {
	m := rc.memOverhead()
	n := 27
	if m.keys > 0 {
		n++
	}
	rc.w.Map(n)
	num := func(k string, v int64) { rc.w.BulkString(k); rc.w.Int(v) }
	dbl := func(k string, v float64) { rc.w.BulkString(k); rc.w.Double(v) }
	num("peak.allocated", m.peak)
	num("total.allocated", m.total)
	num("startup.allocated", m.startup)
	num("replication.backlog", m.backlog)
	num("clients.slaves", 0)
	num("clients.normal", 0)
	num("cluster.links", 0)
	num("aof.buffer", 0)
	num("lua.caches", m.lua)
	num("functions.caches", m.functions)
	if m.keys > 0 {
		rc.w.BulkString("db.0")
		rc.w.Map(3)
		num("overhead.hashtable.main", m.dbMain)
		num("overhead.hashtable.expires", 0)
		num("overhead.hashtable.slot-to-keys", 0)
	}
	num("overhead.total", m.overhead)
	num("keys.count", m.keys)
	num("keys.bytes-per-key", m.perKey)
	num("dataset.bytes", m.dataset)
	dbl("dataset.percentage", m.datasetPct)
	dbl("peak.percentage", m.peakPct)
	num("allocator.allocated", m.allocated)
	num("allocator.active", m.active)
	num("allocator.resident", m.resident)
	dbl("allocator-fragmentation.ratio", ratio(m.active, m.allocated))
	num("allocator-fragmentation.bytes", m.active-m.allocated)
	dbl("allocator-rss.ratio", ratio(m.resident, m.active))
	num("allocator-rss.bytes", m.resident-m.active)
	dbl("rss-overhead.ratio", ratio(m.rss, m.resident))
	num("rss-overhead.bytes", m.rss-m.resident)
	dbl("fragmentation", ratio(m.rss, m.total))
	num("fragmentation.bytes", m.rss-m.total)
}

// cmdMemoryDoctor is MEMORY DOCTOR: Redis's report (its checks and
// texts) over the figures of MEMORY STATS, as a verbatim string.
func cmdMemoryDoctor(rc *conn, _ [][]byte) {
	rc.w.Verbatim("txt", []byte(memoryDoctor(rc.memOverhead())))
}

func memoryDoctor(m memOverhead) string {
	const mb10 = 10 << 20
	if m.total < 5<<20 {
		return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. " +
			"Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
	}
	var found []string
	if ratio(m.peak, m.total) > 1.5 {
		found = append(found, "Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.")
	}
	if ratio(m.rss, m.total) > 1.4 && m.rss-m.total > mb10 {
		found = append(found, `High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is "go".`)
	}
	if ratio(m.active, m.allocated) > 1.1 && m.active-m.allocated > mb10 {
		found = append(found, "High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.")
	}
	if ratio(m.resident, m.active) > 1.1 && m.resident-m.active > mb10 {
		found = append(found, "High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.")
	}
	if ratio(m.rss, m.resident) > 1.1 && m.rss-m.resident > mb10 {
		found = append(found, "High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.")
	}
	if m.scripts > 1000 {
		found = append(found, "Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.")
	}
	if len(found) == 0 {
		return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
	}
	var b strings.Builder
	b.WriteString("Sam, I detected a few issues in this Redis instance memory implants:\n\n")
	for _, f := range found {
		b.WriteString(" * " + f + "\n\n")
	}
	b.WriteString("I'm here to keep you safe, Sam. I want to help you.\n")
	return b.String()
}

// cmdMemoryMallocStats is MEMORY MALLOC-STATS: Go's allocator report.
func cmdMemoryMallocStats(rc *conn, _ [][]byte) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var b strings.Builder
	b.WriteString("___ Begin Go runtime statistics ___\n")
	fmt.Fprintf(&b, "Version: %q\n", runtime.Version())
	for _, f := range []struct {
		name string
		v    uint64
	}{
		{"Alloc", ms.Alloc}, {"TotalAlloc", ms.TotalAlloc}, {"Sys", ms.Sys}, {"Mallocs", ms.Mallocs}, {"Frees", ms.Frees},
		{"HeapAlloc", ms.HeapAlloc}, {"HeapSys", ms.HeapSys}, {"HeapIdle", ms.HeapIdle}, {"HeapInuse", ms.HeapInuse},
		{"HeapReleased", ms.HeapReleased}, {"HeapObjects", ms.HeapObjects}, {"StackInuse", ms.StackInuse}, {"StackSys", ms.StackSys},
		{"MSpanInuse", ms.MSpanInuse}, {"MSpanSys", ms.MSpanSys}, {"MCacheInuse", ms.MCacheInuse}, {"MCacheSys", ms.MCacheSys},
		{"BuckHashSys", ms.BuckHashSys}, {"GCSys", ms.GCSys}, {"OtherSys", ms.OtherSys}, {"NextGC", ms.NextGC},
		{"PauseTotalNs", ms.PauseTotalNs}, {"NumGC", uint64(ms.NumGC)},
	} {
		fmt.Fprintf(&b, "%s: %d\n", f.name, f.v)
	}
	fmt.Fprintf(&b, "OffHeap: %d\n", rc.st.Stats().OffHeap)
	b.WriteString("--- End Go runtime statistics ---\n")
	rc.w.BulkString(b.String())
}

// cmdMemoryPurge is MEMORY PURGE: a collection that returns what is free
// to the system.
func cmdMemoryPurge(rc *conn, _ [][]byte) {
	debug.FreeOSMemory()
	rc.w.OK()
}
