package rdb

import (
	"bytes"
	"io"
	"strconv"
	"testing"

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
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/key")
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
