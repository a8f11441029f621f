package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/cluster"
)

// writeClusterConf writes a slot map file and returns its path.
func writeClusterConf(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.conf")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestClusterConfigSettings(t *testing.T) {
	for _, args := range [][]string{
		{"--cluster-node", "a"},                            // without --cluster-config
		{"--cluster-config", "c.conf", "--resp-port", "0"}, // cluster mode without the RESP port
		{"--cluster-config", "c.conf", "--cluster-node", "a", "--resp-port", "0"},
		{"--cluster-config", "c.conf", "--replicaof", "127.0.0.1:7000"}, // a cluster's replica is a line of its file
	} {
		if _, _, err := parseConfig(args, env(nil), io.Discard); err == nil {
			t.Errorf("parseConfig(%q) succeeded, want an error", args)
		}
	}
	cfg, _, err := parseConfig(nil, env(map[string]string{"MINIKV_CLUSTER_CONFIG": "/c.conf", "MINIKV_CLUSTER_NODE": "n1"}), io.Discard)
	if err != nil || cfg.ClusterConfig != "/c.conf" || cfg.ClusterNode != "n1" {
		t.Errorf("MINIKV_CLUSTER_CONFIG and MINIKV_CLUSTER_NODE: %+v, %v", cfg, err)
	}
	file := writeClusterConf(t, "cluster-config = /etc/minikv/cluster.conf\ncluster_node = n2\n")
	cfg, _, err = parseConfig([]string{"--config", file}, env(nil), io.Discard)
	if err != nil || cfg.ClusterConfig != "/etc/minikv/cluster.conf" || cfg.ClusterNode != "n2" {
		t.Errorf("config file keys: %+v, %v", cfg, err)
	}
}

// TestClusterStartupErrors: a slot map that is wrong, or that does not
// name this node, stops start-up with a message saying where and why.
func TestClusterStartupErrors(t *testing.T) {
	good := writeClusterConf(t, "a 127.0.0.1:7000 0-8191\nb 127.0.0.1:7001 8192-16383\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster-config", writeClusterConf(t, "a 127.0.0.1:7000 0-8191\nb 127.0.0.1:7001 8191-16383\n")},
			"cluster.conf:2: slot 8191 is also owned by node a (line 1)"},
		{[]string{"--cluster-config", writeClusterConf(t, "a 127.0.0.1:7000 0-8191\n")}, "8192 slots are owned by no node: 8192-16383"},
		{[]string{"--cluster-config", filepath.Join(t.TempDir(), "missing.conf")}, "no such file"},
		{[]string{"--cluster-config", good, "--cluster-node", "c"}, `--cluster-node "c": no node of that name in ` + good},
		{[]string{"--cluster-config", good, "--resp-port", "7002"}, "no node in " + good + " has this node's address 127.0.0.1:7002"},
		{[]string{"--cluster-config", good, "-l", "0.0.0.0", "--insecure-allow-remote", "--resp-port", "7000"}, "name this node with --cluster-node"},
	} {
		args := append([]string{"-p", "0", "--admin-addr", ""}, tc.args...)
		err := run(context.Background(), args, env(nil), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v, want an error containing %q", args, err, tc.want)
		}
	}
}

