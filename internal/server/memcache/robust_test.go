package memcache

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
)

// robustCase is one hostile input on the memcached port: the exact reply,
// whether the connection must close, and (checked by the harness) that the
// sentinel value written before it survives byte for byte.
type robustCase struct {
	name   string
	send   string
	want   string
	closed bool
}

var memcacheBadInputs = []robustCase{
	{"negative length", "set s 0 0 -1\r\n", "CLIENT_ERROR bad command line format\r\n", false},
	{"huge length", "set s 0 0 99999999999999999999\r\n", "CLIENT_ERROR bad command line format\r\n", false},
	{"length over int32", "set s 0 0 4294967296\r\n", "CLIENT_ERROR bad command line format\r\n", false},
	{"too large value swallowed", "set s 0 0 2000000\r\n" + strings.Repeat("z", 2000000) + "\r\nget s\r\n",
		"SERVER_ERROR object too large for cache\r\nVALUE s 7 8\r\nsentinel\r\nEND\r\n", false},
	{"wrong data length", "set s 0 0 3\r\nabcdef\r\n", "CLIENT_ERROR bad data chunk\r\nERROR\r\n", false},
	{"missing CRLF after data", "set s 0 0 3\r\nabcXY", "CLIENT_ERROR bad data chunk\r\n", false},
	{"bare LF data", "set s 0 0 1\nx\nget s\n", "CLIENT_ERROR bad data chunk\r\nERROR\r\n", false},
	{"control character in key", "set s\x01 0 0 1\r\nx\r\n", "CLIENT_ERROR bad command line format\r\nERROR\r\n", false},
	{"key too long", "get " + strings.Repeat("k", 251) + "\r\n", "CLIENT_ERROR bad command line format\r\n", false},
	{"flags over 32 bits", "set s 4294967296 0 1\r\nx\r\n", "CLIENT_ERROR bad command line format\r\nERROR\r\n", false},
	{"negative flags", "set s -1 0 1\r\nx\r\n", "CLIENT_ERROR bad command line format\r\nERROR\r\n", false},
	{"failed add", "add s 0 0 1\r\nx\r\n", "NOT_STORED\r\n", false},
	{"stale cas", "cas s 0 0 1 999999\r\nx\r\n", "EXISTS\r\n", false},
	{"incr non-numeric", "incr s 1\r\n", "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n", false},
	{"bad delta", "incr s -1\r\n", "CLIENT_ERROR invalid numeric delta argument\r\n", false},
	{"garbage between commands", "get s\r\n\x00\x01\x02\r\nget s\r\n",
		"VALUE s 7 8\r\nsentinel\r\nEND\r\nERROR\r\nVALUE s 7 8\r\nsentinel\r\nEND\r\n", false},
	{"upper case command", "SET s 0 0 1\r\nx\r\n", "ERROR\r\nERROR\r\n", false},
	{"empty line", "\r\n", "ERROR\r\n", false},
	{"HTTP request", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", "", true},
	{"HTTP POST", "POST /set HTTP/1.0\r\n", "", true},
	{"binary protocol magic", "\x80\x01\x00\x01\x00\x00\x00\x00", "", true},
	{"TLS ClientHello on the plain port", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + strings.Repeat("\x00", 200), "", true},
	{"line over 2048 bytes", strings.Repeat("x", 3000) + "\r\n", "", true},
	{"no newline at all", strings.Repeat("y", 5000), "", true},
}

// TestBadInputCorpus sends each hostile input on a fresh connection after
// storing a sentinel, checks the exact reply and whether the connection
// closed, and then that the sentinel and the accounting did not change.
func TestBadInputCorpus(t *testing.T) {
	ts := startServer(t, server.Config{}, store.Config{})
	setup := dial(t, ts.addr)
	setup.Expect("set s 7 0 8\r\nsentinel\r\n", "STORED")
	setup.Send("gets s\r\n")
	casLine := setup.Line()
	setup.Line()
	setup.Line()
	before := ts.store.Stats()
	for _, tc := range memcacheBadInputs {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", ts.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			go io.WriteString(nc, tc.send)
			got, closed := servertest.ReadReply(nc, len(tc.want), 2*time.Second)
			if got != tc.want || closed != tc.closed {
				t.Errorf("%q...:\n got %q (closed %v)\nwant %q (closed %v)", trunc(tc.send), got, closed, tc.want, tc.closed)
			}
			check := dial(t, ts.addr)
			check.Expect("gets s\r\n", casLine, "sentinel", "END")
			if st := ts.store.Stats(); st.Items != before.Items || st.Bytes != before.Bytes {
				t.Errorf("store changed: items %d->%d bytes %d->%d", before.Items, st.Items, before.Bytes, st.Bytes)
			}
		})
	}
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}
