package rdb

import (
	"bytes"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// FuzzRDBDecode feeds RESTORE's decoder arbitrary objects (the footer
// already cut off): it must never panic, and what it accepts must be
// restorable and dump back to a payload it accepts again.
func FuzzRDBDecode(f *testing.F) {
	for _, p := range [][]byte{
		[]byte("\x00\x05hello"), []byte("\x00\xc190"), []byte("\x00\xc3\t@d\x01xx\xe0W\x00\x01xx"),
		[]byte("\x10\x16\x16\x00\x00\x00\x04\x00\x81a\x02\x01\x01\x81b\x02\x85hello\x06\xff"),
		[]byte("\x04\x02\x01a\x01b\x01c\x01d"),
		[]byte("\x02\x02\x01a\x01b"), []byte("\x0b\x0c\x02\x00\x00\x00\x02\x00\x00\x00\x01\x00\x02\x00"),
		[]byte("\x05\x01\x01a\x00\x00\x00\x00\x00\x00\xf0\x3f"),
		[]byte("\x12\x01\x02\x0b\x0b\x00\x00\x00\x02\x00\x81a\x02\x01\x01\xff"),
		[]byte("\x12\x01\x01\x03abc"),
	} {
		f.Add(p)
	}
	st := store.New(store.Config{MemoryLimit: 64 << 20})
	defer st.Close()
	f.Fuzz(func(t *testing.T, obj []byte) {
		v, err := DecodeValue(obj)
		if err != nil {
			return
		}
		key := []byte("k")
		_ = st.Delete(key)
		var rerr error
		_ = st.Tx([][]byte{key}, func(tx *store.Tx) error {
			rerr = v.Build(tx, key)
			return nil
		})
		if rerr != nil {
			return // a kind RESTORE does not build yet, or too large
		}
		p, ok, err := Dump(st, key)
		if err != nil || !ok {
			t.Fatalf("DUMP after RESTORE: %v %v", ok, err)
		}
		obj2, ok := Verify(p)
		if !ok {
			t.Fatalf("DUMP's own payload fails its footer check")
		}
		if _, err := DecodeValue(obj2); err != nil {
			t.Fatalf("DUMP's own payload does not decode: %v", err)
		}
	})
}

// FuzzLZF checks the compressor against the decompressor.
func FuzzLZF(f *testing.F) {
	f.Add([]byte(strings.Repeat("abc", 40)))
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))
	f.Fuzz(func(t *testing.T, s []byte) {
		c := lzfCompress(s)
		if c == nil {
			return
		}
		d, ok := lzfDecompress(c, len(s))
		if !ok || !bytes.Equal(d, s) {
			t.Fatalf("round trip of %q: %q %v", s, d, ok)
		}
		_, _ = lzfDecompress(s, len(s)*3) // arbitrary input must not panic
	})
}
