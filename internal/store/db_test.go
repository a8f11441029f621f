package store

import (
	"bytes"
	"testing"
)

// TestDBKey: the encoding round-trips, is unambiguous (no two (db, key)
// pairs share a store key), and leaves database 0's keys as they are
// unless they begin with DBMark.
func TestDBKey(t *testing.T) {
	keys := [][]byte{nil, []byte("k"), {DBMark}, {DBMark, 0}, {DBMark, 1, 'k'}, {0}, []byte("\xff\xff")}
	seen := map[string][2]any{}
	for _, db := range []int{0, 1, 15, 254} {
		for _, k := range keys {
			sk := DBKey(nil, db, k)
			if got, key := SplitDBKey(sk); got != db || !bytes.Equal(key, k) {
				t.Errorf("SplitDBKey(DBKey(%d, %q)) = %d, %q", db, k, got, key)
			}
			if !InDB(sk, db) {
				t.Errorf("InDB(DBKey(%d, %q)) = false", db, k)
			}
			if DBKeyNeeded(db, k) != !bytes.Equal(sk, k) {
				t.Errorf("DBKeyNeeded(%d, %q) = %v, DBKey = %q", db, k, DBKeyNeeded(db, k), sk)
			}
			if prev, ok := seen[string(sk)]; ok {
				t.Errorf("store key %q for (%d, %q) and %v", sk, db, k, prev)
			}
			seen[string(sk)] = [2]any{db, string(k)}
		}
	}
	if got := DBKey(nil, 0, []byte("plain")); string(got) != "plain" {
		t.Errorf("database 0's plain key stored as %q", got)
	}
}

// TestCountDBsAndDBKeys counts and lists each database's keys.
func TestCountDBsAndDBKeys(t *testing.T) {
	s := New(Config{MemoryLimit: 1 << 20})
	defer s.Close()
	put := func(db int, k string, deadline int64) {
		if _, err := s.Store(ModeSet, DBKey(nil, db, []byte(k)), []byte("v"), 0, deadline, 0); err != nil {
			t.Fatal(err)
		}
	}
	put(0, "a", 0)
	put(0, "\xffb", 0)
	put(3, "a", 0)
	put(3, "b", s.Now()+100000)
	c, err := s.CountDBs()
	if err != nil {
		t.Fatal(err)
	}
	if c.Items[0] != 2 || c.Items[3] != 2 || c.Expires[3] != 1 || c.Expires[0] != 0 {
		t.Errorf("CountDBs = items %v, expires %v", c.Items[:4], c.Expires[:4])
	}
	var got []string
	if err := s.DBKeys(3, func(k []byte) { got = append(got, string(k)) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] == got[1] || (got[0] != "a" && got[0] != "b") {
		t.Errorf("DBKeys(3) = %q", got)
	}
}
