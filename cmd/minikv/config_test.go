package main

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestDefaults(t *testing.T) {
	cfg, _, err := parseConfig(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1" || cfg.Port != 11211 || cfg.MemoryLimit.bytes != 64<<20 ||
		cfg.MaxItemSize.bytes != 1<<20 || cfg.MaxConns != 1024 || cfg.ReqsPerEvent != 20 ||
		cfg.IdleTimeout != 0 || cfg.NoEvict || cfg.DisableCAS {
		t.Errorf("defaults = %+v", cfg)
	}
}

func TestMemcachedShortFlags(t *testing.T) {
	args := strings.Fields("-p 12345 -l 0.0.0.0 -m 128 -M -c 10 -t 2 -I 2m -U 0 -vv -C -F -R 5 -o idle_timeout=7,slab_reassign,lru_crawler")
	cfg, ignored, err := parseConfig(args, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := config{Listen: "0.0.0.0", Port: 12345, NoEvict: true, MaxConns: 10, Threads: 2,
		Verbose: 2, DisableCAS: true, DisableFlushAll: true, ReqsPerEvent: 5, IdleTimeout: 7 * time.Second}
	got := config{Listen: cfg.Listen, Port: cfg.Port, NoEvict: cfg.NoEvict, MaxConns: cfg.MaxConns,
		Threads: cfg.Threads, Verbose: cfg.Verbose, DisableCAS: cfg.DisableCAS,
		DisableFlushAll: cfg.DisableFlushAll, ReqsPerEvent: cfg.ReqsPerEvent, IdleTimeout: cfg.IdleTimeout}
	if got != want {
		t.Errorf("parseConfig(%q) = %+v, want %+v", args, got, want)
	}
	if cfg.MemoryLimit.bytes != 128<<20 || cfg.MaxItemSize.bytes != 2<<20 {
		t.Errorf("sizes = %d, %d", cfg.MemoryLimit.bytes, cfg.MaxItemSize.bytes)
	}
	if strings.Join(ignored, ",") != "slab_reassign,lru_crawler" {
		t.Errorf("ignored -o options = %q", ignored)
	}
}

func TestAttachedShortValues(t *testing.T) {
	cfg, _, err := parseConfig([]string{"-p11311", "-m256", "-vM"}, env(nil), io.Discard)
	if err == nil {
		// -vM is not supported (combined booleans); make sure the attached
		// values alone work.
		t.Fatalf("want error for combined boolean flags, got %+v", cfg)
	}
	cfg, _, err = parseConfig([]string{"-p11311", "-m256", "-M"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 11311 || cfg.MemoryLimit.bytes != 256<<20 || !cfg.NoEvict {
		t.Errorf("got port %d mem %d noevict %v", cfg.Port, cfg.MemoryLimit.bytes, cfg.NoEvict)
	}
}

func TestLongFlags(t *testing.T) {
	args := []string{"--port=1", "--memory-limit", "1g", "--max-item-size", "512k", "--idle-timeout", "3s", "--log-format", "json"}
	cfg, _, err := parseConfig(args, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 1 || cfg.MemoryLimit.bytes != 1<<30 || cfg.MaxItemSize.bytes != 512<<10 ||
		cfg.IdleTimeout != 3*time.Second || cfg.LogFormat != "json" {
		t.Errorf("parseConfig(%q) = %+v", args, cfg)
	}
}

func TestPrecedenceFlagsEnvFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "minikv.conf")
	conf := "# comment\nport = 2000\nmemory_limit = 32\nmax-connections = 50\n\nreqs-per-event = 7\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	e := env(map[string]string{"MINIKV_PORT": "3000", "MINIKV_MAX_CONNECTIONS": "60"})
	cfg, _, err := parseConfig([]string{"--config", path, "-c", "70"}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// flag > env > file > default
	if cfg.MaxConns != 70 {
		t.Errorf("MaxConns = %d, want 70 from the flag", cfg.MaxConns)
	}
	if cfg.Port != 3000 {
		t.Errorf("Port = %d, want 3000 from the environment", cfg.Port)
	}
	if cfg.MemoryLimit.bytes != 32<<20 || cfg.ReqsPerEvent != 7 {
		t.Errorf("file values not applied: mem %d reqs %d", cfg.MemoryLimit.bytes, cfg.ReqsPerEvent)
	}
	if cfg.Listen != "127.0.0.1" {
		t.Errorf("Listen = %q, want the default", cfg.Listen)
	}

	// The config file can come from the environment too.
	cfg, _, err = parseConfig(nil, env(map[string]string{"MINIKV_CONFIG": path}), io.Discard)
	if err != nil || cfg.Port != 2000 {
		t.Errorf("MINIKV_CONFIG: port %v err %v", cfg, err)
	}
}

func TestConfigFileUnknownKeyNamesLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.conf")
	if err := os.WriteFile(path, []byte("port = 1\n\nmemroy-limit = 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := parseConfig([]string{"--config", path}, env(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), ":3:") || !strings.Contains(err.Error(), "memroy-limit") {
		t.Errorf("err = %v, want one naming line 3 and the key", err)
	}
}

func TestInvalidConfigs(t *testing.T) {
	for _, args := range [][]string{
		{"-U", "11211"},
		{"-m", "1", "-I", "1m"}, // item size above half the memory
		{"-I", "100"},
		{"-p", "70000"},
		{"--log-format", "xml"},
		{"-m", "abc"},
		{"-m", "0"}, // memcached refuses it too: no room for one item
		{"stray"},
		{"--disk-limit", "1g"}, // without --data-dir
		{"--data-dir", "/tmp/x", "--disk-limit", "1m"},
		{"--data-dir", "/tmp/x", "--fsync", "sometimes"},
	} {
		if _, _, err := parseConfig(args, env(nil), io.Discard); err == nil {
			t.Errorf("parseConfig(%q) succeeded, want an error", args)
		}
	}
	cfg, _, err := parseConfig(nil, env(map[string]string{"MINIKV_DATA_DIR": "/d", "MINIKV_DISK_LIMIT": "2g"}), io.Discard)
	if err != nil || cfg.DataDir != "/d" || cfg.DiskLimit.bytes != 2<<30 {
		t.Errorf("MINIKV_DATA_DIR and MINIKV_DISK_LIMIT: %+v, %v", cfg, err)
	}
	if _, _, err := parseConfig(nil, env(map[string]string{"MINIKV_PORT": "x"}), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "MINIKV_PORT") {
		t.Errorf("bad env value: err = %v, want one naming MINIKV_PORT", err)
	}
}

// TestMemoryLimitZeroIsNoLimit: --memory-limit 0, from the command line,
// the environment or the config file, is no limit (Redis's maxmemory 0),
// and the item size is then not bound to half of it; -m 0 stays refused,
// as memcached refuses it.
func TestMemoryLimitZeroIsNoLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "minikv.conf")
	if err := os.WriteFile(path, []byte("memory-limit = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
	}{
		{args: []string{"--memory-limit", "0", "-I", "8m"}},
		{env: map[string]string{"MINIKV_MEMORY_LIMIT": "0"}},
		{args: []string{"--config", path}},
	} {
		cfg, _, err := parseConfig(tc.args, env(tc.env), io.Discard)
		if err != nil || cfg.MemoryLimit.bytes != 0 {
			t.Errorf("parseConfig(%q, %v): %v, memory limit %+v, want 0", tc.args, tc.env, err, cfg)
		}
	}
	if _, _, err := parseConfig([]string{"-m", "0"}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--memory-limit 0") {
		t.Errorf("-m 0: %v, want a refusal that names --memory-limit 0", err)
	}
	if got := softMemoryLimit(0, false); got != math.MaxInt64 {
		t.Errorf("softMemoryLimit(0) = %d, want math.MaxInt64 (none)", got)
	}
	if got := softMemoryLimit(0, true); got != math.MaxInt64 {
		t.Errorf("softMemoryLimit(0, durable) = %d, want math.MaxInt64 (none)", got)
	}
}
