package vfs

import (
	"errors"
	"io"
	"io/fs"
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
