// Package cluster is MiniKV's static Redis Cluster topology: the slot map
// file that --cluster-config names, Redis's key-to-slot function, and the
// node ids that CLUSTER replies carry. It has no network side: no gossip,
// no failover, no resharding. Every node reads the same file at start-up
// and the map never changes while it runs.
//
// # The file
//
// One node per line: a name, the address clients reach it at, and either
// the hash slots it owns, as single slots or inclusive ranges (a primary),
// or the word replicaof and the name of the primary it replicates (a
// replica, which owns no slots). '#' starts a comment, which runs to the
// end of the line.
//
//	# name            address (host:port)                    slots
//	minikv-cluster-0  minikv-cluster-0.minikv-cluster:6379   0-5460
//	minikv-cluster-1  minikv-cluster-1.minikv-cluster:6379   5461-10922
//	minikv-cluster-2  minikv-cluster-2.minikv-cluster:6379   10923-16383
//	minikv-cluster-3  minikv-cluster-3.minikv-cluster:6379   replicaof minikv-cluster-0
//
// Parse is strict, so a typo never starts a cluster that sends keys to the
// wrong place: every slot 0-16383 must be owned by exactly one primary,
// names and addresses must be unique, every primary owns at least one
// slot, a replica names a primary of the file (before or after its own
// line; not another replica), and an address is a host (an IP or a DNS
// name, not a wildcard such as 0.0.0.0) and a port 1-65535. An error
// names the file and the line.
//
// A node's id, the 40 hex digits Redis Cluster uses to name a node, is the
// SHA-1 of its name (NodeID): the same name gives the same id on every
// node and across restarts.
package cluster

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// Slots is the number of hash slots of Redis Cluster.
const Slots = 16384

// Range is an inclusive range of slots.
type Range struct{ First, Last int }

func (r Range) String() string {
	if r.First == r.Last {
		return strconv.Itoa(r.First)
	}
	return strconv.Itoa(r.First) + "-" + strconv.Itoa(r.Last)
}

// Node is one line of the file.
type Node struct {
	Name string
	ID   string // NodeID(Name)
	Host string // as written, without brackets for IPv6
	Port int
	// Addr is Host:Port the way Redis writes it in -MOVED and CLUSTER
	// NODES: host, colon, port, with no brackets even around IPv6.
	Addr string
	Line int // the line of the file that declares it, from 1
	// Epoch is its config epoch: a primary's position among the
	// primaries of the file, from 1; a replica's is its primary's, as
	// Redis reports a replica's.
	Epoch  int
	Ranges []Range // the slots it owns, in order, adjacent ranges merged; none for a replica
	// Primary is the node a replica replicates; nil for a primary.
	Primary *Node
	// Replicas are a primary's replicas, in file order.
	Replicas []*Node
}

// IsReplica reports whether n is a replica (a replicaof line).
func (n *Node) IsReplica() bool { return n.Primary != nil }

// Map is a parsed slot map: the nodes in file order, and the owner of
// every slot.
type Map struct {
	Nodes     []*Node       // primaries and replicas, in file order
	Primaries []*Node       // the primaries, in file order
	owner     [Slots]uint16 // index into Nodes
	runs      []Run
}

// Run is a maximal run of consecutive slots with one owner, as CLUSTER
// SLOTS lists them.
type Run struct {
	Range
	Node *Node
}

// Owner returns the primary that owns slot, which must be in 0..Slots-1.
func (m *Map) Owner(slot int) *Node { return m.Nodes[m.owner[slot]] }

// OwnerIndex is Owner as an index into m.Nodes.
func (m *Map) OwnerIndex(slot int) int { return int(m.owner[slot]) }

// Runs lists every slot's owner as runs of consecutive slots, in slot
// order.
func (m *Map) Runs() []Run { return m.runs }

// Lookup returns the node named name, or nil.
func (m *Map) Lookup(name string) *Node {
	for _, n := range m.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// NodeAt returns the node whose address is host:port, or nil. Hosts
// compare as addresses when both are IPs (so ::ffff:127.0.0.1 is
// 127.0.0.1) and without regard to case otherwise.
func (m *Map) NodeAt(host string, port int) *Node {
	key := addrKey(host, port)
	for _, n := range m.Nodes {
		if addrKey(n.Host, n.Port) == key {
			return n
		}
	}
	return nil
}

// NodeID is the 40-hex-digit id of the node named name: the SHA-1 of the
// name, so every node of a cluster derives the same ids from the file.
func NodeID(name string) string {
	sum := sha1.Sum([]byte(name))
	return hex.EncodeToString(sum[:])
}

// Load reads and parses the file at path.
func Load(path string) (*Map, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cluster config: %w", err)
	}
	defer f.Close()
	return Parse(path, f)
}

