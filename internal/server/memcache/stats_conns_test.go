package memcache_test

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// connsBlock is one socket of "stats conns": its descriptor and its
// fields in order.
type connsBlock struct {
	fd     int
	keys   []string
	fields map[string]string
}

// statsConns opens an idle connection (one "get" done), then asks "stats
// conns" on another, and returns the blocks in the order printed.
func statsConns(t *testing.T, addr string) (blocks []connsBlock, self, idle string) {
	t.Helper()
	dial := func() (net.Conn, *bufio.Reader) {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		return nc, bufio.NewReader(nc)
	}
	idleConn, idleR := dial()
	fmt.Fprintf(idleConn, "get nothing\r\n")
	if line, err := idleR.ReadString('\n'); err != nil || line != "END\r\n" {
		t.Fatalf("get: %q %v", line, err)
	}
	nc, br := dial()
	self, idle = "tcp:"+nc.LocalAddr().String(), "tcp:"+idleConn.LocalAddr().String()
	// memcached moves a connection that has just been answered through
	// conn_mwrite and conn_new_cmd to conn_read on its worker thread:
	// ask until the idle one has settled (a hang guard, not a timing).
	for deadline := time.Now().Add(10 * time.Second); ; {
		blocks = readConns(t, nc, br)
		settled := false
		for _, b := range blocks {
			settled = settled || b.fields["addr"] == idle && b.fields["state"] == "conn_read"
		}
		if settled || time.Now().After(deadline) {
			return blocks, self, idle
		}
		time.Sleep(time.Millisecond)
	}
}

// readConns sends "stats conns" and reads its blocks.
func readConns(t *testing.T, nc net.Conn, br *bufio.Reader) (blocks []connsBlock) {
	t.Helper()
	fmt.Fprintf(nc, "stats conns\r\n")
	byFd := map[int]int{} // fd -> index in blocks
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stats conns: %v", err)
		}
		line = strings.TrimSuffix(line, "\r\n")
		if line == "END" {
			break
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "STAT" {
			t.Fatalf("stats conns line %q", line)
		}
		fdText, key, ok := strings.Cut(f[1], ":")
		fd, err := strconv.Atoi(fdText)
		if !ok || err != nil {
			t.Fatalf("stats conns name %q: want <fd>:<field>", f[1])
		}
		i, ok := byFd[fd]
		if !ok {
			i = len(blocks)
			blocks = append(blocks, connsBlock{fd: fd, fields: map[string]string{}})
			byFd[fd] = i
		}
		b := &blocks[i]
		b.keys = append(b.keys, key)
		b.fields[key] = f[2]
	}
	return blocks
}

// TestDifferentialStatsConns: "stats conns" prints what memcached 1.6
// prints, block for block: the listener (addr, state conn_listening,
// secs_since_last_cmd), then each client connection (addr, listen_addr,
// state, secs_since_last_cmd) keyed by its descriptor, in descriptor
// order; the connection asking is conn_parse_cmd and an idle one
// conn_read in both.
func TestDifferentialStatsConns(t *testing.T) {
	for _, srv := range []struct{ name, addr string }{
		{"memcached", startDiffMemcached(t, diffMemcachedPath(t, true))},
		{"MiniKV", startDiffMiniKV(t)},
	} {
		t.Run(srv.name, func(t *testing.T) {
			blocks, self, idle := statsConns(t, srv.addr)
			if !slices.IsSortedFunc(blocks, func(a, b connsBlock) int { return a.fd - b.fd }) {
				t.Errorf("blocks not in descriptor order: %+v", blocks)
			}
			listenKeys := []string{"addr", "state", "secs_since_last_cmd"}
			connKeys := []string{"addr", "listen_addr", "state", "secs_since_last_cmd"}
			states := map[string]string{}
			listeners := 0
			for _, b := range blocks {
				if _, err := strconv.Atoi(b.fields["secs_since_last_cmd"]); err != nil {
					t.Errorf("fd %d: secs_since_last_cmd %q", b.fd, b.fields["secs_since_last_cmd"])
				}
				if b.fields["state"] == "conn_listening" {
					listeners++
					if !slices.Equal(b.keys, listenKeys) || b.fields["addr"] != "tcp:"+srv.addr {
						t.Errorf("listener block %+v", b)
					}
					continue
				}
				if !slices.Equal(b.keys, connKeys) || b.fields["listen_addr"] != "tcp:"+srv.addr {
					t.Errorf("connection block %+v", b)
				}
				states[b.fields["addr"]] = b.fields["state"]
			}
			if listeners != 1 || len(states) != 2 {
				t.Errorf("%d listeners and %d connections, want 1 and 2: %+v", listeners, len(states), blocks)
			}
			if states[self] != "conn_parse_cmd" || states[idle] != "conn_read" {
				t.Errorf("states: asking %q, idle %q; want conn_parse_cmd, conn_read", states[self], states[idle])
			}
		})
	}
}
