package cluster

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Slots of Redis 7.0.15's CLUSTER KEYSLOT for the same keys (the hash
// tag cases are keyHashSlot's edge cases). The differential test in
// internal/server/redis checks many more against a running redis-server.
func TestKeySlot(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{
		{"", 0},
		{"a", 15495},
		{"foo", 12182},
		{"123456789", 0x31C3 & 0x3FFF}, // CRC-16/XMODEM's check value
		{"{user1}.a", 8106},
		{"{}a", 10875},
		{"{{a}}", 10276},
		{"a{}{b}", 15033},
		{"a{b}{c}", 3300},
	} {
		if got := KeySlot([]byte(tc.key)); got != tc.want {
			t.Errorf("KeySlot(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
	// A hash tag: only what is between the first '{' and the first '}'
	// after it counts.
	for _, pair := range [][2]string{
		{"{user1}.a", "user1"}, {"x{user1}y", "user1"}, {"{user1}{other}", "user1"},
		{"a{b}}", "b"}, {"{{a}}", "{a"}, {"{a", "{a"}, {"}a{", "}a{"}, {"{}", "{}"},
	} {
		if got, want := KeySlot([]byte(pair[0])), KeySlot([]byte(pair[1])); got != want {
			t.Errorf("KeySlot(%q) = %d, want KeySlot(%q) = %d", pair[0], got, pair[1], want)
		}
	}
}

func TestNodeID(t *testing.T) {
	id := NodeID("minikv-cluster-0")
	if len(id) != 40 || strings.Trim(id, "0123456789abcdef") != "" {
		t.Fatalf("NodeID = %q, want 40 lower-case hex digits", id)
	}
	// printf minikv-cluster-0 | sha1sum
	if want := "0502c11506d7a499ae5f4b1c6bf92fafb00278ff"; id != want {
		t.Errorf("NodeID = %q, want %q", id, want)
	}
	if NodeID("minikv-cluster-0") != id || NodeID("minikv-cluster-1") == id {
		t.Error("NodeID is not a function of the name alone")
	}
}

const threeNodes = `
# name     address            slots
a          127.0.0.1:7000     0-5460          # the first third
b          127.0.0.1:7001     5461-10922
c          [::1]:7002         10923-16000 16001 16002-16383
`

func TestParse(t *testing.T) {
	m, err := Parse("cluster.conf", strings.NewReader(threeNodes))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(m.Nodes))
	}
	a, c := m.Nodes[0], m.Nodes[2]
	if a.Name != "a" || a.Host != "127.0.0.1" || a.Port != 7000 || a.Addr != "127.0.0.1:7000" || a.Line != 3 || a.Epoch != 1 || a.ID != NodeID("a") {
		t.Errorf("node a = %+v", a)
	}
	if c.Host != "::1" || c.Addr != "::1:7002" || c.Epoch != 3 {
		t.Errorf("node c = %+v", c)
	}
	if got := c.Ranges; len(got) != 1 || got[0] != (Range{10923, 16383}) {
		t.Errorf("node c's ranges = %v, want adjacent ranges merged into [10923-16383]", got)
	}
	for slot, want := range map[int]string{0: "a", 5460: "a", 5461: "b", 10922: "b", 10923: "c", 16001: "c", 16383: "c"} {
		if got := m.Owner(slot).Name; got != want {
			t.Errorf("Owner(%d) = %s, want %s", slot, got, want)
		}
	}
	runs := m.Runs()
	if len(runs) != 3 || runs[1].Range != (Range{5461, 10922}) || runs[1].Node.Name != "b" {
		t.Errorf("Runs() = %v", runs)
	}
	if m.Lookup("b") != m.Nodes[1] || m.Lookup("d") != nil {
		t.Error("Lookup")
	}
	for _, tc := range []struct {
		host string
		port int
		want string
	}{
		{"127.0.0.1", 7001, "b"}, {"::ffff:127.0.0.1", 7000, "a"}, {"::1", 7002, "c"},
		{"127.0.0.1", 7002, ""}, {"localhost", 7000, ""}, {"0.0.0.0", 7000, ""},
	} {
		got := ""
		if n := m.NodeAt(tc.host, tc.port); n != nil {
			got = n.Name
		}
		if got != tc.want {
			t.Errorf("NodeAt(%q, %d) = %q, want %q", tc.host, tc.port, got, tc.want)
		}
	}
}

// withReplicas is a primary before and after its replicas, and one
// without any.
const withReplicas = `
a-r1   127.0.0.1:7003   replicaof b
a      127.0.0.1:7000   0-5460
b      127.0.0.1:7001   5461-10922
b-r2   127.0.0.1:7004   REPLICAOF b   # case does not matter
a-r    127.0.0.1:7005   replicaof a
c      127.0.0.1:7002   10923-16383
`

func TestParseReplicas(t *testing.T) {
	m, err := Parse("cluster.conf", strings.NewReader(withReplicas))
	if err != nil {
		t.Fatal(err)
	}
	name := func(ns []*Node) (out []string) {
		for _, n := range ns {
			out = append(out, n.Name)
		}
		return out
	}
	if got := name(m.Nodes); !slices.Equal(got, []string{"a-r1", "a", "b", "b-r2", "a-r", "c"}) {
		t.Errorf("Nodes = %v, want file order", got)
	}
	if got := name(m.Primaries); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Primaries = %v", got)
	}
	a, b, c := m.Lookup("a"), m.Lookup("b"), m.Lookup("c")
	if got := name(b.Replicas); !slices.Equal(got, []string{"a-r1", "b-r2"}) {
		t.Errorf("b's replicas = %v", got)
	}
	if got := name(a.Replicas); !slices.Equal(got, []string{"a-r"}) || len(c.Replicas) != 0 {
		t.Errorf("a's replicas = %v, c's %v", got, name(c.Replicas))
	}
	r1 := m.Lookup("a-r1")
	if r1.Primary != b || !r1.IsReplica() || b.IsReplica() || len(r1.Ranges) != 0 || r1.Line != 2 || r1.ID != NodeID("a-r1") {
		t.Errorf("a-r1 = %+v", r1)
	}
	// Epochs count the primaries; a replica has its primary's.
	for n, want := range map[string]int{"a": 1, "b": 2, "c": 3, "a-r1": 2, "b-r2": 2, "a-r": 1} {
		if got := m.Lookup(n).Epoch; got != want {
			t.Errorf("%s's epoch = %d, want %d", n, got, want)
		}
	}
	if m.Owner(0) != a || m.Owner(5461) != b || m.NodeAt("127.0.0.1", 7003) != r1 {
		t.Error("Owner or NodeAt")
	}
	var out bytes.Buffer
	if err := m.Format(&out); err != nil {
		t.Fatal(err)
	}
	if want := "a-r1 127.0.0.1:7003 replicaof b\na 127.0.0.1:7000 0-5460\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("Format = %q, want it to begin %q", out.String(), want)
	}
}

