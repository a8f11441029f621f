package admin

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestRedisExporterScrapesRESP runs Debian's prometheus-redis-exporter
// against MiniKV's RESP port and expects redis_up 1: the exporter needs only
// INFO to answer (PING, CONFIG GET, SLOWLOG, LATENCY may fail), so this is
// the acceptance test for INFO's format.
func TestRedisExporterScrapesRESP(t *testing.T) {
	bin, err := exec.LookPath("prometheus-redis-exporter")
	if err != nil {
		if os.Getenv("MINIKV_REQUIRE_PEERS") != "" {
			t.Fatal("prometheus-redis-exporter not installed (apt-get install prometheus-redis-exporter) and MINIKV_REQUIRE_PEERS is set")
		}
		t.Skip("prometheus-redis-exporter not installed")
	}
	e := startEnv(t, envConfig{resp: true})
	c := dialMC(t, e.addr)
	c.do("set k 0 0 5\r\nhello\r\n", "STORED")

	// The exporter takes a port number, not a listener: retry on the rare
	// chance another process takes the free port first.
	var metricsURL string
	var out bytes.Buffer
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin,
			"-redis.addr", "redis://"+e.respAddr,
			"-web.listen-address", "127.0.0.1:"+strconv.Itoa(port),
			"-connection-timeout", "2s",
		)
		out.Reset()
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); _ = cmd.Wait() })
		metricsURL = "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics"
		if waitHTTP(metricsURL, 5*time.Second) {
			break
		}
		cancel()
		if attempt == 2 {
			t.Fatalf("exporter did not serve %s:\n%s", metricsURL, out.String())
		}
	}

	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if m := regexp.MustCompile(`(?m)^redis_up (\S+)$`).FindSubmatch(body); m == nil || string(m[1]) != "1" {
		t.Fatalf("exporter reports redis_up %q, want 1\nexporter log:\n%s\nmetrics:\n%s", m, out.String(), redisLines(body))
	}
	for _, name := range []string{"redis_connected_clients", "redis_uptime_in_seconds", "redis_memory_used_bytes"} {
		if !regexp.MustCompile(`(?m)^` + name + ` `).Match(body) {
			t.Errorf("exporter output lacks %s", name)
		}
	}
	// The key set over the memcached port is in the one store INFO reports.
	if !regexp.MustCompile(`(?m)^redis_db_keys\{db="db0"\} 1$`).Match(body) {
		t.Errorf("exporter output lacks redis_db_keys{db=\"db0\"} 1:\n%s", redisLines(body))
	}
}

// waitHTTP reports whether url answered within d.
func waitHTTP(url string, d time.Duration) bool {
	c := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			return true
		}
	}
	return false
}

// redisLines keeps the redis_* lines of a scrape, for failure messages.
func redisLines(body []byte) []byte {
	var b bytes.Buffer
	for _, l := range bytes.Split(body, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("redis_")) {
			b.Write(l)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
