package lsm

import (
	"errors"
	"math"
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

// farExpiries are expiries past 2262-04-11, the end of int64 Unix
// nanoseconds, which PutExpiring keeps to the millisecond, and the last
// nanosecond before it, which it keeps exactly.
var farExpiries = map[string]struct{ put, want time.Time }{
	"y3021":    {time.UnixMilli(33177117420000), time.UnixMilli(33177117420000)}, // Redis: EXPIREAT k 33177117420
	"max":      {time.UnixMilli(math.MaxInt64), time.UnixMilli(math.MaxInt64)},   // Redis: PEXPIREAT k 9223372036854775807
	"submilli": {time.UnixMilli(33177117420000).Add(123456), time.UnixMilli(33177117420000)},
	"firstfar": {time.Unix(0, math.MaxInt64).Add(time.Millisecond), time.UnixMilli(minFarMilli + 1)},
	"lastnano": {time.Unix(0, math.MaxInt64), time.Unix(0, math.MaxInt64)},
	"y2100":    {time.Date(2100, 1, 1, 0, 0, 0, 7, time.UTC), time.Date(2100, 1, 1, 0, 0, 0, 7, time.UTC)},
}

// TestFarExpiryRoundTrips writes expiries past 2262 and reads each back
// exactly from the memtable, after a flush, after a compaction (which must
// not take them for expired) and after reopening, through GetEntry, an
// iterator and Inspect.
func TestFarExpiryRoundTrips(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range farExpiries {
		if err := db.PutExpiring([]byte(k), []byte("v-"+k), e.put); err != nil {
			t.Fatal(err)
		}
	}
	check := func(stage string, db *DB) {
		t.Helper()
		for k, e := range farExpiries {
			v, exp, err := db.GetEntry([]byte(k))
			if err != nil || string(v) != "v-"+k || !exp.Equal(e.want) {
				t.Errorf("%s: GetEntry(%s) = %q, %v, %v; want %q, %v", stage, k, v, exp, err, "v-"+k, e.want)
			}
		}
		it, err := db.NewIter(nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			n++
			if e := farExpiries[string(it.Key())]; !it.Expiry().Equal(e.want) {
				t.Errorf("%s: iterator at %s: Expiry() = %v, want %v", stage, it.Key(), it.Expiry(), e.want)
			}
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil || n != len(farExpiries) {
			t.Errorf("%s: iterator saw %d keys, %v; want %d", stage, n, err, len(farExpiries))
		}
	}
	check("memtable", db)
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	check("flushed", db)
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	check("compacted", db)
	if d := db.Metrics().ExpiredDropped; d != 0 {
		t.Errorf("the compaction dropped %d entries as expired, want 0", d)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open("/db", Options{FS: fs}); err != nil {
		t.Fatal(err)
	}
	check("reopened", db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	in, err := Inspect("/db", InspectOptions{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	st, err := in.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var expiring, expired uint64
	for _, l := range st.Levels {
		expiring, expired = expiring+l.Expiring, expired+l.Expired
	}
	if expiring != uint64(len(farExpiries)) || expired != 0 || st.LiveKeys != uint64(len(farExpiries)) {
		t.Errorf("Inspect: %d expiring, %d expired, %d live; want %d, 0, %d", expiring, expired, st.LiveKeys, len(farExpiries), len(farExpiries))
	}
	if _, exp, err := in.Get([]byte("y3021")); err != nil || !exp.Equal(farExpiries["y3021"].want) {
		t.Errorf("Inspector.Get(y3021) = %v, %v; want %v", exp, err, farExpiries["y3021"].want)
	}
}

// TestOldFormatExpiriesStillRead writes expiries as the engine did before
// far expiries (raw Unix nanoseconds, negative before 1970) and reads them
// through a flush and a reopen: a future one reads back exactly, past
// ones (one of them pre-1970, written within the 2.5 hours before the
// epoch where old and new forms cannot be confused) read as absent, and a
// compaction drops only those.
func TestOldFormatExpiriesStillRead(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	future := time.Date(2100, 1, 1, 0, 0, 0, 123456789, time.UTC)
	b := NewBatch()
	b.add(kindSetExpiring, []byte("future"), []byte("f"), future.UnixNano())
	b.add(kindSetExpiring, []byte("past"), []byte("p"), time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	b.add(kindSetExpiring, []byte("pre1970"), []byte("q"), -int64(time.Hour))
	if err := db.Apply(b); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open("/db", Options{FS: fs}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, exp, err := db.GetEntry([]byte("future")); err != nil || string(v) != "f" || !exp.Equal(future) {
		t.Errorf("GetEntry(future) = %q, %v, %v; want f, %v", v, exp, err, future)
	}
	for _, k := range []string{"past", "pre1970"} {
		if v, _, err := db.GetEntry([]byte(k)); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetEntry(%s) = %q, %v; want ErrNotFound", k, v, err)
		}
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	if d := db.Metrics().ExpiredDropped; d != 2 {
		t.Errorf("ExpiredDropped = %d, want 2", d)
	}
	if _, exp, err := db.GetEntry([]byte("future")); err != nil || !exp.Equal(future) {
		t.Errorf("after Compact: GetEntry(future) = %v, %v; want %v", exp, err, future)
	}
}

// TestExpiryEncoding pins the two stored forms and their boundary.
func TestExpiryEncoding(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want int64
	}{
		{time.Unix(0, 1), 1},
		{time.Unix(1, 5), 1e9 + 5},
		{time.Unix(0, math.MaxInt64), math.MaxInt64},
		{time.Unix(0, math.MaxInt64).Add(1), -minFarMilli},             // same millisecond, past the last ns
		{time.UnixMilli(33177117420000).Add(999999), -33177117420000},  // truncated to the ms
		{time.UnixMilli(math.MaxInt64).Add(time.Hour), -math.MaxInt64}, // beyond int64 ms: saturates
		{time.Unix(0, 0), 1},                                           // passed either way
		{time.Unix(-86400, 0), 1},                                      // likewise, not a negative value
	} {
		if got := encodeExpiry(tc.t); got != tc.want {
			t.Errorf("encodeExpiry(%v) = %d, want %d", tc.t, got, tc.want)
		}
	}
	now := time.Now().UnixNano()
	for _, tc := range []struct {
		e      int64
		passed bool
	}{
		{1, true},
		{now, true},
		{now + 1, false},
		{-int64(time.Hour), true}, // an old pre-1970 expiry
		{-minFarMilli + 1, true},  // the earliest old pre-1970 value still read as nanoseconds
		{-minFarMilli, false},     // a far expiry: 2262
		{-math.MaxInt64, false},
	} {
		if got := expiryPassed(tc.e, now); got != tc.passed {
			t.Errorf("expiryPassed(%d, now) = %v, want %v", tc.e, got, tc.passed)
		}
	}
}
