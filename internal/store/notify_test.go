package store

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// eventLog records what SetNotify reports.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(key []byte, ev Event) {
	name := map[Event]string{EventExpired: "expired", EventEvicted: "evicted", EventNew: "new", EventKeyMiss: "keymiss"}[ev]
	l.mu.Lock()
	l.events = append(l.events, string(key)+":"+name)
	l.mu.Unlock()
}

func (l *eventLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

// TestNotifyReportsStoreEvents: the store reports a key's creation by a
// write, a read's miss, a lookup finding the key expired, and nothing
// for the events left out of the mask or once reporting is off.
func TestNotifyReportsStoreEvents(t *testing.T) {
	s := New(Config{SweepInterval: -1})
	defer s.Close()
	var log eventLog
	s.SetNotify(EventExpired|EventNew|EventKeyMiss, log.add)
	past := time.Now().Add(-time.Second).UnixMilli()
	soon := time.Now().Add(20 * time.Millisecond).UnixMilli()
	if _, err := s.Store(ModeSet, []byte("a"), []byte("1"), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	s.Store(ModeSet, []byte("a"), []byte("2"), 0, 0, 0)       // replaced: no event
	s.Store(ModeSet, []byte("gone"), []byte("v"), 0, past, 0) // created and gone at once: new only
	s.Store(ModeSet, []byte("b"), []byte("v"), 0, soon, 0)
	s.Get([]byte("nope"))
	s.Peek([]byte("nope")) // not a read that counts
	var h Hash
	s.UpdateHash([]byte("h"), &h, func() error { h.Set([]byte("f"), []byte("v")); return nil })
	s.UpdateHash([]byte("h"), &h, func() error { h.Set([]byte("g"), []byte("v")); return nil })
	s.AddAll([][]byte{[]byte("m")}, [][]byte{[]byte("v")}) // its caller reports its keys
	for time.Now().UnixMilli() <= soon {
		time.Sleep(5 * time.Millisecond) // until b's deadline has passed
	}
	s.Get([]byte("b")) // expired, found by the read: expired, then the miss
	want := []string{"a:new", "gone:new", "b:new", "nope:keymiss", "h:new", "b:expired", "b:keymiss"}
	if got := log.take(); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	s.SetNotify(EventNew, log.add)
	s.Get([]byte("nope"))
	s.Store(ModeSet, []byte("c"), []byte("v"), 0, 0, 0)
	s.SetNotify(0, nil)
	s.Store(ModeSet, []byte("d"), []byte("v"), 0, 0, 0)
	if got := log.take(); !slices.Equal(got, []string{"c:new"}) {
		t.Fatalf("events %q, want only c:new", got)
	}
}

// TestNotifyReportsSweptAndEvicted: the sweeper reports what it expires,
// and a write that evicts reports each evicted key.
func TestNotifyReportsSweptAndEvicted(t *testing.T) {
	s := New(Config{MemoryLimit: 1 << 20, SweepInterval: time.Millisecond})
	defer s.Close()
	var log eventLog
	s.SetNotify(EventExpired|EventEvicted, log.add)
	s.Store(ModeSet, []byte("x"), []byte("v"), 0, time.Now().Add(5*time.Millisecond).UnixMilli(), 0)
	for !slices.Contains(log.take(), "x:expired") {
		time.Sleep(time.Millisecond) // only the sweeper can find x
	}
	value := make([]byte, 1000)
	for i := range 3000 {
		if _, err := s.Store(ModeSet, fmt.Appendf(nil, "k%d", i), value, 0, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	got := log.take()
	if n := s.Stats().Evictions; n == 0 || uint64(len(got)) != n {
		t.Fatalf("%d events for %d evictions", len(got), n)
	}
	for _, e := range got {
		var i int
		if _, err := fmt.Sscanf(e, "k%d:evicted", &i); err != nil {
			t.Fatalf("event %q", e)
		}
		if _, ok := s.Peek(fmt.Appendf(nil, "k%d", i)); ok {
			t.Fatalf("k%d reported evicted but still there", i)
		}
	}
}

// TestNotifyTxStoreReplacesNoNew: a collection stored in a Tx over a key
// Clear emptied (a *STORE destination) is no new key; after Delete
// (RESTORE REPLACE) it is, as in Redis.
func TestNotifyTxStoreReplacesNoNew(t *testing.T) {
	s := New(Config{SweepInterval: -1})
	defer s.Close()
	s.Store(ModeSet, []byte("d"), []byte("v"), 0, 0, 0)
	var log eventLog
	s.SetNotify(EventNew, log.add)
	store := func(clear func(tx *Tx, key []byte) bool) {
		s.Tx([][]byte{[]byte("d")}, func(tx *Tx) error {
			clear(tx, []byte("d"))
			var st Set
			if err := tx.Set([]byte("d"), &st, true); err != nil {
				return err
			}
			st.Add([]byte("m"))
			return nil
		})
	}
	store((*Tx).Clear)
	if got := log.take(); len(got) != 0 {
		t.Fatalf("store over a cleared key: %q, want nothing", got)
	}
	store((*Tx).Delete)
	if got := log.take(); !slices.Equal(got, []string{"d:new"}) {
		t.Fatalf("store over a deleted key: %q, want d:new", got)
	}
}
