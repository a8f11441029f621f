package redis

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/replication"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// Modes of FuzzReplicaStream: what the fuzzed bytes are.
const (
	fuzzStream   = iota // the stream, after PSYNC's +CONTINUE
	fuzzFullSync        // the snapshot ($<len> or $EOF:) and the stream, after +FULLRESYNC
	fuzzReply           // PSYNC's reply and all that follows
	fuzzModes
)

// realSnapshotAndStream is what a MiniKV primary sends a new replica:
// the snapshot of a full resync ($<len> and the RDB: strings with flags
// and deadlines, a hash) and then the stream of writes from both ports
// (SET with PXAT, the flags' PING, RESTORE of collections, DEL, MULTI
// ... EXEC, FLUSHALL), followed by some of a Redis
// primary's own commands.
func realSnapshotAndStream(tb testing.TB) (snap, stream []byte) {
	rs := startRESP(tb, server.Config{}, store.Config{})
	c := dialRESP(tb, rs.respAddr)
	mc := dial(tb, rs.addr)
	c.Do("SET", "a", "1", "EX", "1000")
	c.Do("HSET", "h", "f", "v")
	mc.Send("set m 5 0 2\r\nmc\r\n")
	mc.Line()
	nc, err := net.Dial("tcp", rs.respAddr)
	if err != nil {
		tb.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	if _, err := nc.Write([]byte(multibulk("PSYNC", "?", "-1"))); err != nil {
		tb.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "+FULLRESYNC") {
		tb.Fatalf("PSYNC: %q %v", line, err)
	}
	head, err := br.ReadString('\n')
	if err != nil {
		tb.Fatal(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	rdbBytes := make([]byte, n)
	if _, err := io.ReadFull(br, rdbBytes); err != nil {
		tb.Fatal(err)
	}
	snap = append([]byte(head), rdbBytes...)
	start, _ := strconv.Atoi(strings.Fields(line)[2])
	c.Do("SET", "s", "v", "PX", "100000")
	c.Do("RPUSH", "l", "x", "y")
	c.Do("ZADD", "z", "1", "m")
	mc.Send("set m 9 0 3\r\nmc2\r\n")
	mc.Line()
	c.Send(multibulk("MULTI") + multibulk("INCR", "n") + multibulk("SADD", "set", "1") + multibulk("EXEC"))
	for range 4 {
		c.Reply()
	}
	c.Do("DEL", "a")
	c.Do("FLUSHALL")
	c.Do("SET", "after", "flush")
	info := c.Do("INFO", "replication")
	i := strings.Index(info, "master_repl_offset:") + len("master_repl_offset:")
	end, _ := strconv.Atoi(info[i : i+strings.Index(info[i:], "\r")])
	stream = make([]byte, end-start)
	if _, err := io.ReadFull(br, stream); err != nil {
		tb.Fatal(err)
	}
	for _, cmd := range [][]string{{"INCR", "c"}, {"LPUSH", "l", "a", "b"}, {"MULTI"}, {"HSET", "h2", "x", "y"},
		{"PEXPIREAT", "l", "99999999999999"}, {"EXEC"}, {"REPLCONF", "GETACK", "*"}} {
		stream = append(stream, multibulk(cmd...)...)
	}
	return snap, stream
}

// fuzzRefused are commands a primary never streams whose effects reach
// past the store (the process, its files, its other links) or block the
// link: inputs naming one are skipped, as the fuzzer could otherwise shut
// the server down or wait forever.
var fuzzRefused = []string{"shutdown", "save", "bgsave", "bgrewriteaof", "replicaof", "slaveof", "config", "eval",
	"fcall", "function", "script", "client", "failover", "debug", "monitor", "subscribe", "psubscribe", "wait", "blpop", "brpop",
	"blmove", "brpoplpush", "blmpop", "bzpop", "bzmpop", "sync", "cluster", "flushdb", "sort"}

// namesRefused reports whether data holds a word of fuzzRefused at the
// start of a token (a bulk string or an inline command's word).
func namesRefused(data []byte) bool {
	low := bytes.ToLower(data)
	for _, c := range fuzzRefused {
		for rest, at := low, 0; ; {
			i := bytes.Index(rest, []byte(c))
			if i < 0 {
				break
			}
			if at+i == 0 || strings.IndexByte("\r\n \t\"'", low[at+i-1]) >= 0 {
				return true
			}
			rest, at = rest[i+1:], at+i+1
		}
	}
	return false
}

// FuzzReplicaStream feeds arbitrary bytes to a replica's link as its
// primary's (after the handshake, after a full resync's +FULLRESYNC, or
// as PSYNC's reply): the link must never panic, must end with an error
// once the bytes end, and a snapshot it refuses must leave the data
// as it was.
func FuzzReplicaStream(f *testing.F) {
	snap, stream := realSnapshotAndStream(f)
	f.Add(uint8(fuzzStream), stream)
	f.Add(uint8(fuzzFullSync), append(append([]byte(nil), snap...), stream...))
	f.Add(uint8(fuzzFullSync), append([]byte("$EOF:"+strings.Repeat("m", 40)+"\r\n"), append(append(snap[bytes.IndexByte(snap, '\n')+1:], strings.Repeat("m", 40)...), stream...)...))
	f.Add(uint8(fuzzReply), append([]byte("+CONTINUE "+strings.Repeat("a", 40)+"\r\n"), stream...))
	f.Add(uint8(fuzzReply), []byte("+FULLRESYNC x 0\r\n$3\r\nabc"))
	f.Add(uint8(fuzzStream), []byte("*2\r\n$3\r\nSET\r\n$-5\r\n"))
	f.Add(uint8(fuzzStream), []byte("*1\r\n$99999999999\r\n"))

	s := servertest.Start(f, server.Config{}, store.Config{MemoryLimit: 64 << 20})
	p := newClosed(f, s)
	s.Listen(f, p)
	p.follow.timeout.Store(5)
	p.repl.mu.Lock()
	p.repl.backlog = replication.NewBacklog(1<<16, 0)
	p.repl.mu.Unlock()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	replid := strings.Repeat("f", 40)

	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		if namesRefused(data) {
			return
		}
		if _, err := p.st.Store(store.ModeSet, []byte("keep"), []byte("kept"), 0, 0, 0); err != nil {
			t.Fatal(err)
		}
		served := make(chan struct{})
		go func() { // the primary: the handshake, then data, then the end
			defer close(served)
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(nc)
			for {
				req, err := readCommand(br)
				if err != nil {
					return
				}
				if !strings.EqualFold(req[0], "psync") {
					_, _ = nc.Write([]byte("+OK\r\n"))
					continue
				}
				switch mode % fuzzModes {
				case fuzzStream:
					_, _ = nc.Write([]byte("+CONTINUE " + replid + "\r\n"))
				case fuzzFullSync:
					_, _ = nc.Write([]byte("+FULLRESYNC " + replid + " 0\r\n"))
				}
				_, _ = nc.Write(data)
				return
			}
		}()
		l := &masterLink{p: p, host: "127.0.0.1", port: port, stop: make(chan struct{}), done: make(chan struct{})}
		began := time.Now()
		err := l.session()
		<-served
		if d := time.Since(began); d > 2*time.Second {
			t.Fatalf("the session took %v (%v)", d, err)
		}
		t.Logf("mode %d: %v", mode%fuzzModes, err)
		if err == nil {
			t.Fatal("the link's session ended without an error")
		}
		if errors.Is(err, errBadSnapshot) {
			if it, ok := p.st.Get([]byte("keep")); !ok || string(it.Value) != "kept" {
				t.Fatalf("a refused snapshot (%v) changed the data: keep = %q, %v", err, it.Value, ok)
			}
		}
		if p.masterLink() != nil {
			t.Fatal("the stream made the server follow another primary")
		}
	})
}

// fakePrimary listens for replicas, answers their handshake +OK and
// their PSYNC with reply, then closes the connection.
func fakePrimary(t *testing.T, reply string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				br := bufio.NewReader(nc)
				for {
					req, err := readCommand(br)
					if err != nil {
						return
					}
					if strings.EqualFold(req[0], "psync") {
						_, _ = nc.Write([]byte(reply))
						return
					}
					_, _ = nc.Write([]byte("+OK\r\n"))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestReplicaRefusesBadStreams: a replica whose primary sends a snapshot
// that is not an RDB file, answers +CONTINUE to a replica with no
// history, or sends bytes that are not commands, logs why, keeps serving
// its data, and reconnects.
func TestReplicaRefusesBadStreams(t *testing.T) {
	for _, tc := range []struct{ reply, logged string }{
		{"+FULLRESYNC " + strings.Repeat("f", 40) + " 0\r\n$9\r\nREDIS0010garbage", "not a valid RDB file"},
		{"+CONTINUE " + strings.Repeat("f", 40) + "\r\n", "to a PSYNC with no history"},
		{"+FULLRESYNC " + strings.Repeat("f", 40) + " 0\r\n$EOF:" + strings.Repeat("m", 40) + "\r\nREDIS" + strings.Repeat("m", 40) + "*1\r\n$-3\r\n",
			"not a valid RDB file"},
	} {
		logs := &lockedBuffer{}
		rs := startRESP(t, server.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))}, store.Config{})
		c := dialRESP(t, rs.respAddr)
		c.Do("SET", "keep", "kept")
		host, port, _ := net.SplitHostPort(fakePrimary(t, tc.reply))
		c.Do("REPLICAOF", host, port)
		waitFor(t, "the refusal in the log", func() bool { return strings.Contains(logs.String(), tc.logged) })
		if !strings.Contains(logs.String(), "link to the primary down") {
			t.Errorf("%q: the log does not say the link is down:\n%s", tc.reply, logs)
		}
		if got := c.Do("GET", "keep"); got != "$4\r\nkept\r\n" {
			t.Errorf("%q: GET keep after the bad stream = %q", tc.reply, got)
		}
		c.Do("REPLICAOF", "NO", "ONE")
	}
	// A stream that is not RESP, after a good snapshot.
	logs := &lockedBuffer{}
	rs := startRESP(t, server.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))}, store.Config{})
	snap, _ := realSnapshotAndStream(t)
	host, port, _ := net.SplitHostPort(fakePrimary(t, "+FULLRESYNC "+strings.Repeat("f", 40)+" 0\r\n"+string(snap)+"*2\r\n$3\r\nSET\r\n$-5\r\n"))
	c := dialRESP(t, rs.respAddr)
	c.Do("REPLICAOF", host, port)
	waitFor(t, "the refusal in the log", func() bool { return strings.Contains(logs.String(), "malformed replication stream from the primary") })
	if got := c.Do("GET", "m"); got != "$2\r\nmc\r\n" {
		t.Errorf("GET m, from the snapshot, after the bad stream = %q", got)
	}
	c.Do("REPLICAOF", "NO", "ONE")
}

// lockedBuffer is a log's destination that tests read while it is
// written.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
