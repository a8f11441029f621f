package lsm

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// TestExpiredKeysReadAbsentAndCompactionDropsThem uses synctest's fake clock:
// a key written with an expiry reads as present until then, absent after, and
// a compaction removes it from the tables.
func TestExpiredKeysReadAbsentAndCompactionDropsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, err := Open("/db", Options{FS: vfs.NewMem(), Sync: SyncEverySecond})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Put([]byte("old"), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := db.Compact(); err != nil { // "old" now sits in the last level
			t.Fatal(err)
		}
		exp := time.Now().Add(time.Minute)
		if err := db.PutExpiring([]byte("old"), []byte("y"), exp); err != nil {
			t.Fatal(err)
		}
		if err := db.PutExpiring([]byte("ttl"), []byte("z"), exp); err != nil {
			t.Fatal(err)
		}
		v, gotExp, err := db.GetEntry([]byte("ttl"))
		if err != nil || string(v) != "z" || !gotExp.Equal(exp) {
			t.Fatalf("GetEntry(ttl) = %q, %v, %v; want z, %v", v, gotExp, err, exp)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
		for _, k := range []string{"ttl", "old"} {
			// An expired newer value must not uncover the older one.
			if v, err := db.Get([]byte(k)); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Get(%s) after expiry = %q, %v; want ErrNotFound", k, v, err)
			}
		}
		if err := db.Compact(); err != nil {
			t.Fatal(err)
		}
		m := db.Metrics()
		if m.ExpiredDropped != 2 {
			t.Errorf("ExpiredDropped = %d, want 2", m.ExpiredDropped)
		}
		total := 0
		for _, l := range m.Levels {
			total += l.Files
		}
		if total != 0 {
			t.Errorf("%d tables left after compacting only expired keys, want 0\n%v", total, m)
		}
	})
}
