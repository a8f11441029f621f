package admin

// memcached_exporter (github.com/prometheus/memcached_exporter) cannot be
// built here: its Go module is not on our module proxy. This file re-states
// the rules by which it reads a server, from its pkg/exporter/exporter.go and
// the grobie/gomemcache client it uses (statsFromAddr and
// statsSettingsFromAddr, vendored by older exporter releases as
// vendor/github.com/grobie/gomemcache/memcache/memcache.go), and holds
// MiniKV to them:
//
//   - One connection sends "stats", "stats slabs", "stats items", each read
//     line by line until a line that is exactly "END\r\n"; a group that does
//     not end in END hangs the scrape until its timeout.
//   - A line is split on single spaces; only lines of exactly three fields
//     starting with STAT count. The name is split on ':': one part is a
//     general stat, two parts "<slab>:<key>" (slab an integer, or the scrape
//     fails), three parts "items:<slab>:<key>" (slab an integer, likewise).
//   - "stats settings" is read the same way on the same connection, but a
//     line of other than 3 or 4 fields fails the scrape.
//   - Every field the exporter maps must, when present, parse as a float;
//     rusage_user and rusage_system as "sec.usec"; cmd_set, cas_misses,
//     cas_hits and cas_badval must all be present (it subtracts the cas
//     counts from cmd_set). Any failure turns memcached_up to 0.
//   - The same holds per slab class of "stats slabs" (collectSlabMetrics;
//     before the slab collector became a switch, parseStats did it on every
//     scrape): cmd_set must be present and then cas_hits and cas_badval,
//     every other field is optional. MiniKV used to print only used_chunks
//     and mem_requested there, and the exporter logged "Failed to parse set:
//     key not found" and reported memcached_up 0 once the store held an item.
//   - Each field becomes one series; the registry refuses a scrape in which
//     two series share a name and labels, and a per-class field that the
//     exporter maps to a metric without a slab label panics it.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// exporterStats is what grobie/gomemcache's Stats returns for one server.
type exporterStats struct {
	Stats map[string]string
	Slabs map[int]map[string]string
	Items map[int]map[string]string
	// Skipped holds the lines the client ignores (not "STAT name value"):
	// whatever they said is lost to the exporter.
	Skipped []string
}

// readExporterStats sends the three stats commands on rw as statsFromAddr
// does and parses the replies by its rules.
func readExporterStats(rw *bufio.ReadWriter) (exporterStats, error) {
	st := exporterStats{
		Stats: map[string]string{},
		Slabs: map[int]map[string]string{},
		Items: map[int]map[string]string{},
	}
	for _, cmd := range []string{"stats\r\n", "stats slabs\r\n", "stats items\r\n"} {
		if _, err := rw.WriteString(cmd); err != nil {
			return st, err
		}
		if err := rw.Flush(); err != nil {
			return st, err
		}
		for {
			line, err := rw.ReadSlice('\n')
			if err != nil {
				return st, fmt.Errorf("%q: no END: %w", cmd, err)
			}
			if bytes.Equal(line, []byte("END\r\n")) {
				break
			}
			if bytes.HasPrefix(line, []byte("CLIENT_ERROR ")) || bytes.Equal(line, []byte("ERROR\r\n")) {
				return st, fmt.Errorf("%q: %q", cmd, line)
			}
			s := bytes.Split(line, []byte(" "))
			if len(s) != 3 || !bytes.HasPrefix(s[0], []byte("STAT")) {
				st.Skipped = append(st.Skipped, string(line)) // as the client does, silently
				continue
			}
			v := string(bytes.TrimSpace(s[2]))
			f := bytes.Split(s[1], []byte(":"))
			switch len(f) {
			case 1:
				st.Stats[string(s[1])] = v
			case 2:
				i, err := strconv.ParseInt(string(f[0]), 10, 64)
				if err != nil {
					return st, fmt.Errorf("%q: slab stat %q: %w", cmd, line, err)
				}
				put(st.Slabs, int(i), string(f[1]), v)
			case 3:
				i, err := strconv.ParseInt(string(f[1]), 10, 64)
				if err != nil {
					return st, fmt.Errorf("%q: item stat %q: %w", cmd, line, err)
				}
				put(st.Items, int(i), string(f[2]), v)
			}
		}
	}
	return st, nil
}

func put(m map[int]map[string]string, i int, k, v string) {
	if m[i] == nil {
		m[i] = map[string]string{}
	}
	m[i][k] = v
}

