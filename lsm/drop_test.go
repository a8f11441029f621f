package lsm

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// TestDropFilter: a compaction deletes every key whose newest value
// Options.Drop rejects, hands Drop values without their expiry, leaves the
// others alone, and an older version of a dropped key does not come back.
func TestDropFilter(t *testing.T) {
	db, err := Open("/db", Options{FS: vfs.NewMem(), Drop: func(key, value []byte) bool {
		return len(value) > 0 && value[0] == 'x'
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 100 {
		if err := db.Put(fmt.Appendf(nil, "k%03d", i), []byte("keep")); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(); err != nil { // the kept versions sit in the last level
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour)
	for i := 0; i < 100; i += 2 {
		k := fmt.Appendf(nil, "k%03d", i)
		if i%4 == 0 {
			err = db.PutExpiring(k, []byte("xdrop"), exp)
		} else {
			err = db.Put(k, []byte("xdrop"))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		v, err := db.Get(fmt.Appendf(nil, "k%03d", i))
		if i%2 == 0 {
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("k%03d after the compaction = %q, %v; want dropped", i, v, err)
			}
		} else if err != nil || string(v) != "keep" {
			t.Fatalf("k%03d = %q, %v; want keep", i, v, err)
		}
	}
	if m := db.Metrics(); m.FilterDropped != 50 {
		t.Errorf("FilterDropped = %d, want 50", m.FilterDropped)
	}
}
