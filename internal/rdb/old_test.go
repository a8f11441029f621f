package rdb

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// testZiplist builds a ziplist as Redis 6's ziplist.c does: integers in
// the smallest encoding that holds them, strings with 1-, 2- or 5-byte
// headers.
func testZiplist(entries ...string) []byte {
	var body []byte
	prev, last := 0, 10
	for _, e := range entries {
		var ent []byte
		if prev < 254 {
			ent = append(ent, byte(prev))
		} else {
			ent = binary.LittleEndian.AppendUint32(append(ent, 254), uint32(prev))
		}
		if v, ok := canonicalInt([]byte(e)); ok {
			switch {
			case v >= 0 && v <= 12:
				ent = append(ent, 0xF1+byte(v))
			case v >= math.MinInt8 && v <= math.MaxInt8:
				ent = append(ent, 0xFE, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				ent = binary.LittleEndian.AppendUint16(append(ent, 0xC0), uint16(v))
			case v >= -1<<23 && v < 1<<23:
				ent = append(ent, 0xF0, byte(v), byte(v>>8), byte(v>>16))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				ent = binary.LittleEndian.AppendUint32(append(ent, 0xD0), uint32(v))
			default:
				ent = binary.LittleEndian.AppendUint64(append(ent, 0xE0), uint64(v))
			}
		} else {
			switch n := len(e); {
			case n < 64:
				ent = append(ent, byte(n))
			case n < 16384:
				ent = append(ent, 0x40|byte(n>>8), byte(n))
			default:
				ent = binary.BigEndian.AppendUint32(append(ent, 0x80), uint32(n))
			}
			ent = append(ent, e...)
		}
		last = 10 + len(body)
		body = append(body, ent...)
		prev = len(ent)
	}
	zl := binary.LittleEndian.AppendUint32(nil, uint32(10+len(body)+1))
	zl = binary.LittleEndian.AppendUint32(zl, uint32(last))
	zl = binary.LittleEndian.AppendUint16(zl, uint16(len(entries)))
	return append(append(zl, body...), 0xFF)
}

// testZipmap builds a zipmap (Redis 2.4's small hashes).
func testZipmap(pairs ...string) []byte {
	zm := []byte{byte(len(pairs) / 2)}
	for i := 0; i < len(pairs); i += 2 {
		zm = append(zm, byte(len(pairs[i])))
		zm = append(zm, pairs[i]...)
		zm = append(zm, byte(len(pairs[i+1])), 0)
		zm = append(zm, pairs[i+1]...)
	}
	return append(zm, 0xFF)
}

// oldFile is an RDB file of version 9 (Redis 5 and 6) holding every
// encoding Redis no longer writes, expiries in seconds and milliseconds,
// a key already expired and a key of database 2.
func oldFile() []byte {
	b := []byte("REDIS0009")
	b = AppendString(append(b, opAux), []byte("redis-ver"))
	b = AppendString(b, []byte("5.0.7"))
	b = append(b, opSelectDB, 0, opResizeDB, 10, 2)
	key := func(typ byte, k string) {
		b = AppendString(append(b, typ), []byte(k))
	}
	key(typeList, "linked")
	b = AppendLen(b, 3)
	for _, e := range []string{"a", "12", "ccc"} {
		b = AppendString(b, []byte(e))
	}
	key(typeZSet, "zset-v1")
	b = AppendLen(b, 3)
	b = append(AppendString(b, []byte("one")), 3, '1', '.', '5')
	b = append(AppendString(b, []byte("inf")), 254)
	b = append(AppendString(b, []byte("ninf")), 255)
	key(typeHashZipmap, "zipmap")
	b = AppendString(b, testZipmap("f1", "v1", "f2", "22", "empty", ""))
	key(typeListZiplist, "ziplist-list")
	b = AppendString(b, testZiplist("x", "0", "12", "13", "-100", "30000", "-8000000", "2000000000", "9000000000000", string(bytes.Repeat([]byte("y"), 300))))
	b = binary.LittleEndian.AppendUint32(append(b, opExpireTime), uint32(time.Now().Unix()+1000))
	key(typeHashZiplist, "ziplist-hash")
	b = AppendString(b, testZiplist("a", "1", "b", "hello"))
	b = binary.LittleEndian.AppendUint64(append(b, opExpireTimeMS), uint64(time.Now().UnixMilli()+2_000_000))
	key(typeZSetZiplist, "ziplist-zset")
	b = AppendString(b, testZiplist("m1", "1", "m2", "2.25", "m3", "-3"))
	key(typeListQuick, "quicklist-v1")
	b = AppendLen(b, 2)
	b = AppendString(b, testZiplist("q1", "q2"))
	b = AppendString(b, testZiplist("q3", "4"))
	b = binary.LittleEndian.AppendUint64(append(b, opExpireTimeMS), 1000) // 1970: expired
	key(typeString, "expired")
	b = AppendString(b, []byte("gone"))
	b = AppendLen(append(b, opIdle), 100)
	key(typeString, "idle")
	b = AppendString(b, []byte("lru"))
	b = append(b, opSelectDB, 2)
	key(typeString, "db2")
	b = AppendString(b, []byte("other"))
	b = append(b, opEOF)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b))
}