// maxLine bounds a line: 16384 single slots written out take about 96 KB.
const maxLine = 1 << 20

// maxName bounds a node name (Kubernetes pod names are at most 253 bytes).
const maxName = 255

// ErrInvalid is wrapped by every error Parse returns about the file's
// content (as opposed to reading it).
var ErrInvalid = errors.New("cluster: invalid slot map")

// Parse reads a slot map from r; name is the file's name for error
// messages. See the package comment for the format and its rules.
func Parse(name string, r io.Reader) (*Map, error) {
	fail := func(line int, format string, args ...any) error {
		where := name
		if line > 0 {
			where += ":" + strconv.Itoa(line)
		}
		return fmt.Errorf("%s: %s: %w", where, fmt.Sprintf(format, args...), ErrInvalid)
	}
	m := &Map{}
	// owned[s] is 1 + the index of slot s's owner while parsing; 0: none.
	var owned [Slots]uint16
	byAddr := map[string]*Node{}
	byName := map[string]*Node{}
	// replicaOf[node] is the primary's name a replica line gives, with
	// the line, resolved once every line is read.
	replicaOf := map[*Node]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 3 {
			return nil, fail(n, "want NAME HOST:PORT SLOTS... or NAME HOST:PORT replicaof PRIMARY, got %q", strings.TrimSpace(line))
		}
		if err := checkName(f[0]); err != "" {
			return nil, fail(n, "node name %q: %s", f[0], err)
		}
		if prev := byName[f[0]]; prev != nil {
			return nil, fail(n, "node name %q is also on line %d", f[0], prev.Line)
		}
		host, port, err := parseAddr(f[1])
		if err != "" {
			return nil, fail(n, "address %q: %s", f[1], err)
		}
		if prev := byAddr[addrKey(host, port)]; prev != nil {
			return nil, fail(n, "address %s is also node %s's (line %d)", f[1], prev.Name, prev.Line)
		}
		if len(m.Nodes) >= Slots {
			return nil, fail(n, "more than %d nodes", Slots)
		}
		node := &Node{Name: f[0], ID: NodeID(f[0]), Host: host, Port: port,
			Addr: host + ":" + strconv.Itoa(port), Line: n, Epoch: len(m.Nodes) + 1}
		idx := uint16(len(m.Nodes))
		if strings.EqualFold(f[2], "replicaof") {
			if len(f) != 4 {
				return nil, fail(n, "want NAME HOST:PORT replicaof PRIMARY, got %q", strings.TrimSpace(line))
			}
			replicaOf[node] = f[3]
			f = f[:2] // no slots
		}
		for _, tok := range f[2:] {
			rg, err := parseRange(tok)
			if err != "" {
				return nil, fail(n, "slots %q: %s", tok, err)
			}
			for s := rg.First; s <= rg.Last; s++ {
				if o := owned[s]; o == idx+1 {
					return nil, fail(n, "slot %d is listed twice for node %s", s, node.Name)
				} else if o != 0 {
					prev := m.Nodes[o-1]
					return nil, fail(n, "slot %d is also owned by node %s (line %d)", s, prev.Name, prev.Line)
				}
				owned[s] = idx + 1
			}
		}
		m.Nodes = append(m.Nodes, node)
		byName[node.Name] = node
		byAddr[addrKey(host, port)] = node
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fail(n+1, "line longer than %d bytes", maxLine)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(m.Nodes) == 0 {
		return nil, fail(0, "no nodes (want lines of NAME HOST:PORT SLOTS...)")
	}
	for _, node := range m.Nodes {
		name, ok := replicaOf[node]
		if !ok {
			m.Primaries = append(m.Primaries, node)
			node.Epoch = len(m.Primaries)
			continue
		}
		p := byName[name]
		switch {
		case p == nil:
			return nil, fail(node.Line, "replicaof %q: no node of that name", name)
		case p == node:
			return nil, fail(node.Line, "node %s cannot replicate itself", name)
		case replicaOf[p] != "":
			return nil, fail(node.Line, "replicaof %s: node %s is itself a replica (line %d); name its primary", name, name, p.Line)
		}
		node.Primary = p
		p.Replicas = append(p.Replicas, node)
	}
	if len(m.Primaries) == 0 {
		return nil, fail(0, "no primaries (every line is a replicaof line)")
	}
	for _, node := range m.Nodes {
		if node.Primary != nil {
			node.Epoch = node.Primary.Epoch
		}
	}
	var missing []Range
	count := 0
	for s := 0; s < Slots; s++ {
		if owned[s] != 0 {
			continue
		}
		count++
		if k := len(missing); k > 0 && missing[k-1].Last == s-1 {
			missing[k-1].Last = s
		} else {
			missing = append(missing, Range{s, s})
		}
	}
	if count > 0 {
		list := make([]string, 0, 4)
		for i, r := range missing {
			if i == 3 {
				list = append(list, "...")
				break
			}
			list = append(list, r.String())
		}
		return nil, fail(0, "%d slots are owned by no node: %s (every slot 0-16383 must be owned exactly once)",
			count, strings.Join(list, " "))
	}
	for s := range owned {
		m.owner[s] = owned[s] - 1
	}
	for s := 0; s < Slots; {
		o := m.owner[s]
		e := s
		for e+1 < Slots && m.owner[e+1] == o {
			e++
		}
		node := m.Nodes[o]
		m.runs = append(m.runs, Run{Range{s, e}, node})
		node.Ranges = append(node.Ranges, Range{s, e})
		s = e + 1
	}
	return m, nil
}

