package admin

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
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
// the acceptance test for INFO's format. It also reads INFO's
// commandstats, errorstats and latencystats and SLOWLOG into their series.
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
	// A call, a refusal and an error on the RESP port, for commandstats.
	// The slow log is off first, so that its length is 0 however slow a
	// loaded machine makes the exporter's INFO (31 ms once under -race).
	rc, err := net.Dial("tcp", e.respAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	_ = rc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(rc, "CONFIG SET slowlog-log-slower-than -1\r\nSET r 1\r\nGET\r\nLPUSH r x\r\nDEL r\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(rc)
	for _, want := range []string{"+OK", "+OK", "-ERR wrong number of arguments for 'get' command", "-WRONGTYPE", ":1"} {
		if l, err := br.ReadString('\n'); err != nil || !bytes.HasPrefix([]byte(l), []byte(want)) {
			t.Fatalf("RESP reply %q, %v; want %q", l, err, want)
		}
	}

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
	for _, line := range []string{`redis_commands_total{cmd="set"} 1`, `redis_commands_rejected_calls_total{cmd="get"} 1`,
		`redis_commands_failed_calls_total{cmd="lpush"} 1`, `redis_errors_total{err="WRONGTYPE"} 1`,
		`redis_latency_percentiles_usec_count{cmd="set"} 1`, `redis_slowlog_length 0`} {
		if !bytes.Contains(body, []byte("\n"+line+"\n")) {
			t.Errorf("exporter output lacks %s:\n%s", line, redisLines(body))
		}
	}
	if !regexp.MustCompile(`(?m)^redis_latency_percentiles_usec\{cmd="set",quantile="99\.9"\} [0-9.e+-]+$`).Match(body) {
		t.Errorf("exporter output lacks set's p99.9:\n%s", redisLines(body))
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