// TestLoadOldEncodings: a version 9 file with every old encoding (built
// here, and checked by redis-check-rdb and by loading it into
// redis-server, so the test's encoders are Redis's) loads into MiniKV
// with the same keys, values and deadlines as into redis-server 7.2.
func TestLoadOldEncodings(t *testing.T) {
	dir := t.TempDir()
	data := oldFile()
	path := filepath.Join(dir, "old.rdb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	st := store.New(store.Config{MemoryLimit: 8 << 20})
	defer st.Close()
	stats, err := LoadFile(path, st, LoadOptions{})
	if err != nil {
		t.Fatalf("loading: %v", err)
	}
	if stats.Version != 9 || stats.Keys != 8 || stats.Expired != 1 || stats.OtherDBs[2] != 1 {
		t.Errorf("stats %+v, want version 9, 8 keys, 1 expired, 1 in db 2", stats)
	}
	if out, err := exec.Command("redis-check-rdb", path).CombinedOutput(); err != nil {
		if _, lerr := exec.LookPath("redis-check-rdb"); lerr != nil {
			t.Skip("redis-check-rdb not installed")
		}
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	rs := startRedis(t, dir, "old.rdb")
	compareWithRedis(t, rs.c, st)
}

// TestZiplistChecks: malformed ziplists and zipmaps are refused.
func TestZiplistChecks(t *testing.T) {
	good := testZiplist("a", "1", "bb")
	if _, ok := ziplistEntries(good); !ok {
		t.Fatal("a good ziplist refused")
	}
	for i := range good { // a changed byte: refused or read, never a panic
		for _, delta := range []byte{1, 0x80} {
			bad := bytes.Clone(good)
			bad[i] += delta
			_, _ = ziplistEntries(bad)
		}
	}
	for _, c := range [][]byte{nil, good[:10], append(bytes.Clone(good[:len(good)-1]), 0)} {
		if _, ok := ziplistEntries(c); ok {
			t.Errorf("ziplist %q accepted", c)
		}
	}
	lying := bytes.Clone(good)
	binary.LittleEndian.PutUint16(lying[8:], 5)
	if _, ok := ziplistEntries(lying); ok {
		t.Error("a ziplist whose count lies accepted")
	}
	if _, ok := zipmapEntries(testZipmap("a", "b")); !ok {
		t.Error("a good zipmap refused")
	}
	for _, c := range []string{"", "\x01", "\x01\x05ab\xff", "\x02\x01a\x01\x00b\xff"} {
		if _, ok := zipmapEntries([]byte(c)); ok {
			t.Errorf("zipmap %q accepted", c)
		}
	}
}
