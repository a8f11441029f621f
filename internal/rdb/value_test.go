package rdb

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// TestRDBDecode pins what RESTORE's decoder accepts and refuses, beyond
// what the sessions against redis-server reach: Redis 7.2's set
// listpacks and version 11, and malformed objects of every kind.
func TestRDBDecode(t *testing.T) {
	lp := func(elems ...string) string {
		b := store.ListpackNew()
		for _, e := range elems {
			b = store.ListpackAppend(b, []byte(e))
		}
		return string(AppendString(nil, b))
	}
	intset := func(w int, vals ...int64) string {
		b := binary.LittleEndian.AppendUint32(nil, uint32(w))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(vals)))
		for _, v := range vals {
			switch w {
			case 2:
				b = binary.LittleEndian.AppendUint16(b, uint16(v))
			case 4:
				b = binary.LittleEndian.AppendUint32(b, uint32(v))
			default:
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			}
		}
		return string(AppendString(nil, b))
	}
	for _, c := range []struct {
		name, obj string
		ok        bool
		kind      store.Kind
		n         int
	}{
		{"string", "\x00\x05hello", true, store.KindString, 0},
		{"int8", "\x00\xc0\xff", true, store.KindString, 0},
		{"string cut short", "\x00\x05hel", false, 0, 0},
		{"lzf length lie", "\x00\xc3\x02\x7f\x00a", false, 0, 0},
		{"lzf back reference before the start", "\x00\xc3\x02\x05\x20\x05", false, 0, 0},
		{"64-bit length", "\x00\x81\xff\xff\xff\xff\xff\xff\xff\xff", false, 0, 0},
		{"unknown type", "\x63", false, 0, 0},
		{"quicklist of ziplists without nodes", "\x0e\x00", false, 0, 0},
		{"set listpack (7.2)", "\x14" + lp("a", "b", "7"), true, store.KindSet, 3},
		{"set listpack repeated", "\x14" + lp("a", "a"), false, 0, 0},
		{"set listpack empty", "\x14" + lp(), false, 0, 0},
		{"set listpack integer twice (as a string)", "\x14\x0c\x0c\x00\x00\x00\x02\x00\x05\x01\x815\x02\xff", false, 0, 0},
		{"set listpack corrupt", "\x14\x07\x16\x00\x00\x00\x01\x00\x81", false, 0, 0},
		{"set repeated", "\x02\x02\x01a\x01a", false, 0, 0},
		{"set count lie", "\x02\x7f\x01a", false, 0, 0},
		{"intset", "\x0b" + intset(4, -70000, 1, 70000), true, store.KindSet, 3},
		{"intset unsorted", "\x0b" + intset(2, 5, 1), false, 0, 0},
		{"intset repeated", "\x0b" + intset(2, 1, 1), false, 0, 0},
		{"intset bad width", "\x0b" + intset(3, 1), false, 0, 0},
		{"intset empty", "\x0b" + intset(2), false, 0, 0},
		{"hash listpack odd", "\x10" + lp("a", "1", "b"), false, 0, 0},
		{"hash listpack repeated field", "\x10" + lp("a", "1", "a", "2"), false, 0, 0},
		{"hash listpack corrupt", "\x10\x07\x16\x00\x00\x00\x01\x00\x81", false, 0, 0},
		{"zset listpack", "\x11" + lp("a", "1.5", "b", "-inf"), true, store.KindZSet, 2},
		{"zset listpack bad score", "\x11" + lp("a", "x"), false, 0, 0},
		{"zset listpack nan", "\x11" + lp("a", "nan"), false, 0, 0},
		{"zset2 nan", "\x05\x01\x01a\x00\x00\x00\x00\x00\x00\xf8\x7f", false, 0, 0},
		{"zset2", "\x05\x01\x01a\x00\x00\x00\x00\x00\x00\xf0\x3f", true, store.KindZSet, 1},
		{"quicklist", "\x12\x02\x02" + lp("a", "1") + "\x01\x03big", true, store.KindList, 3},
		{"quicklist empty node skipped", "\x12\x02\x02" + lp() + "\x02" + lp("x"), true, store.KindList, 1},
		{"quicklist all empty", "\x12\x01\x02" + lp(), false, 0, 0},
		{"quicklist bad container", "\x12\x01\x03" + lp("a"), false, 0, 0},
		{"hash count lie", "\x04\x40\xff\x01a\x01b", false, 0, 0},
	} {
		v, err := DecodeValue([]byte(c.obj))
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok %v", c.name, err, c.ok)
			continue
		}
		if c.ok && (v.Kind != c.kind || c.n > 0 && len(v.elems) != c.n*map[bool]int{true: 2, false: 1}[c.kind == store.KindHash]) {
			t.Errorf("%s: kind %v, %d elements", c.name, v.Kind, len(v.elems))
		}
	}
	// The footer: version 11 (Redis 7.2) is read, 12 is not; the CRC
	// covers the version.
	body := []byte("\x00\x02hi")
	for _, c := range []struct {
		ver uint16
		ok  bool
	}{{9, true}, {10, true}, {11, true}, {12, false}} {
		p := binary.LittleEndian.AppendUint16(append([]byte(nil), body...), c.ver)
		p = binary.LittleEndian.AppendUint64(p, CRC64(0, p))
		if _, ok := Verify(p); ok != c.ok {
			t.Errorf("version %d: ok %v", c.ver, ok)
		}
	}
	if _, ok := Verify([]byte(strings.Repeat("x", 9))); ok {
		t.Error("a payload shorter than its footer passed")
	}
}

// TestLZFMatchesRedis: strings whose LZF output is about as long as they
// are (random bytes with a few repeats) DUMP as redis-server's do: Redis's
// lzf_compress gives up, by its early tests, on some whose output would
// just have fit, and those go out uncompressed.
func TestLZFMatchesRedis(t *testing.T) {
	r := startRedis(t, t.TempDir(), "lzf.rdb")
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	var vals [][]byte
	for i := range 600 {
		n := 21 + rng.IntN(600)
		b := make([]byte, 0, n)
		for len(b) < n {
			if len(b) > 8 && rng.IntN(40+i%60) == 0 { // a repeat of 3 to 12 earlier bytes
				at := rng.IntN(len(b) - 3)
				b = append(b, b[at:at+min(3+rng.IntN(10), len(b)-at)]...)
				continue
			}
			b = append(b, byte(rng.IntN(256)))
		}
		vals = append(vals, b[:n])
	}
	pipe := r.c.Pipeline()
	for i, v := range vals {
		pipe.Set(ctx, "v"+strconv.Itoa(i), v, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	compressed, plain := 0, 0
	for i, v := range vals {
		want := r.c.Dump(ctx, "v"+strconv.Itoa(i)).Val()
		got := string(Seal(AppendString([]byte{typeString}, v)))
		if got != want {
			t.Errorf("%d bytes: DUMP %q, redis-server's %q", len(v), got, want)
		}
		if want[1] == 0xC3 {
			compressed++
		} else {
			plain++
		}
	}
	if compressed < 50 || plain < 50 {
		t.Errorf("%d compressed, %d not: the strings are not about the threshold", compressed, plain)
	}
}