// readExporterSettings is statsSettingsFromAddr.
func readExporterSettings(rw *bufio.ReadWriter) (map[string]string, error) {
	if _, err := rw.WriteString("stats settings\r\n"); err != nil {
		return nil, err
	}
	if err := rw.Flush(); err != nil {
		return nil, err
	}
	settings := map[string]string{}
	for {
		line, err := rw.ReadSlice('\n')
		if err != nil {
			return nil, fmt.Errorf("stats settings: no END: %w", err)
		}
		if bytes.Equal(line, []byte("END\r\n")) {
			return settings, nil
		}
		if bytes.HasPrefix(line, []byte("CLIENT_ERROR ")) {
			return nil, fmt.Errorf("stats settings: %q", line)
		}
		s := bytes.Split(line, []byte(" "))
		switch len(s) {
		case 3, 4:
			settings[string(s[1])] = string(bytes.TrimSpace(s[2]))
		default:
			return nil, fmt.Errorf("stats settings: unexpected line format %q", line)
		}
	}
}

// Fields the exporter reads from "stats" with strconv.ParseFloat
// (pkg/exporter/exporter.go, parseStats; total_malloced comes from "stats
// slabs", whose one-part names the client files with the general stats).
var exporterFloatFields = []string{
	"uptime", "time", "cas_badval", "cmd_flush", "cmd_set",
	"get_hits", "get_misses", "delete_hits", "delete_misses", "incr_hits", "incr_misses",
	"decr_hits", "decr_misses", "cas_hits", "cas_misses", "touch_hits", "touch_misses",
	"bytes", "limit_maxbytes", "curr_items", "total_items", "bytes_read", "bytes_written",
	"curr_connections", "total_connections", "rejected_connections", "conn_yields",
	"listen_disabled_num", "evictions", "reclaimed", "store_too_large", "store_no_memory",
	"lru_crawler_starts", "direct_reclaims", "crawler_items_checked", "crawler_reclaimed",
	"moves_to_cold", "moves_to_warm", "moves_within_lru", "total_malloced", "accepting_conns",
}

// Fields the exporter reads from each "stats items" class
// (pkg/exporter/exporter.go, parseStats: number, age and hits_to_* always, the rest from itemsCounterMetrics and
// itemsGaugeMetrics when present). All are optional to it.
var exporterItemFields = []string{
	"number", "age", "hits_to_hot", "hits_to_warm", "hits_to_cold", "hits_to_temp",
	"crawler_reclaimed", "evicted", "evicted_nonzero", "evicted_time", "evicted_unfetched",
	"expired_unfetched", "outofmemory", "reclaimed", "store_too_large", "store_no_memory",
	"tailrepairs", "mem_requested", "moves_to_cold", "moves_to_warm", "moves_within_lru",
	"number_hot", "number_warm", "number_cold", "number_temp", "age_hot", "age_warm",
}

// Fields the exporter reads from each "stats slabs" class
// (pkg/exporter/exporter.go, collectSlabMetrics). cmd_set is required, and with it cas_hits and
// cas_badval; the others are optional.
var exporterSlabFields = []string{
	"get_hits", "delete_hits", "incr_hits", "decr_hits", "cas_hits", "touch_hits", "cas_badval",
	"cmd_set", "chunk_size", "chunks_per_page", "total_pages", "total_chunks", "used_chunks",
	"free_chunks", "free_chunks_end", "mem_requested",
}

// Per-class fields MiniKV must print, stricter than the exporter, which
// skips absent ones: every field above that memcached 1.6.18 prints. Left
// out, and checked to be absent: items store_too_large and store_no_memory
// (the exporter maps them to label-less metrics, so a per-class copy panics
// it; memcached has them only in "stats"), items number_temp (memcached
// prints it only with -o temp_lru) and slabs mem_requested (since 1.6 it is
// in "stats items"; in both it would be the series
// memcached_slab_mem_requested_bytes{slab} twice, and the scrape fails).
var (
	wantItemFields  = without(exporterItemFields, "store_too_large", "store_no_memory", "number_temp")
	wantSlabFields  = without(exporterSlabFields, "mem_requested")
	forbiddenFields = map[string][]string{
		"items": {"store_too_large", "store_no_memory"},
		"slabs": {"mem_requested"},
	}
)

func without(list []string, drop ...string) []string {
	var out []string
	for _, f := range list {
		if !slices.Contains(drop, f) {
			out = append(out, f)
		}
	}
	return out
}

