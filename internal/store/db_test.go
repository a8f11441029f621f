package store

import (
	"bytes"
	"strconv"
	"testing"
	"time"
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

// TestCountDBFromCounts: DBSIZE's count (CountDB) and INFO keyspace's
// (CountDBs, items and those with a deadline) agree with a walk over the
// live items, whichever databases
// hold keys, through inserts, overwrites, deletes, expiry not yet
// reclaimed (the sweeper is off: those shards are walked), FLUSHALL, and
// a collection made and emptied.
func TestCountDBFromCounts(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 64 << 20, SweepInterval: -1})
	walk := func(db int) (n, expires int64) {
		for i := range s.shards {
			s.ScanItems(i, func(key []byte, it Item) bool {
				if InDB(key, db) {
					n++
					if it.Deadline != 0 {
						expires++
					}
				}
				return true
			})
		}
		return n, expires
	}
	check := func(what string) {
		t.Helper()
		c, err := s.CountDBs()
		if err != nil {
			t.Fatal(err)
		}
		for _, db := range []int{0, 1, 3, 15} {
			want, expires := walk(db)
			got, err := s.CountDB(db)
			if err != nil || got != want {
				t.Fatalf("%s: CountDB(%d) = %d, %v; a walk counts %d", what, db, got, err, want)
			}
			if c.Items[db] != want || c.Expires[db] != expires {
				t.Fatalf("%s: CountDBs() database %d: %d items, %d with a deadline; a walk counts %d, %d", what, db, c.Items[db], c.Expires[db], want, expires)
			}
		}
	}
	put := func(db, i int, deadline int64) {
		if _, err := s.Store(ModeSet, DBKey(nil, db, []byte("k"+strconv.Itoa(i))), []byte("v"), 0, deadline, 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3000 {
		put(0, i, 0)
	}
	check("database 0 only")
	for i := range 500 {
		put(3, i, 0)
		put(1, i, 0)
		put(0, i, 0) // an overwrite
	}
	put(0, -1, 0)
	if _, err := s.Store(ModeSet, []byte{DBMark, 0, 'x'}, []byte("v"), 0, 0, 0); err != nil { // database 0's escaped key
		t.Fatal(err)
	}
	check("three databases")
	for i := range 200 {
		if err := s.Delete(DBKey(nil, 3, []byte("k"+strconv.Itoa(i)))); err != nil {
			t.Fatal(err)
		}
	}
	check("deletes")
	soon := time.Now().Add(50 * time.Millisecond).UnixMilli()
	for i := range 100 {
		put(1, 1000+i, soon)
		put(0, 5000+i, soon)
	}
	check("deadlines ahead")
	for i := range 50 { // a deadline added, changed in place, and removed
		k := DBKey(nil, 3, []byte("k"+strconv.Itoa(300+i)))
		if !s.Touch(k, time.Now().Add(time.Hour).UnixMilli()) {
			t.Fatalf("%s is gone", k)
		}
		if i%2 == 0 {
			s.Touch(k, time.Now().Add(2*time.Hour).UnixMilli())
		}
		if i%5 == 0 {
			s.Touch(k, 0)
		}
	}
	check("deadlines set, changed and removed")
	time.Sleep(100 * time.Millisecond)
	check("expired, not reclaimed")
	var h Hash
	key := DBKey(nil, 15, []byte("h"))
	if err := s.UpdateHash(key, &h, func() error { h.Set([]byte("f"), []byte("v")); return nil }); err != nil {
		t.Fatal(err)
	}
	check("a hash in database 15")
	if err := s.UpdateHash(key, &h, func() error { h.Delete([]byte("f")); return nil }); err != nil {
		t.Fatal(err)
	}
	check("the hash emptied")
	s.FlushAll(0)
	check("after FLUSHALL")
	put(3, 1, 0)
	check("one key after FLUSHALL")
}
