package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
)

// security is what the auth and TLS settings resolve to.
type security struct {
	token []byte            // auth token for both ports; nil = none
	users map[string]string // memcached -Y user -> password
	tls   *tls.Config       // nil = plain TCP
}

// loadSecurity reads the token (from --auth-token-file or MINIKV_AUTH_TOKEN;
// never from a command-line value, which any local user can read in ps),
// the -Y user file and the TLS key pair, and refuses a listen address off
// the loopback interface unless some auth is configured or the operator
// says --insecure-allow-remote.
func loadSecurity(cfg *config, getenv func(string) string) (*security, error) {
	sec := &security{}
	switch {
	case cfg.AuthTokenFile != "":
		b, err := os.ReadFile(cfg.AuthTokenFile)
		if err != nil {
			return nil, fmt.Errorf("auth token: %w", err)
		}
		sec.token = bytes.TrimSpace(b)
		if len(sec.token) == 0 {
			return nil, fmt.Errorf("auth token file %s is empty", cfg.AuthTokenFile)
		}
	case getenv("MINIKV_AUTH_TOKEN") != "":
		sec.token = []byte(strings.TrimSpace(getenv("MINIKV_AUTH_TOKEN")))
	}
	if bytes.ContainsAny(sec.token, " \t\r\n") {
		return nil, errors.New("auth token must not contain whitespace")
	}
	if cfg.AuthFile != "" {
		users, err := readAuthFile(cfg.AuthFile)
		if err != nil {
			return nil, err
		}
		sec.users = users
	}
	if cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
		sec.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	if !isLoopback(cfg.Listen) && len(sec.token) == 0 && len(sec.users) == 0 && !cfg.InsecureRemote {
		return nil, fmt.Errorf("refusing to listen on %s without an auth token: set --auth-token-file "+
			"(or MINIKV_AUTH_TOKEN), or pass --insecure-allow-remote", cfg.Listen)
	}
	return sec, nil
}

// readAuthFile parses memcached's -Y format: one user:password per line.
func readAuthFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	defer f.Close()
	users := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		u, p, ok := strings.Cut(line, ":")
		if !ok || u == "" || p == "" {
			return nil, fmt.Errorf("%s:%d: want user:password", path, n)
		}
		users[u] = p
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("auth file %s has no users", path)
	}
	return users, nil
}

// isLoopback reports whether host names only the loopback interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
