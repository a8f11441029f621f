package rdb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/store"
)

// TestFlagsAux: with SaveOptions.Flags a string's memcached flags go in
// an AUX field before the key, and Load gives them to that key only;
// without the option the file has none; redis-check-rdb accepts the file.
func TestFlagsAux(t *testing.T) {
	src := store.New(store.Config{MemoryLimit: 8 << 20})
	defer src.Close()
	for k, f := range map[string]uint32{"a": 5, "b": 0, "c": 1<<32 - 1} {
		if _, err := src.Store(store.ModeSet, []byte(k), []byte("v"+k), f, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.Store(store.ModeSet, []byte("d"), []byte("vd"), 9, 4102444800000, 0); err != nil {
		t.Fatal(err)
	}
	for _, withFlags := range []bool{true, false} {
		var buf bytes.Buffer
		if _, err := Save(&buf, src, SaveOptions{Flags: withFlags}); err != nil {
			t.Fatal(err)
		}
		if got := bytes.Count(buf.Bytes(), []byte(FlagsAux)); withFlags && got != 3 || !withFlags && got != 0 {
			t.Errorf("Flags %v: %d %s fields", withFlags, got, FlagsAux)
		}
		dst := store.New(store.Config{MemoryLimit: 8 << 20})
		stats, err := LoadBytes(buf.Bytes(), dst, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := stats.Aux[FlagsAux]; ok {
			t.Errorf("%s listed among the file's AUX fields", FlagsAux)
		}
		for k, f := range map[string]uint32{"a": 5, "b": 0, "c": 1<<32 - 1, "d": 9} {
			it, ok := dst.Get([]byte(k))
			if !withFlags {
				f = 0
			}
			if !ok || it.Flags != f || string(it.Value) != "v"+k {
				t.Errorf("Flags %v: %s = %q flags %d (found %v), want flags %d", withFlags, k, it.Value, it.Flags, ok, f)
			}
			if k == "d" && it.Deadline != 4102444800000 {
				t.Errorf("d's deadline = %d", it.Deadline)
			}
		}
		dst.Close()
		if path, err := exec.LookPath("redis-check-rdb"); err == nil && withFlags {
			f := filepath.Join(t.TempDir(), "dump.rdb")
			if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(path, f).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "RDB looks OK") {
				t.Errorf("redis-check-rdb: %v\n%s", err, out)
			}
		}
	}
}
