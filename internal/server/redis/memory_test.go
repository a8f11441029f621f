package redis

import (
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestMemoryDifferential: MEMORY's syntax, errors, HELP and a missing
// key answer byte for byte as redis-server 7.0's, over RESP2 and RESP3.
func TestMemoryDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	in := mb("MEMORY", "USAGE", "mem:none") + mb("MEMORY", "USAGE", "mem:k", "SAMPLES", "-1") + mb("MEMORY", "USAGE", "mem:k", "SAMPLES", "x") +
		mb("MEMORY", "USAGE", "mem:k", "FOO") + mb("MEMORY", "USAGE", "mem:k", "SAMPLES") + mb("MEMORY", "USAGE") + mb("MEMORY", "FOO") +
		mb("MEMORY") + mb("MEMORY", "STATS", "x") + mb("MEMORY", "DOCTOR", "x") + mb("MEMORY", "PURGE", "x") + mb("MEMORY", "HELP", "x") +
		mb("memory", "usage", "mem:none", "samples", "0") + mb("MEMORY", "HELP") + mb("MEMORY", "PURGE") + mb("MEMORY", "MALLOC-STATS", "x") +
		mb("MEMORY", "USAGE", "mem:none", "SAMPLES", "5", "SAMPLES", "0") + mb("COMMAND", "GETKEYS", "MEMORY", "USAGE", "mem:k")
	for _, s := range []respSession{{name: "memory", in: in}, {name: "memory resp3", skip: 1, in: mb("HELLO", "3") + in}} {
		want, got := runRESPSession(redisAddr, s), runRESPSession(rs.respAddr, s)
		if want.err != nil || got.err != nil {
			t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
		}
		if string(got.out) != string(want.out) {
			t.Errorf("session %q differs\nredis:  %q\nminikv: %q", s.name, want.out, got.out)
		}
	}
}

// TestMemoryFigures: MEMORY USAGE is what the store charges the key
// (key, value, store.ItemOverhead; a collection grows with its
// elements); MEMORY STATS has Redis 7.0's fields in its order (checked
// against redis-server's own reply) with figures that add up; DOCTOR
// answers in Redis's words.
func TestMemoryFigures(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Expect(multibulk("SET", "k", "value"), "+OK\r\n")
	c.Expect(multibulk("MEMORY", "USAGE", "k"), ":"+strconv.Itoa(len("k")+len("value")+store.ItemOverhead)+"\r\n")
	c.Expect(multibulk("MEMORY", "USAGE", "k", "SAMPLES", "0"), ":"+strconv.Itoa(len("k")+len("value")+store.ItemOverhead)+"\r\n")
	small := c.Do("MEMORY", "USAGE", "k")
	args := []string{"RPUSH", "l"}
	for i := range 2000 {
		args = append(args, strings.Repeat("e", 10)+strconv.Itoa(i))
	}
	c.Do(args...)
	big := c.Do("MEMORY", "USAGE", "l")
	if n, _ := strconv.Atoi(strings.TrimSpace(big[1:])); n < 2000*10 {
		t.Errorf("MEMORY USAGE of a 2000-element list = %q, want at least its 20000 bytes of elements (a string's: %q)", big, small)
	}

	redisAddr := startRedisServer(t)
	r := dialRESP(t, redisAddr)
	r.Do("SET", "k", "value")
	// The field names, in order, nested ones too: RESP2's flat pairs.
	names := func(reply string) []string {
		var out []string
		var walk func(v rv)
		walk = func(v rv) {
			for i := 0; i+1 < len(v.elems); i += 2 {
				out = append(out, v.elems[i].str)
				if v.elems[i+1].kind == '*' {
					walk(v.elems[i+1])
				}
			}
		}
		v, _ := parseRV(reply)
		walk(v)
		return out
	}
	mine, theirs := c.Do("MEMORY", "STATS"), r.Do("MEMORY", "STATS")
	if got, want := strings.Join(names(mine), " "), strings.Join(names(theirs), " "); got != want {
		t.Errorf("MEMORY STATS fields:\n minikv %s\n redis  %s", got, want)
	}
	field := func(name string) int64 {
		lines := strings.Split(mine, "\r\n")
		for i := range lines {
			if lines[i] == name && i+1 < len(lines) && strings.HasPrefix(lines[i+1], ":") {
				n, _ := strconv.ParseInt(lines[i+1][1:], 10, 64)
				return n
			}
		}
		t.Fatalf("MEMORY STATS has no integer %s: %q", name, mine)
		return 0
	}
	if field("keys.count") != 2 || field("overhead.total")+field("dataset.bytes") != field("total.allocated") ||
		field("peak.allocated") < field("total.allocated") || field("dataset.bytes") < 20000 {
		t.Errorf("MEMORY STATS figures do not add up: %q", mine)
	}
	if got := c.Do("MEMORY", "DOCTOR"); !strings.HasPrefix(got, "$") || !strings.Contains(got, "Sam") {
		t.Errorf("MEMORY DOCTOR = %q", got)
	}
	c.Do("HELLO", "3")
	if got := c.Do("MEMORY", "DOCTOR"); !strings.HasPrefix(got, "=") || !strings.Contains(got, "txt:") {
		t.Errorf("MEMORY DOCTOR in RESP3 = %q, want a verbatim string", got)
	}
	if got := c.Do("MEMORY", "STATS"); !strings.HasPrefix(got, "%") || !strings.Contains(got, "\r\n$18\r\ndataset.percentage\r\n,") {
		t.Errorf("MEMORY STATS in RESP3 = %.200q, want a map with doubles", got)
	}
}

// TestMemoryDoctorReport checks the report's branches on chosen figures.
func TestMemoryDoctorReport(t *testing.T) {
	if got := memoryDoctor(memOverhead{total: 1 << 20}); !strings.HasPrefix(got, "Hi Sam, this instance is empty") {
		t.Errorf("empty: %q", got)
	}
	ok := memOverhead{total: 100 << 20, peak: 100 << 20, allocated: 100 << 20, active: 101 << 20, resident: 102 << 20, rss: 103 << 20}
	if got := memoryDoctor(ok); got != "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n" {
		t.Errorf("healthy: %q", got)
	}
	bad := ok
	bad.peak, bad.scripts = 400<<20, 2000
	got := memoryDoctor(bad)
	if !strings.HasPrefix(got, "Sam, I detected a few issues") || !strings.Contains(got, " * Peak memory:") ||
		!strings.Contains(got, " * Many scripts:") || !strings.HasSuffix(got, "I'm here to keep you safe, Sam. I want to help you.\n") {
		t.Errorf("peak and scripts: %q", got)
	}
}
