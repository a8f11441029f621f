package redis

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestLolwutDifferential: LOLWUT's deterministic answers (the version, the
// errors) byte for byte as redis-server 7.0's, RESP2 and RESP3.
func TestLolwutDifferential(t *testing.T) {
	redisAddr := startRedisServer(t)
	rs := startRESP(t, server.Config{}, store.Config{})
	in := mb("LOLWUT") + mb("LOLWUT", "FOO") + mb("LOLWUT", "VERSION", "4") + mb("LOLWUT", "VERSION", "x") + mb("LOLWUT", "VERSION") +
		mb("LOLWUT", "VERSION", "5", "x") + mb("LOLWUT", "VERSION", "6", "10", "y") + mb("LOLWUT", "VERSION", "7", "1", "2") +
		mb("lolwut", "version", "-1")
	for _, s := range []respSession{{name: "lolwut", in: in}, {name: "lolwut resp3", skip: 1, in: mb("HELLO", "3") + in}} {
		want, got := runRESPSession(redisAddr, s), runRESPSession(rs.respAddr, s)
		if want.err != nil || got.err != nil {
			t.Fatalf("redis: %v; minikv: %v", want.err, got.err)
		}
		if string(got.out) != string(want.out) {
			t.Errorf("session %q differs\nredis:  %q\nminikv: %q", s.name, want.out, got.out)
		}
	}
}

// TestLolwutDrawings: VERSION 5 and 6 draw at random, as Redis does, so
// two calls differ; their shape (lines, characters or pixels per line,
// footer) is redis-server's for the same arguments, clamped as Redis
// clamps them.
func TestLolwutDrawings(t *testing.T) {
	redis := dialRESP(t, startRedisServer(t))
	rs := startRESP(t, server.Config{}, store.Config{})
	mk := dialRESP(t, rs.respAddr)
	shape := func(reply string) (lines []int, footer string) {
		body := reply[strings.Index(reply, "\r\n")+2 : len(reply)-2]
		parts := strings.Split(body, "\n")
		for _, l := range parts[:len(parts)-3] {
			if strings.Contains(l, "\x1b[") {
				lines = append(lines, strings.Count(l, "\x1b[0m"))
			} else {
				lines = append(lines, utf8.RuneCountInString(l))
			}
		}
		return lines, strings.Join(parts[len(parts)-3:], "\n")
	}
	for _, args := range [][]string{{"VERSION", "5"}, {"VERSION", "5", "20", "3", "4"}, {"VERSION", "5", "1", "1", "1"},
		{"VERSION", "5", "5000", "0", "0"}, {"VERSION", "6"}, {"VERSION", "6", "30", "7"}, {"VERSION", "6", "0", "0"}} {
		call := append([]string{"LOLWUT"}, args...)
		wl, wf := shape(redis.Do(call...))
		gl, gf := shape(mk.Do(call...))
		if fmtInts(gl) != fmtInts(wl) || gf != wf {
			t.Errorf("LOLWUT %v: MiniKV's lines %v, footer %q; Redis's %v, %q", args, gl, gf, wl, wf)
		}
	}
	if a, b := mk.Do("LOLWUT", "VERSION", "6"), mk.Do("LOLWUT", "VERSION", "6"); a == b {
		t.Error("two LOLWUT VERSION 6 drew the same skyline; Redis's are random")
	}
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = itoa64(int64(n))
	}
	return strings.Join(s, " ")
}
