package memcache

import (
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Protocol is memcached's text protocol, classic and meta commands, over
// the server's store.
type Protocol struct {
	srv       *server.Server
	st        *store.Store
	cfg       server.Config // the server's, read once
	verbosity atomic.Int64  // memcached -v; the verbosity command sets it
}

// New returns the memcached protocol for srv's listeners.
func New(srv *server.Server) *Protocol {
	p := &Protocol{srv: srv, st: srv.Store(), cfg: srv.Config()}
	if p.cfg.MaxItemSize > 0 {
		// memcached's -I, for this port only: the store takes larger items
		// from the RESP port, which this port still reads whole.
		p.st = p.st.WithMaxItemSize(p.cfg.MaxItemSize)
	}
	p.verbosity.Store(int64(p.cfg.Verbosity))
	return p
}

// MaxConnsReply is memcached's answer to a connection over -c.
func (p *Protocol) MaxConnsReply() string { return "ERROR Too many open connections\r\n" }

// NewHandler returns the memcached state of a new connection.
func (p *Protocol) NewHandler(sc *server.Conn) server.Handler {
	c := &conn{Conn: sc, p: p, st: p.st}
	c.r = memcache.NewReader(sc, server.ReadBufSize, c.maxValueLen)
	c.w = memcache.NewWriter(sc, server.WriteBufSize)
	return c
}

// conn is one memcached connection: the core's Conn (for its counters
// and auth state), the codec, and the request being served.
type conn struct {
	*server.Conn
	p      *Protocol
	st     *store.Store
	r      *memcache.Reader
	w      *memcache.Writer // replies, flushed by the core's loop
	req    memcache.Request
	frame  memcache.Request // Framing's scratch (loop.go)
	resume bool             // req was parsed in an event loop and is still to run
}

// Buffered reports the unparsed request bytes and the unflushed replies.
func (c *conn) Buffered() (requests, replies int) {
	requests = c.r.Buffered()
	if c.resume {
		requests++ // the request kept when leaving the event loop
	}
	return requests, c.w.Buffered()
}

// Wait blocks until the next request's first byte has arrived.
func (c *conn) Wait() (byte, error) { return c.r.Wait() }

// Keys appends the keys of the complete requests buffered.
func (c *conn) Keys(keys [][]byte) [][]byte {
	return memcache.Keys(keys, c.r.Pending(), cap(keys))
}

// Flush writes the buffered replies.
func (c *conn) Flush() error { return c.w.Flush() }

// Serve reads one request and answers it.
func (c *conn) Serve() (server.Result, error) {
	req, w := &c.req, c.w
	if c.resume {
		c.resume = false
		return c.run(req)
	}
	c.r.KeepLine(c.p.srv.Monitored()) // MONITOR (monitor.go)
	err := c.r.Read(req)
	if !c.Authed() {
		if !c.preAuthMemcache(req, err, w) {
			_ = w.Flush()
			return server.Closing, err
		}
		return server.Served, nil
	}
	if err != nil {
		if errors.Is(err, memcache.ErrTooLarge) {
			c.Count(server.StatCmdSet)
			c.Count(server.StatStoreTooLarge)
		}
		line, closeConn := memcache.ErrorReply(err)
		if line != "" && !req.Noreply {
			w.Line(line)
		}
		if closeConn {
			_ = w.Flush()
			return server.Closing, err
		}
		return server.Served, nil
	}
	if req.Command == memcache.CmdQuit {
		return server.Closing, w.Flush()
	}
	return c.run(req)
}

// run runs a parsed request (Serve's second half).
func (c *conn) run(req *memcache.Request) (server.Result, error) {
	c.SetCommand(&commandNames[req.Command])
	if r := c.ACLUser().Rules(); !r.Unlimited && !c.aclPermit(r, req, c.w) {
		return server.Served, nil // acl.go
	}
	if c.p.srv.Paused() {
		if c.InLoop() {
			// An event loop must not wait: the connection leaves it with
			// this request, which its own goroutine runs (Serve, resume).
			c.resume = true
			return server.Detach, nil
		}
		if !c.Unpaused(writes(req)) {
			return server.Closing, nil // killed or shutting down while paused (CLIENT PAUSE)
		}
	}
	c.Count(server.StatCommands)
	if writes(req) {
		if err := c.st.WriteErr(); err != nil {
			c.refuseWrite(req, err)
			return server.Served, nil
		}
		if why := c.p.srv.WriteRefusal(); why != "" {
			c.refuseReadOnly(req, why)
			return server.Served, nil
		}
	}
	if !c.dispatch(req) {
		_ = c.w.Flush()
		return server.Closing, nil
	}
	if len(c.r.Line()) > 0 {
		c.feedMonitors() // a Redis client runs MONITOR (monitor.go)
	}
	return server.Served, nil
}

// dispatch runs one request and writes its reply. It is the routing step,
// as memcached's process_command_ascii: one function per command (the meta
// commands' are in meta.go, stats in stats.go, auth in auth.go). It
// reports false when the connection must close.
func (c *conn) dispatch(req *memcache.Request) bool {
	w := c.w
	for i, k := range req.Keys {
		if len(k) > 0 && k[0] == store.DBMark {
			// The memcached port serves the Redis port's database 0,
			// whose keys that begin with DBMark the store holds escaped
			// (store.DBKey); replies give the key back as sent.
			req.Keys[i] = store.DBKey(nil, 0, k)
		}
	}
	switch req.Command {
	case memcache.CmdGet, memcache.CmdGets, memcache.CmdMget:
		c.getCmd(req, w)
	case memcache.CmdGat, memcache.CmdGats:
		c.gatCmd(req, w)
	case memcache.CmdSet, memcache.CmdAdd, memcache.CmdReplace,
		memcache.CmdAppend, memcache.CmdPrepend, memcache.CmdCAS:
		c.reply(req, c.storeCmd(req))
	case memcache.CmdDelete:
		c.deleteCmd(req)
	case memcache.CmdIncr, memcache.CmdDecr:
		c.incrCmd(req, w)
	case memcache.CmdTouch:
		c.touchCmd(req)
	case memcache.CmdFlushAll:
		c.flushAllCmd(req)
	case memcache.CmdStats:
		return c.statsCmd(req, w)
	case memcache.CmdVersion:
		w.Line("VERSION " + server.Version)
	case memcache.CmdVerbosity:
		c.verbosityCmd(req)
	case memcache.CmdMetaGet:
		c.metaGet(req, w)
	case memcache.CmdMetaSet:
		c.metaSet(req, w)
	case memcache.CmdMetaDelete:
		c.metaDelete(req, w)
	case memcache.CmdMetaArithmetic:
		c.metaArith(req, w)
	case memcache.CmdMetaNoop:
		// mn exists to end a pipeline of quiet commands; the core's loop
		// flushes when the read buffer is drained, as for any command.
		w.Line("MN")
	case memcache.CmdMetaDebug:
		c.metaDebug(req, w)
	case memcache.CmdAuth:
		return c.authCommand(req, w)
	default:
		w.Line(memcache.Error)
	}
	return true
}

// getCmd is get, gets and mget: one store lookup per key, a VALUE line
// per hit, then END. A key holding a Redis collection ends the reply with
// a SERVER_ERROR line instead of END, as memcached ends a get it cannot
// finish, so the client raises an error rather than take it for a miss.
func (c *conn) getCmd(req *memcache.Request, w *memcache.Writer) {
	withCAS := req.Command == memcache.CmdGets
	for _, key := range req.Keys {
		it, ok := c.st.Get(key)
		c.Count(server.StatCmdGet)
		if !ok {
			c.Count(server.StatGetMisses)
			continue
		}
		if it.Kind != store.KindString {
			w.Line(memcache.ServerErrorWrongType)
			return
		}
		c.Count(server.StatGetHits)
		w.Value(userKey(key), it.Flags, it.Value, c.casOut(it.CAS), withCAS)
	}
	w.Line(memcache.End)
}

// gatCmd is gat and gats: get and touch, counted as touches.
func (c *conn) gatCmd(req *memcache.Request, w *memcache.Writer) {
	deadline := store.Deadline(req.Exptime, time.Now())
	withCAS := req.Command == memcache.CmdGats
	for _, key := range req.Keys {
		it, ok := c.st.GetAndTouch(key, deadline)
		c.Count(server.StatCmdTouch)
		if !ok {
			c.Count(server.StatTouchMisses)
			continue
		}
		if it.Kind != store.KindString {
			w.Line(memcache.ServerErrorWrongType)
			return
		}
		c.Count(server.StatTouchHits)
		c.touchEvent(key, deadline)
		w.Value(userKey(key), it.Flags, it.Value, c.casOut(it.CAS), withCAS)
	}
	w.Line(memcache.End)
}

// deleteCmd is delete.
func (c *conn) deleteCmd(req *memcache.Request) {
	if c.st.Delete(req.Key()) == nil {
		c.Count(server.StatDeleteHits)
		c.p.srv.KeyEvent(server.EventGeneric, "del", req.Key())
		c.reply(req, memcache.Deleted)
	} else {
		c.Count(server.StatDeleteMisses)
		c.reply(req, memcache.NotFound)
	}
}

// incrCmd is incr and decr, one read-modify-write in the store.
func (c *conn) incrCmd(req *memcache.Request, w *memcache.Writer) {
	decr := req.Command == memcache.CmdDecr
	hits, misses := server.StatIncrHits, server.StatIncrMisses
	if decr {
		hits, misses = server.StatDecrHits, server.StatDecrMisses
	}
	v, _, err := c.st.Incr(req.Key(), req.Delta, decr)
	switch {
	case err == nil:
		c.Count(hits)
		c.p.srv.KeyEvent(server.EventString, "incrby", req.Key()) // Redis's event for INCR and DECR
		if !req.Noreply {
			w.Uint(v)
		}
	case errors.Is(err, store.ErrNotFound):
		c.Count(misses)
		c.reply(req, memcache.NotFound)
	case errors.Is(err, store.ErrNotNumeric):
		c.reply(req, memcache.ClientErrorNonNumeric)
	default:
		c.reply(req, storeErrorLine(err))
	}
}

// touchCmd is touch.
func (c *conn) touchCmd(req *memcache.Request) {
	c.Count(server.StatCmdTouch)
	deadline := store.Deadline(req.Exptime, time.Now())
	if c.st.Touch(req.Key(), deadline) {
		c.Count(server.StatTouchHits)
		c.touchEvent(req.Key(), deadline)
		c.reply(req, memcache.Touched)
	} else {
		c.Count(server.StatTouchMisses)
		c.reply(req, memcache.NotFound)
	}
}

// flushAllCmd is flush_all [delay], refused under -F.
func (c *conn) flushAllCmd(req *memcache.Request) {
	if c.p.cfg.DisableFlushAll {
		c.reply(req, "CLIENT_ERROR flush_all not allowed")
		return
	}
	c.Count(server.StatCmdFlush)
	now := time.Now()
	at := now.UnixMilli()
	if req.HasExptime && req.Exptime > 0 {
		at = store.Deadline(req.Exptime, now)
	}
	c.st.FlushAll(at)
	c.p.srv.Flushed(nil) // RESP clients tracking keys: every key is invalid
	c.reply(req, memcache.OK)
}

// verbosityCmd is verbosity <level>: recorded for "stats settings" only.
func (c *conn) verbosityCmd(req *memcache.Request) {
	if len(req.Args) > 0 {
		if v, err := strconv.ParseInt(string(req.Args[0]), 10, 64); err == nil {
			c.p.verbosity.Store(v)
		}
	}
	c.reply(req, memcache.OK)
}

// storeCmd runs a set-family command and returns its reply line.
func (c *conn) storeCmd(req *memcache.Request) string {
	c.Count(server.StatCmdSet)
	mode := storeModes[req.Command]
	cas := req.CAS
	if mode == store.ModeCAS && c.p.cfg.DisableCAS {
		return c.casWithoutTokens(req)
	}
	deadline := store.Deadline(req.Exptime, time.Now())
	_, err := c.st.Store(mode, req.Key(), req.Value, req.Flags, deadline, cas)
	if err == nil {
		c.storeEvent(mode, req.Key(), deadline)
	}
	if mode == store.ModeCAS {
		switch {
		case err == nil:
			c.Count(server.StatCASHits)
		case errors.Is(err, store.ErrExists):
			c.Count(server.StatCASBadval)
		case errors.Is(err, store.ErrNotFound):
			c.Count(server.StatCASMisses)
		}
	}
	if err == nil {
		return memcache.Stored
	}
	switch {
	case errors.Is(err, store.ErrTooLarge):
		c.Count(server.StatStoreTooLarge)
	case errors.Is(err, store.ErrNoMemory):
		c.Count(server.StatStoreNoMemory)
	}
	return storeErrorLine(err)
}

// casWithoutTokens is cas under -C: every item's token reads as 0, so a cas
// with unique 0 on an existing item stores and any other unique is stale.
func (c *conn) casWithoutTokens(req *memcache.Request) string {
	st := c.st
	if req.CAS != 0 {
		if _, ok := st.Get(req.Key()); ok {
			c.Count(server.StatCASBadval)
			return memcache.Exists
		}
		c.Count(server.StatCASMisses)
		return memcache.NotFound
	}
	deadline := store.Deadline(req.Exptime, time.Now())
	_, err := st.Store(store.ModeReplace, req.Key(), req.Value, req.Flags, deadline, 0)
	switch {
	case err == nil:
		c.storeEvent(store.ModeReplace, req.Key(), deadline)
		c.Count(server.StatCASHits)
		return memcache.Stored
	case errors.Is(err, store.ErrNotStored):
		c.Count(server.StatCASMisses)
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
	case errors.Is(err, store.ErrWrongType):
		return memcache.ServerErrorWrongType
	}
	return "SERVER_ERROR " + err.Error()
}

// refuseWrite answers a write while the disk is failed (durable mode,
// docs/durability.md): SERVER_ERROR with the system error, as the RESP
// port's MISCONF gives it. A classic noreply write gets no line, as
// memcached sends none for its own SERVER_ERRORs then; a meta command
// gets it even when quiet (q hides only success). Every refusal is
// counted (disk_refused_writes), noreply ones too.
func (c *conn) refuseWrite(req *memcache.Request, err error) {
	c.Count(server.StatDiskRefused)
	c.refuse(req, memcache.ServerErrorDiskPrefix+store.DiskErrText(err))
}

// refuseReadOnly answers a write replication refuses (a read-only
// replica, too few replicas): SERVER_ERROR with Redis's words.
func (c *conn) refuseReadOnly(req *memcache.Request, reason string) {
	c.refuse(req, "SERVER_ERROR "+reason)
}

// refuse answers a write refused before it ran with line: to meta
// commands even with q (the client must learn its write was not made),
// to classic ones unless noreply.
func (c *conn) refuse(req *memcache.Request, line string) {
	switch req.Command {
	case memcache.CmdMetaSet, memcache.CmdMetaDelete, memcache.CmdMetaArithmetic, memcache.CmdMetaGet:
		c.w.Line(line)
	default:
		c.reply(req, line)
	}
}

// reply writes line unless the request asked for noreply.
func (c *conn) reply(req *memcache.Request, line string) {
	if !req.Noreply {
		c.w.Line(line)
	}
}

func (c *conn) casOut(cas uint64) uint64 {
	if c.p.cfg.DisableCAS {
		return 0
	}
	return cas
}

// Keyspace events (server.KeyEvent) of the memcached port's writes, under
// the names Redis publishes for the RESP commands that do the same: set,
// add, replace and cas are "set"; append "append" and prepend "prepend"
// (which Redis lacks); an exptime adds "expire", one already past
// "expired" too; delete is "del"; incr and decr "incrby"; touch and gat
// "expire", or "persist" for exptime 0 (whether or not the item had a
// deadline: the store does not say). flush_all publishes nothing, as
// FLUSHALL. Off, each costs one atomic load.

// storeEvent reports a successful write of key in mode with deadline.
func (c *conn) storeEvent(mode store.Mode, key []byte, deadline int64) {
	srv := c.p.srv
	if !srv.KeyEventsOn(server.EventString | server.EventGeneric | server.EventExpired) {
		return
	}
	switch mode {
	case store.ModeAppend:
		srv.KeyEvent(server.EventString, "append", key)
		return // the item keeps its deadline
	case store.ModePrepend:
		srv.KeyEvent(server.EventString, "prepend", key)
		return
	}
	srv.KeyEvent(server.EventString, "set", key)
	if deadline != 0 {
		srv.KeyEvent(server.EventGeneric, "expire", key)
		if deadline <= time.Now().UnixMilli() {
			srv.KeyEvent(server.EventExpired, "expired", key) // stored already gone
		}
	}
}

// touchEvent reports a touch of key to deadline: "expire", or "persist"
// for none. (A deadline already past expires the key
// at its next lookup, which the store reports as "expired".)
func (c *conn) touchEvent(key []byte, deadline int64) {
	if deadline != 0 {
		c.p.srv.KeyEvent(server.EventGeneric, "expire", key)
	} else {
		c.p.srv.KeyEvent(server.EventGeneric, "persist", key)
	}
}

// userKey is the key a client sent for the store's key k (database 0's).
func userKey(k []byte) []byte {
	_, key := store.SplitDBKey(k)
	return key
}
