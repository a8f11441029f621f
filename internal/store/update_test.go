package store

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestUpdateOps(t *testing.T) {
	s := newTestStore(t, Config{})
	key := []byte("k")

	// Absent: fn sees found=false; Keep leaves it absent.
	calls := 0
	cas, err := s.Update(key, func(old Item, found bool) Change {
		calls++
		if found {
			t.Errorf("found %q in an empty store", old.Value)
		}
		return Change{}
	})
	if cas != 0 || err != nil || calls != 1 {
		t.Fatalf("Keep on absent: cas %d err %v calls %d", cas, err, calls)
	}
	if _, ok := peek(s, "k"); ok {
		t.Fatal("Keep created the key")
	}

	// Put creates it with flags and deadline, from two parts.
	dl := time.Now().Add(time.Hour).UnixMilli()
	cas, err = s.Update(key, func(Item, bool) Change {
		return Change{Op: Put, Value: []byte("ab"), Suffix: []byte("cd"), Flags: 7, Deadline: dl}
	})
	if err != nil || cas == 0 {
		t.Fatalf("Put: cas %d err %v", cas, err)
	}
	it, ok := s.Peek(key)
	if !ok || string(it.Value) != "abcd" || it.Flags != 7 || it.Deadline != dl || it.CAS != cas {
		t.Fatalf("after Put: %+v %v, want abcd flags 7 deadline %d cas %d", it, ok, dl, cas)
	}

	// Put may build on the old value without copying it first (APPEND).
	cas2, err := s.Update(key, func(old Item, found bool) Change {
		if !found || string(old.Value) != "abcd" || old.Flags != 7 || old.CAS != cas {
			t.Errorf("old = %+v %v", old, found)
		}
		return Change{Op: Put, Value: old.Value, Suffix: []byte("ef"), Flags: old.Flags, Deadline: old.Deadline}
	})
	if err != nil || cas2 <= cas {
		t.Fatalf("append: cas %d (was %d) err %v", cas2, cas, err)
	}
	if it, _ := s.Peek(key); string(it.Value) != "abcdef" {
		t.Fatalf("after append: %q", it.Value)
	}

	// A Put that is too large changes nothing.
	before := captureKey(s, "k")
	_, err = s.Update(key, func(old Item, _ bool) Change {
		return Change{Op: Put, Value: old.Value, Suffix: make([]byte, defaultMaxItemSize)}
	})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too large: err %v", err)
	}
	if after := captureKey(s, "k"); !after.equal(before) {
		t.Fatalf("a failed Put changed the key:\n%v\n%v", before, after)
	}

	// Remove deletes it; Remove on absent is a no-op.
	for range 2 {
		if _, err := s.Update(key, func(Item, bool) Change { return Change{Op: Remove} }); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Peek(key); ok {
			t.Fatal("Remove left the key")
		}
	}

	// A deadline already passed: the Put succeeds and the key is absent.
	mustStore(t, s, ModeSet, "k", "old", 0, 0)
	if _, err := s.Update(key, func(Item, bool) Change {
		return Change{Op: Put, Value: []byte("v"), Deadline: time.Now().Add(-time.Second).UnixMilli()}
	}); err != nil {
		t.Fatal(err)
	}
	if it, ok := s.Peek(key); ok {
		t.Fatalf("expired Put left %q", it.Value)
	}
	checkInvariants(t, s)
}

// An expired item is absent to fn.
func TestUpdateSeesExpiredAsAbsent(t *testing.T) {
	s := newTestStore(t, Config{})
	mustStore(t, s, ModeSet, "k", "v", 0, time.Now().Add(-time.Second).UnixMilli())
	_, _ = s.Update([]byte("k"), func(old Item, found bool) Change {
		if found {
			t.Errorf("expired item seen: %q", old.Value)
		}
		return Change{}
	})
}

// TestUpdateIsAtomic increments one counter from many goroutines: with a
// read and a write that another writer could fall between, increments
// would be lost.
func TestUpdateIsAtomic(t *testing.T) {
	s := newTestStore(t, Config{})
	const workers, each = 8, 2000
	key := []byte("counter")
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf [20]byte
			for range each {
				_, err := s.Update(key, func(old Item, found bool) Change {
					n := 0
					if found {
						n, _ = strconv.Atoi(string(old.Value))
					}
					return Change{Op: Put, Value: strconv.AppendInt(buf[:0], int64(n+1), 10)}
				})
				if err != nil {
					t.Error(err)
					return
				}
				// Other writers of the key through the other APIs too.
				if _, err := s.Store(ModeAppend, []byte("other"), []byte("x"), 0, 0, 0); err != nil && !errors.Is(err, ErrNotStored) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	it, _ := s.Peek(key)
	if got, want := string(it.Value), strconv.Itoa(workers*each); got != want {
		t.Fatalf("counter = %s, want %s", got, want)
	}
	checkInvariants(t, s)
}

// TestUpdateUnderMemoryPressure fills a small store so that Puts must
// evict in other shards (fn may then run again) and checks that the last
// decision is the one applied and the accounting holds.
func TestUpdateUnderMemoryPressure(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 20})
	value := bytes.Repeat([]byte("v"), 1000)
	for i := range 5000 {
		key := []byte("key-" + strconv.Itoa(i))
		var last []byte
		_, err := s.Update(key, func(old Item, found bool) Change {
			last = append(last[:0], value[:100+i%900]...)
			return Change{Op: Put, Value: last}
		})
		if err != nil {
			t.Fatalf("Update %s: %v", key, err)
		}
		if it, ok := s.Peek(key); !ok || !bytes.Equal(it.Value, last) {
			t.Fatalf("%s = %d bytes, want %d", key, len(it.Value), len(last))
		}
	}
	if st := s.Stats(); st.Evictions == 0 {
		t.Fatal("no evictions: the test did not test pressure")
	}
	checkInvariants(t, s)
}

func BenchmarkUpdate(b *testing.B) {
	s := newTestStore(b, Config{})
	keys := benchKeys(1 << 14)
	add := []byte("x")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// APPEND-like: the new value built from the old one, then kept short.
		_, err := s.Update(keys[i&(len(keys)-1)], func(old Item, found bool) Change {
			if !found || len(old.Value) > 32 {
				return Change{Op: Put, Value: add}
			}
			return Change{Op: Put, Value: old.Value, Suffix: add}
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func TestUpdateRetime(t *testing.T) {
	s := newTestStore(t, Config{})
	cas := mustStore(t, s, ModeSet, "k", "v", 3, 0)
	dl := time.Now().Add(time.Hour).UnixMilli()
	if _, err := s.Update([]byte("k"), func(Item, bool) Change { return Change{Op: Retime, Deadline: dl} }); err != nil {
		t.Fatal(err)
	}
	it, ok := s.Peek([]byte("k"))
	if !ok || string(it.Value) != "v" || it.Flags != 3 || it.CAS != cas || it.Deadline != dl {
		t.Fatalf("after Retime: %+v %v; want value v, flags 3, cas %d, deadline %d", it, ok, cas, dl)
	}
	if _, err := s.Update([]byte("absent"), func(Item, bool) Change { return Change{Op: Retime, Deadline: dl} }); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Peek([]byte("absent")); ok {
		t.Fatal("Retime created a key")
	}
	checkInvariants(t, s)
}
