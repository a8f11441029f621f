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
		append([]byte{typeZSetListpack}, AppendString(nil, store.ListpackAppend(store.ListpackAppend(store.ListpackAppend(store.ListpackAppend(store.ListpackNew(), []byte("a")), []byte("1")), []byte("b")), []byte("2.5")))...),
		append([]byte{typeListZiplist}, AppendString(nil, testZiplist("a", "7", "-300", "70000"))...),
		append([]byte{typeHashZiplist}, AppendString(nil, testZiplist("f", "1", "g", "v"))...),
		append([]byte{typeZSetZiplist}, AppendString(nil, testZiplist("m", "1.5", "n", "2"))...),
		append([]byte{typeHashZipmap}, AppendString(nil, testZipmap("f", "v", "g", ""))...),
		append(AppendLen([]byte{typeListQuick}, 1), AppendString(nil, testZiplist("q"))...),
		[]byte("\x03\x02\x01a\x031.5\x01b\xfe"),
		[]byte("\x01\x02\x01a\x01b"),
		// Redis 7.2's set listpacks: strings and integers, integers
		// only, and a member twice (as an integer and as a string).
		append([]byte{typeSetListpack}, AppendString(nil, lpOf("a", 7, "b", -300000))...),
		append([]byte{typeSetListpack}, AppendString(nil, lpOf(1, 2, 1<<40))...),
		append([]byte{typeSetListpack}, AppendString(nil, []byte("\x0c\x00\x00\x00\x02\x00\x05\x01\x815\x02\xff"))...),
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

// FuzzLoad feeds the file reader arbitrary files (past the checksum,
// which random input rarely passes): it must never panic, and each key it
// accepts must build in a store.
func FuzzLoad(f *testing.F) {
	src := store.New(store.Config{MemoryLimit: 8 << 20})
	for i, v := range []string{"a", "12", strings.Repeat("long ", 20)} {
		k := []byte{byte('a' + i)}
		_, _ = src.Store(store.ModeSet, k, []byte(v), 0, int64(i)*1e12, 0)
	}
	var buf bytes.Buffer
	if _, err := Save(&buf, src, SaveOptions{}); err != nil {
		f.Fatal(err)
	}
	src.Close()
	f.Add(buf.Bytes())
	f.Add(oldFile())
	f.Add(fileOf(10, []byte{typeHashListpack}, "h", "\x16\x16\x00\x00\x00\x04\x00\x81a\x02\x01\x01\x81b\x02\x85hello\x06\xff"))
	f.Add(fileOf(9, []byte{typeListZiplist}, "l", string(AppendString(nil, testZiplist("a", "7", "-300")))))
	f.Add(fileOf(3, []byte{typeHashZipmap}, "z", string(AppendString(nil, testZipmap("f", "v")))))
	st := store.New(store.Config{MemoryLimit: 64 << 20})
	defer st.Close()
	f.Add(fileOf(10, []byte{typeZSetListpack}, "z", string(AppendString(nil, store.ListpackAppend(store.ListpackAppend(store.ListpackNew(), []byte("m")), []byte("1.5"))))))
	f.Add(fileOf(11, []byte{typeSetListpack}, "s", string(AppendString(nil, lpOf("m", 12, "n")))))
	f.Add(fileOf(11, []byte{typeSetListpack}, "s", string(AppendString(nil, lpOf(3, 1, 2)))))
	lim := st.Limits()
	f.Fuzz(func(t *testing.T, data []byte) {
		// A listpack the store takes as it is (store.CheckListpack)
		// is one the element by element decoding accepts too.
		_, errChecked := parse(data, LoadOptions{limits: &lim}, func(*fileKey) error { return nil })
		_, errPlain := parse(data, LoadOptions{}, func(*fileKey) error { return nil })
		if (errChecked == nil) != (errPlain == nil) {
			t.Fatalf("decoding for the store: %v; element by element: %v", errChecked, errPlain)
		}
		_, _ = LoadBytes(data, st, LoadOptions{})
		_, _ = parse(data, LoadOptions{}, func(k *fileKey) error {
			return st.Tx([][]byte{k.key}, func(tx *store.Tx) error {
				tx.Delete(k.key)
				if err := k.v.Build(tx, k.key); err != nil {
					return nil // too large for the store: refused, not a bug
				}
				tx.SetRestored(k.key, k.deadline, k.idle, k.freq)
				return nil
			})
		})
	})
}
