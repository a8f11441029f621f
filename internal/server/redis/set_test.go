package redis

import (
	"fmt"
	"io"
	"testing"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestSetDispatchZeroAllocs: SADD, SISMEMBER, SMISMEMBER and SREM
// allocate nothing once warm, on an intset, a listpack and a table.
func TestSetDispatchZeroAllocs(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	p := New(rs.srv)
	rc := &conn{Conn: new(server.Conn), p: p, st: p.st}
	rc.w = resp.NewWriter(io.Discard, server.WriteBufSize)
	for _, c := range []struct {
		prefix string
		n      int
		member string
	}{{"", 10, "12345"}, {"m", 10, "member"}, {"m", 1000, "member"}} {
		key := []byte(fmt.Sprint("s", c.prefix, c.n))
		for i := range c.n {
			rc.dispatch([][]byte{[]byte("SADD"), key, []byte(fmt.Sprint(c.prefix, i))})
		}
		m := []byte(c.member)
		cmds := [][][]byte{
			{[]byte("SADD"), key, m},
			{[]byte("SISMEMBER"), key, m},
			{[]byte("SMISMEMBER"), key, m, []byte("nope")},
			{[]byte("SREM"), key, m},
			{[]byte("SCARD"), key},
		}
		allocs := testing.AllocsPerRun(1000, func() {
			for _, argv := range cmds {
				rc.dispatch(argv)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: SADD+SISMEMBER+SMISMEMBER+SREM+SCARD allocate %v times", key, allocs)
		}
	}
}
