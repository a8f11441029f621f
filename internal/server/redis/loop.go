package redis

import (
	"slices"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
)

// The RESP side of the core's event loops (server.LoopHandler).

// Fill reads what has arrived into the read buffer.
func (rc *conn) Fill() error {
	rc.t0 = 0 // the next command's start is read anew (cmdstats.go)
	rc.awaitOK = false
	_, err := rc.r.Fill()
	return err
}

// Framing reports whether the read buffer starts with a complete request.
func (rc *conn) Framing() server.Framing {
	rc.syncBulkLimit()
	switch rc.r.Ready() {
	case resp.FrameComplete:
		return server.FrameComplete
	case resp.FrameNeedMore:
		if !rc.Authed() {
			// Before auth the reader refuses long prefixes at once
			// (Redis's unauthenticated limits), which Frame does not know.
			return server.FrameOther
		}
		return server.FrameNeedMore
	}
	return server.FrameOther
}

// Pending is the unparsed input.
func (rc *conn) Pending() []byte { return rc.r.Pending() }

// needsGoroutine reports whether c must run on the connection's own
// goroutine: it may block (BLPOP, ...) or hands the connection's output to
// an Outbox (SUBSCRIBE, MONITOR). In an event loop, dispatch keeps such a
// request in stash and Serve answers server.Detach: the connection leaves
// the loop, and its goroutine runs the request first (resume). So does any
// command while a client pause is on (it may have to wait). Scripts run in
// the loop, which is lent to them (script.go).
func needsGoroutine(c *respCommand) bool {
	switch c.name {
	case "subscribe", "psubscribe", "ssubscribe", "monitor", "psync", "sync", "wait", "client|tracking":
		return true
	}
	return slices.Contains(c.flags, "blocking")
}

// nonBlockingRead reports whether argv is an XREAD or XREADGROUP without
// BLOCK: the command table flags them blocking, but only BLOCK makes
// one wait, so the others run in the event loop like any read.
func nonBlockingRead(cmd *respCommand, argv [][]byte) bool {
	if cmd.name != "xread" && cmd.name != "xreadgroup" {
		return false
	}
	for i := 1; i < len(argv); i++ {
		switch a := argv[i]; {
		case argIs(a, "block"):
			return false
		case argIs(a, "streams"):
			return true
		case argIs(a, "group"):
			i += 2 // its name and the consumer's, whatever they are
		case argIs(a, "count"):
			i++
		}
	}
	return true
}

// resume runs the request an event loop left for this goroutine.
func (rc *conn) resume() (server.Result, error) {
	argv := rc.stash
	rc.stash = nil
	if rc.reply == replyOn {
		rc.dispatch(argv)
	} else {
		rc.dispatchQuiet(argv)
	}
	if rc.quit {
		return server.Closing, rc.w.Flush()
	}
	return server.Served, nil
}

// queueNeedsGoroutine reports whether a queued command of the MULTI
// being executed needs the connection's own goroutine (SUBSCRIBE inside
// MULTI; blocking commands do not block inside EXEC; a script, which may
// run long, inside an EXEC that has no stand-in to rescue the loop).
func (rc *conn) queueNeedsGoroutine() bool {
	for _, argv := range rc.multi.queue {
		if c := rc.queuedCommand(argv); c != nil && (c.detach && !slices.Contains(c.flags, "blocking") || c.script || bigRandReply(c, argv)) {
			return true
		}
	}
	return false
}