// exporterSeries applies parseStats (with the slab collector on) and
// parseStatsSettings: it returns the number of memcached_* series the
// exporter would emit (memcached_up included) and every reason it would
// report memcached_up 0 or fail the scrape.
func exporterSeries(st exporterStats, settings map[string]string) (int, []error) {
	var errs []error
	series := map[string]bool{}
	emit := func(name string, labels ...string) {
		k := name + "{" + strings.Join(labels, ",") + "}"
		if series[k] {
			errs = append(errs, fmt.Errorf("series %s emitted twice: the registry fails the scrape", k))
		}
		series[k] = true
	}
	float := func(where string, m map[string]string, k string) bool {
		v, ok := m[k]
		if !ok {
			return false // a missing field is skipped, not an error
		}
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			errs = append(errs, fmt.Errorf("%s %s = %q: %w", where, k, v, err))
		}
		return true
	}
	emit("memcached_version", st.Stats["version"])
	emit("memcached_up")

	s := st.Stats
	for _, k := range exporterFloatFields {
		if float("stats", s, k) && k != "cmd_set" {
			emit("stats:" + k)
		}
	}
	if _, ok := s["cmd_set"]; !ok {
		errs = append(errs, errors.New("stats cmd_set missing"))
	}
	for _, k := range []string{"cas_misses", "cas_hits", "cas_badval"} {
		if _, ok := s[k]; !ok {
			errs = append(errs, fmt.Errorf("stats %s missing (needed to subtract cas from cmd_set)", k))
		}
	}
	if _, ok := s["cmd_set"]; ok {
		emit("memcached_commands_total", "set", "hit")
	}
	for _, k := range []string{"rusage_user", "rusage_system"} {
		v, ok := s[k]
		if !ok {
			continue
		}
		if _, err := parseTimeval(v); err != nil {
			errs = append(errs, fmt.Errorf("stats %s = %q: %w", k, v, err))
		}
		emit("stats:" + k)
	}

	for slab, u := range st.Items {
		id := strconv.Itoa(slab)
		where := "stats items " + id
		for _, k := range exporterItemFields {
			if !float(where, u, k) {
				continue
			}
			switch k {
			case "store_too_large", "store_no_memory":
				errs = append(errs, fmt.Errorf("%s %s: maps to a metric without a slab label; the exporter panics", where, k))
			case "hits_to_hot", "hits_to_warm", "hits_to_cold":
				emit("memcached_slab_lru_hits_total", id, strings.TrimPrefix(k, "hits_to_"))
			case "hits_to_temp":
				emit("memcached_slab_lru_hits_total", id, "temporary")
			case "mem_requested":
				emit("memcached_slab_mem_requested_bytes", id)
			default:
				emit("items:"+k, id)
			}
		}
	}

	for slab, v := range st.Slabs {
		id := strconv.Itoa(slab)
		where := "stats slabs " + id
		for _, op := range []string{"get", "delete", "incr", "decr", "cas", "touch"} {
			if float(where, v, op+"_hits") {
				emit("memcached_slab_commands_total", id, op, "hit")
			}
		}
		if float(where, v, "cas_badval") {
			emit("memcached_slab_commands_total", id, "cas", "badval")
		}
		if !float(where, v, "cmd_set") {
			errs = append(errs, fmt.Errorf("%s: cmd_set missing (Failed to parse set: key not found)", where))
		} else if _, ok := v["cas_hits"]; !ok {
			errs = append(errs, fmt.Errorf("%s: cas_hits missing (Failed to parse cas)", where))
		} else if _, ok := v["cas_badval"]; !ok {
			errs = append(errs, fmt.Errorf("%s: cas_badval missing (Failed to parse cas)", where))
		} else {
			emit("memcached_slab_commands_total", id, "set", "hit")
		}
		for _, k := range []string{"chunk_size", "chunks_per_page", "total_pages", "total_chunks",
			"used_chunks", "free_chunks", "free_chunks_end"} {
			if float(where, v, k) {
				emit("slabs:"+k, id)
			}
		}
		if float(where, v, "mem_requested") {
			emit("memcached_slab_mem_requested_bytes", id)
		}
	}

	if float("stats settings", settings, "maxconns") {
		emit("memcached_max_connections")
	}
	if settings["lru_crawler"] == "yes" {
		for _, k := range []string{"lru_crawler", "lru_maintainer_thread"} {
			if v := settings[k]; v != "yes" && v != "no" {
				errs = append(errs, fmt.Errorf("stats settings %s = %q, want yes or no", k, v))
			}
		}
	}
	return len(series), errs
}

// parseTimeval is the exporter's: exactly one '.', both sides floats.
func parseTimeval(v string) (float64, error) {
	parts := strings.Split(v, ".")
	if len(parts) != 2 {
		return 0, errors.New("not sec.usec")
	}
	sec, err := strconv.ParseFloat(parts[0], 64)
	if err != nil {
		return 0, err
	}
	usec, err := strconv.ParseFloat(parts[1], 64)
	if err != nil {
		return 0, err
	}
	return sec + usec/1e6, nil
}

