//go:build linux

package vfs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMappedLogAppendsAndTruncatesOnClose(t *testing.T) {
	name := filepath.Join(t.TempDir(), "000001.log")
	l, err := Default.(LogMapper).MapLog(name, 8192)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write([]byte("hello ")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write([]byte("world")); err != nil {
		t.Fatal(err)
	}
	// Before Close the reserved space reads as zeros after the records: what
	// recovery sees after kill -9.
	b, _ := os.ReadFile(name)
	if len(b) != 8192 || string(b[:11]) != "hello world" || b[11] != 0 {
		t.Fatalf("mapped file before close: len %d, prefix %q", len(b), b[:12])
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write(make([]byte, 8192)); !errors.Is(err, ErrLogFull) {
		t.Fatalf("oversized Write = %v, want ErrLogFull", err)
	}
	if got := l.Room(); got != 8192-11 {
		t.Fatalf("Room() = %d, want %d", got, 8192-11)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "hello world" {
		t.Fatalf("after Close file = %q, want %q", b, "hello world")
	}
}
