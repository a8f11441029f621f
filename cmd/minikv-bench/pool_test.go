package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/bench"
)

// TestPoolAgainstMiniKV loads three real MiniKV servers through -s a,b,c
// with each --hash, on both protocols, then asks every server directly for
// every key: each key must sit on the server `locate` names and nowhere
// else, and the report must show each server's share and the aggregate.
func TestPoolAgainstMiniKV(t *testing.T) {
	bin := minikvBin(t)
	fleet := bench.NewFleet(bench.ServerOptions{MinikvBin: bin, MemoryMB: 32, Threads: 1, MaxConns: 256})
	defer fleet.Close()
	var mc, resp []string
	for range 3 {
		s, err := fleet.Start(context.Background(), bench.NameMinikvRESP)
		if err != nil {
			t.Fatal(err)
		}
		resp = append(resp, s.Addr)
		// The memcached port of the same process: its -p argument.
		for i, a := range s.Args {
			if a == "-p" {
				mc = append(mc, "127.0.0.1:"+s.Args[i+1])
			}
		}
	}
	const keys = 600
	for _, tc := range []struct {
		proto string
		addrs []string
	}{{"memcache", mc}, {"resp", resp}} {
		for _, mode := range bench.HashModes {
			t.Run(tc.proto+"/"+mode, func(t *testing.T) {
				for _, a := range tc.addrs {
					flush(t, tc.proto, a)
				}
				list := strings.Join(tc.addrs, ",")
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), []string{"-s", list, "--hash", mode, "--proto", tc.proto,
					"-c", "3", "-P", "4", "--keys", fmt.Sprint(keys), "--prefill", "-n", "600", "--multiget", "3",
					"--ratio", "1:3", "--warmup", "0", "--json", "-"}, &stdout, &stderr)
				if code != exitOK {
					t.Fatalf("exit %d: %s", code, stderr.String())
				}
				var rep bench.Report
				if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
					t.Fatal(err)
				}
				m := rep.Cells[0].Median
				if m.Ops != 600 || m.Errors != 0 || m.Misses != 0 || len(m.Servers) != 3 {
					t.Fatalf("median: ops %d errors %d misses %d servers %+v", m.Ops, m.Errors, m.Misses, m.Servers)
				}
				table := stderr.String()
				for _, want := range append([]string{"per server", "share of keys", "3 servers (" + mode + ")"}, tc.addrs...) {
					if !strings.Contains(table, want) {
						t.Errorf("table lacks %q:\n%s", want, table)
					}
				}

				// Where locate says each key is.
				var in, out bytes.Buffer
				for k := range keys {
					fmt.Fprintf(&in, "key:%03d\n", k)
				}
				if code := locate([]string{"-s", list, "--hash", mode}, &in, &out, &stderr); code != exitOK {
					t.Fatalf("locate: exit %d: %s", code, stderr.String())
				}
				where := map[string]string{}
				for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
					k, a, _ := strings.Cut(line, "\t")
					where[k] = a
				}
				if len(where) != keys {
					t.Fatalf("locate printed %d keys", len(where))
				}
				per := map[string]int{}
				for _, a := range tc.addrs {
					held := holds(t, tc.proto, a, keys)
					for k := range held {
						if where[k] != a {
							t.Errorf("%s holds %s, which belongs on %s", a, k, where[k])
						}
					}
					per[a] = len(held)
				}
				total := 0
				for _, a := range tc.addrs {
					total += per[a]
					if per[a] < keys/10 {
						t.Errorf("%s holds %d of %d keys: not spread (%v)", a, per[a], keys, per)
					}
				}
				if total != keys {
					t.Errorf("the servers hold %d keys between them, want %d (%v)", total, keys, per)
				}
			})
		}
	}
}

// holds asks the server at addr which of key:000..key:N-1 it has.
func holds(t *testing.T, proto, addr string, n int) map[string]bool {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	out := map[string]bool{}
	var req bytes.Buffer
	for k := range n {
		key := fmt.Sprintf("key:%03d", k)
		if proto == "resp" {
			fmt.Fprintf(&req, "*2\r\n$6\r\nEXISTS\r\n$%d\r\n%s\r\n", len(key), key)
		} else {
			fmt.Fprintf(&req, "mg %s\r\n", key)
		}
	}
	if _, err := c.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	for k := range n {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		line = strings.TrimSpace(line)
		switch line {
		case ":1", "HD":
			out[fmt.Sprintf("key:%03d", k)] = true
		case ":0", "EN":
		default:
			t.Fatalf("%s: unexpected reply %q", addr, line)
		}
	}
	return out
}

func flush(t *testing.T, proto, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	cmd, want := "flush_all\r\n", "OK"
	if proto == "resp" {
		cmd, want = "*1\r\n$8\r\nFLUSHALL\r\n", "+OK"
	}
	if _, err := c.Write([]byte(cmd)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != want {
		t.Fatalf("%s: flush answered %q, %v", addr, line, err)
	}
}

func TestLocateUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := locate(nil, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("locate without -s: exit %d", code)
	}
	if code := locate([]string{"-s", "a:1,b:2", "--hash", "crc"}, strings.NewReader(""), &out, &errb); code != exitUsage {
		t.Errorf("locate with an unknown hash: exit %d", code)
	}
	out.Reset()
	// libmemcached leaves the default port out of the point names, so
	// "h:11211" and a name without a port differ from "h:11212".
	if code := locate([]string{"-s", "a:11211,b:11211", "--hash", "ketama", "x", "y"}, nil, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "x\t") {
		t.Errorf("locate printed %q", out.String())
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--compare", "minikv", "--hash", "ketama"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("--compare with --hash: exit %d", code)
	}
}
