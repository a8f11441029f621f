package rdb

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/minikv/minikv/internal/store"
)

// populateStreams builds on redis-server the streams the tests move
// between Redis and MiniKV: entries with the master's fields and others,
// integers and long (compressible) values, deleted entries (the first of
// a node among them), an exact trim that leaves a node partly deleted,
// groups with PELs, consumers with and without pending entries, a group
// whose read counter is unknown, integer-like names, an empty stream
// with a group, a stream whose entries are all deleted, XSETID's
// counters, and streams of many nodes.
func populateStreams(t *testing.T, c *redis.Client) {
	t.Helper()
	ctx := context.Background()
	do := func(args ...any) {
		t.Helper()
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	do("XADD", "x:same", "1-1", "a", "1", "b", "2")
	do("XADD", "x:same", "1-2", "a", "3", "b", "4")
	do("XADD", "x:same", "2-0", "a", "5")
	do("XADD", "x:same", "2-1", "c", strings.Repeat("long value ", 20), "d", "-12345678901")
	do("XADD", "x:same", "3-0", "a", "", "b", "")

	for i := range 40 {
		do("XADD", "x:del", fmt.Sprintf("%d-%d", 100+i/3, i%3), "f", i, "g", "v"+strconv.Itoa(i))
	}
	do("XDEL", "x:del", "100-0", "105-1", "113-0", "113-1")

	for i := range 300 {
		do("XADD", "x:trim", "*", "n", i)
	}
	do("XTRIM", "x:trim", "MAXLEN", "150")

	pipe := c.Pipeline()
	for i := range 1200 {
		pipe.Do(ctx, "XADD", "x:big", fmt.Sprintf("%d-%d", 1700000000000+i*7, i%5), "field", i, "other", strings.Repeat("z", i%50))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}

	for i := range 20 {
		do("XADD", "x:groups", fmt.Sprintf("5-%d", i), "k", i)
	}
	do("XGROUP", "CREATE", "x:groups", "g1", "0")
	do("XGROUP", "CREATE", "x:groups", "g2", "$")
	do("XGROUP", "CREATE", "x:groups", "123", "5-3")
	do("XREADGROUP", "GROUP", "g1", "alice", "COUNT", 3, "STREAMS", "x:groups", ">")
	do("XREADGROUP", "GROUP", "g1", "bob", "COUNT", 4, "STREAMS", "x:groups", ">")
	do("XREADGROUP", "GROUP", "g1", "77", "COUNT", 2, "STREAMS", "x:groups", ">")
	do("XACK", "x:groups", "g1", "5-1", "5-4")
	do("XCLAIM", "x:groups", "g1", "alice", 0, "5-5", "5-6")
	do("XGROUP", "CREATECONSUMER", "x:groups", "g1", "idle")
	do("XREADGROUP", "GROUP", "123", "carol", "COUNT", 2, "STREAMS", "x:groups", ">")
	do("XDEL", "x:groups", "5-8")
	do("XGROUP", "CREATE", "x:groups", "gunknown", "5-10") // after a deletion: entries_read -1

	do("XGROUP", "CREATE", "x:empty", "g", "$", "MKSTREAM")

	do("XADD", "x:alldel", "9-1", "a", "b")
	do("XADD", "x:alldel", "9-2", "a", "c")
	do("XDEL", "x:alldel", "9-1", "9-2")

	do("XADD", "x:setid", "10-0", "a", "b")
	do("XSETID", "x:setid", "20-5", "ENTRIESADDED", 50, "MAXDELETEDID", "15-0")
}

// streamKeys are the streams populateStreams makes.
var streamKeys = []string{"x:same", "x:del", "x:trim", "x:big", "x:groups", "x:empty", "x:alldel", "x:setid"}

// TestStreamDumpRedis: every stream redis-server 7.2 DUMPs (type 21)
// decodes, and
// encodes back to exactly Redis's payload; restored into a store and
// dumped from it, the same bytes again, which redis-server RESTOREs.
func TestStreamDumpRedis(t *testing.T) {
	r := startRedis(t, t.TempDir(), "s.rdb")
	populateStreams(t, r.c)
	ctx := context.Background()
	st := store.New(store.Config{MemoryLimit: 64 << 20})
	defer st.Close()
	for _, k := range streamKeys {
		want, err := r.c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		if want[0] != typeStreamLP3 {
			t.Fatalf("%s: redis-server's type %d", k, want[0])
		}
		v := decodeDump(t, []byte(want))
		if v.Kind != store.KindStream || v.Stream == nil {
			t.Fatalf("%s: decoded as %v", k, v.Kind)
		}
		if got := string(Seal(appendStreamOf([]byte{typeStreamLP3}, v.Stream, typeStreamLP3))); got != want {
			t.Errorf("%s: encoding the decoded stream differs:\nMiniKV %q\nredis  %q", k, got, want)
		}
		key := []byte(k)
		if err := st.Tx([][]byte{key}, func(tx *store.Tx) error { return v.Build(tx, key) }); err != nil {
			t.Fatalf("%s: build: %v", k, err)
		}
		got, ok, err := Dump(st, key)
		if err != nil || !ok {
			t.Fatalf("%s: DUMP from the store: %v %v", k, ok, err)
		}
		if string(got) != want {
			t.Errorf("%s: the store's DUMP differs:\nMiniKV %q\nredis  %q", k, got, want)
		}
		if err := r.c.RestoreReplace(ctx, k+":back", 0, string(got)).Err(); err != nil {
			t.Errorf("%s: redis-server refuses MiniKV's DUMP: %v", k, err)
		}
		if os.Getenv("MINIKV_WRITE_STREAM_CORPUS") == "1" { // seeds for FuzzStreamValue
			obj, _ := Verify(got)
			dir := filepath.Join("testdata", "fuzz", "FuzzStreamValue")
			_ = os.MkdirAll(dir, 0o755)
			body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(obj[:len(obj)-dumpVersionFooter])) + ")\n"
			if err := os.WriteFile(filepath.Join(dir, "redis72-"+strings.TrimPrefix(k, "x:")), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Redis's view of some: what the payload says.
	v := decodeDump(t, []byte(r.c.Dump(ctx, "x:groups").Val())).Stream
	if len(v.Groups) != 4 || string(v.Groups[0].Name) != "123" || string(v.Groups[3].Name) != "gunknown" || v.Groups[3].EntriesRead != -1 {
		t.Errorf("x:groups: groups %+v", v.Groups)
	}
	if v := decodeDump(t, []byte(r.c.Dump(ctx, "x:big").Val())).Stream; len(v.Nodes) < 10 || v.Length != 1200 {
		t.Errorf("x:big: %d nodes, length %d", len(v.Nodes), v.Length)
	}
	if v := decodeDump(t, []byte(r.c.Dump(ctx, "x:alldel").Val())).Stream; len(v.Nodes) != 0 || v.Length != 0 || v.EntriesAdded != 2 || v.MaxDeletedID != (store.StreamID{Ms: 9, Seq: 2}) {
		t.Errorf("x:alldel: %+v", v)
	}
}

// TestStreamRDBFile: a redis-server file with streams loads into a store,
// whose own file (streams written as Redis 7.2 writes them) passes
// redis-check-rdb and a second redis-server loads with the same streams, byte for byte in DUMP.
func TestStreamRDBFile(t *testing.T) {
	dirA := t.TempDir()
	ra := startRedis(t, dirA, "a.rdb")
	populateStreams(t, ra.c)
	ctx := context.Background()
	if err := ra.c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	st := store.New(store.Config{MemoryLimit: 64 << 20})
	defer st.Close()
	if _, err := LoadFile(filepath.Join(dirA, "a.rdb"), st, LoadOptions{}); err != nil {
		t.Fatalf("loading redis-server's file: %v", err)
	}
	dirB := t.TempDir()
	if _, err := SaveFile(filepath.Join(dirB, "b.rdb"), st, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("redis-check-rdb", filepath.Join(dirB, "b.rdb")).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("RDB looks OK")) {
		t.Fatalf("redis-check-rdb on MiniKV's file: %v\n%s", err, out)
	}
	rb := startRedis(t, dirB, "b.rdb")
	for _, k := range streamKeys {
		want := ra.c.Dump(ctx, k).Val()
		got, ok, err := Dump(st, []byte(k))
		if err != nil || !ok || string(got) != want {
			t.Errorf("%s: loaded from Redis's file, DUMP %q (%v %v), redis-server's %q", k, got, ok, err, want)
		}
		if back := rb.c.Dump(ctx, k).Val(); back != want {
			t.Errorf("%s: redis-server loading MiniKV's file DUMPs %q, want %q", k, back, want)
		}
	}
}

// lpOf is a listpack of the elements (canonical integers stored as
// integers, as Redis stores them).
func lpOf(elems ...any) []byte {
	lp := store.ListpackNew()
	for _, e := range elems {
		lp = store.ListpackAppend(lp, []byte(fmt.Sprint(e)))
	}
	return lp
}

// testNode is a node of master ID m whose entries are at m, m+1ms, ...,
// each with fields f=i; the entries listed in del are flagged deleted.
func testNode(m store.StreamID, n int, del ...int) store.StreamNode {
	elems := []any{n - len(del), len(del), 1, "f", 0}
	for i := range n {
		flags := 2
		for _, d := range del {
			if d == i {
				flags |= 1
			}
		}
		elems = append(elems, flags, i, 0, i, 4)
	}
	return store.StreamNode{Master: m, LP: lpOf(elems...)}
}

// appendStreamAs encodes v as type 15 (no first ID, max deleted ID,
// entries added, read counters) or 21 (consumers' active times too), as
// Redis 5-6 and 7.2 write them.
func appendStreamAs(typ byte, v *store.StreamValue) []byte {
	b := AppendLen([]byte{typ}, uint64(len(v.Nodes)))
	for _, nd := range v.Nodes {
		b = AppendString(b, appendStreamID(nil, nd.Master))
		b = AppendString(b, nd.LP)
	}
	b = AppendLen(b, v.Length)
	b = appendLenID(b, v.LastID)
	if typ != typeStreamLP {
		b = appendLenID(b, v.FirstID)
		b = appendLenID(b, v.MaxDeletedID)
		b = AppendLen(b, v.EntriesAdded)
	}
	b = AppendLen(b, uint64(len(v.Groups)))
	for _, g := range v.Groups {
		b = AppendString(b, g.Name)
		b = appendLenID(b, g.LastID)
		if typ != typeStreamLP {
			b = AppendLen(b, uint64(g.EntriesRead))
		}
		b = AppendLen(b, uint64(len(g.PEL)))
		for _, nk := range g.PEL {
			b = appendMs(appendStreamID(b, nk.ID), nk.DeliveryTime)
			b = AppendLen(b, nk.DeliveryCount)
		}
		b = AppendLen(b, uint64(len(g.Consumers)))
		for _, c := range g.Consumers {
			b = appendMs(AppendString(b, c.Name), c.SeenTime)
			if typ == typeStreamLP3 {
				b = appendMs(b, c.ActiveTime)
			}
			b = AppendLen(b, uint64(len(c.PEL)))
			for _, id := range c.PEL {
				b = appendStreamID(b, id)
			}
		}
	}
	return b
}

// testStream is a valid stream of two nodes (10-0..10-4+4ms with 10-0
// and 11-0 deleted, 20-0..20-2) and two groups.
func testStream() *store.StreamValue {
	id := func(ms, seq uint64) store.StreamID { return store.StreamID{Ms: ms, Seq: seq} }
	return &store.StreamValue{
		Nodes:  []store.StreamNode{testNode(id(10, 0), 5, 0, 1), testNode(id(20, 0), 3)},
		Length: 6, LastID: id(30, 0), FirstID: id(12, 0), MaxDeletedID: id(11, 0), EntriesAdded: 9,
		Groups: []store.StreamGroup{
			{Name: []byte("ga"), LastID: id(20, 1), EntriesRead: 7,
				PEL: []store.StreamNACK{{ID: id(12, 0), DeliveryTime: 1000, DeliveryCount: 2}, {ID: id(20, 1), DeliveryTime: 2000, DeliveryCount: 1}},
				Consumers: []store.StreamConsumer{
					{Name: []byte("c1"), SeenTime: 500, ActiveTime: 400, PEL: []store.StreamID{id(12, 0)}},
					{Name: []byte("c2"), SeenTime: 600, ActiveTime: 600, PEL: []store.StreamID{id(20, 1)}},
				}},
			{Name: []byte("gb"), LastID: id(0, 0), EntriesRead: -1},
		},
	}
}

// TestStreamTypes: the hand-made types 15 (Redis 5-6) and 21 (Redis 7.2)
// decode with the fields Redis 7 fills in, and 19 round trips.
func TestStreamTypes(t *testing.T) {
	v := testStream()
	d, err := DecodeValue(appendStreamAs(typeStreamLP3, v))
	if err != nil {
		t.Fatalf("type 21: %v", err)
	}
	if got, want := appendStream([]byte{typeStreamLP2}, d.Stream), appendStream([]byte{typeStreamLP2}, v); !bytes.Equal(got, want) {
		t.Errorf("type 21 decoded differs")
	}
	if d.Stream.Groups[0].Consumers[0].ActiveTime != 400 {
		t.Errorf("type 21: active time %d", d.Stream.Groups[0].Consumers[0].ActiveTime)
	}
	d, err = DecodeValue(appendStream([]byte{typeStreamLP2}, v))
	if err != nil {
		t.Fatalf("type 19: %v", err)
	}
	if c := d.Stream.Groups[0].Consumers[0]; c.ActiveTime != c.SeenTime {
		t.Errorf("type 19: active time %d, seen %d", c.ActiveTime, c.SeenTime)
	}

	// Type 15: entries added is the length, no tombstone, the first
	// live ID found; a group's counter estimated as Redis does.
	v15 := testStream()
	v15.Groups = append(v15.Groups[:1:1],
		store.StreamGroup{Name: []byte("gfirst"), LastID: store.StreamID{Ms: 12}},
		store.StreamGroup{Name: []byte("glast"), LastID: store.StreamID{Ms: 30}},
		store.StreamGroup{Name: []byte("gzero")},
		store.StreamGroup{Name: []byte("gfuture"), LastID: store.StreamID{Ms: 31}})
	d, err = DecodeValue(appendStreamAs(typeStreamLP, v15))
	if err != nil {
		t.Fatalf("type 15: %v", err)
	}
	s := d.Stream
	if s.EntriesAdded != 6 || !s.MaxDeletedID.IsZero() || s.FirstID != (store.StreamID{Ms: 12}) {
		t.Errorf("type 15: entries added %d, max deleted %v, first %v", s.EntriesAdded, s.MaxDeletedID, s.FirstID)
	}
	want := map[string]int64{"ga": -1, "gfirst": 1, "glast": 6, "gzero": 0, "gfuture": -1}
	for _, g := range s.Groups {
		if g.EntriesRead != want[string(g.Name)] {
			t.Errorf("type 15: group %s entries read %d, want %d", g.Name, g.EntriesRead, want[string(g.Name)])
		}
	}
	empty := &store.StreamValue{LastID: store.StreamID{Ms: 5}, Groups: []store.StreamGroup{{Name: []byte("g")}}}
	d, err = DecodeValue(appendStreamAs(typeStreamLP, empty))
	if err != nil || d.Stream.FirstID != store.MaxStreamID || d.Stream.Groups[0].EntriesRead != 0 {
		t.Errorf("type 15 empty: %v %+v", err, d)
	}
}

// TestStreamDecodeRefuses: what sanitize-dump-payload yes refuses, and
// what MiniKV refuses beyond it, is an error, never a panic; what Redis's
// radix trees would order is accepted in any order.
func TestStreamDecodeRefuses(t *testing.T) {
	id := func(ms, seq uint64) store.StreamID { return store.StreamID{Ms: ms, Seq: seq} }
	for _, c := range []struct {
		name string
		edit func(v *store.StreamValue)
		ok   bool
	}{
		{"valid", func(v *store.StreamValue) {}, true},
		{"nodes out of order", func(v *store.StreamValue) { v.Nodes[0], v.Nodes[1] = v.Nodes[1], v.Nodes[0] }, true},
		{"groups out of order", func(v *store.StreamValue) { v.Groups[0], v.Groups[1] = v.Groups[1], v.Groups[0] }, true},
		{"PEL out of order", func(v *store.StreamValue) { g := &v.Groups[0]; g.PEL[0], g.PEL[1] = g.PEL[1], g.PEL[0] }, true},
		{"consumers out of order", func(v *store.StreamValue) {
			g := &v.Groups[0]
			g.Consumers[0], g.Consumers[1] = g.Consumers[1], g.Consumers[0]
		}, true},
		{"empty stream", func(v *store.StreamValue) { v.Nodes, v.Length, v.Groups = nil, 0, nil }, true},
		{"repeated node", func(v *store.StreamValue) { v.Nodes[1] = v.Nodes[0] }, false},
		{"overlapping nodes", func(v *store.StreamValue) { v.Nodes[1].Master = id(10, 3) }, false},
		{"length off", func(v *store.StreamValue) { v.Length++ }, false},
		{"last ID before an entry", func(v *store.StreamValue) { v.LastID = id(20, 1) }, false},
		{"all deleted node", func(v *store.StreamValue) { v.Nodes[1] = testNode(id(20, 0), 2, 0, 1); v.Length = 3 }, false},
		{"empty listpack", func(v *store.StreamValue) { v.Nodes[1].LP = lpOf() }, false},
		{"not a listpack", func(v *store.StreamValue) { v.Nodes[1].LP = []byte("garbage!") }, false},
		{"deleted count off", func(v *store.StreamValue) {
			v.Nodes[0] = testNode(id(10, 0), 5, 0)
			v.Nodes[0].LP = lpOf(3, 2, 1, "f", 0, 2, 0, 0, 0, 4)
		}, false},
		{"lp-count off", func(v *store.StreamValue) { v.Nodes[1].LP = lpOf(1, 0, 1, "f", 0, 2, 0, 0, "x", 5); v.Length = 4 }, false},
		{"bad flags", func(v *store.StreamValue) { v.Nodes[1].LP = lpOf(1, 0, 1, "f", 0, 6, 0, 0, "x", 4); v.Length = 4 }, false},
		{"no master terminator", func(v *store.StreamValue) { v.Nodes[1].LP = lpOf(1, 0, 1, "f", 1, 2, 0, 0, "x", 4); v.Length = 4 }, false},
		{"IDs not increasing", func(v *store.StreamValue) {
			v.Nodes[1].LP = lpOf(2, 0, 1, "f", 0, 2, 1, 0, "x", 4, 2, 0, 0, "y", 4)
			v.Length = 5
		}, false},
		{"entry before the master", func(v *store.StreamValue) { v.Nodes[1].LP = lpOf(1, 0, 1, "f", 0, 2, -1, 0, "x", 4); v.Length = 4 }, false},
		{"fields of its own", func(v *store.StreamValue) {
			v.Nodes[1].LP = lpOf(1, 0, 1, "f", 0, 0, 0, 0, 2, "a", 1, "b", 2, 8)
			v.Length = 4
		}, true},
		{"fields of its own, count off", func(v *store.StreamValue) {
			v.Nodes[1].LP = lpOf(1, 0, 1, "f", 0, 0, 0, 0, 3, "a", 1, "b", 2, 8)
			v.Length = 4
		}, false},
		{"trailing element", func(v *store.StreamValue) { v.Nodes[1].LP = lpOf(1, 0, 1, "f", 0, 2, 0, 0, "x", 4, 9); v.Length = 4 }, false},
		{"repeated group", func(v *store.StreamValue) { v.Groups[1].Name = v.Groups[0].Name }, false},
		{"repeated PEL entry", func(v *store.StreamValue) { v.Groups[0].PEL[1].ID = v.Groups[0].PEL[0].ID }, false},
		{"repeated consumer", func(v *store.StreamValue) { g := &v.Groups[0]; g.Consumers[1].Name = g.Consumers[0].Name }, false},
		{"consumer's entry not in the PEL", func(v *store.StreamValue) { v.Groups[0].Consumers[1].PEL[0] = id(20, 2) }, false},
		{"PEL entry of no consumer", func(v *store.StreamValue) { v.Groups[0].Consumers[1].PEL = nil }, false},
		{"PEL entry of two consumers", func(v *store.StreamValue) {
			g := &v.Groups[0]
			g.Consumers[1].PEL = append(g.Consumers[1].PEL, g.PEL[0].ID)
		}, false},
		{"consumer's entry twice", func(v *store.StreamValue) {
			g := &v.Groups[0]
			g.Consumers[0].PEL = append(g.Consumers[0].PEL, g.PEL[0].ID)
		}, false},
	} {
		v := testStream()
		c.edit(v)
		obj := appendStream([]byte{typeStreamLP2}, v)
		d, err := DecodeValue(obj)
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v, want ok %v", c.name, err, c.ok)
			continue
		}
		if c.ok {
			st := store.New(store.Config{MemoryLimit: 8 << 20})
			if err := st.Tx([][]byte{[]byte("k")}, func(tx *store.Tx) error { return d.Build(tx, []byte("k")) }); err != nil {
				t.Errorf("%s: decoded but not built: %v", c.name, err)
			}
			st.Close()
		}
		// Every prefix is cut short: an error.
		for i := range obj {
			if _, err := DecodeValue(obj[:i]); err == nil {
				t.Errorf("%s: accepted cut to %d bytes", c.name, i)
				break
			}
		}
	}
	// Framing errors: a node key not of 16 bytes; counts past the data.
	for _, obj := range [][]byte{
		append(AppendString(AppendLen([]byte{typeStreamLP2}, 1), []byte("short")), AppendString(nil, lpOf(1, 0, 1, "f", 0, 2, 0, 0, "x", 4))...),
		binary.BigEndian.AppendUint32([]byte{typeStreamLP2, 0x80}, 1<<30),
		append(AppendLen([]byte{typeStreamLP2}, 0), "\x00\x00\x00\x00\x00\x00\x00\x00\x80\xff\xff\xff\xff"...),
	} {
		if _, err := DecodeValue(obj); err == nil {
			t.Errorf("accepted %q", obj)
		}
	}
}

// FuzzStreamValue feeds RESTORE's decoder arbitrary stream objects:
// never a panic; what it accepts builds, and dumps back to the bytes
// appendStreamOf makes of it in DUMP's type (streamType), which decode
// again. Seeds: hand-made streams
// of each type and redis-server's DUMPs (testdata/fuzz/FuzzStreamValue:
// 7.0's type 19 as redis-*, 7.2's type 21 as redis72-*, the latter
// written by TestStreamDumpRedis with MINIKV_WRITE_STREAM_CORPUS=1).
func FuzzStreamValue(f *testing.F) {
	v := testStream()
	f.Add(appendStream([]byte{typeStreamLP2}, v))
	f.Add(appendStreamAs(typeStreamLP, v))
	f.Add(appendStreamAs(typeStreamLP3, v))
	f.Add(appendStream([]byte{typeStreamLP2}, &store.StreamValue{Groups: []store.StreamGroup{{Name: []byte("g")}}}))
	st := store.New(store.Config{MemoryLimit: 64 << 20})
	defer st.Close()
	f.Fuzz(func(t *testing.T, obj []byte) {
		v, err := DecodeValue(obj)
		if err != nil {
			return
		}
		if v.Kind != store.KindStream {
			return // FuzzRDBDecode's
		}
		key := []byte("k")
		_ = st.Delete(key)
		if err := st.Tx([][]byte{key}, func(tx *store.Tx) error { return v.Build(tx, key) }); err != nil {
			t.Fatalf("a decoded stream does not build: %v", err)
		}
		p, ok, err := Dump(st, key)
		if err != nil || !ok {
			t.Fatalf("DUMP after RESTORE: %v %v", ok, err)
		}
		if want := Seal(appendStreamOf([]byte{streamType}, v.Stream, streamType)); !bytes.Equal(p, want) {
			t.Fatalf("DUMP %q, decoded %q", p, want)
		}
		obj2, _ := Verify(p)
		if _, err := DecodeValue(obj2); err != nil {
			t.Fatalf("DUMP's own payload does not decode: %v", err)
		}
	})
}

// TestStreamType21Write: appendStreamOf writes type 21 as the test's own
// encoder (appendStreamAs) does, each consumer's active time after its
// seen time, -1 (never active) included, and it decodes back the same;
// DUMP writes the type its RDB version allows (19 for 10: a payload of
// version 10 with type 21 would be refused by Redis 7.0).
func TestStreamType21Write(t *testing.T) {
	v := testStream()
	v.Groups[0].Consumers[1].ActiveTime = -1
	got := appendStreamOf([]byte{typeStreamLP3}, v, typeStreamLP3)
	if want := appendStreamAs(typeStreamLP3, v); !bytes.Equal(got, want) {
		t.Fatalf("type 21:\ngot  %q\nwant %q", got, want)
	}
	d, err := DecodeValue(got)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range d.Stream.Groups[0].Consumers {
		if w := v.Groups[0].Consumers[i]; c.SeenTime != w.SeenTime || c.ActiveTime != w.ActiveTime {
			t.Errorf("consumer %s: seen %d active %d, want %d %d", c.Name, c.SeenTime, c.ActiveTime, w.SeenTime, w.ActiveTime)
		}
	}
	if again := appendStreamOf([]byte{typeStreamLP3}, d.Stream, typeStreamLP3); !bytes.Equal(again, got) {
		t.Errorf("type 21 does not round trip")
	}
	if lp2 := appendStreamOf([]byte{typeStreamLP2}, v, typeStreamLP2); !bytes.Equal(lp2, appendStreamAs(typeStreamLP2, v)) {
		t.Errorf("type 19 differs from the test's encoder")
	}
	want := byte(typeStreamLP2)
	if Version >= 11 {
		want = typeStreamLP3
	}
	if streamType != want {
		t.Errorf("RDB version %d writes stream type %d, want %d", Version, streamType, want)
	}
}

// TestStreamDumpActiveTimes: the streams redis-server 7.2.4 DUMPs are
// type 21, with the consumers' active times; each
// decodes, encodes back as type 21 to exactly its object, and keeps its
// active times through the store (built, exported, written as 21 again).
func TestStreamDumpActiveTimes(t *testing.T) {
	r := startServer(t, "redis-server", t.TempDir(), "s.rdb")
	populateStreams(t, r.c)
	ctx := context.Background()
	// Times that differ from the seen times: a consumer made and never
	// active (-1), one active before it was last seen.
	for _, cmd := range [][]any{{"XGROUP", "CREATECONSUMER", "x:groups", "g1", "never"},
		{"XREADGROUP", "GROUP", "g1", "alice", "STREAMS", "x:groups", ">"}} {
		if err := r.c.Do(ctx, cmd...).Err(); err != nil && err != redis.Nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	st := store.New(store.Config{MemoryLimit: 64 << 20})
	defer st.Close()
	sawNever := false
	for _, k := range streamKeys {
		p, err := r.c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatalf("DUMP %s: %v", k, err)
		}
		if p[0] != typeStreamLP3 {
			t.Fatalf("%s: redis-server's type %d", k, p[0])
		}
		v := decodeDump(t, []byte(p))
		obj := p[:len(p)-dumpVersionFooter]
		if got := string(appendStreamOf([]byte{typeStreamLP3}, v.Stream, typeStreamLP3)); got != obj {
			t.Errorf("%s: encoding the decoded stream differs:\nMiniKV %q\nredis  %q", k, got, obj)
		}
		key := []byte(k)
		if err := st.Tx([][]byte{key}, func(tx *store.Tx) error { return v.Build(tx, key) }); err != nil {
			t.Fatalf("%s: build: %v", k, err)
		}
		var s store.Stream
		if err := st.ViewStream(key, &s, func() error {
			if got := string(appendStreamOf([]byte{typeStreamLP3}, s.Export(), typeStreamLP3)); got != obj {
				t.Errorf("%s: through the store:\nMiniKV %q\nredis  %q", k, got, obj)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, g := range v.Stream.Groups {
			for _, c := range g.Consumers {
				sawNever = sawNever || string(c.Name) == "never" && c.ActiveTime == -1
			}
		}
	}
	if !sawNever {
		t.Errorf("no consumer with active time -1 in redis-server's payloads")
	}
}
