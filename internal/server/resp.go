package server

import (
	"errors"
	"strconv"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/store"
)

// RedisVersion is the Redis version MiniKV reports (HELLO, INFO). Clients
// gate features on it, so it names the Redis release whose command
// semantics the RESP port follows.
const RedisVersion = "7.2.0"

// Error replies shared by many commands, in Redis's exact words.
const (
	errSyntax     = "ERR syntax error"
	errNotInt     = "ERR value is not an integer or out of range"
	errNotFloat   = "ERR value is not a valid float"
	errOverflow   = "ERR increment or decrement would overflow"
	errOOM        = "OOM command not allowed when used memory > 'maxmemory'."
	errTooLarge   = "ERR string exceeds maximum allowed size (max-item-size)"
	errNoPassword = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errWrongPass  = "WRONGPASS invalid username-password pair or user is disabled."
)

// respConn is the RESP state of one connection: its codec, protocol
// version and client name. It embeds the connection for its counters.
type respConn struct {
	*conn
	r       *resp.Reader
	w       *resp.Writer
	name    string
	lower   [32]byte // the command name, lower-cased, without allocating
	scratch []byte   // values built by read-modify-write commands
	quit    bool     // close after this reply (QUIT, cross-protocol attack)
	nowMs   int64    // the batch's clock in Unix ms (nowMilli); 0: not read yet
}

// nowMilli is the clock of the batch being served, in Unix milliseconds,
// read at the first command of the batch that needs it. Redis keeps
// deadlines in milliseconds, so "SET k v PX 100000" then "PTTL k" gives
// exactly 100000 when both run in the same millisecond; with one reading
// per pipelined batch, a SET and a TTL read in one batch agree exactly
// however long the batch takes to run (a loaded machine, -race), as they
// would under Redis 7.2's command time snapshot. The loop forgets the
// reading whenever it flushes, so it is never older than one batch.
func (rc *respConn) nowMilli() int64 {
	if rc.nowMs == 0 {
		rc.nowMs = time.Now().UnixMilli()
	}
	return rc.nowMs
}

// flushingReader is what the RESP reader reads from. Before it asks the
// socket for more bytes it flushes the replies written so far: when a
// request arrives in pieces (a pipeline cut by the read buffer, or a
// client that writes a command in two calls), the replies to the complete
// requests before it must not wait for the rest of it. With the flush on a
// drained buffer in the loop, a pipelined batch still gets one write.
type flushingReader struct{ rc *respConn }

func (f flushingReader) Read(p []byte) (int, error) {
	f.rc.nowMs = 0 // the bytes to come may arrive much later
	if f.rc.w.Buffered() > 0 {
		if err := f.rc.w.Flush(); err != nil {
			return 0, err
		}
	}
	return f.rc.conn.Read(p)
}

// serveRESP is the Redis-protocol loop, with the machinery of the
// memcached one: replies are flushed when the read buffer is drained (or
// every ReqsPerEvent commands), the idle deadline is armed after each
// complete batch, and shutdown is noticed between commands.
func (c *conn) serveRESP() error {
	s := c.srv
	rc := &respConn{conn: c}
	rc.w = resp.NewWriter(c, writeBufSize)
	rc.r = resp.NewReader(flushingReader{rc}, readBufSize, s.respMaxBulk())
	rc.r.SetUnauthenticated(!c.authed)
	pending := 0
	for {
		if rc.r.Buffered() == 0 {
			if pending > 0 {
				c.commandsDone()
			}
			if rc.w.Buffered() > 0 {
				if err := rc.w.Flush(); err != nil {
					return err
				}
			}
			c.flushAt = 0 // unused when nothing was flushed; never stale later
			rc.nowMs = 0
			pending = 0
			if c.srv.shuttingDown.Load() {
				return nil
			}
			if err := c.waitForCommand(rc.r.Wait); err != nil {
				return err
			}
			if c.authed {
				rc.prefetch()
			}
		} else if pending >= s.cfg.ReqsPerEvent {
			c.stats.add(statConnYields, 1)
			c.commandsDone()
			if err := rc.w.Flush(); err != nil {
				return err
			}
			c.flushAt = 0
			rc.nowMs = 0
			pending = 0
		}
		argv, err := rc.r.Read()
		if err != nil {
			var pe resp.ProtocolError
			if errors.As(err, &pe) {
				rc.w.Error(pe.Reply())
				_ = rc.w.Flush()
			}
			return err
		}
		if len(argv) == 0 {
			continue // empty inline line, "*0" or "*-1": Redis skips them
		}
		rc.dispatch(argv)
		pending++
		if rc.quit {
			return rc.w.Flush()
		}
	}
}

// respMaxBulk is the largest bulk string the reader keeps: the item size
// limit, since no longer value could ever be stored. A longer bulk, up to
// Redis's proto-max-bulk-len (resp.MaxBulkLen), is read and dropped and
// its command refused with errTooLarge; only a longer one closes.
func (s *Server) respMaxBulk() int {
	if s.cfg.MaxItemSize > 0 {
		return int(min(s.cfg.MaxItemSize, 1<<31-1))
	}
	return s.store.MaxValueLen(0) + store.ItemOverhead
}

