package memcache

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestMetaKeysSharedAcrossPorts: a key written by ms is the same item for
// get, gets and RESP GET/TTL, and one written over RESP is read by mg.
func TestMetaKeysSharedAcrossPorts(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	mc := dial(t, rs.addr)
	rc := dialRESP(t, rs.respAddr)

	mc.Expect("ms mk 5 T100 F7\r\nhello\r\n", "HD")
	mc.Expect("get mk\r\n", "VALUE mk 7 5", "hello", "END")
	rc.Expect(multibulk("GET", "mk"), "$5\r\nhello\r\n")
	if got := rc.Do("TTL", "mk"); got != ":100\r\n" && got != ":99\r\n" {
		t.Errorf("RESP TTL of an ms T100 key = %q, want :100 or :99", got)
	}

	rc.Expect(multibulk("SET", "rk", "from-resp"), "+OK\r\n")
	mc.Expect("mg rk v f t\r\n", "VA 9 f0 t-1", "from-resp")
	mc.Expect("ma rk\r\n", "CLIENT_ERROR cannot increment or decrement non-numeric value")
	rc.Expect(multibulk("SET", "n", "41"), "+OK\r\n")
	mc.Expect("ma n v\r\n", "VA 2", "42")
	rc.Expect(multibulk("GET", "n"), "$2\r\n42\r\n")
	mc.Expect("md n q\r\nmn\r\n", "MN")
	rc.Expect(multibulk("EXISTS", "n"), ":0\r\n")
}

// TestMetaStatsCounters: meta commands feed the same counters as their
// classic counterparts.
func TestMetaStatsCounters(t *testing.T) {
	ts := startServer(t, server.Config{}, store.Config{})
	c := dial(t, ts.addr)
	c.Expect("mg a v\r\n", "EN")
	c.Expect("ms a 1\r\nx\r\n", "HD")
	c.Expect("mg a v T10\r\n", "VA 1", "x")
	c.Expect("ms a 1 C999\r\ny\r\n", "EX")
	c.Expect("md a\r\n", "HD")
	c.Expect("md a\r\n", "NF")
	c.Expect("ma n\r\n", "NF")
	c.Expect("ma n N0\r\n", "HD")
	c.Expect("ma n MD\r\n", "HD")
	want := map[string]string{
		"cmd_get": "2", "get_hits": "1", "get_misses": "1", "cmd_touch": "1", "touch_hits": "1",
		"cmd_set": "2", "cas_badval": "1", "delete_hits": "1", "delete_misses": "1",
		"incr_misses": "1", "incr_hits": "1", "decr_hits": "1",
	}
	c.Send("stats\r\n")
	for {
		line := c.Line()
		if line == "END" {
			break
		}
		f := strings.Fields(line)
		if len(f) == 3 {
			if w, ok := want[f[1]]; ok {
				if f[2] != w {
					t.Errorf("stat %s = %s, want %s", f[1], f[2], w)
				}
				delete(want, f[1])
			}
		}
	}
	for k := range want {
		t.Errorf("stat %s missing", k)
	}
}

// TestMetaCASDisabled: under -C every token reads as 0, in meta replies too.
func TestMetaCASDisabled(t *testing.T) {
	ts := startServer(t, server.Config{DisableCAS: true}, store.Config{})
	c := dial(t, ts.addr)
	c.Expect("ms a 1 c\r\nx\r\n", "HD c0")
	c.Expect("mg a c v\r\n", "VA 1 c0", "x")
}

