package server_test

import (
	"slices"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestKeyEventsClassesAndSink: KeyEvent reaches the sink only for the
// classes set, and only with K or E among them (Redis publishes nothing
// without a channel); the store's own events arrive the same way.
func TestKeyEventsClassesAndSink(t *testing.T) {
	st := store.New(store.Config{SweepInterval: -1})
	defer st.Close()
	srv := server.New(server.Config{}, st)
	var got []string
	srv.SetKeyEventSink(func(flags, class server.EventClass, event string, key []byte) {
		got = append(got, event+" "+string(key))
	})
	srv.KeyEvent(server.EventString, "set", []byte("off"))
	srv.SetKeyEvents(server.EventString) // no channel: off
	srv.KeyEvent(server.EventString, "set", []byte("nochannel"))
	srv.SetKeyEvents(server.EventKeyspace | server.EventString | server.EventNew | server.EventExpired)
	srv.KeyEvent(server.EventString, "set", []byte("a"))
	srv.KeyEvent(server.EventGeneric, "del", []byte("b")) // g is off
	st.Store(store.ModeSet, []byte("c"), []byte("v"), 0, 0, 0)
	st.Store(store.ModeSet, []byte("d"), []byte("v"), 0, time.Now().Add(time.Millisecond).UnixMilli(), 0)
	for _, ok := st.Peek([]byte("d")); ok; _, ok = st.Peek([]byte("d")) {
		time.Sleep(time.Millisecond) // until a lookup finds d expired
	}
	want := []string{"set a", "new c", "new d", "expired d"}
	if !slices.Equal(got, want) {
		t.Fatalf("sink got %q, want %q", got, want)
	}
	if srv.KeyEvents() != server.EventKeyspace|server.EventString|server.EventNew|server.EventExpired {
		t.Errorf("KeyEvents() = %b", srv.KeyEvents())
	}
}

// TestKeyEventOffAllocatesNothing: with notifications off (the default),
// reporting an event costs no allocation.
func TestKeyEventOffAllocatesNothing(t *testing.T) {
	st := store.New(store.Config{SweepInterval: -1})
	defer st.Close()
	srv := server.New(server.Config{}, st)
	key := []byte("k")
	if n := testing.AllocsPerRun(1000, func() { srv.KeyEvent(server.EventString, "set", key) }); n != 0 {
		t.Fatalf("KeyEvent off: %v allocs", n)
	}
}
