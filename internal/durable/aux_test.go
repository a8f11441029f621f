package durable

import (
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// TestAuxRecordsSurviveRestart: the store's aux records (the Redis
// port's function libraries) are written through, read back after a
// restart, kept apart from the keys (a key of the same name, FLUSHALL,
// Scan), and a delete is durable too.
func TestAuxRecordsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	s.SetAux("functions", []byte("payload 1"))
	s.SetAux("other", []byte("x"))
	mustStore(t, s, "functions", "a key", 0, 0)
	s.FlushAll(0)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.close(t)

	s = openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	for name, want := range map[string]string{"functions": "payload 1", "other": "x", "none": ""} {
		got, err := s.Aux(name)
		if err != nil || string(got) != want || want == "" && got != nil {
			t.Errorf("Aux(%q) after restart = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, ok := s.Peek([]byte("functions")); ok {
		t.Error("the flushed key came back")
	}
	s.SetAux("functions", []byte("payload 2"))
	s.SetAux("other", nil)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.close(t)

	s = openStore(t, dir, store.Config{SweepInterval: -1, MemoryLimit: 8 << 20})
	defer s.close(t)
	if got, _ := s.Aux("functions"); string(got) != "payload 2" {
		t.Errorf("Aux(functions) after the second restart = %q", got)
	}
	if got, _ := s.Aux("other"); got != nil {
		t.Errorf("Aux(other) after its delete = %q, want nil", got)
	}
}
