package memcache

import (
	"testing"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestTypedKeysOnMemcachePort pins what the memcached commands do with a
// key holding a Redis collection (docs/memcached.md): reads and changes
// of the value answer SERVER_ERROR with Redis's WRONGTYPE text and leave
// it; set, replace and delete replace or remove it, as Redis's SET and
// DEL do; add finds it taken; touch sets its TTL.
func TestTypedKeysOnMemcachePort(t *testing.T) {
	s := startRESP(t, server.Config{}, store.Config{})
	r := dialRESP(t, s.respAddr)
	c := dial(t, s.addr)
	hset := func(key string) {
		t.Helper()
		r.Expect(multibulk("HSET", key, "f", "v"), ":1\r\n")
	}
	wrong := memcache.ServerErrorWrongType
	hset("h")
	c.Expect("get h\r\n", wrong)
	c.Expect("set s 0 0 1\r\nx\r\n", "STORED")
	c.Expect("get s h s\r\n", "VALUE s 0 1", "x", wrong) // the reply ends at the collection
	c.Expect("gets h\r\n", wrong)
	c.Expect("gat 100 h\r\n", wrong)
	c.Expect("append h 0 0 1\r\nx\r\n", wrong)
	c.Expect("prepend h 0 0 1\r\nx\r\n", wrong)
	c.Expect("incr h 1\r\n", wrong)
	c.Expect("decr h 1\r\n", wrong)
	c.Expect("mg h v\r\n", wrong)
	c.Expect("ma h\r\n", wrong)
	c.Expect("ms h 1 MA\r\nx\r\n", wrong)
	c.Expect("add h 0 0 1\r\nx\r\n", "NOT_STORED")
	r.Expect(multibulk("TTL", "h"), ":-1\r\n") // gat left it alone
	c.Expect("touch h 100\r\n", "TOUCHED")
	r.Expect(multibulk("TTL", "h"), ":100\r\n")
	r.Expect(multibulk("HGET", "h", "f"), "$1\r\nv\r\n")
	c.Expect("set h 5 0 3\r\nabc\r\n", "STORED")
	c.Expect("get h\r\n", "VALUE h 5 3", "abc", "END")
	r.Expect(multibulk("TYPE", "h"), "+string\r\n")
	hset("h2")
	c.Expect("replace h2 0 0 1\r\ny\r\n", "STORED")
	c.Expect("get h2\r\n", "VALUE h2 0 1", "y", "END")
	hset("h3")
	c.Expect("delete h3\r\n", "DELETED")
	r.Expect(multibulk("EXISTS", "h3"), ":0\r\n")
	hset("h4")
	c.Expect("md h4\r\n", "HD")
	r.Expect(multibulk("EXISTS", "h4"), ":0\r\n")
	hset("h5")
	c.Expect("ms h5 1\r\nz\r\n", "HD")
	r.Expect(multibulk("GET", "h5"), "$1\r\nz\r\n")
}
