package redis

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/acl"
)

// INFO and CONFIG of the RESP port. INFO speaks Redis's section format,
// which redis-cli, redis_exporter and Grafana dashboards read:
//
//	# Server\r\n
//	redis_version:7.0.15\r\n
//	...\r\n
//	\r\n
//	# Clients\r\n
//	...

// infoSections are INFO's sections, in Redis's order. A plain INFO (and
// "default") leaves out commandstats and latencystats; "all" and
// "everything" give every one.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats",
	"replication", "cpu", "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace"}

// cmdInfo is INFO [section ...].
func cmdInfo(rc *conn, argv [][]byte) {
	want := make(map[string]bool)
	for _, a := range argv[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := want["all"] || want["everything"]
	def := len(want) == 0 || want["default"]
	var b bytes.Buffer
	for _, sec := range infoSections {
		if all || want[sec] || def && sec != "commandstats" && sec != "latencystats" {
			if b.Len() > 0 {
				b.WriteString("\r\n")
			}
			rc.writeInfoSection(&b, sec)
		}
	}
	rc.w.Verbatim("txt", b.Bytes())
}

func (rc *conn) writeInfoSection(b *bytes.Buffer, sec string) {
	p, s := rc.p, rc.p.srv
	field := func(k string, v any) { fmt.Fprintf(b, "%s:%v\r\n", k, v) }
	header := strings.ToUpper(sec[:1]) + sec[1:]
	if sec == "cpu" {
		header = "CPU"
	}
	b.WriteString("# " + header + "\r\n")
	switch sec {
	case "server":
		now := time.Now()
		up := now.Sub(s.Started())
		exe, _ := os.Executable()
		field("redis_version", Version)
		field("redis_git_sha1", "00000000")
		field("redis_git_dirty", 0)
		field("redis_build_id", "0")
		field("redis_mode", p.redisMode())
		field("os", osName())
		field("arch_bits", strconv.IntSize)
		field("monotonic_clock", "POSIX clock_gettime")
		field("multiplexing_api", "goroutines")
		field("go_version", runtime.Version())
		field("process_id", os.Getpid())
		field("process_supervised", "no")
		field("run_id", fmt.Sprintf("%040x", s.Started().UnixNano()))
		field("tcp_port", localPort(rc.LocalAddr()))
		field("server_time_usec", now.UnixMicro())
		field("uptime_in_seconds", int64(up/time.Second))
		field("uptime_in_days", int64(up/(24*time.Hour)))
		field("hz", 10)
		field("configured_hz", 10)
		field("lru_clock", now.Unix()&(1<<24-1))
		field("executable", exe)
		field("config_file", "")
		field("io_threads_active", 0)
		field("minikv_version", server.Release)
		field("memcached_version", server.Version)
	case "clients":
		field("connected_clients", p.connectedClients(s.CurrConns()))
		field("cluster_connections", 0)
		field("maxclients", p.srv.MaxConns())
		field("client_recent_max_input_buffer", 0)
		field("client_recent_max_output_buffer", 0)
		field("blocked_clients", p.blocked.n.Load())
		trkClients, _, _, _ := rc.p.tracking.info()
		field("tracking_clients", trkClients)
		field("clients_in_timeout_table", p.blocked.timed.Load())
		keys, onNoKey := p.blocked.keyCount()
		field("total_blocking_keys", keys)
		field("total_blocking_keys_on_nokey", onNoKey)
	case "memory":
		st := rc.st.Stats()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		field("used_memory", st.Bytes)
		field("used_memory_human", humanBytes(st.Bytes))
		field("used_memory_rss", ms.Sys-ms.HeapReleased)
		field("used_memory_rss_human", humanBytes(int64(ms.Sys-ms.HeapReleased)))
		field("used_memory_dataset", st.Bytes)
		field("used_memory_go_heap", ms.HeapAlloc)
		p.scriptInfo(field) // script.go
		field("maxmemory", st.Limit)
		field("maxmemory_human", humanBytes(st.Limit))
		field("maxmemory_policy", p.maxmemoryPolicy())
		field("mem_allocator", "go")
	case "persistence":
		// The rdb_ fields are the RDB files' (persist.go); durable mode
		// maps onto Redis's AOF fields (every write is in the log before
		// its reply).
		ds := rc.st.DiskStats()
		writeStatus := "ok"
		if ds.Durable && ds.WriteErr != nil {
			writeStatus = "err"
		}
		field("loading", 0) // the ports open after recovery and RDB loading
		field("async_loading", 0)
		p.persistenceInfo(field)
		field("aof_enabled", b2i(ds.Durable))
		rewriteStatus := "ok"
		if ds.RewriteErr != nil {
			rewriteStatus = "err"
		}
		field("aof_rewrite_in_progress", b2i(ds.Rewriting))
		field("aof_last_bgrewrite_status", rewriteStatus)
		field("aof_last_write_status", writeStatus)
		field("minikv_disk_writes", ds.Writes)
		field("minikv_disk_hits", ds.Hits)
		field("minikv_disk_read_errors", ds.ReadErrors)
		field("minikv_disk_bytes", ds.Bytes)
		field("minikv_disk_limit", ds.Limit)
		field("minikv_disk_evictions", ds.Evictions)
		field("minikv_disk_write_stalls", ds.WriteStalls)
		field("minikv_disk_recovery_ms", ds.OpenTime.Milliseconds())
		field("minikv_disk_writes_refused", b2i(ds.WriteErr != nil))
		field("minikv_disk_failures", ds.Failures)
		field("minikv_disk_recoveries", ds.Recoveries)
		field("minikv_disk_compaction_errors", ds.CompactionErrors)
		field("minikv_disk_refused_writes", s.Stats().Count[server.StatDiskRefused])
	case "stats":
		snap := s.StatsOf(rc.st)
		sum, st := snap.Count, snap.Store
		field("total_connections_received", snap.TotalConns)
		field("total_commands_processed", sum[server.StatCommands])
		field("instantaneous_ops_per_sec", p.opsPerSec(sum[server.StatCommands], time.Now()))
		field("total_net_input_bytes", sum[server.StatBytesRead])
		field("total_net_output_bytes", sum[server.StatBytesWritten])
		field("instantaneous_input_kbps", "0.00")
		field("instantaneous_output_kbps", "0.00")
		field("rejected_connections", snap.Rejected)
		field("sync_full", rc.p.repl.fullSyncs.Load())
		field("sync_partial_ok", rc.p.repl.partialOK.Load())
		field("sync_partial_err", rc.p.repl.partialErr.Load())
		field("expired_keys", st.Reclaimed)
		field("evicted_keys", st.Evictions)
		field("keyspace_hits", sum[server.StatGetHits])
		field("keyspace_misses", sum[server.StatGetMisses])
		channels, patterns, shards := p.pubsub.counts()
		field("pubsub_channels", channels)
		field("pubsub_patterns", patterns)
		field("pubsubshard_channels", shards)
		field("latest_fork_usec", 0)
		_, trkKeys, trkItems, trkPrefixes := rc.p.tracking.info()
		field("tracking_total_keys", trkKeys)
		field("tracking_total_items", trkItems)
		field("tracking_total_prefixes", trkPrefixes)
		t, other := rc.p.ops.stats.totals(false)
		field("unexpected_error_replies", 0) // replication and AOF loading: none here
		field("total_error_replies", errorReplies(&t, other))
		field("client_output_buffer_limit_disconnections", sum[server.StatOutputLimitKicks])
		us := rc.p.srv.ACL()
		field("acl_access_denied_auth", us.Denied(acl.DeniedAuth))
		field("acl_access_denied_cmd", us.Denied(acl.DeniedCommand))
		field("acl_access_denied_key", us.Denied(acl.DeniedKey))
		field("acl_access_denied_channel", us.Denied(acl.DeniedChannel))
	case "replication":
		rc.p.replicationInfo(field) // replication.go
	case "cpu":
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		field("used_cpu_sys", fmt.Sprintf("%d.%06d", ru.Stime.Sec, ru.Stime.Usec))
		field("used_cpu_user", fmt.Sprintf("%d.%06d", ru.Utime.Sec, ru.Utime.Usec))
		field("used_cpu_sys_children", "0.000000")
		field("used_cpu_user_children", "0.000000")
	case "commandstats":
		t, _ := rc.p.ops.stats.totals(true)
		rc.writeCommandStats(b, &t)
	case "errorstats":
		t, other := rc.p.ops.stats.totals(false)
		writeErrorStats(b, &t, other)
	case "latencystats":
		t, _ := rc.p.ops.stats.totals(true)
		rc.writeLatencyStats(b, &t)
	case "cluster":
		field("cluster_enabled", b2i(p.cluster != nil))
	case "keyspace":
		// The shards' counts when only database 0 has keys, else one
		// walk over the store (in durable mode, the disk): store.CountDBs.
		if c, err := rc.st.CountDBs(); err == nil {
			for db, n := range c.Items {
				if n > 0 {
					fmt.Fprintf(b, "db%d:keys=%d,expires=%d,avg_ttl=0\r\n", db, n, c.Expires[db])
				}
			}
		}
	}
}

func osName() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return runtime.GOOS + " " + runtime.GOARCH
	}
	return utsString(u.Sysname[:]) + " " + utsString(u.Release[:]) + " " + utsString(u.Machine[:])
}

