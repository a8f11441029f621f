package memcache_test

// Differential test of the stats field names memcached_exporter reads
// (github.com/prometheus/memcached_exporter, pkg/exporter/exporter.go):
// after the same writes, memcached 1.6.18 and MiniKV must print the same
// names, per class in the same order. The values differ by nature and are
// only checked to be numbers; TestMemcachedExporterCompat in internal/admin
// checks them against the exporter's parsing rules.

import (
	"bufio"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// statsFieldsExporterReads are the "stats" names the exporter reads
// (parseStats), with total_malloced, which comes from "stats slabs": the
// client files one-part names of every group with the general stats. The
// extstore_* and proxy_* names are read only when extstore_limit_maxbytes
// and proxy_backend_total are present, so only those two stand for them.
var statsFieldsExporterReads = strings.Fields(`version uptime time rusage_user rusage_system
	cmd_set cmd_flush get_hits get_misses delete_hits delete_misses incr_hits incr_misses
	decr_hits decr_misses cas_hits cas_misses cas_badval touch_hits touch_misses
	bytes limit_maxbytes curr_items total_items bytes_read bytes_written
	curr_connections total_connections rejected_connections conn_yields listen_disabled_num
	evictions reclaimed store_too_large store_no_memory lru_crawler_starts direct_reclaims
	crawler_items_checked crawler_reclaimed moves_to_cold moves_to_warm moves_within_lru
	total_malloced accepting_conns extstore_limit_maxbytes proxy_backend_total`)

// settingsFieldsExporterReads are the "stats settings" names the exporter
// reads (parseStatsSettings); all but maxconns only when lru_crawler is yes.
var settingsFieldsExporterReads = strings.Fields(`maxconns lru_crawler lru_crawler_sleep
	lru_crawler_tocrawl lru_maintainer_thread hot_lru_pct warm_lru_pct hot_max_factor
	warm_max_factor`)

// statsFieldsMiniKVLacks are the names above that memcached prints and
// MiniKV does not, each with its reason. The exporter skips an absent
// field, so the only effect is that the series is not emitted. The
// per-class copies in "stats items" are printed (as 0), since the per-class
// lists are compared in full.
var statsFieldsMiniKVLacks = map[string]string{
	"lru_crawler_starts":    "no LRU crawler: the sweeper's removals count in reclaimed",
	"crawler_items_checked": "no LRU crawler",
	"crawler_reclaimed":     "no LRU crawler: the sweeper's removals count in reclaimed",
	"moves_to_cold":         "no segmented (HOT/WARM/COLD) LRU",
	"moves_to_warm":         "no segmented (HOT/WARM/COLD) LRU",
	"moves_within_lru":      "no segmented (HOT/WARM/COLD) LRU",
	"direct_reclaims":       "not counted apart: a write that needs room evicts inline (evictions, reclaimed)",

	"lru_crawler":           "settings: no LRU crawler; the exporter reads this block only when it is yes",
	"lru_crawler_sleep":     "settings: no LRU crawler",
	"lru_crawler_tocrawl":   "settings: no LRU crawler",
	"lru_maintainer_thread": "settings: no LRU maintainer thread",
	"hot_lru_pct":           "settings: no segmented LRU",
	"warm_lru_pct":          "settings: no segmented LRU",
	"hot_max_factor":        "settings: no segmented LRU",
	"warm_max_factor":       "settings: no segmented LRU",
}

// statsLayout is the shape of one server's four stats groups.
type statsLayout struct {
	general    map[string]bool     // "stats" and one-part names of "stats slabs"
	settings   map[string]bool     // "stats settings"
	slabGlobal map[string]bool     // one-part names of "stats slabs"
	slabs      map[string][]string // "stats slabs" class -> field names in order
	items      map[string][]string // "stats items" class -> field names in order
}

func TestDifferentialStatsFields(t *testing.T) {
	mcAddr := startDiffMemcached(t, diffMemcachedPath(t, true))
	mkAddr := startDiffMiniKV(t)
	mc := readStatsLayout(t, "memcached", mcAddr)
	mk := readStatsLayout(t, "MiniKV", mkAddr)

	t.Run("stats", func(t *testing.T) {
		compareExporterNames(t, statsFieldsExporterReads, mc.general, mk.general)
	})
	t.Run("settings", func(t *testing.T) {
		compareExporterNames(t, settingsFieldsExporterReads, mc.settings, mk.settings)
	})
	t.Run("slabs global", func(t *testing.T) {
		if !maps.Equal(mc.slabGlobal, mk.slabGlobal) {
			t.Errorf("stats slabs one-part names: MiniKV %v, memcached %v", sortedKeys(mk.slabGlobal), sortedKeys(mc.slabGlobal))
		}
	})
	t.Run("slabs per class", func(t *testing.T) {
		compareClassFields(t, "stats slabs", mc.slabs, mk.slabs)
	})
	t.Run("items per class", func(t *testing.T) {
		compareClassFields(t, "stats items", mc.items, mk.items)
	})
}

// compareExporterNames checks that, among the names the exporter reads,
// MiniKV prints exactly those memcached prints, bar the documented ones.
func compareExporterNames(t *testing.T, reads []string, mc, mk map[string]bool) {
	t.Helper()
	for _, k := range reads {
		reason, excused := statsFieldsMiniKVLacks[k]
		switch {
		case mc[k] && !mk[k] && !excused:
			t.Errorf("memcached prints %s, which the exporter reads; MiniKV does not", k)
		case mk[k] && excused:
			t.Errorf("MiniKV now prints %s: drop it from statsFieldsMiniKVLacks (%q)", k, reason)
		case !mc[k] && excused:
			t.Errorf("memcached 1.6.18 does not print %s: drop it from statsFieldsMiniKVLacks", k)
		case mk[k] && !mc[k]:
			t.Errorf("MiniKV prints %s, which memcached 1.6.18 does not", k)
		}
	}
}

// compareClassFields checks that every class of memcached has one field
// list and that every class of MiniKV has that list, as a set and in order.
func compareClassFields(t *testing.T, group string, mc, mk map[string][]string) {
	t.Helper()
	if len(mc) < 2 || len(mk) == 0 {
		t.Fatalf("%s: memcached has %d classes, MiniKV %d; want several and at least one", group, len(mc), len(mk))
	}
	var want []string
	for id, fields := range mc {
		if want == nil {
			want = fields
		} else if !slices.Equal(fields, want) {
			t.Fatalf("%s: memcached's classes differ: %v and class %s %v", group, want, id, fields)
		}
	}
	for id, got := range mk {
		missing, extra := setDiff(want, got), setDiff(got, want)
		if len(missing) > 0 || len(extra) > 0 {
			t.Errorf("%s class %s: MiniKV lacks %v and adds %v", group, id, missing, extra)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s class %s: order\n MiniKV    %v\n memcached %v", group, id, got, want)
		}
	}
}

// readStatsLayout stores items of three sizes (three slab classes in
// memcached) on addr, runs a hit, a miss and one command of every per-class
// counter, and reads the four stats groups.
func readStatsLayout(t *testing.T, who, addr string) statsLayout {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(nc)
	roundTrip := func(req, last string) []string {
		if _, err := nc.Write([]byte(req)); err != nil {
			t.Fatalf("%s: %q: %v", who, req, err)
		}
		var lines []string
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %q: %v after %q", who, req, err, lines)
			}
			l = strings.TrimSuffix(l, "\r\n")
			if l == last {
				return lines
			}
			if l == "ERROR" || strings.HasPrefix(l, "CLIENT_ERROR") || strings.HasPrefix(l, "SERVER_ERROR") {
				t.Fatalf("%s: %q: %s", who, req, l)
			}
			lines = append(lines, l)
		}
	}
	for i, n := range []int{5, 100, 2000} {
		roundTrip(fmt.Sprintf("set sf_%d 0 0 %d\r\n%s\r\n", i, n, strings.Repeat("v", n)), "STORED")
	}
	roundTrip("set sf_n 0 0 2\r\n10\r\n", "STORED")
	roundTrip("incr sf_n 1\r\n", "11")
	roundTrip("decr sf_n 1\r\n", "10")
	roundTrip("touch sf_0 100\r\n", "TOUCHED")
	roundTrip("get sf_0 sf_missing\r\n", "END")
	roundTrip("cas sf_1 0 0 1 1\r\nx\r\n", "EXISTS")
	roundTrip("delete sf_n\r\n", "DELETED")

	lay := statsLayout{
		general: map[string]bool{}, settings: map[string]bool{}, slabGlobal: map[string]bool{},
		slabs: map[string][]string{}, items: map[string][]string{},
	}
	for _, group := range []string{"", "settings", "slabs", "items"} {
		for _, l := range roundTrip(strings.TrimSpace("stats "+group)+"\r\n", "END") {
			f := strings.Split(l, " ")
			if len(f) != 3 || f[0] != "STAT" {
				if group == "settings" {
					continue // free-form values; the exporter's client allows 3 or 4 fields
				}
				t.Errorf("%s: stats %s: %q is not STAT <name> <value>", who, group, l)
				continue
			}
			name, value := f[1], f[2]
			parts := strings.Split(name, ":")
			switch {
			case group == "settings":
				lay.settings[name] = true
			case len(parts) == 1:
				lay.general[name] = true
				if group == "slabs" {
					lay.slabGlobal[name] = true
				}
			case group == "slabs" && len(parts) == 2:
				lay.slabs[parts[0]] = append(lay.slabs[parts[0]], parts[1])
			case group == "items" && len(parts) == 3 && parts[0] == "items":
				lay.items[parts[1]] = append(lay.items[parts[1]], parts[2])
			default:
				t.Errorf("%s: stats %s: unexpected name %q", who, group, name)
			}
			if len(parts) > 1 {
				if _, err := strconv.ParseUint(value, 10, 64); err != nil {
					t.Errorf("%s: stats %s %s = %q, want a count", who, group, name, value)
				}
			}
		}
	}
	return lay
}

// setDiff returns the elements of a that are not in b.
func setDiff(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}
