package server

import (
	"errors"
	"strconv"
	"time"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/store"
)

// Buffer sizes per connection. 16 KiB holds a deep pipeline of small
// requests (one read syscall serves many commands) while 1024 idle
// connections cost 32 MiB at most.
const (
	readBufSize  = 16 << 10
	writeBufSize = 16 << 10
)

// serveMemcache is the memcached text-protocol loop. Replies are buffered and
// flushed only when the read buffer is drained (or every ReqsPerEvent
// commands), so a pipelined batch is answered with one write syscall.
func (c *conn) serveMemcache() error {
	s := c.srv
	r := memcache.NewReader(c, readBufSize, c.maxValueLen)
	w := memcache.NewWriter(c, writeBufSize)
	c.w = w
	var req memcache.Request
	pending := 0 // commands answered since the last flush
	for {
		if r.Buffered() == 0 {
			if pending > 0 {
				c.commandsDone()
			}
			if w.Buffered() > 0 {
				if err := w.Flush(); err != nil {
					return err
				}
			}
			c.flushAt = 0 // unused when nothing was flushed; never stale later
			pending = 0
			if c.srv.shuttingDown.Load() {
				return nil
			}
			if err := c.waitForCommand(r.Wait); err != nil {
				return err
			}
			if c.authed {
				c.prefetch(memcache.Keys(c.keys[:0], r.Pending(), len(c.keys)))
			}
		} else if pending >= s.cfg.ReqsPerEvent {
			c.stats.add(statConnYields, 1)
			c.commandsDone()
			if err := w.Flush(); err != nil {
				return err
			}
			c.flushAt = 0
			pending = 0
		}
		err := r.Read(&req)
		if !c.authed {
			if !c.preAuthMemcache(&req, err, w) {
				_ = w.Flush()
				return err
			}
			pending++
			continue
		}
		if err != nil {
			if errors.Is(err, memcache.ErrTooLarge) {
				c.stats.add(statCmdSet, 1)
				c.stats.add(statStoreTooLarge, 1)
			}
			line, closeConn := memcache.ErrorReply(err)
			if line != "" && !req.Noreply {
				w.Line(line)
			}
			if closeConn {
				_ = w.Flush()
				return err
			}
			pending++
			continue
		}
		if req.Command == memcache.CmdQuit {
			return w.Flush()
		}
		c.stats.add(statCommands, 1)
		if !c.dispatch(&req, w) {
			_ = w.Flush()
			return nil
		}
		pending++
	}
}

// dispatch executes one request and writes its reply. It reports false when
// the connection must close.
func (c *conn) dispatch(req *memcache.Request, w *memcache.Writer) bool {
	if h := c.testHook.Load(); h != nil {
		(*h)()
	}
	s := c.srv
	st := s.store
	switch req.Command {
	case memcache.CmdGet, memcache.CmdGets, memcache.CmdMget:
		withCAS := req.Command == memcache.CmdGets
		for _, key := range req.Keys {
			it, ok := st.Get(key)
			c.stats.add(statCmdGet, 1)
			if !ok {
				c.stats.add(statGetMisses, 1)
				continue
			}
			c.stats.add(statGetHits, 1)
			w.Value(key, it.Flags, it.Value, c.casOut(it.CAS), withCAS)
		}
		w.Line(memcache.End)

	case memcache.CmdGat, memcache.CmdGats:
		deadline := store.Deadline(req.Exptime, time.Now())
		withCAS := req.Command == memcache.CmdGats
		for _, key := range req.Keys {
			it, ok := st.GetAndTouch(key, deadline)
			c.stats.add(statCmdTouch, 1)
			if !ok {
				c.stats.add(statTouchMisses, 1)
				continue
			}
			c.stats.add(statTouchHits, 1)
			w.Value(key, it.Flags, it.Value, c.casOut(it.CAS), withCAS)
		}
		w.Line(memcache.End)

	case memcache.CmdSet, memcache.CmdAdd, memcache.CmdReplace,
		memcache.CmdAppend, memcache.CmdPrepend, memcache.CmdCAS:
		c.reply(req, c.storeCmd(req))

	case memcache.CmdDelete:
		if st.Delete(req.Key()) == nil {
			c.stats.add(statDeleteHits, 1)
			c.reply(req, memcache.Deleted)
		} else {
			c.stats.add(statDeleteMisses, 1)
			c.reply(req, memcache.NotFound)
		}

	case memcache.CmdIncr, memcache.CmdDecr:
		decr := req.Command == memcache.CmdDecr
		hits, misses := statIncrHits, statIncrMisses
		if decr {
			hits, misses = statDecrHits, statDecrMisses
		}
		v, _, err := st.Incr(req.Key(), req.Delta, decr)
		switch {
		case err == nil:
			c.stats.add(hits, 1)
			if !req.Noreply {
				w.Uint(v)
			}
		case errors.Is(err, store.ErrNotFound):
			c.stats.add(misses, 1)
			c.reply(req, memcache.NotFound)
		case errors.Is(err, store.ErrNotNumeric):
			c.reply(req, memcache.ClientErrorNonNumeric)
		default:
			c.reply(req, storeErrorLine(err))
		}

	case memcache.CmdTouch:
		c.stats.add(statCmdTouch, 1)
		if st.Touch(req.Key(), store.Deadline(req.Exptime, time.Now())) {
			c.stats.add(statTouchHits, 1)
			c.reply(req, memcache.Touched)
		} else {
			c.stats.add(statTouchMisses, 1)
			c.reply(req, memcache.NotFound)
		}

	case memcache.CmdFlushAll:
		if s.cfg.DisableFlushAll {
			c.reply(req, "CLIENT_ERROR flush_all not allowed")
			break
		}
		c.stats.add(statCmdFlush, 1)
		now := time.Now()
		at := now.UnixNano()
		if req.HasExptime && req.Exptime > 0 {
			at = store.Deadline(req.Exptime, now)
		}
		st.FlushAll(at)
		c.reply(req, memcache.OK)

	case memcache.CmdStats:
		return c.statsCmd(req, w)

	case memcache.CmdVersion:
		w.Line("VERSION " + Version)

	case memcache.CmdVerbosity:
		if len(req.Args) > 0 {
			if v, err := strconv.ParseInt(string(req.Args[0]), 10, 64); err == nil {
				c.srv.verbosity.Store(v)
			}
		}
		c.reply(req, memcache.OK)

	case memcache.CmdMetaGet, memcache.CmdMetaSet, memcache.CmdMetaDelete,
		memcache.CmdMetaArithmetic, memcache.CmdMetaNoop, memcache.CmdMetaDebug:
		c.dispatchMeta(req, w)

	case memcache.CmdAuth:
		return c.authCommand(req, w)

	default:
		w.Line(memcache.Error)
	}
	return true
}

