package vfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"
)

func readFile(t *testing.T, m *MemFS, name string) (string, error) {
	t.Helper()
	f, err := m.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

// TestCrashCloneKeepsOnlySyncedData pins down the crash model the engine's
// tests rely on.
func TestCrashCloneKeepsOnlySyncedData(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	f, err := m.Create("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("synced"))
	f.Sync()
	f.Write([]byte("+unsynced"))

	// The directory entry was never synced: power loss loses the file.
	if _, err := readFile(t, m.CrashClone(false), "/d/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("power loss before SyncDir: err = %v, want ErrNotExist", err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	if got, _ := readFile(t, m.CrashClone(false), "/d/a"); got != "synced" {
		t.Errorf("power loss: file = %q, want %q", got, "synced")
	}
	if got, _ := readFile(t, m.CrashClone(true), "/d/a"); got != "synced+unsynced" {
		t.Errorf("process crash: file = %q, want %q", got, "synced+unsynced")
	}

	// A rename is not durable until the directory is synced.
	g, _ := m.Create("/d/tmp")
	g.Write([]byte("new"))
	g.Sync()
	m.Rename("/d/tmp", "/d/a")
	if got, _ := readFile(t, m.CrashClone(false), "/d/a"); got != "synced" {
		t.Errorf("power loss before SyncDir of rename: file = %q, want old contents", got)
	}
	m.SyncDir("/d")
	if got, _ := readFile(t, m.CrashClone(false), "/d/a"); got != "new" {
		t.Errorf("power loss after SyncDir of rename: file = %q, want %q", got, "new")
	}
}

func TestInjectorFailsOperations(t *testing.T) {
	m := NewMem()
	m.MkdirAll("/d")
	f, _ := m.Create("/d/a")
	m.SetInjector(func(op Op, name string) error {
		if op == OpSync {
			return ErrInjected
		}
		return nil
	})
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatalf("Write = %v, want nil", err)
	}
	if err := f.Sync(); !errors.Is(err, ErrInjected) {
		t.Fatalf("Sync = %v, want ErrInjected", err)
	}
}

// TestReuseOverwritesInPlace pins down the model of a reused file: writes
// overwrite its old bytes from offset 0, power loss keeps the old bytes
// where the new ones were not synced, and a torn power loss keeps any mix
// of old and new sectors among those written since the last Sync.
func TestReuseOverwritesInPlace(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	f, _ := m.Create("/d/old")
	old := bytes.Repeat([]byte("o"), 4*SectorSize)
	f.Write(old)
	f.Sync()
	f.Close()
	m.SyncDir("/d")

	g, err := m.ReuseForWrite("/d/old", "/d/new")
	if err != nil {
		t.Fatal(err)
	}
	g.Write(bytes.Repeat([]byte("a"), SectorSize))
	g.Sync()
	g.Write(bytes.Repeat([]byte("b"), 2*SectorSize))
	m.SyncDir("/d")

	if got, _ := readFile(t, m, "/d/new"); got != strings.Repeat("a", SectorSize)+strings.Repeat("b", 2*SectorSize)+strings.Repeat("o", SectorSize) {
		t.Errorf("live contents wrong: %.20q...", got)
	}
	if got, _ := readFile(t, m.CrashClone(false), "/d/new"); got != strings.Repeat("a", SectorSize)+strings.Repeat("o", 3*SectorSize) {
		t.Errorf("power loss: the unsynced overwrite should leave the old bytes, got %.20q...", got)
	}
	seen := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		got, _ := readFile(t, m.CrashCloneTorn(rng), "/d/new")
		if len(got) != 4*SectorSize || got[:SectorSize] != strings.Repeat("a", SectorSize) || got[3*SectorSize:] != strings.Repeat("o", SectorSize) {
			t.Fatalf("torn power loss changed synced or unwritten sectors: %q", got)
		}
		seen[got[SectorSize:SectorSize+1]+got[2*SectorSize:2*SectorSize+1]] = true
	}
	if len(seen) != 4 {
		t.Errorf("torn power loss should land each unsynced sector or not, independently; saw %v", seen)
	}
}

// TestCrashCloneTornAppendsPrefix: bytes appended past the synced length
// survive a torn power loss as a prefix.
func TestCrashCloneTornAppendsPrefix(t *testing.T) {
	m := NewMem()
	m.MkdirAll("/d")
	f, _ := m.Create("/d/a")
	f.Write([]byte("synced"))
	f.Sync()
	m.SyncDir("/d")
	more := strings.Repeat("x", 3*SectorSize)
	f.Write([]byte(more))
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		got, _ := readFile(t, m.CrashCloneTorn(rng), "/d/a")
		if !strings.HasPrefix("synced"+more, got) || len(got) < len("synced") {
			t.Fatalf("torn power loss kept %q, not a prefix of the writes", got)
		}
	}
}
