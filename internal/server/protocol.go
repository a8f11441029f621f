package server

// Protocol is what a listener speaks: Serve hands it every connection it
// accepts. The protocol packages (internal/server/memcache,
// internal/server/redis) implement it; the core knows none of them.
type Protocol interface {
	// NewHandler returns the protocol's side of the new connection c: its
	// codec over c and whatever its commands keep between requests. It is
	// called on the connection's own goroutine, after the TLS handshake,
	// once c.Authed reports whether the connection must authenticate.
	NewHandler(c *Conn) Handler

	// MaxConnsReply is what a connection over Config.MaxConns is told, in
	// the protocol's own words (CRLF included), before it is closed.
	MaxConnsReply() string
}

// Handler is one connection's side of a protocol. The core's connection
// loop drives it, the same for every protocol:
//
//	for {
//		if Buffered reports no request bytes:
//			end the batch (flush the replies if any), Wait for the next
//			byte, have the store prefetch the Keys of the requests that came
//		else every Config.ReqsPerEvent requests:
//			end the batch (Flush), so one client cannot starve the rest
//		Serve one request
//	}
//
// Replies are buffered by the handler and leave only when the loop calls
// Flush (or when a reply outgrows the buffer), so a pipelined batch is
// answered with one write. A Handler is used by one goroutine only.
//
// A Handler that is also an io.Closer is closed when the connection ends
// (on the serving goroutine, also after a panic), before the connection's
// Outbox, if any, is drained and its socket closed.
type Handler interface {
	// Buffered reports the request bytes read from the connection and not
	// yet parsed, and the reply bytes written and not yet flushed.
	Buffered() (requests, replies int)

	// Wait blocks until the first byte of the next request has arrived,
	// and returns it. It reads from the Conn, under the deadline the core
	// has set.
	Wait() (byte, error)

	// Keys appends to keys, up to cap(keys), the keys of the complete
	// requests in the read buffer, for the store to prefetch. It must not
	// consume anything.
	Keys(keys [][]byte) [][]byte

	// Serve reads one request, runs it and buffers its reply. On Closing
	// it has flushed whatever the client is still owed, and its error says
	// why the connection ends (nil for a clean end such as quit).
	Serve() (Result, error)

	// Flush writes the buffered replies to the Conn.
	Flush() error
}

// Result tells the connection loop what a Handler's Serve did.
type Result uint8

const (
	// Served: a request (or a malformed one, answered with an error) was
	// handled. It counts for the idle timeout and for Config.ReqsPerEvent.
	Served Result = iota
	// Skipped: the input was no request at all (an empty RESP line); it
	// neither resets the idle timeout nor counts towards a batch.
	Skipped
	// Closing: the connection must close.
	Closing
	// Detach (event loop only): the request needs the connection's own
	// goroutine (it blocks, or hands the output to an Outbox). The
	// Handler has kept it, unserved, reports it in Buffered, and serves
	// it first when Serve is next called, from that goroutine.
	Detach
)

// LoopHandler is a Handler an event loop can drive (Config.EventLoops):
// the loop reads for it when its socket is readable, and has it serve
// only requests it can parse without reading more. Anything else (a
// request larger than the read buffer, one the framing does not vouch
// for, a reply the socket would not take, a request that must block)
// moves the connection to a goroutine of its own, which serves it the
// same Handler way from then on.
type LoopHandler interface {
	Handler

	// Fill reads once from the Conn into the read buffer, keeping what
	// is there. In a loop the Conn's Read never waits: it returns
	// ErrWouldBlock when no byte has arrived.
	Fill() error

	// Framing reports what the read buffer starts with.
	Framing() Framing
}

// Framing is what a LoopHandler's read buffer starts with.
type Framing uint8

const (
	// FrameComplete: a request Serve parses without reading more.
	FrameComplete Framing = iota
	// FrameNeedMore: the start of one, whose rest has not arrived.
	FrameNeedMore
	// FrameOther: anything else; the connection leaves the loop.
	FrameOther
)
