package rdb

import (
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// BenchmarkStreamDecode: DecodeValue of a stream of 100 nodes of 100
// entries (checked whole), then building it in a store.
func BenchmarkStreamDecode(b *testing.B) {
	v := &store.StreamValue{}
	for i := range 100 {
		v.Nodes = append(v.Nodes, testNode(store.StreamID{Ms: uint64(i) * 1000}, 100))
	}
	v.Length, v.LastID, v.EntriesAdded = 10000, store.StreamID{Ms: 1e6}, 10000
	obj := appendStream([]byte{typeStreamLP2}, v)
	st := store.New(store.Config{MemoryLimit: 256 << 20})
	defer st.Close()
	key := []byte("k")
	b.SetBytes(int64(len(obj)))
	b.ReportAllocs()
	for b.Loop() {
		d, err := DecodeValue(obj)
		if err != nil {
			b.Fatal(err)
		}
		_ = st.Delete(key)
		if err := st.Tx([][]byte{key}, func(tx *store.Tx) error { return d.Build(tx, key) }); err != nil {
			b.Fatal(err)
		}
	}
}
