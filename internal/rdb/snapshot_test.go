package rdb

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// TestSnapshotWritesWhatDumpWrites: the point-in-time copy encodes a
// small collection from a copy of its bytes after the hold, a large one
// during it, and a string from its record; every key's bytes in the file
// (its expiry, type, key and object) must be those the encoder DUMP uses
// writes from the store itself, in every encoding each kind has, in
// database 0 and another.
func TestSnapshotWritesWhatDumpWrites(t *testing.T) {
	st := store.New(store.Config{MemoryLimit: 256 << 20})
	defer st.Close()
	strs := func(prefix string, n int) [][]byte {
		var out [][]byte
		for i := range n {
			out = append(out, []byte(prefix+strconv.Itoa(i)))
		}
		return out
	}
	deadline := time.Now().Add(time.Hour).UnixMilli()
	var keys [][]byte
	put := func(db int, name string, v *Value, ttl bool) {
		t.Helper()
		k := store.DBKey(nil, db, []byte(name))
		var dl int64
		if ttl {
			dl = deadline
		}
		var err error
		_ = st.Tx([][]byte{k}, func(tx *store.Tx) error {
			if err = v.Build(tx, k); err == nil {
				tx.SetRestored(k, dl, -1, -1)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keys = append(keys, k)
	}
	pairs := func(n int) [][]byte {
		var out [][]byte
		for i := range n {
			out = append(out, []byte("field"+strconv.Itoa(i)), []byte("value-"+strconv.Itoa(i*i)))
		}
		return out
	}
	scores := func(n int) []float64 {
		var out []float64
		for i := range n {
			out = append(out, float64(i)/3)
		}
		return out
	}
	for db := range 2 {
		for _, ttl := range []bool{false, true} {
			sfx := strconv.Itoa(db) + strconv.FormatBool(ttl)
			put(db, "str"+sfx, &Value{Kind: store.KindString, Str: []byte("a string long enough to be compressed, compressed")}, ttl)
			put(db, "int"+sfx, &Value{Kind: store.KindString, Str: []byte("12345")}, ttl)
			put(db, "hash"+sfx, &Value{Kind: store.KindHash, elems: pairs(5)}, ttl)
			put(db, "bighash"+sfx, &Value{Kind: store.KindHash, elems: pairs(300)}, ttl)
			put(db, "list"+sfx, &Value{Kind: store.KindList, elems: strs("element-", 7)}, ttl)
			put(db, "biglist"+sfx, &Value{Kind: store.KindList, elems: strs("element-", 3000)}, ttl)
			put(db, "intset"+sfx, &Value{Kind: store.KindSet, elems: strs("", 9)}, ttl)
			put(db, "set"+sfx, &Value{Kind: store.KindSet, elems: append(strs("m", 5), []byte("42"))}, ttl)
			put(db, "bigset"+sfx, &Value{Kind: store.KindSet, elems: strs("member:", 500)}, ttl)
			put(db, "zset"+sfx, &Value{Kind: store.KindZSet, elems: strs("z", 6), scores: scores(6)}, ttl)
			put(db, "bigzset"+sfx, &Value{Kind: store.KindZSet, elems: strs("z", 400), scores: scores(400)}, ttl)
		}
	}
	var file bytes.Buffer
	stats, err := Save(&file, st, SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Keys != int64(len(keys)) || stats.Expires != int64(len(keys)/2) {
		t.Fatalf("saved %+v, want %d keys, %d with a TTL", stats, len(keys), len(keys)/2)
	}
	for _, k := range keys {
		obj, it, ok, err := appendObject(nil, st, k, true)
		if err != nil || !ok {
			t.Fatalf("%q: %v %v", k, ok, err)
		}
		want := append(appendExpire(nil, it.Deadline), obj...)
		if !bytes.Contains(file.Bytes(), want) {
			t.Errorf("the file lacks %q as DUMP's encoder writes it (%d bytes)", k, len(want))
		}
	}
	loaded := store.New(store.Config{MemoryLimit: 256 << 20})
	defer loaded.Close()
	if _, err := LoadBytes(file.Bytes(), loaded, LoadOptions{Databases: 2}); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		a, _, _ := Dump(st, k)
		b, ok, _ := Dump(loaded, k)
		if !ok {
			t.Errorf("%q not reloaded", k)
			continue
		}
		if ca, cb := canonical(decodeDump(t, a)), canonical(decodeDump(t, b)); ca != cb {
			t.Errorf("%q reloaded as %.80s, was %.80s", k, cb, ca)
		}
		was, _ := st.Peek(k)
		if now, _ := loaded.Peek(k); now.Deadline != was.Deadline {
			t.Errorf("%q reloaded with deadline %d, was %d", k, now.Deadline, was.Deadline)
		}
	}
}

// TestCRCWriter: written in pieces of any size, the sum is the crc64 of
// everything but the last 8 bytes, and LoadBytes checks a file with it.
func TestCRCWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 3, 8, 9, 15, 16, 17, 100, 5000} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		var w CRCWriter
		for rest := data; len(rest) > 0; {
			k := min(len(rest), rng.IntN(20))
			_, _ = w.Write(rest[:k])
			rest = rest[k:]
		}
		want := CRC64(0, data[:max(n-8, 0)])
		if w.crc != want || w.n != int64(n) {
			t.Errorf("%d bytes: crc %x n %d, want %x", n, w.crc, w.n, want)
		}
	}
	st := store.New(store.Config{MemoryLimit: 16 << 20})
	defer st.Close()
	_, _ = st.Store(store.ModeSet, []byte("k"), []byte("v"), 0, 0, 0)
	var file bytes.Buffer
	if _, err := Save(&file, st, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	var w CRCWriter
	_, _ = w.Write(file.Bytes())
	if _, err := LoadBytes(file.Bytes(), st, LoadOptions{Sum: &w}); err != nil {
		t.Fatalf("a good file with its sum: %v", err)
	}
	w.crc ^= 1
	if _, err := LoadBytes(file.Bytes(), st, LoadOptions{Sum: &w}); err == nil {
		t.Fatal("a wrong sum was not refused")
	}
}
