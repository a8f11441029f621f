package bench

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestRingMatchesPylibmc checks every key of testdata/ring_pylibmc.json
// lands on the server pylibmc 1.6.3 (libmemcached 1.0.16) put it on, for
// each distribution, with and without weights, with the default port
// (whose point names leave the port out), a host name and non-ASCII keys.
// tests/python/ring_golden.py wrote the file from a live run.
func TestRingMatchesPylibmc(t *testing.T) {
	b, err := os.ReadFile("testdata/ring_pylibmc.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Keys  []string
		Cases []struct {
			Name      string
			Servers   []string
			Behaviors map[string]bool
			Where     string
		}
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Cases) < 9 || len(golden.Keys) < 1000 {
		t.Fatalf("golden file has %d cases, %d keys", len(golden.Cases), len(golden.Keys))
	}
	for _, c := range golden.Cases {
		mode := HashModula
		switch {
		case c.Behaviors["ketama_weighted"]:
			mode = HashKetamaMD5
		case c.Behaviors["ketama"]:
			mode = HashKetama
		}
		if !strings.HasPrefix(c.Name, mode+" ") {
			t.Fatalf("case %q: behaviors %v map to %s", c.Name, c.Behaviors, mode)
		}
		pool, err := ParsePool(strings.Join(c.Servers, ","))
		if err != nil {
			t.Fatal(err)
		}
		r, err := NewRing(mode, pool)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Where) != len(golden.Keys) {
			t.Fatalf("case %q: %d placements for %d keys", c.Name, len(c.Where), len(golden.Keys))
		}
		bad := 0
		for i, k := range golden.Keys {
			want := int(c.Where[i] - '0')
			if got := r.Pick([]byte(k)); got != want {
				if bad++; bad <= 5 {
					t.Errorf("%s: key %q on server %d, pylibmc put it on %d", c.Name, k, got, want)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d keys misplaced", c.Name, bad, len(golden.Keys))
		}
	}
}

func TestRingShape(t *testing.T) {
	pool := []PoolServer{{"127.0.0.1", 21201, 1}, {"127.0.0.1", 21202, 1}, {"127.0.0.1", 21203, 1}}
	for mode, want := range map[string]int{HashKetama: 300, HashKetamaMD5: 480, HashModula: 0} {
		r, err := NewRing(mode, pool)
		if err != nil {
			t.Fatal(err)
		}
		if r.Points() != want {
			t.Errorf("%s: %d points, want %d", mode, r.Points(), want)
		}
	}
	// libketama's weighted share: 160 points per server at equal weights,
	// floor(w/total * 40 * n) * 4 otherwise.
	for _, tc := range []struct{ w, total, n, want int }{
		{1, 3, 3, 160}, {1, 8, 3, 60}, {2, 8, 3, 120}, {5, 8, 3, 300}, {1, 1, 1, 160}, {1, 7, 7, 160},
	} {
		if got := weightedPoints(tc.w, tc.total, tc.n); got != tc.want {
			t.Errorf("weightedPoints(%d, %d, %d) = %d, want %d", tc.w, tc.total, tc.n, got, tc.want)
		}
	}
	// Known values of the hashes: one-at-a-time of "a" and of "" (0), and
	// the first word of MD5("a") = 0cc175b9c0f1b6a8..., little-endian.
	if got := OneAtATime([]byte("a")); got != 0xca2e9442 {
		t.Errorf("OneAtATime(a) = %#x", got)
	}
	if got := OneAtATime(nil); got != 0 {
		t.Errorf("OneAtATime() = %#x", got)
	}
	r, _ := NewRing(HashKetamaMD5, pool)
	if got := r.KeyHash([]byte("a")); got != 0xb975c10c {
		t.Errorf("md5 key hash of a = %#x, want 0xb975c10c", got)
	}
	if _, err := NewRing("crc", pool); err == nil {
		t.Error("NewRing accepted an unknown mode")
	}
	if _, err := NewRing(HashKetama, nil); err == nil {
		t.Error("NewRing accepted an empty pool")
	}
}

func TestParsePool(t *testing.T) {
	got, err := ParsePool("10.0.0.1:11211, host-b:11212:3,[::1]:6379:2")
	if err != nil {
		t.Fatal(err)
	}
	want := []PoolServer{{"10.0.0.1", 11211, 1}, {"host-b", 11212, 3}, {"::1", 6379, 2}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("server %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if a := got[2].Addr(); a != "[::1]:6379" {
		t.Errorf("Addr = %q", a)
	}
	for _, bad := range []string{"", "host", "host:0", "host:x", ":11211", "h:1:0", "h:1:x", "[::1", "[::1]"} {
		if _, err := ParsePool(bad); err == nil {
			t.Errorf("ParsePool(%q) succeeded", bad)
		}
	}
}
