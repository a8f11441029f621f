package rdb

import (
	"bytes"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// TestSetListpackRestore: a Redis 7.2 set listpack (RDB_TYPE_SET_LISTPACK)
// that fits the store's limits is kept as it came, whether decoded for a
// store (checked once, as a file loads) or element by element (RESTORE),
// so DUMP gives back its bytes and OBJECT ENCODING says listpack, as
// Redis 7.2 keeps it; one of integers only stays a listpack too. One past
// set-max-listpack-entries or with a member past set-max-listpack-value
// becomes a hashtable, never an intset; a set of more members than
// set-max-intset-entries is a hashtable whatever its members. A member
// held as a string that reads as an integer is still found.
func TestSetListpackRestore(t *testing.T) {
	st := store.New(store.Config{MemoryLimit: 64 << 20})
	defer st.Close()
	// "5" as a string entry, then 6 as an integer: a listpack Redis
	// never writes but loads.
	strFive := []byte("\x0c\x00\x00\x00\x02\x00\x815\x02\x06\x01\xff")
	many := store.ListpackNew()
	for i := range 129 {
		many = store.ListpackAppend(many, []byte("m"+strings.Repeat("x", i%3)+string(rune('0'+i%10))+string(rune('a'+i/10))))
	}
	manyInts := store.ListpackNew()
	for i := range 129 {
		manyInts = store.ListpackAppend(manyInts, []byte(string(rune('1'+i%9))+strings.Repeat("0", i/9)))
	}
	for _, c := range []struct {
		name string
		lp   []byte
		enc  string
		n    int
	}{
		{"strings and integers", lpOf("a", 7, "b", -300000, 1<<40), "listpack", 5},
		{"integers only", lpOf(3, 1, 2), "listpack", 3},
		{"an integer as a string", strFive, "listpack", 2},
		{"past the entries", many, "hashtable", 129},
		{"integers past the entries", manyInts, "hashtable", 129},
		{"a member past the value", lpOf("a", strings.Repeat("v", 65)), "hashtable", 2},
	} {
		obj := append([]byte{typeSetListpack}, AppendString(nil, c.lp)...)
		for _, forStore := range []bool{false, true} {
			key := []byte("s")
			if enc := buildDecoded(t, st, key, obj, forStore); enc != c.enc {
				t.Errorf("%s (for the store %v): encoding %s, want %s", c.name, forStore, enc, c.enc)
			}
			p, _, err := Dump(st, key)
			if err != nil {
				t.Fatal(err)
			}
			if c.enc == "listpack" && !bytes.Equal(p, Seal(obj)) {
				t.Errorf("%s: DUMP %q, want the listpack as it came %q", c.name, p, Seal(obj))
			}
			var s store.Set
			_ = st.ViewSet(key, &s, func() error {
				if s.Len() != c.n {
					t.Errorf("%s: %d members, want %d", c.name, s.Len(), c.n)
				}
				s.Each(func(m []byte) bool {
					if !s.Has(m) {
						t.Errorf("%s: member %q not found", c.name, m)
					}
					return true
				})
				return nil
			})
		}
	}
	// An integer held as a string is found, and not added again.
	key := []byte("five")
	v, err := DecodeValue(append([]byte{typeSetListpack}, AppendString(nil, strFive)...))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Tx([][]byte{key}, func(tx *store.Tx) error { return v.Build(tx, key) }); err != nil {
		t.Fatal(err)
	}
	var s store.Set
	_ = st.UpdateSet(key, &s, func() error {
		if !s.Has([]byte("5")) || s.Add([]byte("5")) || !s.Remove([]byte("5")) || s.Len() != 1 {
			t.Errorf("the string-held 5: has %v, len %d", s.Has([]byte("5")), s.Len())
		}
		return nil
	})
	// An intset wider than its members need (Redis's, after SREM of its
	// widest member) is kept as it came, and DUMPs so; one of more
	// members than set-max-intset-entries is a hashtable.
	wide := []byte("\x04\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00")
	big := []byte{2, 0, 0, 0, 0x01, 0x02, 0, 0} // width 2, 513 members: 0 to 512
	for i := range 513 {
		big = append(big, byte(i), byte(i>>8))
	}
	for _, c := range []struct {
		is  []byte
		enc string
	}{{wide, "intset"}, {big, "hashtable"}} {
		obj := append([]byte{typeSetIntset}, AppendString(nil, c.is)...)
		for _, forStore := range []bool{false, true} {
			key := []byte("is")
			if enc := buildDecoded(t, st, key, obj, forStore); enc != c.enc {
				t.Errorf("intset of %d bytes (for the store %v): %s, want %s", len(c.is), forStore, enc, c.enc)
			}
			if p, _, _ := Dump(st, key); c.enc == "intset" && !bytes.Equal(p, Seal(obj)) {
				t.Errorf("intset: DUMP %q, want %q", p, Seal(obj))
			}
		}
	}
	// A plain set (type 2) of more members than set-max-intset-entries
	// is a hashtable, as Redis 7.2 loads it, integers or not.
	ints := AppendLen([]byte{typeSet}, 513)
	for i := range 513 {
		ints = AppendString(ints, []byte(strings.Repeat("1", 1+i%5)+string(rune('0'+i%10))+string(rune('0'+i/10%10))+string(rune('1'+i/100))))
	}
	v, err = DecodeValue(ints)
	if err != nil {
		t.Fatal(err)
	}
	key = []byte("ints")
	if err := st.Tx([][]byte{key}, func(tx *store.Tx) error { return v.Build(tx, key) }); err != nil {
		t.Fatal(err)
	}
	if oi, _ := st.Object(key); oi.Encoding != "hashtable" {
		t.Errorf("513 integers in a plain set: %s", oi.Encoding)
	}
}

// buildDecoded decodes obj (one value, its type byte first) as RESTORE
// does, or with forStore as a file load does (the listpack checks on
// the decoding side), stores it as key, and returns the key's encoding.
func buildDecoded(t *testing.T, st *store.Store, key, obj []byte, forStore bool) string {
	t.Helper()
	r := &reader{b: obj}
	if forStore {
		lim := st.Limits()
		r.limits = &lim
	}
	v, err := r.value(r.byte())
	if err != nil {
		t.Fatalf("%q: %v", key, err)
	}
	_ = st.Delete(key)
	if err := st.Tx([][]byte{key}, func(tx *store.Tx) error { return v.Build(tx, key) }); err != nil {
		t.Fatalf("%q: build: %v", key, err)
	}
	oi, _ := st.Object(key)
	return oi.Encoding
}
