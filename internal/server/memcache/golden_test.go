package memcache

import (
	"bytes"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden from the server's replies")

// TestGoldenTranscripts sends each testdata/golden/*.in (every line gets a
// CRLF) in one write over a real 127.0.0.1 connection, half-closes, and
// compares everything the server wrote with the matching .golden file.
// Run with -update to rewrite the golden files after a deliberate change.
func TestGoldenTranscripts(t *testing.T) {
	ins, err := filepath.Glob("testdata/golden/*.in")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in")
		t.Run(name, func(t *testing.T) {
			ts := startServer(t, server.Config{}, store.Config{})
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			req := strings.ReplaceAll(strings.TrimSuffix(string(raw), "\n"), "\n", "\r\n") + "\r\n"
			got := transcript(t, ts.addr, req)
			golden := strings.TrimSuffix(in, ".in") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("transcript %s:\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
			}
		})
	}
}

func transcript(t *testing.T, addr, req string) []byte {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	_ = nc.(*net.TCPConn).CloseWrite()
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(nc)
	if err != nil {
		t.Fatalf("reading replies: %v", err)
	}
	return got
}