// storeCmd runs a set-family command and returns its reply line.
func (c *conn) storeCmd(req *memcache.Request) string {
	c.stats.add(statCmdSet, 1)
	mode := storeModes[req.Command]
	cas := req.CAS
	if mode == store.ModeCAS && c.srv.cfg.DisableCAS {
		return c.casWithoutTokens(req)
	}
	deadline := store.Deadline(req.Exptime, time.Now())
	_, err := c.srv.store.Store(mode, req.Key(), req.Value, req.Flags, deadline, cas)
	if mode == store.ModeCAS {
		switch {
		case err == nil:
			c.stats.add(statCASHits, 1)
		case errors.Is(err, store.ErrExists):
			c.stats.add(statCASBadval, 1)
		case errors.Is(err, store.ErrNotFound):
			c.stats.add(statCASMisses, 1)
		}
	}
	if err == nil {
		return memcache.Stored
	}
	switch {
	case errors.Is(err, store.ErrTooLarge):
		c.stats.add(statStoreTooLarge, 1)
	case errors.Is(err, store.ErrNoMemory):
		c.stats.add(statStoreNoMemory, 1)
	}
	return storeErrorLine(err)
}

// casWithoutTokens is cas under -C: every item's token reads as 0, so a cas
// with unique 0 on an existing item stores and any other unique is stale.
func (c *conn) casWithoutTokens(req *memcache.Request) string {
	st := c.srv.store
	if req.CAS != 0 {
		if _, ok := st.Get(req.Key()); ok {
			c.stats.add(statCASBadval, 1)
			return memcache.Exists
		}
		c.stats.add(statCASMisses, 1)
		return memcache.NotFound
	}
	_, err := st.Store(store.ModeReplace, req.Key(), req.Value, req.Flags,
		store.Deadline(req.Exptime, time.Now()), 0)
	switch {
	case err == nil:
		c.stats.add(statCASHits, 1)
		return memcache.Stored
	case errors.Is(err, store.ErrNotStored):
		c.stats.add(statCASMisses, 1)
		return memcache.NotFound
	}
	return storeErrorLine(err)
}

var storeModes = [...]store.Mode{
	memcache.CmdSet:     store.ModeSet,
	memcache.CmdAdd:     store.ModeAdd,
	memcache.CmdReplace: store.ModeReplace,
	memcache.CmdAppend:  store.ModeAppend,
	memcache.CmdPrepend: store.ModePrepend,
	memcache.CmdCAS:     store.ModeCAS,
}

// storeErrorLine maps a store error to memcached's reply: the one place the
// store's sentinels meet the wire.
func storeErrorLine(err error) string {
	switch {
	case errors.Is(err, store.ErrNotStored):
		return memcache.NotStored
	case errors.Is(err, store.ErrExists):
		return memcache.Exists
	case errors.Is(err, store.ErrNotFound):
		return memcache.NotFound
	case errors.Is(err, store.ErrTooLarge):
		return memcache.ServerErrorTooLarge
	case errors.Is(err, store.ErrNoMemory):
		return memcache.ServerErrorOutOfMemory
	case errors.Is(err, store.ErrNotNumeric):
		return memcache.ClientErrorNonNumeric
	}
	return "SERVER_ERROR " + err.Error()
}

// reply writes line unless the request asked for noreply.
func (c *conn) reply(req *memcache.Request, line string) {
	if !req.Noreply {
		c.w.Line(line)
	}
}

func (c *conn) casOut(cas uint64) uint64 {
	if c.srv.cfg.DisableCAS {
		return 0
	}
	return cas
}