// TestClusterRun starts the command in cluster mode twice over one slot
// map: node a finds itself by its RESP address, node b by
// MINIKV_CLUSTER_NODE; each serves its own slots and redirects the
// other's.
func TestClusterRun(t *testing.T) {
	portA, portB := freePort(t), freePort(t)
	addrA := net.JoinHostPort("127.0.0.1", strconv.Itoa(portA))
	addrB := net.JoinHostPort("127.0.0.1", strconv.Itoa(portB))
	conf := writeClusterConf(t, fmt.Sprintf("# test\na %s 0-8191\nb %s 8192-16383\n", addrA, addrB))
	startRun(t, []string{"-p", "0", "--resp-port", strconv.Itoa(portA), "--cluster-config", conf}, nil)
	startRun(t, []string{"-p", "0", "--resp-port", strconv.Itoa(portB)},
		map[string]string{"MINIKV_CLUSTER_CONFIG": conf, "MINIKV_CLUSTER_NODE": "b"})
	waitDial(t, addrA)
	waitDial(t, addrB)

	// "a" is slot 15495 (b's), "b" slot 3300 (a's).
	for _, tc := range []struct {
		addr  string
		cmds  [][]string
		wants []string
	}{
		{addrA, [][]string{{"CLUSTER", "MYID"}, {"SET", "b", "1"}, {"GET", "b"}, {"GET", "a"}},
			[]string{"$40", "+OK", "$1", "-MOVED 15495 " + addrB}},
		{addrB, [][]string{{"CLUSTER", "MYID"}, {"SET", "a", "2"}, {"GET", "a"}, {"GET", "b"}},
			[]string{"$40", "+OK", "$1", "-MOVED 3300 " + addrA}},
	} {
		nc, err := net.Dial("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(nc)
		for i, cmd := range tc.cmds {
			fmt.Fprintf(nc, "*%d\r\n", len(cmd))
			for _, a := range cmd {
				fmt.Fprintf(nc, "$%d\r\n%s\r\n", len(a), a)
			}
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			line = strings.TrimSuffix(line, "\r\n")
			if line != tc.wants[i] {
				t.Errorf("%s %q = %q, want %q", tc.addr, cmd, line, tc.wants[i])
			}
			if strings.HasPrefix(line, "$") {
				body, _ := br.ReadString('\n')
				if cmd[1] == "MYID" {
					name := map[string]string{addrA: "a", addrB: "b"}[tc.addr]
					if got := strings.TrimSuffix(body, "\r\n"); got != cluster.NodeID(name) {
						t.Errorf("%s CLUSTER MYID = %q, want node %s's id %q", tc.addr, got, name, cluster.NodeID(name))
					}
				}
			}
		}
	}
}

// TestClusterReplicaRun: a replicaof line of the slot map starts the
// node as a replica of its primary, which it reaches with the token the
// cluster shares (MINIKV_AUTH_TOKEN as its masterauth): a key written to
// the primary is read back from the replica after READONLY, and without
// it the replica redirects to the primary.
func TestClusterReplicaRun(t *testing.T) {
	portA, portB, portR := freePort(t), freePort(t), freePort(t)
	addr := func(p int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)) }
	conf := writeClusterConf(t, fmt.Sprintf("a %s 0-8191\nb %s 8192-16383\nra %s replicaof a\n", addr(portA), addr(portB), addr(portR)))
	env := map[string]string{"MINIKV_AUTH_TOKEN": "s3cret"}
	for _, p := range []int{portA, portB, portR} {
		startRun(t, []string{"-p", "0", "--resp-port", strconv.Itoa(p), "--cluster-config", conf}, env)
	}
	for _, p := range []int{portA, portB, portR} {
		waitDial(t, addr(p))
	}
	do := func(nc net.Conn, br *bufio.Reader, args ...string) string {
		t.Helper()
		fmt.Fprintf(nc, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(nc, "$%d\r\n%s\r\n", len(a), a)
		}
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "$") && line != "$-1\r\n" {
			body, _ := br.ReadString('\n')
			line += body
		}
		return line
	}
	dial := func(p int) (net.Conn, *bufio.Reader) {
		nc, err := net.Dial("tcp", addr(p))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
		br := bufio.NewReader(nc)
		if got := do(nc, br, "AUTH", "s3cret"); got != "+OK\r\n" {
			t.Fatalf("AUTH = %q", got)
		}
		return nc, br
	}
	pc, pbr := dial(portA)
	rc, rbr := dial(portR)
	// "b" is slot 3300, a's.
	if got := do(pc, pbr, "SET", "b", "hello"); got != "+OK\r\n" {
		t.Fatalf("SET on the primary = %q", got)
	}
	if got, want := do(rc, rbr, "GET", "b"), "-MOVED 3300 "+addr(portA)+"\r\n"; got != want {
		t.Errorf("GET on the replica without READONLY = %q, want %q", got, want)
	}
	if got := do(rc, rbr, "READONLY"); got != "+OK\r\n" {
		t.Fatalf("READONLY = %q", got)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got := do(rc, rbr, "GET", "b")
		if got == "$5\r\nhello\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica's GET b = %q after 30 s; INFO replication: %q", got, do(rc, rbr, "INFO", "replication"))
		}
	}
	if got := do(rc, rbr, "ROLE"); !strings.HasPrefix(got, "*5\r\n") {
		t.Errorf("ROLE on the replica = %q, want a replica's", got)
	}
}
