package memcache

import (
	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/server"
)

// The memcached side of the core's event loops (server.LoopHandler).

// Fill reads what has arrived into the read buffer.
func (c *conn) Fill() error {
	_, err := c.r.Fill()
	return err
}

// Framing reports whether the read buffer starts with a complete request.
func (c *conn) Framing() server.Framing {
	switch c.r.Frame(&c.frame) {
	case memcache.FrameComplete:
		return server.FrameComplete
	case memcache.FrameNeedMore:
		return server.FrameNeedMore
	}
	return server.FrameOther
}

// Pending is the unparsed input.
func (c *conn) Pending() []byte { return c.r.Pending() }
