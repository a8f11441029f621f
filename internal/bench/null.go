package bench

import (
	"context"
	"errors"
	"net"
	"sync"

	"github.com/minikv/minikv/internal/protocol/memcache"
)

// ServeNull is the throughput ceiling for MiniKV: a server that parses
// memcached text requests with the project's own codec and answers canned
// replies without a store. Every get hits with a value of valueSize bytes
// (so the wire carries the same bytes as a real hit), every storage command
// is STORED, anything else gets ERROR. Like MiniKV, it parses everything
// already buffered and flushes once per drained batch.
//
// It serves ln until ctx is done or ln fails, then closes the connections
// and waits for their goroutines.
func ServeNull(ctx context.Context, ln net.Listener, valueSize int) error {
	value := make([]byte, valueSize)
	for i := range value {
		value[i] = 'n'
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // protects conns
		conns = map[net.Conn]struct{}{}
	)
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()
	var err error
	for {
		var c net.Conn
		c, err = ln.Accept()
		if err != nil {
			break
		}
		mu.Lock()
		conns[c] = struct{}{}
		mu.Unlock()
		wg.Go(func() {
			serveNullConn(c, value)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
		})
	}
	mu.Lock()
	for c := range conns {
		_ = c.Close()
	}
	mu.Unlock()
	wg.Wait()
	if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

func serveNullConn(c net.Conn, value []byte) {
	defer c.Close()
	r := memcache.NewReader(c, 16<<10, nil)
	w := memcache.NewWriter(c, 16<<10)
	var req memcache.Request
	for {
		err := r.Read(&req)
		if err != nil {
			line, closeConn := memcache.ErrorReply(err)
			if line != "" && !req.Noreply {
				w.Line(line)
			}
			if closeConn {
				_ = w.Flush()
				return
			}
		} else {
			switch {
			case req.Command.IsRetrieval():
				for _, k := range req.Keys {
					w.Value(k, 0, value, 0, false)
				}
				w.Line(memcache.End)
			case req.Command.IsStorage():
				if !req.Noreply {
					w.Line(memcache.Stored)
				}
			case req.Command == memcache.CmdQuit:
				_ = w.Flush()
				return
			default:
				w.Line(memcache.Error)
			}
		}
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}
