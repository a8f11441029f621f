package redis

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestBigRandReplyHoldsNothing: SRANDMEMBER, HRANDFIELD and ZRANDMEMBER
// with a count of -2147483647 on a small collection ask for a reply of
// 2^31 elements. While the client that asked does not read it, the
// server answers others, and a write to the same key goes through: the
// reply is written from a copy, outside the key's read view and off the
// event loop (randreply.go). Each big reply that is read has the count
// asked for, every element one of the collection's.
func TestBigRandReplyHoldsNothing(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	c := dialRESP(t, rs.respAddr)
	c.Do("SADD", "rr:s", "a", "b", "c")
	c.Do("HSET", "rr:h", "f1", "v1", "f2", "v2")
	c.Do("ZADD", "rr:z", "1.5", "m1", "2", "m2")
	for i, cmd := range [][]string{{"SRANDMEMBER", "rr:s"}, {"HRANDFIELD", "rr:h"}, {"ZRANDMEMBER", "rr:z"}, {"SRANDMEMBER", "rr:s"}} {
		nc, err := net.Dial("tcp", rs.respAddr)
		if err != nil {
			t.Fatal(err)
		}
		req := multibulk(append(cmd, "-2147483647")...)
		if i == 3 { // inside a transaction too
			req = multibulk("MULTI") + req + multibulk("EXEC")
		}
		if _, err := nc.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		// The asker reads nothing; the others are served meanwhile.
		if got := c.Do("PING"); got != "+PONG\r\n" {
			t.Errorf("%s: PING = %q", cmd[0], got)
		}
		var write []string
		switch {
		case i == 3:
			write = []string{"SADD", "rr:s", "e"}
		case cmd[0] == "SRANDMEMBER":
			write = []string{"SADD", "rr:s", "d"}
		case cmd[0] == "HRANDFIELD":
			write = []string{"HSET", "rr:h", "f3", "v3"}
		default:
			write = []string{"ZADD", "rr:z", "3", "m3"}
		}
		if got := c.Do(write...); got != ":1\r\n" {
			t.Errorf("%s: %q while the big reply waits = %q", cmd[0], write, got)
		}
		nc.Close()
	}
	// Inside EXEC and scripts, whose replies are kept until the end,
	// more than 2^20 picks are refused; fewer are served.
	refusal := "-ERR count is out of range: at most 1048576 random picks with repetition inside MULTI or a script\r\n"
	c.Do("MULTI")
	c.Do("SRANDMEMBER", "rr:s", "-1048577")
	if got := c.Do("EXEC"); got != "*1\r\n"+refusal {
		t.Errorf("EXEC of SRANDMEMBER -1048577 = %q", got)
	}
	if got := c.Do("EVAL", "return redis.pcall('zrandmember', KEYS[1], -1048577)", "1", "rr:z"); got != refusal {
		t.Errorf("a script's ZRANDMEMBER -1048577 = %q", got)
	}
	if got := c.Do("EVAL", "return #redis.call('hrandfield', KEYS[1], -5000)", "1", "rr:h"); got != ":5000\r\n" {
		t.Errorf("a script's HRANDFIELD -5000 = %q", got)
	}
	members := map[string]string{"rr:s": "a b c d e", "rr:h": "f1 f2 f3", "rr:z": "m1 m2 m3"}
	for _, cmd := range [][]string{{"SRANDMEMBER", "rr:s", "-5000"}, {"HRANDFIELD", "rr:h", "-5000"}, {"ZRANDMEMBER", "rr:z", "-5000"},
		{"HRANDFIELD", "rr:h", "-5000", "WITHVALUES"}, {"ZRANDMEMBER", "rr:z", "-5000", "WITHSCORES"}} {
		nc, err := net.Dial("tcp", rs.respAddr)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := nc.Write([]byte(multibulk(cmd...))); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(nc)
		head, _ := br.ReadString('\n')
		n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
		per := 1
		if len(cmd) == 4 {
			per = 2
		}
		if head[0] != '*' || n != 5000*per {
			t.Fatalf("%q: header %q", cmd, head)
		}
		seen := map[string]bool{}
		for i := range n {
			if _, err := br.ReadString('\n'); err != nil { // $len
				t.Fatal(err)
			}
			v, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			v = strings.TrimSuffix(v, "\r\n")
			if i%per == 0 {
				if !strings.Contains(" "+members[cmd[1]]+" ", " "+v+" ") {
					t.Fatalf("%q: element %q", cmd, v)
				}
				seen[v] = true
			}
		}
		if len(seen) < 2 {
			t.Errorf("%q: 5000 picks gave only %v", cmd, seen)
		}
		nc.Close()
	}
}