// TestMetaDispatchZeroAllocs checks that serving mg, md and mn allocates
// nothing once warm, and ms and ma only the item the store keeps.
func TestMetaDispatchZeroAllocs(t *testing.T) {
	ts := startServer(t, server.Config{}, store.Config{})
	p := New(ts.srv)
	c := &conn{Conn: new(server.Conn), p: p, st: p.st}
	w := memcache.NewWriter(io.Discard, server.WriteBufSize)
	c.w = w
	for _, tc := range []struct {
		in  string
		max float64
	}{
		{"ms user:1000 32 T60 F7 c k O1\r\n" + strings.Repeat("v", 32) + "\r\n", 1},
		{"mg user:1000 v f c t k O123 s h l\r\n", 0},
		{"mg dXNlcjoxMDAw b v k\r\n", 0},
		{"mg nokey v k O1\r\n", 0},
		{"md nokey q\r\n", 0},
		{"ma counter N0 J5 D2 v t c\r\n", 1},
		{"mn\r\n", 0},
	} {
		r := memcache.NewReader(&loop{data: []byte(tc.in)}, server.ReadBufSize, nil)
		var req memcache.Request
		serve := func() {
			if err := r.Read(&req); err != nil {
				t.Fatalf("Read(%q): %v", tc.in, err)
			}
			c.dispatch(&req)
		}
		for range 10 {
			serve()
		}
		if allocs := testing.AllocsPerRun(1000, serve); allocs > tc.max {
			t.Errorf("%q: %v allocs per command, want <= %v", tc.in, allocs, tc.max)
		}
	}
}

// loop serves data over and over.
type loop struct {
	data []byte
	off  int
}

func (l *loop) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

// TestMetaQuietPipeline: a quiet multi-get answers only hits, and mn ends it.
func TestMetaQuietPipeline(t *testing.T) {
	ts := startServer(t, server.Config{}, store.Config{})
	c := dial(t, ts.addr)
	c.Expect("ms a 1 q\r\n1\r\nms c 1 q\r\n3\r\nmn\r\n", "MN")
	c.Send("mg a v q k\r\nmg b v q k\r\nmg c v q k O9\r\nmn\r\n")
	var got bytes.Buffer
	for {
		l := c.Line()
		got.WriteString(l + "\n")
		if l == "MN" {
			break
		}
	}
	if want := "VA 1 ka\n1\nVA 1 kc O9\n3\nMN\n"; got.String() != want {
		t.Errorf("quiet multi-get = %q, want %q", got.String(), want)
	}
}

// TestFarFutureExptimeReadsBack sets absolute times past 2262 (where
// deadlines in int64 nanoseconds would end) on both ports and reads the
// time left back with mg's t flag and RESP's TTL, EXPIRETIME and
// PEXPIRETIME. The t values are checked against the clock with an hour of
// slack: a wrong deadline is off by centuries.
func TestFarFutureExptimeReadsBack(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	mc := dial(t, rs.addr)
	rc := dialRESP(t, rs.respAddr)
	const y3021 = 33177117420
	near := func(what string, got, want int64) {
		t.Helper()
		if got < want-3600 || got > want+3600 {
			t.Errorf("%s = %d, want about %d", what, got, want)
		}
	}
	metaTTL := func(key string) int64 {
		t.Helper()
		mc.Send("mg " + key + " t\r\n")
		line := mc.Line()
		var ttl int64
		if _, err := fmt.Sscanf(line, "HD t%d", &ttl); err != nil {
			t.Fatalf("mg %s t = %q: %v", key, line, err)
		}
		return ttl
	}

	mc.Expect("set classic 0 33177117420 1\r\nx\r\n", "STORED")
	near("mg classic t", metaTTL("classic"), y3021-time.Now().Unix())
	rc.Expect(multibulk("EXPIRETIME", "classic"), ":33177117420\r\n")
	rc.Expect(multibulk("PEXPIRETIME", "classic"), ":33177117420000\r\n")
	mc.Expect("touch classic 9223372036854775\r\n", "TOUCHED")
	rc.Expect(multibulk("PEXPIRETIME", "classic"), ":9223372036854775000\r\n")
	mc.Expect("gat 33177117420 classic\r\n", "VALUE classic 0 1", "x", "END")
	rc.Expect(multibulk("EXPIRETIME", "classic"), ":33177117420\r\n")

	rc.Expect(multibulk("SET", "resp", "v", "PXAT", "9223372036854775807"), "+OK\r\n")
	near("mg resp t", metaTTL("resp"), 9223372036854776-time.Now().Unix())
	rc.Expect(multibulk("EXPIREAT", "resp", "33177117420"), ":1\r\n")
	near("mg resp t", metaTTL("resp"), y3021-time.Now().Unix())
	ttl, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(rc.Do("TTL", "resp"), ":")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	near("TTL resp", ttl, y3021-time.Now().Unix())
}
