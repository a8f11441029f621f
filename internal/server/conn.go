package server

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/protocol/memcache"
)

// Per-connection counters. Each connection bumps its own (so two cores never
// fight over one cache line per request); stats sums the live connections
// and the totals of closed ones.
const (
	statCmdGet = iota
	statCmdSet
	statCmdFlush
	statCmdTouch
	statGetHits
	statGetMisses
	statDeleteHits
	statDeleteMisses
	statIncrHits
	statIncrMisses
	statDecrHits
	statDecrMisses
	statCASHits
	statCASMisses
	statCASBadval
	statTouchHits
	statTouchMisses
	statStoreTooLarge
	statStoreNoMemory
	statAuthCmds
	statAuthErrors
	statBytesRead
	statBytesWritten
	statIdleKicks
	statConnYields
	numStats
)

type counters [numStats]atomic.Uint64

func (c *counters) add(i int, n uint64) { c[i].Add(n) }

func (c *counters) addFrom(o *counters) {
	for i := range o {
		c[i].Add(o[i].Load())
	}
}

// conn is one client connection.
type conn struct {
	srv     *Server
	nc      net.Conn
	id      uint64
	proto   protocol
	created time.Time
	lastCmd atomic.Int64 // Unix ns of the last complete command
	stats   counters
	w       *memcache.Writer // reply writer, owned by the serving goroutine
}

// Read counts bytes for stats and lets conn stand in for the net.Conn under
// the codec's buffered reader.
func (c *conn) Read(p []byte) (int, error) {
	n, err := c.nc.Read(p)
	c.stats.add(statBytesRead, uint64(n))
	return n, err
}

// Write counts bytes for stats.
func (c *conn) Write(p []byte) (int, error) {
	n, err := c.nc.Write(p)
	c.stats.add(statBytesWritten, uint64(n))
	return n, err
}

// serve runs the connection until it ends, recovering from a panic so one
// bad request can only ever cost its own connection (as net/http does).
func (c *conn) serve() {
	defer c.srv.removeConn(c)
	defer c.nc.Close()
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("panic serving connection", "conn_id", c.id,
				"remote", c.nc.RemoteAddr().String(), "panic", r, "stack", string(debug.Stack()))
		}
	}()
	c.srv.log.Debug("connection opened", "conn_id", c.id, "remote", c.nc.RemoteAddr().String())
	var err error
	if c.proto == protoRESP {
		err = c.serveRESP()
	} else {
		err = c.serveMemcache()
	}
	switch {
	case err == nil, errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	case errors.Is(err, os.ErrDeadlineExceeded):
		if !c.srv.shuttingDown.Load() {
			c.stats.add(statIdleKicks, 1)
			c.srv.log.Debug("idle connection closed", "conn_id", c.id)
		}
	default:
		c.srv.log.Debug("connection closed", "conn_id", c.id, "err", err)
	}
}

// armIdle sets the read deadline for the next command. It is called only
// when the read buffer is drained, i.e. after a complete command, so a client
// trickling a command one byte at a time is still cut off IdleTimeout after
// its last complete command. It reports false when the server is shutting
// down; the check comes after the deadline is set so that a concurrent
// Shutdown's past deadline is never overwritten unseen.
func (c *conn) armIdle() bool {
	if t := c.srv.cfg.IdleTimeout; t > 0 {
		_ = c.nc.SetReadDeadline(time.Now().Add(t))
	}
	return !c.srv.shuttingDown.Load()
}