// scrapeLikeExporter runs one exporter scrape against addr and fails the test
// on anything that would make memcached_up 0.
func scrapeLikeExporter(t *testing.T, addr string) (exporterStats, map[string]string, int) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	rw := bufio.NewReadWriter(bufio.NewReader(nc), bufio.NewWriter(nc))
	st, err := readExporterStats(rw)
	if err != nil {
		t.Fatalf("exporter Stats: %v", err)
	}
	settings, err := readExporterSettings(rw)
	if err != nil {
		t.Fatalf("exporter StatsSettings: %v", err)
	}
	// The connection is still in step: nothing was left unread.
	if _, err := rw.WriteString("version\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = rw.Flush()
	if line, err := rw.ReadString('\n'); err != nil || !strings.HasPrefix(line, "VERSION ") {
		t.Fatalf("after the stats groups: got %q, %v; want VERSION (a group sent more than it should)", line, err)
	}
	n, errs := exporterSeries(st, settings)
	for _, err := range errs {
		t.Errorf("memcached_exporter would report memcached_up 0: %v", err)
	}
	return st, settings, n
}

// minimumStats are the "stats" fields with which memcached_exporter still
// reports memcached_up 1 (robustness-and-operations.md §B5); moreStats are
// the ones its dashboards use, which MiniKV also promises.
var (
	minimumStats = strings.Fields(`pid uptime time version curr_connections total_connections
		curr_items total_items bytes limit_maxbytes cmd_get get_hits get_misses cmd_set cas_misses
		cas_hits cas_badval`)
	moreStats = strings.Fields(`delete_hits delete_misses incr_hits incr_misses decr_hits
		decr_misses touch_hits touch_misses cmd_flush cmd_touch bytes_read bytes_written
		rejected_connections evictions reclaimed expired_unfetched evicted_unfetched store_too_large
		store_no_memory threads accepting_conns listen_disabled_num conn_yields idle_kicks
		rusage_user rusage_system max_connections`)
)

var timevalRE = regexp.MustCompile(`^[0-9]+\.[0-9]{6}$`)

func TestMemcachedExporterCompat(t *testing.T) {
	e := startEnv(t, envConfig{})
	for _, fill := range []bool{false, true} {
		name := "empty"
		if fill {
			name = "with items"
			fillForExporter(t, e.addr)
		}
		t.Run(name, func(t *testing.T) {
			st, settings, n := scrapeLikeExporter(t, e.addr)
			for _, k := range append(minimumStats, moreStats...) {
				if _, ok := st.Stats[k]; !ok {
					t.Errorf("stats lacks %s", k)
				}
			}
			for _, k := range []string{"rusage_user", "rusage_system"} {
				if !timevalRE.MatchString(st.Stats[k]) {
					t.Errorf("stats %s = %q, want sec.usec with 6 digits", k, st.Stats[k])
				}
			}
			if st.Stats["version"] == "" || strings.ContainsAny(st.Stats["version"], " \r\n") {
				t.Errorf("stats version = %q", st.Stats["version"])
			}
			if settings["maxconns"] == "" {
				t.Errorf("stats settings lacks maxconns: %v", settings)
			}
			checkClassFields(t, "MiniKV", st)
			if fill {
				items, slab := st.Items[1], st.Slabs[1]
				if items["number"] != "3" || items["number"] != st.Stats["curr_items"] {
					t.Errorf("stats items class 1 number = %q, curr_items = %q; want 3", items["number"], st.Stats["curr_items"])
				}
				if slab == nil {
					t.Fatalf("stats slabs has no class 1: %v", st.Slabs)
				}
				// One class: its counters are the server's, its chunks the items.
				for _, k := range []string{"cmd_set", "get_hits", "cas_hits", "cas_badval", "touch_hits"} {
					if slab[k] != st.Stats[k] {
						t.Errorf("stats slabs 1:%s = %q, stats %s = %q; want equal", k, slab[k], k, st.Stats[k])
					}
				}
				if slab["used_chunks"] != items["number"] || slab["total_chunks"] != items["number"] {
					t.Errorf("stats slabs 1: used_chunks %q, total_chunks %q; want the item count %q",
						slab["used_chunks"], slab["total_chunks"], items["number"])
				}
				if items["mem_requested"] != st.Stats["bytes"] || st.Stats["total_malloced"] != st.Stats["bytes"] {
					t.Errorf("items:1:mem_requested %q, total_malloced %q; want bytes %q",
						items["mem_requested"], st.Stats["total_malloced"], st.Stats["bytes"])
				}
				cmdSet, _ := strconv.Atoi(st.Stats["cmd_set"])
				if cas, _ := strconv.Atoi(st.Stats["cas_badval"]); cmdSet != 4 || cas != 1 {
					t.Errorf("cmd_set = %d, cas_badval = %d; want 4 and 1 (cas counts in cmd_set as in memcached)", cmdSet, cas)
				}
			}
			// memcached 1.6.18 gives 18 series at the bare minimum.
			if n < 18 {
				t.Errorf("the exporter would emit %d memcached_* series, want >= 18", n)
			}
			t.Logf("%d stats, %d settings, %d slabs, %d item slabs: %d exporter series",
				len(st.Stats), len(settings), len(st.Slabs), len(st.Items), n)
		})
	}
}