// utsString is a NUL-terminated Utsname field as a string; the field is
// [65]int8 on amd64 and [65]uint8 on arm64.
func utsString[T int8 | uint8](a []T) string {
	var b []byte
	for _, c := range a {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

func localPort(a net.Addr) int {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.Port
	}
	return 0
}

// humanBytes is Redis's bytesToHuman: B, K, M, G with two decimals.
func humanBytes(n int64) string {
	f := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1<<20:
		return fmt.Sprintf("%.2fK", f/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.2fM", f/(1<<20))
	case n < 1<<40:
		return fmt.Sprintf("%.2fG", f/(1<<30))
	}
	return fmt.Sprintf("%.2fT", f/(1<<40))
}

func (p *Protocol) maxmemoryPolicy() string {
	if p.st.NoEvict() {
		return "noeviction"
	}
	if p.st.LFU() {
		return "allkeys-lfu"
	}
	return "allkeys-lru"
}

func cmdConfigResetStat(rc *conn, _ [][]byte) {
	rc.p.srv.ResetCounters()
	rc.p.ops.stats.reset()
	rc.p.srv.ACL().ResetDenied()
	rc.w.OK()
}

// b2i is 1 for true, as INFO writes flags.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// opsPerSec is INFO's instantaneous_ops_per_sec: the commands per second
// between the previous sample and now, given total commands n at now.
// Redis samples from a timer every 100 ms; MiniKV runs no timer and
// samples when INFO is asked for, so the figure covers the time since the
// previous INFO (redis-cli --stat asks every second). Samples closer than
// 100 ms apart repeat the last rate rather than divide a few commands by
// a tiny interval.
func (p *Protocol) opsPerSec(n uint64, now time.Time) uint64 {
	p.opsMu.Lock()
	defer p.opsMu.Unlock()
	dt := now.Sub(p.opsAt)
	if dt < 100*time.Millisecond {
		return p.opsRate
	}
	done := n - p.opsN
	if n < p.opsN { // the counters were reset (stats reset, CONFIG RESETSTAT)
		done = n
	}
	p.opsRate = uint64(float64(done) / dt.Seconds())
	p.opsAt, p.opsN = now, n
	return p.opsRate
}