// TestParseErrors checks that every way a file can be wrong stops it, with
// the file, the line and what is wrong.
func TestParseErrors(t *testing.T) {
	full := "z 10.0.0.9:6379 0-16383\n"
	for _, tc := range []struct {
		in, want string
	}{
		{"", "f.conf: no nodes"},
		{"# only comments\n\n", "f.conf: no nodes"},
		{"a 127.0.0.1:7000\n", "f.conf:1: want NAME HOST:PORT SLOTS... or NAME HOST:PORT replicaof PRIMARY, got \"a 127.0.0.1:7000\""},
		{full + "r 10.0.0.1:1 replicaof\n", "f.conf:2: want NAME HOST:PORT replicaof PRIMARY, got \"r 10.0.0.1:1 replicaof\""},
		{full + "r 10.0.0.1:1 replicaof z 5\n", "f.conf:2: want NAME HOST:PORT replicaof PRIMARY"},
		{full + "r 10.0.0.1:1 replicaof y\n", "f.conf:2: replicaof \"y\": no node of that name"},
		{full + "r 10.0.0.1:1 replicaof r\n", "f.conf:2: node r cannot replicate itself"},
		{full + "r 10.0.0.1:1 replicaof z\ns 10.0.0.2:1 replicaof r\n", "f.conf:3: replicaof r: node r is itself a replica (line 2); name its primary"},
		{"r 10.0.0.1:1 replicaof z\n", "f.conf:1: replicaof \"z\": no node of that name"},
		{full + "r 10.0.0.9:6379 replicaof z\n", "f.conf:2: address 10.0.0.9:6379 is also node z's (line 1)"},
		{full + "z 10.0.0.1:1 replicaof z\n", "f.conf:2: node name \"z\" is also on line 1"},
		{full + "r 10.0.0.1:1 replicaof 5\n", "f.conf:2: replicaof \"5\": no node of that name"},
		{"\na 127.0.0.1:7000 0-100\n", "f.conf: 16283 slots are owned by no node: 101-16383"},
		{"a 127.0.0.1:7000 0-100 200-16383\n", "f.conf: 99 slots are owned by no node: 101-199"},
		{"a 127.0.0.1:7000 1-8 10 12-16382\n", "4 slots are owned by no node: 0 9 11 ..."},
		{"a 127.0.0.1:7000 0-9000\nb 127.0.0.1:7001 9000-16383\n", "f.conf:2: slot 9000 is also owned by node a (line 1)"},
		{"a 127.0.0.1:7000 0-16383 5\n", "f.conf:1: slot 5 is listed twice for node a"},
		{full + "z 10.0.0.8:6379 1\n", "f.conf:2: node name \"z\" is also on line 1"},
		{full + "y 10.0.0.9:6379 1\n", "f.conf:2: address 10.0.0.9:6379 is also node z's (line 1)"},
		{"y HOST.example:6379 0-16383\nx host.EXAMPLE:6379 2\n", "f.conf:2: address host.EXAMPLE:6379 is also node y's (line 1)"},
		{"a/b 127.0.0.1:7000 0-16383\n", "f.conf:1: node name \"a/b\": character '/' not allowed"},
		{strings.Repeat("n", 256) + " 127.0.0.1:7000 0-16383\n", "longer than 255 bytes"},
		{"a 127.0.0.1 0-16383\n", "f.conf:1: address \"127.0.0.1\": want HOST:PORT"},
		{"a ::1:7000 0-16383\n", "want HOST:PORT"},
		{"a :7000 0-16383\n", "address \":7000\": no host"},
		{"a 0.0.0.0:7000 0-16383\n", "a wildcard address is no address clients can connect to"},
		{"a [::]:7000 0-16383\n", "a wildcard address"},
		{"a 127.0.0.1:0 0-16383\n", "port must be 1-65535"},
		{"a 127.0.0.1:65536 0-16383\n", "port must be 1-65535"},
		{"a 127.0.0.1:+80 0-16383\n", "port must be 1-65535"},
		{"a 127.0.0.1:http 0-16383\n", "port must be 1-65535"},
		{"a host!:80 0-16383\n", "host name character '!' not allowed"},
		{"a 127.0.0.1:7000 0-16384\n", "f.conf:1: slots \"0-16384\": slots are 0-16383"},
		{"a 127.0.0.1:7000 16383-0\n", "first slot after last"},
		{"a 127.0.0.1:7000 0-\n", "want a slot or FIRST-LAST"},
		{"a 127.0.0.1:7000 -5\n", "want a slot or FIRST-LAST"},
		{"a 127.0.0.1:7000 0-1-2\n", "want a slot or FIRST-LAST"},
		{"a 127.0.0.1:7000 +0-16383\n", "want a slot or FIRST-LAST"},
		{"a 127.0.0.1:7000 0x10\n", "want a slot or FIRST-LAST"},
		{"a 127.0.0.1:7000 000000-16383\n", "want a slot or FIRST-LAST"},
		{"a 127.0.0.1:7000 " + strings.Repeat("1", maxLine) + "\n", "f.conf:1: line longer than"},
	} {
		_, err := Parse("f.conf", strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%.60q) error = %v, want one containing %q", tc.in, err, tc.want)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%.60q) error %v is not ErrInvalid", tc.in, err)
		}
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cluster.conf")
	if err := os.WriteFile(path, []byte(threeNodes), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := Load(path); err != nil || len(m.Nodes) != 3 {
		t.Fatalf("Load = %v, %v", m, err)
	}
	if _, err := Load(path + ".missing"); err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// TestKubernetesManifest parses the slot map deploy/kubernetes/cluster.yaml
// embeds: the manifest and the parser must agree on the format.
func TestKubernetesManifest(t *testing.T) {
	b, err := os.ReadFile("../../deploy/kubernetes/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(b, []byte("cluster.conf: |\n"))
	if !ok {
		t.Fatal("no cluster.conf in deploy/kubernetes/cluster.yaml")
	}
	var conf strings.Builder
	for _, line := range strings.Split(string(rest), "\n") {
		if !strings.HasPrefix(line, "    ") {
			break
		}
		conf.WriteString(line[4:] + "\n")
	}
	m, err := Parse("cluster.yaml", strings.NewReader(conf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Nodes) != 3 || m.Nodes[0].Name != "minikv-cluster-0" || m.Nodes[0].Host != "minikv-cluster-0.minikv-cluster" {
		t.Errorf("nodes %+v", m.Nodes)
	}
}

// FuzzParse: Parse never panics, and whatever it accepts is a complete
// map that Format writes back to a file parsing to the same map.
func FuzzParse(f *testing.F) {
	f.Add([]byte(threeNodes))
	f.Add([]byte("a 127.0.0.1:7000 0-16383\n"))
	f.Add([]byte("a h:1 0-8191 # c\nb [fe80::1%eth0]:2 8192-16383\n"))
	f.Add([]byte("a 127.0.0.1:7000 0-9000\nb 127.0.0.1:7001 9000-16383\n"))
	f.Add([]byte(withReplicas))
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Parse("fuzz", bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		owned := 0
		for _, n := range m.Nodes {
			if len(n.ID) != 40 || (len(n.Ranges) == 0) != n.IsReplica() || m.Lookup(n.Name) != n || m.NodeAt(n.Host, n.Port) != n {
				t.Fatalf("bad node %+v", n)
			}
			if p := n.Primary; p != nil && (p.IsReplica() || !slices.Contains(p.Replicas, n) || n.Epoch != p.Epoch) {
				t.Fatalf("replica %s of %s: bad links", n.Name, p.Name)
			}
			for _, r := range n.Ranges {
				for s := r.First; s <= r.Last; s++ {
					if m.Owner(s) != n {
						t.Fatalf("slot %d: owner %s, but in %s's ranges", s, m.Owner(s).Name, n.Name)
					}
					owned++
				}
			}
		}
		if owned != Slots {
			t.Fatalf("the nodes' ranges hold %d slots", owned)
		}
		var out bytes.Buffer
		if err := m.Format(&out); err != nil {
			t.Fatal(err)
		}
		m2, err := Parse("formatted", &out)
		if err != nil {
			t.Fatalf("Format's output does not parse: %v\n%s", err, out.String())
		}
		if len(m2.Nodes) != len(m.Nodes) || m2.owner != m.owner {
			t.Fatalf("Format then Parse changed the map")
		}
		for i, n := range m.Nodes {
			if n2 := m2.Nodes[i]; n2.Name != n.Name || n2.Addr != n.Addr || n2.ID != n.ID || n2.Epoch != n.Epoch || n2.IsReplica() != n.IsReplica() {
				t.Fatalf("node %d: %+v, after Format and Parse %+v", i, n, n2)
			}
		}
	})
}