// TestExporterRulesOnRealMemcached runs the same scrape against a real
// memcached, so the re-stated rules above are known to accept the server
// the exporter was written for.
func TestExporterRulesOnRealMemcached(t *testing.T) {
	bin, err := exec.LookPath("memcached")
	if err != nil {
		if os.Getenv("MINIKV_REQUIRE_PEERS") != "" {
			t.Fatal("memcached not installed and MINIKV_REQUIRE_PEERS is set")
		}
		t.Skip("memcached not installed")
	}
	port := freePort(t)
	args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-m", "8"}
	if os.Getuid() == 0 {
		args = append(args, "-u", "root") // memcached refuses root without -u
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitTCP(t, addr)
	fillForExporter(t, addr)
	st, _, n := scrapeLikeExporter(t, addr)
	checkClassFields(t, "memcached", st)
	if len(st.Slabs) < 2 {
		t.Errorf("real memcached: %d slab classes after sets of three sizes, want several", len(st.Slabs))
	}
	for _, k := range minimumStats {
		if _, ok := st.Stats[k]; !ok {
			t.Errorf("real memcached stats lacks %s: the minimum list is wrong", k)
		}
	}
	for _, k := range moreStats {
		if _, ok := st.Stats[k]; !ok {
			t.Logf("real memcached %s has no %s (MiniKV has)", st.Stats["version"], k)
		}
	}
	t.Logf("memcached %s: %d stats, %d exporter series", st.Stats["version"], len(st.Stats), n)
}

// fillForExporter stores items of three sizes (three slab classes in
// memcached) and counts a hit, a cas mismatch and a miss.
func fillForExporter(t *testing.T, addr string) {
	t.Helper()
	c := dialMC(t, addr)
	for i, n := range []int{5, 100, 2000} {
		c.do(fmt.Sprintf("set k%d 0 0 %d\r\n%s\r\n", i, n, strings.Repeat("v", n)), "STORED")
	}
	c.do("gets k0\r\n", "END")
	c.do("cas k0 0 0 1 999\r\nx\r\n", "EXISTS")
	c.do("get missing\r\n", "END")
}

// checkClassFields fails on any per-class field MiniKV promises that a
// class lacks, on any field that must not be per class, and on lines the
// exporter's client would drop.
func checkClassFields(t *testing.T, who string, st exporterStats) {
	t.Helper()
	for _, l := range st.Skipped {
		t.Errorf("%s: the exporter's client drops the line %q", who, l)
	}
	for group, classes := range map[string]map[int]map[string]string{"items": st.Items, "slabs": st.Slabs} {
		want := wantItemFields
		if group == "slabs" {
			want = wantSlabFields
		}
		for id, fields := range classes {
			for _, k := range want {
				if _, ok := fields[k]; !ok {
					t.Errorf("%s: stats %s class %d lacks %s", who, group, id, k)
				}
			}
			for _, k := range forbiddenFields[group] {
				if _, ok := fields[k]; ok {
					t.Errorf("%s: stats %s class %d has %s, which breaks the exporter", who, group, id, k)
				}
			}
		}
	}
}

// freePort returns a port that was free on 127.0.0.1 a moment ago, for
// programs that take a port number rather than a listener.
func freePort(t testing.TB) int {
	t.Helper()
	ln := listen(t)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func waitTCP(t testing.TB, addr string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		nc, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			nc.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not come up: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// parseStatLines turns "STAT name value" lines into a map.
func parseStatLines(t *testing.T, lines []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, l := range lines {
		f := strings.SplitN(l, " ", 3)
		if len(f) == 3 && f[0] == "STAT" {
			m[f[1]] = f[2]
		}
	}
	return m
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
