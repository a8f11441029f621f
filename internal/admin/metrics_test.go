package admin

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// scrape fetches /metrics and parses it as Prometheus' own parser does.
func scrape(t *testing.T, e *env) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := e.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d\n%s", code, body)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return mfs
}

// value returns the value of the series of family name whose labels include
// want (label, value pairs).
func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string, want ...string) float64 {
	t.Helper()
	mf, ok := mfs[name]
	if !ok {
		t.Fatalf("metric %s missing", name)
	}
next:
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(want); i += 2 {
			if labels[want[i]] != want[i+1] {
				continue next
			}
		}
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue()
		case dto.MetricType_UNTYPED:
			return m.GetUntyped().GetValue()
		}
		t.Fatalf("metric %s has type %v", name, mf.GetType())
	}
	t.Fatalf("metric %s has no series with labels %v", name, want)
	return 0
}

// TestMetricsNames checks every memcached_exporter family MiniKV promises,
// with its type, after a known sequence of commands.
func TestMetricsNames(t *testing.T) {
	e := startEnv(t, envConfig{server: server.Config{MaxConns: 77}, store: store.Config{MemoryLimit: 8 << 20}})
	c := dialMC(t, e.addr)
	c.do("set a 0 0 1\r\n1\r\n", "STORED")
	c.do("set b 0 0 1\r\n2\r\n", "STORED")
	c.do("get a\r\n", "END")
	c.do("get nope\r\n", "END")
	c.do("delete b\r\n", "DELETED")
	c.do("incr a 5\r\n", "6")
	c.do("gets a\r\n", "END")
	c.do("cas a 0 0 1 1\r\nx\r\n", "EXISTS")
	c.do("touch a 100\r\n", "TOUCHED")

	mfs := scrape(t, e)
	counter, gauge := dto.MetricType_COUNTER, dto.MetricType_GAUGE
	for name, typ := range map[string]dto.MetricType{
		"memcached_up":                                  gauge,
		"memcached_uptime_seconds":                      counter,
		"memcached_time_seconds":                        gauge,
		"memcached_version":                             gauge,
		"memcached_commands_total":                      counter,
		"memcached_process_user_cpu_seconds_total":      counter,
		"memcached_process_system_cpu_seconds_total":    counter,
		"memcached_current_bytes":                       gauge,
		"memcached_limit_bytes":                         gauge,
		"memcached_malloced_bytes":                      gauge,
		"memcached_current_items":                       gauge,
		"memcached_items_total":                         counter,
		"memcached_items_evicted_total":                 counter,
		"memcached_items_reclaimed_total":               counter,
		"memcached_read_bytes_total":                    counter,
		"memcached_written_bytes_total":                 counter,
		"memcached_current_connections":                 gauge,
		"memcached_connections_total":                   counter,
		"memcached_connections_rejected_total":          counter,
		"memcached_connections_yielded_total":           counter,
		"memcached_connections_listener_disabled_total": counter,
		"memcached_accepting_connections":               gauge,
		"memcached_max_connections":                     gauge,
		"memcached_item_too_large_total":                counter,
		"memcached_item_no_memory_total":                counter,
		"memcached_slab_current_items":                  gauge,
		"memcached_slab_items_evicted_total":            counter,
		// The Go and process collectors, and promhttp's own.
		"go_goroutines":                          gauge,
		"go_memstats_heap_alloc_bytes":           gauge,
		"process_cpu_seconds_total":              counter,
		"process_open_fds":                       gauge,
		"promhttp_metric_handler_requests_total": counter,
	} {
		mf, ok := mfs[name]
		if !ok {
			t.Errorf("metric %s missing", name)
			continue
		}
		if mf.GetType() != typ {
			t.Errorf("metric %s has type %v, want %v", name, mf.GetType(), typ)
		}
	}

	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"memcached_up", nil, 1},
		{"memcached_version", []string{"version", server.Version}, 1},
		{"memcached_commands_total", []string{"command", "get", "status", "hit"}, 2}, // get a, gets a
		{"memcached_commands_total", []string{"command", "get", "status", "miss"}, 1},
		{"memcached_commands_total", []string{"command", "set", "status", "hit"}, 2}, // cas is not a set
		{"memcached_commands_total", []string{"command", "delete", "status", "hit"}, 1},
		{"memcached_commands_total", []string{"command", "incr", "status", "hit"}, 1},
		{"memcached_commands_total", []string{"command", "cas", "status", "badval"}, 1},
		{"memcached_commands_total", []string{"command", "touch", "status", "hit"}, 1},
		{"memcached_commands_total", []string{"command", "flush", "status", "hit"}, 0},
		{"memcached_current_items", nil, 1},
		{"memcached_items_total", nil, 3}, // two sets and an incr
		{"memcached_limit_bytes", nil, 8 << 20},
		{"memcached_max_connections", nil, 77},
		{"memcached_current_connections", nil, 1},
		{"memcached_connections_total", nil, 1},
		{"memcached_accepting_connections", nil, 1},
		{"memcached_slab_current_items", []string{"slab", "1"}, 1},
	} {
		if got := value(t, mfs, tc.name, tc.labels...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if v := value(t, mfs, "memcached_current_bytes"); v <= 0 {
		t.Errorf("memcached_current_bytes = %v, want > 0", v)
	}
	if v := value(t, mfs, "memcached_read_bytes_total"); v <= 0 {
		t.Errorf("memcached_read_bytes_total = %v, want > 0", v)
	}
}

// TestMetricsMatchStats checks that /metrics and the "stats" command agree
// on the fields memcached_exporter maps one to one.
func TestMetricsMatchStats(t *testing.T) {
	e := startEnv(t, envConfig{})
	c := dialMC(t, e.addr)
	for i := range 20 {
		c.do("set k"+string(rune('a'+i))+" 0 0 2\r\nxx\r\n", "STORED")
	}
	c.do("get ka kb zz\r\n", "END")
	stats := parseStatLines(t, c.do("stats\r\n", "END"))
	mfs := scrape(t, e)
	for field, metric := range map[string]string{
		"curr_items":      "memcached_current_items",
		"total_items":     "memcached_items_total",
		"bytes":           "memcached_current_bytes",
		"limit_maxbytes":  "memcached_limit_bytes",
		"get_hits":        "memcached_commands_total",
		"evictions":       "memcached_items_evicted_total",
		"store_too_large": "memcached_item_too_large_total",
	} {
		var labels []string
		if field == "get_hits" {
			labels = []string{"command", "get", "status", "hit"}
		}
		got := value(t, mfs, metric, labels...)
		if want := stats[field]; formatFloat(got) != want {
			t.Errorf("%s = %v, stats %s = %s", metric, got, field, want)
		}
	}
}

// TestMetricsLint runs client_golang's metric linter over the collector.
// memcached_exporter's own names win over the linter's advice: the one
// known deviation is memcached_uptime_seconds, a counter without _total.
func TestMetricsLint(t *testing.T) {
	e := startEnv(t, envConfig{})
	dialMC(t, e.addr).do("set k 0 0 1\r\nv\r\n", "STORED")
	probs, err := testutil.CollectAndLint(newCollector(e.srv, e.store))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		if p.Metric == "memcached_uptime_seconds" {
			continue
		}
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}