// dispatch looks the command up, checks its arity and runs it.
func (rc *respConn) dispatch(argv [][]byte) {
	name := argv[0]
	cmd := rc.lookup(name)
	if cmd == nil {
		if isAttack(name) {
			// "POST" or "Host:": an HTTP request sent to the Redis port
			// (the cross-protocol attack Redis guards against). Close
			// without a reply, as Redis does.
			rc.srv.log.Warn("possible security attack: HTTP request on the RESP port; connection closed",
				"conn_id", rc.id, "remote", rc.nc.RemoteAddr().String())
			rc.quit = true
			return
		}
		rc.w.Error(unknownCommand(argv))
		return
	}
	if !cmd.arityOK(len(argv)) {
		rc.w.Error("ERR wrong number of arguments for '" + cmd.name + "' command")
		return
	}
	// As in Redis, unknown commands and arity are reported before auth.
	if !rc.authed && !cmd.noAuth {
		rc.w.Error("NOAUTH Authentication required.")
		return
	}
	if rc.r.TooLarge() {
		// A bulk over the item size limit was read and dropped (the
		// reader keeps no more than that): no command could store it,
		// so it is refused whole, and the connection stays in step.
		rc.stats.add(statStoreTooLarge, 1)
		rc.w.Error(errTooLarge)
		return
	}
	rc.stats.add(statCommands, 1)
	if h := rc.testHook.Load(); h != nil {
		(*h)()
	}
	cmd.run(rc, argv)
}

// lookup finds a command by its name in any case, or returns nil.
func (rc *respConn) lookup(name []byte) *respCommand {
	if len(name) > len(rc.lower) {
		return nil
	}
	lower := rc.lower[:len(name)]
	for i, b := range name {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		lower[i] = b
	}
	return respCommands[string(lower)]
}

// prefetch finds the keys of the complete requests that just arrived, at
// the positions the command table gives, and has the store prefetch them
// (conn.prefetch). Arguments past the first 16 of a request are not
// looked at.
func (rc *respConn) prefetch() {
	buf := rc.r.Pending()
	keys := rc.keys[:0]
	var argv [16][]byte
	for len(keys) < len(rc.keys) {
		n, rest, ok := resp.Next(buf, argv[:])
		if !ok {
			break
		}
		buf = rest
		cmd := rc.lookup(argv[0])
		if cmd == nil || cmd.firstKey <= 0 || !cmd.arityOK(n) {
			continue
		}
		last := cmd.lastKey
		if last < 0 {
			last += n
		}
		for i := cmd.firstKey; i <= last && i < min(n, len(argv)) && len(keys) < len(rc.keys); i += max(cmd.step, 1) {
			keys = append(keys, argv[i])
		}
	}
	rc.conn.prefetch(keys)
}

func isAttack(name []byte) bool {
	s := string(name)
	return equalFold(s, "post") || equalFold(s, "host:")
}

// equalFold is an ASCII-only strings.EqualFold that does not allocate.
func equalFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// is reports whether arg is the option opt (lower case), ignoring case.
func is(arg []byte, opt string) bool { return equalFold(string(arg), opt) }

// unknownCommand is Redis's error for an unknown command (server.c
// processCommand): the name and the first arguments, quoted, each
// followed by a space, the list cut once it passes 128 bytes. The C
// string functions stop at a NUL byte, and so does this.
func unknownCommand(argv [][]byte) string {
	b := []byte("ERR unknown command '")
	b = append(b, cString(argv[0], 128)...)
	b = append(b, "', with args beginning with: "...)
	n := 0
	for _, a := range argv[1:] {
		if n >= 128 {
			break
		}
		a = cString(a, 128-n)
		b = append(b, '\'')
		b = append(b, a...)
		b = append(b, "' "...)
		n += len(a) + 3
	}
	return string(b)
}

// cString is b as C's "%.*s" prints it: up to the first NUL, at most max
// bytes.
func cString(b []byte, max int) []byte {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) > max {
		b = b[:max]
	}
	return b
}

// respCommand is one entry of the command table: its name, arity (as
// Redis: n exact, -n at least n), handler, and what COMMAND and COMMAND
// DOCS report about it.
type respCommand struct {
	name       string
	arity      int
	flags      []string
	firstKey   int
	lastKey    int
	step       int
	group      string
	since      string
	summary    string
	complexity string
	args       []docArg
	noAuth     bool // allowed before the connection has authenticated
	run        func(rc *respConn, argv [][]byte)
}

func (c *respCommand) arityOK(n int) bool {
	if c.arity >= 0 {
		return n == c.arity
	}
	return n >= -c.arity
}

// storeError writes the reply for a store error: the one place store
// sentinels meet the RESP wire. It also counts the failure.
func (rc *respConn) storeError(err error) {
	switch {
	case errors.Is(err, store.ErrNoMemory):
		rc.stats.add(statStoreNoMemory, 1)
		rc.w.Error(errOOM)
	case errors.Is(err, store.ErrTooLarge):
		rc.stats.add(statStoreTooLarge, 1)
		rc.w.Error(errTooLarge)
	default:
		rc.w.Error("ERR " + err.Error())
	}
}

// parseInt parses an integer argument with Redis's rules, writing
// Redis's error when it is not one.
func (rc *respConn) parseInt(arg []byte) (int64, bool) {
	n, ok := resp.ParseInt(arg)
	if !ok {
		rc.w.Error(errNotInt)
	}
	return n, ok
}

// itoa formats n into the connection's scratch space.
func (rc *respConn) itoa(n int64) []byte {
	rc.scratch = strconv.AppendInt(rc.scratch[:0], n, 10)
	return rc.scratch
}

// writeValue writes a stored value, or the null reply when missing.
func (rc *respConn) writeValue(it store.Item, ok bool) {
	if !ok {
		rc.w.Null()
		return
	}
	rc.w.Bulk(it.Value)
}
