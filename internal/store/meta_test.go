package store

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestRecordHeaderSizes guards the per-item budget: a record without a
// deadline, flags or meta bits, with a short CAS and short key and value,
// has an 11-byte header, and each optional field costs only its own bytes.
func TestRecordHeaderSizes(t *testing.T) {
	for _, tc := range []struct {
		layout     uint8
		klen, vlen int
		want       int
	}{
		{infoCAS32, 14, 100, 11},
		{infoCAS32, 250, 127, 12},
		{infoCAS32, 14, 128, 12},
		{infoCAS32, 14, 1 << 20, 13},
		{0, 14, 100, 15},
		{infoCAS32 | infoDeadline, 14, 100, 19},
		{infoCAS32 | infoFlags, 14, 100, 15},
		{infoCAS32 | infoMeta, 14, 100, 12},
		{presence &^ infoCAS32, 250, 1 << 30, 33},
	} {
		if got := hdrSize(tc.layout, tc.klen, tc.vlen); got != tc.want {
			t.Errorf("hdrSize(%08b, %d, %d) = %d, want %d", tc.layout, tc.klen, tc.vlen, got, tc.want)
		}
	}
}

func TestMetaGetVivifyWinThenZ(t *testing.T) {
	s := newTestStore(t, Config{})
	now := time.Now().UnixMilli()
	o := GetOptions{Vivify: true, VivifyDeadline: now + 30e3}
	mi, ok := s.MetaGet([]byte("v"), o)
	if !ok || !mi.Created || !mi.Won || mi.WinSent || len(mi.Value) != 0 {
		t.Fatalf("first MetaGet(N) = %+v, %v; want a created empty item won by the caller", mi, ok)
	}
	mi, ok = s.MetaGet([]byte("v"), o)
	if !ok || mi.Created || mi.Won || !mi.WinSent {
		t.Fatalf("second MetaGet(N) = %+v, %v; want the win reported taken (Z)", mi, ok)
	}
	if _, _, err := s.MetaSet([]byte("v"), []byte("new"), 0, 0, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	mi, ok = s.MetaGet([]byte("v"), GetOptions{})
	if !ok || mi.Won || mi.WinSent || mi.Stale || string(mi.Value) != "new" {
		t.Fatalf("MetaGet after MetaSet = %+v, %v; want a plain hit", mi, ok)
	}
	checkInvariants(t, s)
}

func TestMetaGetRecache(t *testing.T) {
	s := newTestStore(t, Config{})
	now := time.Now().UnixMilli()
	mustStore(t, s, ModeSet, "short", "x", 0, now+10e3)
	mustStore(t, s, ModeSet, "long", "x", 0, now+100e3)
	mustStore(t, s, ModeSet, "never", "x", 0, 0)
	o := GetOptions{Recache: true, RecacheBelow: 30e3}
	if mi, _ := s.MetaGet([]byte("short"), o); !mi.Won {
		t.Errorf("R30 on a 10 s item: Won = false, want true")
	}
	if mi, _ := s.MetaGet([]byte("short"), o); mi.Won || !mi.WinSent {
		t.Errorf("second R30: %+v, want WinSent only", mi)
	}
	if mi, _ := s.MetaGet([]byte("long"), o); mi.Won || mi.WinSent {
		t.Errorf("R30 on a 100 s item: %+v, want no win", mi)
	}
	if mi, _ := s.MetaGet([]byte("never"), o); mi.Won {
		t.Errorf("R30 on an item without TTL won")
	}
}

func TestMetaGetHitBeforeAndNoBump(t *testing.T) {
	s := newTestStore(t, Config{})
	mustStore(t, s, ModeSet, "k", "v", 0, 0)
	if mi, _ := s.MetaGet([]byte("k"), GetOptions{NoBump: true}); mi.HitBefore {
		t.Errorf("first read: HitBefore = true")
	}
	if mi, _ := s.MetaGet([]byte("k"), GetOptions{}); mi.HitBefore {
		t.Errorf("u must not mark the item hit")
	}
	mi, _ := s.MetaGet([]byte("k"), GetOptions{})
	if !mi.HitBefore {
		t.Errorf("after a read: HitBefore = false")
	}
	if mi.Idle != 0 {
		t.Errorf("Idle = %d s right after a read, want 0", mi.Idle)
	}
	// A classic Get marks it too, and a set clears it.
	mustStore(t, s, ModeSet, "k", "v", 0, 0)
	s.Get([]byte("k"))
	if mi, _ := s.MetaGet([]byte("k"), GetOptions{}); !mi.HitBefore {
		t.Errorf("after Get: HitBefore = false")
	}
}

func TestMetaGetTouch(t *testing.T) {
	s := newTestStore(t, Config{})
	mustStore(t, s, ModeSet, "k", "v", 0, 0)
	dl := time.Now().UnixMilli() + 100e3
	mi, ok := s.MetaGet([]byte("k"), GetOptions{Touch: true, Deadline: dl})
	if !ok || mi.Deadline != dl {
		t.Fatalf("MetaGet(T) = %+v, want deadline %d", mi, dl)
	}
	if it, _ := peek(s, "k"); it.Deadline != dl {
		t.Errorf("stored deadline %d, want %d", it.Deadline, dl)
	}
	// T in the past: this read sees the value, the next one misses.
	if _, ok := s.MetaGet([]byte("k"), GetOptions{Touch: true, Deadline: 1}); !ok {
		t.Fatal("MetaGet(T-1) missed")
	}
	if _, ok := s.MetaGet([]byte("k"), GetOptions{}); ok {
		t.Error("item with a past deadline still served")
	}
}

func TestMetaSetModesAndCAS(t *testing.T) {
	s := newTestStore(t, Config{})
	k := []byte("k")
	if _, _, err := s.MetaSet(k, []byte("x"), 0, 0, SetOptions{Mode: ModeAppend}); !errors.Is(err, ErrNotStored) {
		t.Errorf("append on a miss = %v, want ErrNotStored", err)
	}
	if _, _, err := s.MetaSet(k, []byte("x"), 0, 0, SetOptions{HasCompare: true, CompareCAS: 1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("C on a miss = %v, want ErrNotFound", err)
	}
	cas, size, err := s.MetaSet(k, []byte("ab"), 7, 0, SetOptions{Mode: ModeAdd})
	if err != nil || size != 2 {
		t.Fatalf("add = %d, %d, %v", cas, size, err)
	}
	before := captureKey(s, "k")
	mustStore(t, s, ModeSet, "k2", "other", 0, 0) // k is no longer the most recent
	before = captureKey(s, "k")
	if _, _, err := s.MetaSet(k, []byte("no"), 0, 0, SetOptions{Mode: ModeAdd}); !errors.Is(err, ErrNotStored) {
		t.Errorf("add on a hit = %v, want ErrNotStored", err)
	}
	if _, _, err := s.MetaSet(k, []byte("zz"), 0, 0, SetOptions{HasCompare: true, CompareCAS: cas + 1000}); !errors.Is(err, ErrExists) {
		t.Errorf("C mismatch = %v, want ErrExists", err)
	}
	if _, _, err := s.MetaSet(k, []byte("zz"), 0, 0, SetOptions{HasCompare: true, CompareCAS: cas + 1000, Invalidate: true}); !errors.Is(err, ErrExists) {
		t.Errorf("I with a newer CAS = %v, want ErrExists", err)
	}
	if after := captureKey(s, "k"); !after.equal(before) {
		t.Errorf("failed MetaSet changed state:\n%v\n%v", before, after)
	}
	_, size, err = s.MetaSet(k, []byte("cd"), 9, 0, SetOptions{Mode: ModeAppend, HasCompare: true, CompareCAS: cas})
	if err != nil || size != 4 {
		t.Fatalf("append with C = %d, %v", size, err)
	}
	it, _ := peek(s, "k")
	if string(it.Value) != "abcd" || it.Flags != 7 {
		t.Errorf("after append: %q flags %d, want abcd flags 7", it.Value, it.Flags)
	}
	// I with an older CAS stores and marks stale; the first reader wins.
	if _, _, err := s.MetaSet(k, []byte("old"), 0, 0, SetOptions{HasCompare: true, CompareCAS: 1, Invalidate: true}); err != nil {
		t.Fatalf("I with an older CAS = %v", err)
	}
	mi, _ := s.MetaGet(k, GetOptions{})
	if !mi.Stale || !mi.Won || string(mi.Value) != "old" {
		t.Errorf("after ms I: %+v, want stale and won", mi)
	}
	// E sets the token; later tokens are still larger.
	cas, _, err = s.MetaSet(k, []byte("e"), 0, 0, SetOptions{HasNewCAS: true, NewCAS: 1 << 40})
	if err != nil || cas != 1<<40 {
		t.Fatalf("E = %d, %v", cas, err)
	}
	if it, _ := peek(s, "k"); it.CAS != 1<<40 {
		t.Errorf("stored CAS %d, want %d", it.CAS, 1<<40)
	}
	if next := mustStore(t, s, ModeSet, "other", "x", 0, 0); next <= 1<<40 {
		t.Errorf("token after E = %d, want > %d", next, 1<<40)
	}
	// N: append to a miss vivifies.
	if _, size, err := s.MetaSet([]byte("viv"), []byte("hi"), 0, 0, SetOptions{Mode: ModeAppend, Vivify: true}); err != nil || size != 2 {
		t.Errorf("append N on a miss = %d, %v", size, err)
	}
	checkInvariants(t, s)
}

func TestMetaDelete(t *testing.T) {
	s := newTestStore(t, Config{})
	k := []byte("k")
	if err := s.MetaDelete(k, DeleteOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("md miss = %v", err)
	}
	cas := mustStore(t, s, ModeSet, "k", "value", 3, 0)
	if err := s.MetaDelete(k, DeleteOptions{HasCompare: true, CompareCAS: cas + 1}); !errors.Is(err, ErrExists) {
		t.Errorf("md C mismatch = %v", err)
	}
	dl := time.Now().UnixMilli() + 30e3
	if err := s.MetaDelete(k, DeleteOptions{Invalidate: true, Touch: true, Deadline: dl}); err != nil {
		t.Fatal(err)
	}
	mi, ok := s.MetaGet(k, GetOptions{})
	if !ok || !mi.Stale || !mi.Won || mi.CAS == cas || mi.Deadline != dl {
		t.Errorf("after md I T: %+v, want stale, won, new CAS, deadline %d", mi, dl)
	}
	if err := s.MetaDelete(k, DeleteOptions{RemoveValue: true}); err != nil {
		t.Fatal(err)
	}
	it, ok := peek(s, "k")
	if !ok || len(it.Value) != 0 || it.Flags != 3 {
		t.Errorf("after md x: %+v, want an empty value with flags 3", it)
	}
	checkInvariants(t, s)
	if err := s.MetaDelete(k, DeleteOptions{HasCompare: true, CompareCAS: it.CAS}); err != nil {
		t.Errorf("md C match = %v", err)
	}
	if _, ok := peek(s, "k"); ok {
		t.Error("item still there after md")
	}
	checkInvariants(t, s)
}

func TestMetaArith(t *testing.T) {
	s := newTestStore(t, Config{})
	k := []byte("n")
	if _, err := s.MetaArith(k, ArithOptions{Delta: 1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("ma miss = %v", err)
	}
	res, err := s.MetaArith(k, ArithOptions{Delta: 1, Vivify: true, Initial: 10})
	if err != nil || res.Value != 10 || !res.Created {
		t.Fatalf("ma N J10 = %+v, %v; want 10, created", res, err)
	}
	res, err = s.MetaArith(k, ArithOptions{Delta: 5, Vivify: true})
	if err != nil || res.Value != 15 || res.Created {
		t.Fatalf("ma D5 = %+v, %v; want 15, not created", res, err)
	}
	if _, err := s.MetaArith(k, ArithOptions{Delta: 1, HasCompare: true, CompareCAS: res.CAS + 1}); !errors.Is(err, ErrExists) {
		t.Errorf("ma C mismatch = %v", err)
	}
	if res, _ := s.MetaArith(k, ArithOptions{Delta: 100, Decr: true}); res.Value != 0 {
		t.Errorf("decr below 0 = %d, want 0", res.Value)
	}
	dl := time.Now().UnixMilli() + 60e3
	if res, err := s.MetaArith(k, ArithOptions{Delta: 1, Touch: true, Deadline: dl}); err != nil || res.Deadline != dl {
		t.Errorf("ma T = deadline %d, %v; want %d", res.Deadline, err, dl)
	}
	mustStore(t, s, ModeSet, "s", "abc", 0, 0)
	if _, err := s.MetaArith([]byte("s"), ArithOptions{Delta: 1}); !errors.Is(err, ErrNotNumeric) {
		t.Errorf("ma on text = %v", err)
	}
	mustStore(t, s, ModeSet, "max", "18446744073709551615", 0, 0)
	if res, _ := s.MetaArith([]byte("max"), ArithOptions{Delta: 1}); res.Value != 0 {
		t.Errorf("incr at 2^64-1 = %d, want 0 (wrap)", res.Value)
	}
	checkInvariants(t, s)
}

func TestMetaBinaryKeyRemembered(t *testing.T) {
	s := newTestStore(t, Config{})
	k := []byte{0, 1, 2}
	if _, _, err := s.MetaSet(k, []byte("x"), 0, 0, SetOptions{BinaryKey: true}); err != nil {
		t.Fatal(err)
	}
	if mi, _ := s.MetaGet(k, GetOptions{}); !mi.BinaryKey {
		t.Error("BinaryKey not remembered")
	}
	if mi, _ := s.MetaDebug(k); !mi.BinaryKey {
		t.Error("MetaDebug: BinaryKey not remembered")
	}
	mustStore(t, s, ModeSet, string(k), "y", 0, 0)
	if mi, _ := s.MetaDebug(k); mi.BinaryKey {
		t.Error("a classic set keeps the binary bit")
	}
}

func TestMetaIdleSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(Config{SweepInterval: -1})
		defer s.Close()
		k := []byte("k")
		mustStore(t, s, ModeSet, "k", "v", 0, 0)
		time.Sleep(5 * time.Second)
		if mi, _ := s.MetaGet(k, GetOptions{NoBump: true}); mi.Idle != 5 {
			t.Errorf("Idle after 5 s = %d, want 5", mi.Idle)
		}
		time.Sleep(2 * time.Second)
		if mi, _ := s.MetaGet(k, GetOptions{}); mi.Idle != 7 {
			t.Errorf("u must not reset the access time: Idle = %d, want 7", mi.Idle)
		}
		if mi, _ := s.MetaDebug(k); mi.Idle != 0 {
			t.Errorf("Idle right after a read = %d, want 0", mi.Idle)
		}
	})
}