// checkName returns why name is not a valid node name, or "". Names are
// what an operator types and matches against a pod or host name:
// letters, digits, '.', '_' and '-'.
func checkName(name string) string {
	if len(name) > maxName {
		return fmt.Sprintf("longer than %d bytes", maxName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Sprintf("character %q not allowed (letters, digits, '.', '_', '-')", c)
		}
	}
	return ""
}

// parseAddr splits host:port ([v6]:port for IPv6) and checks both.
func parseAddr(s string) (host string, port int, why string) {
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		return "", 0, "want HOST:PORT"
	}
	if host == "" {
		return "", 0, "no host"
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.IsUnspecified() {
			return "", 0, "a wildcard address is no address clients can connect to"
		}
	} else {
		if strings.ContainsAny(host, ":%[]") {
			return "", 0, "bad host " + strconv.Quote(host)
		}
		for i := 0; i < len(host); i++ {
			c := host[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
				return "", 0, fmt.Sprintf("host name character %q not allowed", c)
			}
		}
	}
	p, ok := parseDecimal(ps, 5)
	if !ok || p < 1 || p > 65535 {
		return "", 0, "port must be 1-65535"
	}
	return host, p, ""
}

// parseRange parses "N" or "N-M" with 0 <= N <= M < Slots.
func parseRange(tok string) (Range, string) {
	lo, hi, isRange := strings.Cut(tok, "-")
	if !isRange {
		hi = lo
	}
	a, ok1 := parseDecimal(lo, 5)
	z, ok2 := parseDecimal(hi, 5)
	switch {
	case !ok1 || !ok2:
		return Range{}, "want a slot or FIRST-LAST, in decimal"
	case a >= Slots || z >= Slots:
		return Range{}, "slots are 0-16383"
	case a > z:
		return Range{}, "first slot after last"
	}
	return Range{a, z}, ""
}

// parseDecimal parses 1 to max decimal digits, nothing else (no sign).
func parseDecimal(s string, max int) (int, bool) {
	if s == "" || len(s) > max {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// addrKey is the form two addresses are compared in.
func addrKey(host string, port int) string {
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().String()
	} else {
		host = strings.ToLower(host)
	}
	return host + " " + strconv.Itoa(port)
}

// Format writes m in the file format, one node per line in m's order:
// Parse(Format(m)) is m again.
func (m *Map) Format(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, n := range m.Nodes {
		bw.WriteString(n.Name)
		bw.WriteByte(' ')
		bw.WriteString(net.JoinHostPort(n.Host, strconv.Itoa(n.Port)))
		if n.Primary != nil {
			bw.WriteString(" replicaof " + n.Primary.Name)
		}
		for _, r := range n.Ranges {
			bw.WriteByte(' ')
			bw.WriteString(r.String())
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
