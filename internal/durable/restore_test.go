package durable

import (
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// TestRestoredValuesSurviveRestart: what RESTORE puts in (a string with
// a deadline, a hash listpack stored as it came) is written through and
// read back after a restart, deadline included.
func TestRestoredValuesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	lp := []byte("\x16\x00\x00\x00\x04\x00\x81a\x02\x01\x01\x81b\x02\x85hello\x06\xff") // a=1, b=hello
	deadline := time.Now().Add(time.Hour).UnixMilli()
	err := s.Tx([][]byte{[]byte("str"), []byte("hash")}, func(tx *store.Tx) error {
		if err := tx.PutString([]byte("str"), []byte("restored")); err != nil {
			return err
		}
		tx.SetRestored([]byte("str"), deadline, 100, 3)
		if !tx.RestoreHashListpack([]byte("hash"), lp) {
			t.Fatal("RestoreHashListpack refused a good listpack")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.close(t)
	s = openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	it, ok := s.Peek([]byte("str"))
	if !ok || string(it.Value) != "restored" || it.Deadline != deadline {
		t.Fatalf("str after restart: %q %v deadline %d, want %d", it.Value, ok, it.Deadline, deadline)
	}
	var h store.Hash
	if err := s.ViewHash([]byte("hash"), &h, func() error {
		a, _ := h.Get([]byte("a"))
		b, _ := h.Get([]byte("b"))
		if h.Len() != 2 || string(a) != "1" || string(b) != "hello" {
			t.Fatalf("hash after restart: len %d a=%q b=%q", h.Len(), a, b)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.close(t)
}
