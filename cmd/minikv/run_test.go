package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// freePort returns a port free on 127.0.0.1 for a server a test starts.
// It is picked below the kernel's ephemeral range (ip_local_port_range),
// which listeners on port 0 draw from. A replica this package starts
// keeps dialing its primary's port after a test kills the primary, so
// that port must not be handed to a test server of another package
// running meanwhile, which would take the stray for a replica of its own
// (as internal/server/redis's servers did with the replicas of earlier
// tests in their own process, whose links outlived them until 8d718b7).
// Where the range cannot be read, port 0 picks it.
func freePort(t *testing.T) int {
	t.Helper()
	lo, hi := portsBelowEphemeral()
	for range 10000 {
		port := 0
		if hi > lo {
			port = lo + mrand.IntN(hi-lo)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			if port != 0 {
				continue // taken: another one
			}
			t.Fatal(err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		// The kernel may hand a port just closed out again: a test that
		// asks for several (a cluster's nodes) must get distinct ones,
		// so no port is given twice in this process.
		issuedPorts.Lock()
		dup := issuedPorts.m[port]
		issuedPorts.m[port] = true
		issuedPorts.Unlock()
		if !dup {
			return port
		}
	}
	t.Fatal("no free port found")
	return 0
}

// portsBelowEphemeral is the range freePort draws from: the 10 000 ports
// below the kernel's ephemeral range, or none (0, 0) when the range
// cannot be read or starts too low.
func portsBelowEphemeral() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low < 12000 {
		return 0, 0
	}
	return low - 10000, low
}

// issuedPorts are the ports freePort has returned.
var issuedPorts = struct {
	sync.Mutex
	m map[int]bool
}{m: make(map[int]bool)}

// startRun runs the whole command in-process and stops it (as SIGTERM
// would) when the test ends, or earlier when the test calls the stop
// function it returns, which waits for a clean exit.
func startRun(t *testing.T, args []string, env map[string]string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	if !slices.Contains(args, "--admin-addr") {
		args = append(args, "--admin-addr", "") // never collide on the default 9150
	}
	go func() { done <- run(ctx, args, func(k string) string { return env[k] }, io.Discard, io.Discard) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("run: %v", err)
				}
			case <-time.After(15 * time.Second):
				t.Error("run did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func waitDial(t *testing.T, addr string) {
	t.Helper()
	for range 200 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never accepted", addr)
}

func TestRefusesRemoteWithoutAuth(t *testing.T) {
	args := []string{"-l", "0.0.0.0", "-p", "0", "--resp-port", "0"}
	err := run(context.Background(), args, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Fatalf("run(%q) = %v, want a refusal", args, err)
	}
	// The refusal goes away with a token, or with --insecure-allow-remote.
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := parseConfig([]string{"-l", "0.0.0.0", "--auth-token-file", tok}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if sec, err := loadSecurity(cfg, func(string) string { return "" }); err != nil || string(sec.token) != "abc" {
		t.Errorf("token file: %v, %v", sec, err)
	}
	cfg, _, _ = parseConfig([]string{"-l", "0.0.0.0"}, func(string) string { return "" }, io.Discard)
	if sec, err := loadSecurity(cfg, func(k string) string {
		return map[string]string{"MINIKV_AUTH_TOKEN": "envtok"}[k]
	}); err != nil || string(sec.token) != "envtok" {
		t.Errorf("env token: %v, %v", sec, err)
	}
	cfg, _, _ = parseConfig([]string{"-l", "0.0.0.0", "--insecure-allow-remote"}, func(string) string { return "" }, io.Discard)
	if _, err := loadSecurity(cfg, func(string) string { return "" }); err != nil {
		t.Errorf("--insecure-allow-remote: %v", err)
	}
}

// TestTokenAuthEndToEnd: the token from a file guards the memcached port.
func TestTokenAuthEndToEnd(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	startRun(t, []string{"-p", strconv.Itoa(port), "--resp-port", "0", "--auth-token-file", tok}, nil)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitDial(t, addr)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "get a\r\n")
	if l, _ := bufio.NewReader(c).ReadString('\n'); l != "CLIENT_ERROR auth required\r\n" {
		t.Errorf("unauthenticated get: %q", l)
	}
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	io.WriteString(c2, "auth hunter2\r\nversion\r\n")
	br := bufio.NewReader(c2)
	if l, _ := br.ReadString('\n'); l != "AUTHENTICATED\r\n" {
		t.Errorf("auth: %q", l)
	}
	if l, _ := br.ReadString('\n'); !strings.HasPrefix(l, "VERSION 1.6.") {
		t.Errorf("after auth: %q", l)
	}
}

// TestTLSWithOpenSSL talks to the TLS port with `openssl s_client`.
func TestTLSWithOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		if os.Getenv("MINIKV_REQUIRE_PEERS") != "" {
			t.Fatal("openssl not installed (make deps installs it)")
		}
		t.Skip("openssl not installed")
	}
	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir)
	port := freePort(t)
	startRun(t, []string{"-p", strconv.Itoa(port), "--resp-port", "0", "--tls-cert", certFile, "--tls-key", keyFile}, nil)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	waitDial(t, addr)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "openssl", "s_client", "-connect", addr, "-quiet", "-CAfile", certFile,
		"-verify_return_error", "-servername", "localhost", "-tls1_2")
	cmd.Stdin = strings.NewReader("set tls 0 0 5\r\nhello\r\nget tls\r\nquit\r\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl s_client: %v\n%s", err, out)
	}
	if want := "STORED\r\nVALUE tls 0 5\r\nhello\r\nEND\r\n"; string(out) != want {
		t.Errorf("openssl s_client got %q, want %q", out, want)
	}
}

func writeCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestAdminPortWired: the admin listener comes up with the data ports and
// serves /healthz and /metrics; pprof only with --pprof.
func TestAdminPortWired(t *testing.T) {
	port, admin := freePort(t), freePort(t)
	adminAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(admin))
	startRun(t, []string{"-p", strconv.Itoa(port), "--resp-port", "0", "--admin-addr", adminAddr}, nil)
	waitDial(t, adminAddr)
	// The admin port is bound before the data ports start serving, so
	// /healthz may say 503 for a moment: wait for it to turn healthy.
	for i := 0; ; i++ {
		resp, err := http.Get("http://" + adminAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if i == 200 {
			t.Fatalf("/healthz never turned 200 (last: %v)", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for path, want := range map[string]int{"/healthz": 200, "/metrics": 200, "/debug/pprof/": 404} {
		resp, err := http.Get("http://" + adminAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
		if path == "/metrics" && !strings.Contains(string(body), "memcached_up 1") {
			t.Errorf("/metrics lacks memcached_up 1")
		}
	}
}

// TestSoftMemoryLimit checks that the server caps the Go heap from its
// memory limit while it runs, leaves an operator's GOMEMLIMIT alone, and
// restores the process's limit when it stops.
func TestSoftMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	want := int64(8<<20 + 4<<20 + 32<<20)
	t.Run("from -m", func(t *testing.T) {
		port := freePort(t)
		startRun(t, []string{"-p", strconv.Itoa(port), "--resp-port", "0", "-m", "8"}, nil)
		waitDial(t, "127.0.0.1:"+strconv.Itoa(port))
		if got := debug.SetMemoryLimit(-1); got != want {
			t.Errorf("Go memory limit while serving with -m 8 = %d, want %d", got, want)
		}
	})
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("Go memory limit after the server stopped = %d, want the earlier %d", got, before)
	}
	t.Run("GOMEMLIMIT wins", func(t *testing.T) {
		port := freePort(t)
		startRun(t, []string{"-p", strconv.Itoa(port), "--resp-port", "0", "-m", "8"}, map[string]string{"GOMEMLIMIT": "1GiB"})
		waitDial(t, "127.0.0.1:"+strconv.Itoa(port))
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Errorf("Go memory limit with GOMEMLIMIT in the environment = %d, want it untouched (%d)", got, before)
		}
	})
}
