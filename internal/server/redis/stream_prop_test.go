package redis

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// maskSeenTimes blanks the consumers' seen-time (and Redis 7.2's
// active-time) in an XINFO STREAM FULL reply: a replica applying a
// stream's commands stamps them with its own clock, as a Redis replica
// does; everything else must be equal.
func maskSeenTimes(reply string) string {
	n, err := parseRESPNode(bufio.NewReader(strings.NewReader(reply)))
	if err != nil {
		return reply
	}
	var walk func(n *respNode)
	walk = func(n *respNode) {
		if len(n.head) > 0 && (n.head[0] == '*' || n.head[0] == '%') {
			for i := 0; i+1 < len(n.kids); i += 2 {
				if h := n.kids[i].head; h == "$9\r\nseen-time\r\n" || h == "$11\r\nactive-time\r\n" {
					n.kids[i+1] = &respNode{head: ":_\r\n"}
				}
			}
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(n)
	return n.String()
}

// streamWorkload runs every stream command that changes a stream, on a
// stream of n entries and more, so that a replica must follow each.
func streamWorkload(c interface{ Do(...string) string }, key string, n int) {
	for i := 1; i <= n; i++ {
		c.Do("XADD", key, "*", "f", strconv.Itoa(i), "pad", strings.Repeat("x", 40))
	}
	c.Do("XGROUP", "CREATE", key, "g1", "0")
	c.Do("XGROUP", "CREATE", key, "g2", "$")
	c.Do("XGROUP", "CREATE", key+":new", "g3", "$", "MKSTREAM")
	c.Do("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "50", "STREAMS", key, ">")
	c.Do("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "20", "STREAMS", key, ">")
	c.Do("XREADGROUP", "GROUP", "g1", "bob", "STREAMS", key, "0")    // history: counts up
	c.Do("XREADGROUP", "GROUP", "g2", "nobody", "STREAMS", key, ">") // nothing yet: consumer made
	c.Do("XADD", key, "MAXLEN", "~", strconv.Itoa(n-100), "*", "after", "trim")
	c.Do("XADD", key, "MINID", "=", "0-1", "*", "a", "b")
	c.Do("XREADGROUP", "GROUP", "g2", "dan", "NOACK", "COUNT", "1", "STREAMS", key, ">")
	c.Do("XREADGROUP", "GROUP", "g2", "erin", "COUNT", "3", "STREAMS", key, ">")
	// Entries pending for g1 deleted from the stream: claims clear them.
	var first string
	if r := c.Do("XRANGE", key, "-", "+", "COUNT", "1"); strings.Contains(r, "-") {
		first = strings.Split(r, "\r\n")[3]
	}
	c.Do("XDEL", key, first)
	c.Do("XACK", key, "g1", first)
	c.Do("XAUTOCLAIM", key, "g1", "carol", "0", "0-0", "COUNT", "10")
	c.Do("XCLAIM", key, "g1", "dave", "0", first, "JUSTID")
	c.Do("XTRIM", key, "MAXLEN", strconv.Itoa(n/2))
	c.Do("XTRIM", key, "MINID", "~", "0-1") // nothing: not propagated
	c.Do("XGROUP", "SETID", key, "g2", "$")
	c.Do("XGROUP", "CREATECONSUMER", key, "g2", "frank")
	c.Do("XGROUP", "DELCONSUMER", key, "g1", "alice")
	c.Do("XGROUP", "CREATE", key, "gone", "0")
	c.Do("XGROUP", "DESTROY", key, "gone")
	c.Do("XADD", key, "*", "last", "1")
	c.Do("XSETID", key, "99999999999999-0", "ENTRIESADDED", "100000", "MAXDELETEDID", "1-0")
	c.Do("XADD", key+":gone", "*", "a", "1")
	c.Do("XTRIM", key+":gone", "MAXLEN", "0")
	c.Do("SELECT", "3")
	c.Do("XADD", key, "*", "in", "db3")
	c.Do("XGROUP", "CREATE", key, "g", "0")
	c.Do("XREADGROUP", "GROUP", "g", "c", "STREAMS", key, ">")
	c.Do("SELECT", "0")
}

// TestStreamReplicatesCommands: a MiniKV primary streams a stream's
// changes as the commands Redis propagates (XADD with its ID, XCLAIM ...
// FORCE JUSTID, XGROUP SETID ...), not the whole stream: one XADD to a
// stream of 2 000 entries adds tens of bytes to the replication stream,
// and a redis-server replica and a MiniKV replica both end with the
// primary's streams (their consumers' seen times are their own clocks').
func TestStreamReplicatesCommands(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	host, port, _ := net.SplitHostPort(rs.respAddr)
	c := dialRESP(t, rs.respAddr)
	c.Do("XADD", "pre", "1-1", "a", "b") // carried by the full syncs
	redisReplica, mkReplica := twoReplicas(t, host, port)

	streamWorkload(c, "s", 2000)
	off := func() int64 {
		n, _ := strconv.ParseInt(infoField(t, rs.respAddr, "replication", "master_repl_offset"), 10, 64)
		return n
	}
	before := off()
	c.Do("XADD", "s", "5-5", "one", "entry")
	c.Do("XADD", "s", "MAXLEN", "~", "10", "5-6", "trimmed", "too")
	c.Do("XREADGROUP", "GROUP", "g2", "erin", "COUNT", "1", "STREAMS", "s", ">")
	c.Do("XACK", "s", "g2", "5-5")
	// Each is a command of its own (a RESTORE of the stream is over 40 KB).
	if grew := off() - before; grew > 2000 {
		t.Errorf("four changes of a 1 000-entry stream grew the replication stream by %d bytes", grew)
	}

	want := off()
	for _, r := range []string{redisReplica, mkReplica} {
		waitFor(t, "the replica "+r+" to catch up", func() bool {
			return infoField(t, r, "replication", "slave_repl_offset") == fmt.Sprint(want)
		})
	}
	for _, r := range []string{redisReplica, mkReplica} {
		rc := dialRESP(t, r)
		for _, db := range []string{"0", "3"} {
			c.Do("SELECT", db)
			rc.Do("SELECT", db)
			for _, k := range []string{"pre", "s", "s:new", "s:gone"} {
				for _, args := range [][]string{{"TYPE", k}, {"XRANGE", k, "-", "+"}, {"XINFO", "STREAM", k, "FULL"},
					{"XPENDING", k, "g1", "-", "+", "100"}, {"XPENDING", k, "g2", "-", "+", "100"}} {
					w, g := c.Do(args...), rc.Do(args...)
					if args[0] == "XINFO" {
						w, g = maskSeenTimes(drop72(w)), maskSeenTimes(drop72(g))
					}
					if args[0] == "XPENDING" {
						w, g = dropIdle(w), dropIdle(g)
					}
					if g != w {
						t.Errorf("db %s %q: replica %s\n%.3000q\nprimary\n%.3000q", db, args, r, g, w)
					}
				}
			}
		}
		c.Do("SELECT", "0")
	}
}

// TestStreamFullSyncUnderWrites: replicas that resync fully while a
// stream is written (entries added and trimmed, read by a group,
// acknowledged, claimed) load a snapshot taken after the stream's offset
// was marked, then apply the commands from the mark, some of them
// already in the snapshot: applied again they change nothing (an XADD's
// ID is refused as too small, a trim by MINID trims nothing more, an
// XCLAIM ... FORCE sets what is set), so every replica ends with the
// primary's streams.
func TestStreamFullSyncUnderWrites(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	host, port, _ := net.SplitHostPort(rs.respAddr)
	c := dialRESP(t, rs.respAddr)
	c.Do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	// The writer goes on from before the replicas attach until 2 000
	// operations after both links are up.
	var n atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := dialRESP(t, rs.respAddr)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			n.Store(int64(i))
			w.Do("XADD", "s", "*", "n", strconv.Itoa(i))
			switch {
			case i%50 == 0:
				w.Do("XADD", "s", "MAXLEN", "~", "300", "*", "trim", "1")
			case i%7 == 0:
				w.Do("XTRIM", "s", "MAXLEN", "400")
			case i%3 == 0:
				r := w.Do("XREADGROUP", "GROUP", "g", "c"+strconv.Itoa(i%4), "COUNT", "2", "STREAMS", "s", ">")
				if lines := strings.Split(r, "\r\n"); len(lines) > 8 && i%2 == 0 {
					w.Do("XACK", "s", "g", lines[8])
				}
			case i%11 == 0:
				w.Do("XAUTOCLAIM", "s", "g", "claimer", "0", "0-0", "COUNT", "3")
			}
		}
	}()
	waitFor(t, "the writer to begin", func() bool { return n.Load() > 1000 })
	redisReplica, mkReplica := twoReplicas(t, host, port)
	at := n.Load()
	waitFor(t, "2 000 more writes", func() bool { return n.Load() > at+2000 })
	close(stop)
	<-done
	want := infoField(t, rs.respAddr, "replication", "master_repl_offset")
	for _, r := range []string{redisReplica, mkReplica} {
		waitFor(t, "the replica "+r+" to catch up", func() bool {
			return infoField(t, r, "replication", "master_link_status") == "up" &&
				infoField(t, r, "replication", "slave_repl_offset") == want
		})
		rc := dialRESP(t, r)
		for _, args := range [][]string{{"XRANGE", "s", "-", "+"}, {"XINFO", "STREAM", "s", "FULL", "COUNT", "0"}, {"XPENDING", "s", "g", "-", "+", "10000"}} {
			w, g := c.Do(args...), rc.Do(args...)
			if args[0] == "XINFO" {
				w, g = maskSeenTimes(drop72(w)), maskSeenTimes(drop72(g))
			}
			if args[0] == "XPENDING" {
				w, g = dropIdle(w), dropIdle(g)
			}
			if g != w {
				t.Errorf("%q: replica %s\n%.2000q\nprimary\n%.2000q", args, r, g, w)
			}
		}
	}
}

// parseMultibulk splits a RESP array of bulk strings into its arguments.
func parseMultibulk(t *testing.T, raw string) []string {
	t.Helper()
	br := bufio.NewReader(strings.NewReader(raw))
	line, _ := br.ReadString('\n')
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if line[0] != '*' || err != nil {
		t.Fatalf("not an array: %q", raw)
	}
	args := make([]string, n)
	for i := range args {
		line, _ = br.ReadString('\n')
		l, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		b := make([]byte, l+2)
		if _, err := io.ReadFull(br, b); err != nil {
			t.Fatal(err)
		}
		args[i] = string(b[:l])
	}
	return args
}

// TestStreamPropagationReplays checks what a full resync relies on: the
// commands a MiniKV primary streams for a stream's changes, applied to a
// copy holding the state after any of them, from any earlier point on,
// end in the primary's state (the snapshot is taken after the stream's
// offset is marked, so a replica applies again what it holds already).
func TestStreamPropagationReplays(t *testing.T) {
	checkReplays(t, func(c *servertest.RESPClient) {
		streamWorkload(c, "s", 300)
		for i := range 60 {
			c.Do("XADD", "s", "MAXLEN", "~", "200", "*", "more", strconv.Itoa(i))
			c.Do("XREADGROUP", "GROUP", "g1", "c"+strconv.Itoa(i%3), "COUNT", "2", "STREAMS", "s", ">")
			if i%4 == 0 {
				c.Do("XAUTOCLAIM", "s", "g1", "c9", "0", "0-0", "COUNT", "2")
			}
			if i%5 == 0 {
				c.Do("XTRIM", "s", "MAXLEN", strconv.Itoa(250-i))
			}
		}
	}, func(cl *servertest.RESPClient) string {
		var b strings.Builder
		for _, d := range []string{"0", "3"} {
			cl.Do("SELECT", d)
			for _, k := range []string{"s", "s:new", "s:gone"} {
				b.WriteString(cl.Do("XRANGE", k, "-", "+"))
				b.WriteString(maskSeenTimes(cl.Do("XINFO", "STREAM", k, "FULL")))
				for _, g := range []string{"g1", "g2", "g"} {
					b.WriteString(dropIdle(cl.Do("XPENDING", k, g, "-", "+", "1000")))
				}
			}
		}
		return b.String()
	}, "X", 200)
}

// checkReplays runs workload on a MiniKV primary, reads the commands it
// streams off a replication link (PSYNC), and checks that every one
// begins with prefix and that there are at least min of them; then that
// they give the primary's state (as reads sees it) on a MiniKV replica:
// applied once in order, and for 25 seeded pairs of points i <= j,
// applied from i on over a snapshot of the state after j (as a full
// resync's replica does, its snapshot taken after the offset's mark).
func checkReplays(t *testing.T, workload func(*servertest.RESPClient), reads func(*servertest.RESPClient) string, prefix string, min int) {
	t.Helper()
	rs := startRESP(t, server.Config{}, store.Config{})
	br, _ := psyncFull(t, rs.respAddr)

	c := dialRESP(t, rs.respAddr)
	workload(c)
	c.Do("SET", "the", "end")

	// The units a replica applies: a command, or a MULTI ... EXEC block,
	// each with the database selected before it.
	type unit struct {
		db   string
		cmds [][]string
	}
	var units []unit
	db, block := "0", [][]string(nil)
	inMulti := false
	for {
		raw, err := readRESPReply(br)
		if err != nil {
			t.Fatal(err)
		}
		args := parseMultibulk(t, raw)
		name := strings.ToUpper(args[0])
		switch {
		case name == "PING" || name == "REPLCONF":
			continue
		case name == "SELECT":
			db = args[1]
			continue
		case name == "MULTI":
			inMulti, block = true, nil
			continue
		case name == "EXEC":
			inMulti = false
			units = append(units, unit{db, block})
			continue
		case inMulti:
			block = append(block, args)
			continue
		}
		if name == "SET" && args[1] == "the" {
			break
		}
		if !strings.HasPrefix(name, prefix) {
			t.Fatalf("a change streamed as %q", args)
		}
		units = append(units, unit{db, [][]string{args}})
	}
	if len(units) < min {
		t.Fatalf("%d units streamed", len(units))
	}

	want := reads(c)
	r0 := startRESP(t, server.Config{}, store.Config{})
	rc := dialRESP(t, r0.respAddr)
	apply := func(us []unit) {
		for _, u := range us {
			rc.Do("SELECT", u.db)
			if len(u.cmds) > 1 {
				rc.Do("MULTI")
			}
			for _, cmd := range u.cmds {
				rc.Do(cmd...)
			}
			if len(u.cmds) > 1 {
				rc.Do("EXEC")
			}
		}
	}
	apply(units)
	if got := reads(rc); got != want {
		t.Fatalf("the streamed commands applied once:\n%.3000q\nthe primary:\n%.3000q", got, want)
	}
	// Each trial: a replica whose (fake) primary sends the snapshot of
	// the state after j units, then the stream from unit i on.
	snap := newRDBSource(t)
	rnd := rand.New(rand.NewPCG(41, 39))
	for range 25 {
		j := rnd.IntN(len(units) + 1)
		i := rnd.IntN(j + 1)
		var stream strings.Builder
		dbNow := "0"
		for _, u := range units[i:] {
			if u.db != dbNow {
				stream.WriteString(multibulk("SELECT", u.db))
				dbNow = u.db
			}
			if len(u.cmds) > 1 {
				stream.WriteString(multibulk("MULTI"))
			}
			for _, cmd := range u.cmds {
				stream.WriteString(multibulk(cmd...))
			}
			if len(u.cmds) > 1 {
				stream.WriteString(multibulk("EXEC"))
			}
		}
		rdb := snap(func(cl *servertest.RESPClient) {
			for _, u := range units[:j] {
				cl.Do("SELECT", u.db)
				if len(u.cmds) > 1 {
					cl.Do("MULTI")
				}
				for _, cmd := range u.cmds {
					cl.Do(cmd...)
				}
				if len(u.cmds) > 1 {
					cl.Do("EXEC")
				}
			}
		})
		host, port, _ := net.SplitHostPort(holdingPrimary(t, "+FULLRESYNC "+strings.Repeat("f", 40)+" 0\r\n"+rdb+stream.String()))
		r := startRESP(t, server.Config{}, store.Config{})
		rc := dialRESP(t, r.respAddr)
		if got := rc.Do("REPLICAOF", host, port); got != "+OK\r\n" {
			t.Fatalf("REPLICAOF = %q", got)
		}
		waitFor(t, "the replica to apply the stream", func() bool {
			return infoField(t, r.respAddr, "replication", "slave_repl_offset") == strconv.Itoa(stream.Len())
		})
		if got := reads(rc); got != want {
			t.Fatalf("the state after %d of %d units, then the units from %d on:\n%q\nthe primary:\n%q", j, len(units), i, got, want)
		}
	}
}

// newRDBSource returns a function that builds a state on a fresh MiniKV
// with fill and returns its full resync's snapshot ($<length> and the
// RDB).
func newRDBSource(t *testing.T) func(fill func(*servertest.RESPClient)) string {
	return func(fill func(*servertest.RESPClient)) string {
		rs := startRESP(t, server.Config{}, store.Config{})
		fill(dialRESP(t, rs.respAddr))
		_, snap := psyncFull(t, rs.respAddr)
		return snap
	}
}

// psyncFull asks addr for a full resync (PSYNC ? -1) and returns the
// link's reader, at the stream's first byte, and the snapshot as sent
// ($<length> and the RDB). The link closes with the test.
func psyncFull(t *testing.T, addr string) (*bufio.Reader, string) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	br := bufio.NewReader(nc)
	if _, err := nc.Write([]byte(multibulk("PSYNC", "?", "-1"))); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+FULLRESYNC") {
		t.Fatalf("PSYNC: %q %v", line, err)
	}
	head, err := br.ReadString('\n')
	if err != nil || head[0] != '$' {
		t.Fatalf("the RDB's length: %q %v", head, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	b := make([]byte, n)
	if _, err := io.ReadFull(br, b); err != nil {
		t.Fatal(err)
	}
	return br, head + string(b)
}

// holdingPrimary is fakePrimary keeping the link open after its reply,
// reading (and dropping) the replica's acknowledgements.
func holdingPrimary(t *testing.T, reply string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		t.Cleanup(func() { nc.Close() })
		br := bufio.NewReader(nc)
		for {
			req, err := readCommand(br)
			if err != nil {
				return
			}
			if strings.EqualFold(req[0], "psync") {
				_, _ = nc.Write([]byte(reply))
				_, _ = io.Copy(io.Discard, br)
				return
			}
			_, _ = nc.Write([]byte("+OK\r\n"))
		}
	}()
	return ln.Addr().String()
}

// twoReplicas starts a redis-server replica and a MiniKV replica of the
// primary at host:port and waits for both links to be up.
func twoReplicas(t *testing.T, host, port string) (redisReplica, mkReplica string) {
	t.Helper()
	redisReplica = startRedisServer(t, "--replicaof", host, port)
	mk := startRESP(t, server.Config{}, store.Config{})
	if got := dialRESP(t, mk.respAddr).Do("REPLICAOF", host, port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF = %q", got)
	}
	for _, r := range []string{redisReplica, mk.respAddr} {
		waitFor(t, "the link of "+r, func() bool { return infoField(t, r, "replication", "master_link_status") == "up" })
	}
	return redisReplica, mk.respAddr
}
