package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestNotifyKeyspaceEventsFlag: --notify-keyspace-events (also from the
// environment and the config file) takes Redis's classes and refuses any
// other letter at start-up.
func TestNotifyKeyspaceEventsFlag(t *testing.T) {
	cfg, _, err := parseConfig([]string{"--notify-keyspace-events", "KEA"}, env(nil), io.Discard)
	if err != nil || cfg.NotifyEvents != "KEA" {
		t.Fatalf("--notify-keyspace-events KEA: %+v, %v", cfg, err)
	}
	path := filepath.Join(t.TempDir(), "minikv.conf")
	if err := os.WriteFile(path, []byte("notify-keyspace-events = Ex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, _, err := parseConfig([]string{"--config", path}, env(nil), io.Discard); err != nil || cfg.NotifyEvents != "Ex" {
		t.Errorf("config file: %+v, %v", cfg, err)
	}
	for _, bad := range []string{"KEAq", "kea"} {
		_, _, err := parseConfig([]string{"--notify-keyspace-events", bad}, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "notify-keyspace-events") {
			t.Errorf("--notify-keyspace-events %q: err = %v, want one naming the flag", bad, err)
		}
	}
	_, _, err = parseConfig(nil, env(map[string]string{"MINIKV_NOTIFY_KEYSPACE_EVENTS": "x?"}), io.Discard)
	if err == nil {
		t.Error("MINIKV_NOTIFY_KEYSPACE_EVENTS=x? accepted")
	}
}

// TestNotifyKeyspaceEventsWired: the flag reaches the server: CONFIG GET
// reads it back in Redis's form, and a write is published.
func TestNotifyKeyspaceEventsWired(t *testing.T) {
	port, respPort := freePort(t), freePort(t)
	startRun(t, []string{"-p", strconv.Itoa(port), "--resp-port", strconv.Itoa(respPort), "--notify-keyspace-events", "E$"}, nil)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(respPort))
	waitDial(t, addr)
	sub, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	_ = sub.SetDeadline(time.Now().Add(20 * time.Second)) // a hang guard
	sr := bufio.NewReader(sub)
	fmt.Fprint(sub, "SUBSCRIBE __keyevent@0__:set\r\n")
	if l := readLines(t, sr, 6); l != "*3|$9|subscribe|$18|__keyevent@0__:set|:1" {
		t.Fatalf("SUBSCRIBE: %q", l)
	}
	w, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_ = w.SetDeadline(time.Now().Add(20 * time.Second))
	wr := bufio.NewReader(w)
	fmt.Fprint(w, "CONFIG GET notify-keyspace-events\r\n")
	if l := readLines(t, wr, 5); l != "*2|$22|notify-keyspace-events|$2|$E" {
		t.Errorf("CONFIG GET: %q", l)
	}
	// A write on the memcached port is published too.
	mc, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	fmt.Fprint(mc, "set k 0 0 1\r\nv\r\n")
	if l, _ := bufio.NewReader(mc).ReadString('\n'); l != "STORED\r\n" {
		t.Fatalf("set: %q", l)
	}
	if l := readLines(t, sr, 7); l != "*3|$7|message|$18|__keyevent@0__:set|$1|k" {
		t.Errorf("message: %q", l)
	}
}

// readLines reads n lines and joins them with "|", without their CRLFs.
func readLines(t *testing.T, r *bufio.Reader, n int) string {
	t.Helper()
	var out []string
	for range n {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read: %v (after %q)", err, out)
		}
		out = append(out, strings.TrimSuffix(l, "\r\n"))
	}
	return strings.Join(out, "|")
}
