package rdb

import (
	"bytes"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// BenchmarkSave saves a store of 200k 100-byte strings (and 1000 small
// hashes) to io.Discard; hold-ns/key is how long clients were held per
// key (SaveStats.Hold), the pause BGSAVE costs them.
func BenchmarkSave(b *testing.B) {
	const n = 200_000
	st := benchStore(n)
	defer st.Close()
	h, err := DecodeValue([]byte("\x04\x02\x01a\x01b\x01c\x01d"))
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		k := []byte("hash:" + strconv.Itoa(i))
		_ = st.Tx([][]byte{k}, func(tx *store.Tx) error { return h.Build(tx, k) })
	}
	b.ReportAllocs()
	var hold int64
	for b.Loop() {
		s, err := Save(io.Discard, st, SaveOptions{})
		if err != nil {
			b.Fatal(err)
		}
		hold += s.Hold.Nanoseconds()
	}
	b.ReportMetric(float64(hold)/float64(b.N)/float64(n+1000), "hold-ns/key")
}

// BenchmarkLoad loads a file of 200k 100-byte strings into an empty
// store.
func BenchmarkLoad(b *testing.B) {
	const n = 200_000
	src := benchStore(n)
	benchLoad(b, src, n)
}

// benchLoad saves src, of n keys, closes it, and loads the file into
// an empty store on each round, reporting the time per key.
func benchLoad(b *testing.B, src *store.Store, n int64) {
	var buf bytes.Buffer
	if _, err := Save(&buf, src, SaveOptions{}); err != nil {
		b.Fatal(err)
	}
	src.Close()
	b.ReportAllocs()
	for b.Loop() {
		st := store.New(store.Config{MemoryLimit: 1 << 30})
		if s, err := LoadBytes(buf.Bytes(), st, LoadOptions{}); err != nil || s.Keys != n {
			b.Fatal(s, err)
		}
		st.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
}

// benchStore is a store of n 100-byte strings ("key:<i>"), compressible
// as text is.
func benchStore(n int) *store.Store {
	st := store.New(store.Config{MemoryLimit: 1 << 30})
	val := make([]byte, 100)
	for i := range val {
		val[i] = byte('a' + i*7%26)
	}
	for i := range n {
		_, _ = st.Store(store.ModeSet, []byte("key:"+strconv.Itoa(i)), val, 0, 0, 0)
	}
	return st
}

// BenchmarkLoadMixed loads a file of 200k keys of the mix the full-sync
// benchmark uses (scripts/bench-repl.sh MODE=sync): 3/5 short strings,
// and hashes, lists, sets and sorted sets of 5, one key in 7 with a TTL.
func BenchmarkLoadMixed(b *testing.B) {
	const n = 200_000
	src := store.New(store.Config{MemoryLimit: 1 << 30})
	deadline := time.Now().Add(time.Hour).UnixMilli()
	five := func(f func(j int) []string) [][]byte {
		var out [][]byte
		for j := range 5 {
			for _, s := range f(j) {
				out = append(out, []byte(s))
			}
		}
		return out
	}
	for i := range n {
		k := []byte("k:" + strconv.Itoa(i))
		var v *Value
		switch m := i % 10; {
		case m < 6:
			v = &Value{Kind: store.KindString, Str: []byte("value-" + strconv.Itoa(i) + "-xxxxxxxxxxxxxxxxxxxx")}
		case m == 6:
			v = &Value{Kind: store.KindHash, elems: five(func(j int) []string { return []string{"f" + strconv.Itoa(j), "v" + strconv.Itoa(j)} })}
		case m == 7:
			v = &Value{Kind: store.KindList, elems: five(func(j int) []string { return []string{"e" + strconv.Itoa(j)} })}
		case m == 8:
			v = &Value{Kind: store.KindSet, elems: five(func(j int) []string { return []string{"m" + strconv.Itoa(j)} })}
		default:
			v = &Value{Kind: store.KindZSet, elems: five(func(j int) []string { return []string{"z" + strconv.Itoa(j)} }), scores: []float64{0, 1, 2, 3, 4}}
		}
		var dl int64
		if i%7 == 0 {
			dl = deadline
		}
		_ = src.Tx([][]byte{k}, func(tx *store.Tx) error {
			if v.Build(tx, k) == nil {
				tx.SetRestored(k, dl, -1, -1)
			}
			return nil
		})
	}
	benchLoad(b, src, n)
}
