package redis

import (
	"sync/atomic"
)

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], as Redis 7.0 parses it.
// The process's own shutdown is cmd/minikv's: SetShutdown hands the
// protocol the function that starts it. MiniKV does not wait for lagging
// replicas before it stops (Redis does, up to shutdown-timeout, unless
// NOW), so there is never a shutdown in progress for ABORT to cancel.
//
// While a script runs, only SHUTDOWN NOSAVE is taken (others get -BUSY,
// as in Redis): the process then exits at once, without waiting for the
// script or saving; acknowledged writes were on disk before their
// replies, and a durable store's script changes reach the disk only when
// the script ends.

// ShutdownRequest is what SHUTDOWN asked for.
type ShutdownRequest struct {
	Save   bool // SAVE: write the RDB file even without save points
	NoSave bool // NOSAVE: do not, even with save points
	Force  bool // FORCE: shut down even if the save fails
	Now    bool // NOW (no replica to wait for in MiniKV either way)
	// Busy: a script is running; the process must exit at once, without
	// waiting for it (SHUTDOWN NOSAVE while busy).
	Busy bool
}

// SetShutdown sets the function SHUTDOWN calls to stop the process. It
// returns an error when the shutdown cannot start (a failed save without
// FORCE); on success the process is going away and the client gets no
// reply. Without it SHUTDOWN answers an error.
func (p *Protocol) SetShutdown(fn func(ShutdownRequest) error) { p.shutdown.Store(&fn) }

type shutdownHook struct {
	atomic.Pointer[func(ShutdownRequest) error]
}

func cmdShutdown(rc *conn, argv [][]byte) {
	var req ShutdownRequest
	abort := false
	for _, a := range argv[1:] {
		switch {
		case is(a, "nosave"):
			req.NoSave = true
		case is(a, "save"):
			req.Save = true
		case is(a, "now"):
			req.Now = true
		case is(a, "force"):
			req.Force = true
		case is(a, "abort"):
			abort = true
		default:
			rc.w.Error("ERR syntax error")
			return
		}
	}
	if abort && (req.NoSave || req.Save || req.Now || req.Force) || req.NoSave && req.Save {
		rc.w.Error("ERR syntax error")
		return
	}
	if abort {
		rc.w.Error("ERR No shutdown in progress.")
		return
	}
	if r := rc.p.scripts.Running(); r != nil { // a script or a function (one engine)
		if !req.NoSave {
			rc.w.Error(r.BusyError().Error())
			return
		}
		req.Busy = true
	}
	fn := rc.p.shutdown.Load()
	if fn == nil {
		rc.w.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	if err := (*fn)(req); err != nil {
		rc.p.log.Warn("SHUTDOWN refused", "err", err)
		rc.w.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	rc.quit = true // the connection closes without a reply, as the process goes
}

// Save writes the RDB file now, as SAVE does (SHUTDOWN SAVE, from
// cmd/minikv's shutdown).
func (p *Protocol) Save() error { return p.save(false) }
