package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverProc is the whole command running as a process of its own (the
// test binary re-run through TestMain's MINIKV_CRASH_CHILD), so the test
// sees its exit status and its stderr as an operator would.
type serverProc struct {
	cmd    *exec.Cmd
	mc     string
	stderr bytes.Buffer // written by exec's copier until cmd.Wait returns
	exited chan struct{}
	err    error // cmd.Wait's, once exited is closed
}

func startServerProc(t *testing.T, dir string) *serverProc {
	t.Helper()
	mcPort, respPort := freePort(t), freePort(t)
	p := &serverProc{mc: fmt.Sprintf("127.0.0.1:%d", mcPort), exited: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), fmt.Sprintf("MINIKV_CRASH_CHILD=-l 127.0.0.1 -p %d --resp-port %d --admin-addr= --data-dir %s --fsync always",
		mcPort, respPort, dir))
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill() // by PID: only the process this test started
		<-p.exited
	})
	return p
}

// wait waits for the process to exit on its own; the bound only keeps a
// hung server from hanging the test.
func (p *serverProc) wait(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(2 * time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Fatalf("the server did not exit; stderr:\n%s", p.stderr.String())
	}
}

// waitUp waits until the memcached port accepts, failing if the process
// exits first.
func (p *serverProc) waitUp(t *testing.T) {
	t.Helper()
	for range 1000 {
		if c, err := net.Dial("tcp", p.mc); err == nil {
			c.Close()
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("the server exited (%v); stderr:\n%s", p.err, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("%s never accepted", p.mc)
}

// TestStartRefusesDamagedDataDir writes keys through the memcached port,
// stops the server with SIGTERM, then damages one file of the data
// directory: a live table's index block, or the manifest. Started again,
// the server must exit non-zero with a message on stderr that names the
// file and the reason, without ever opening its ports.
func TestStartRefusesDamagedDataDir(t *testing.T) {
	golden := filepath.Join(t.TempDir(), "data")
	p := startServerProc(t, golden)
	p.waitUp(t)
	c := dialLines(t, p.mc)
	for i := range 50 {
		v := strings.Repeat("v", i)
		if got := c.do(fmt.Sprintf("set key%02d 0 0 %d\r\n%s\r\n", i, len(v), v), 1); got[0] != "STORED" {
			t.Fatalf("set key%02d: %q", i, got)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.wait(t)
	if p.err != nil {
		t.Fatalf("after SIGTERM the server exited with %v; stderr:\n%s", p.err, p.stderr.String())
	}

	tests := []struct {
		name   string
		prefix string // of the file to damage
		suffix string
		damage func(b []byte) // in place
		reason string
	}{
		{"table index block", "", ".sst", func(b []byte) {
			// The footer is the last 48 bytes; the index block's
			// offset is its third 8-byte word (lsm/table.go).
			const footerLen = 48
			off := binary.LittleEndian.Uint64(b[len(b)-footerLen+16:])
			b[off] ^= 0x40
		}, "checksum mismatch in index block"},
		{"manifest", "MANIFEST-", "", func(b []byte) {
			b[14] ^= 0x40 // inside the payload of the first record
		}, "checksum mismatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			name := copyDataDir(t, golden, dir, tt.prefix, tt.suffix)
			path := filepath.Join(dir, name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tt.damage(b)
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}

			p := startServerProc(t, dir)
			p.wait(t)
			stderr := p.stderr.String()
			var ee *exec.ExitError
			if !errors.As(p.err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("the server on a damaged directory exited with %v, want a non-zero status; stderr:\n%s", p.err, stderr)
			}
			for _, want := range []string{"minikv: data directory " + dir, name, tt.reason} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not mention %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stderr, "listening") {
				t.Errorf("the server opened its ports on a damaged directory:\n%s", stderr)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("the damaged file is gone after the failed start: %v", err)
			}
		})
	}
}

// copyDataDir copies a stopped server's data directory (without its LOCK
// file) and returns the name of the first file, in name order, with the
// prefix and suffix given.
func copyDataDir(t *testing.T, from, to, prefix, suffix string) string {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	es, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	match := ""
	for _, e := range es {
		n := e.Name()
		if n == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if match == "" && strings.HasPrefix(n, prefix) && strings.HasSuffix(n, suffix) {
			match = n
		}
	}
	if match == "" {
		t.Fatalf("no %s*%s file in the data directory: %v", prefix, suffix, es)
	}
	return match
}
