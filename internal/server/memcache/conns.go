package memcache

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/server"
)

// The memcached port's part in the operators' controls: "stats conns",
// which lists every connection of both ports, and client pauses (Redis's
// CLIENT PAUSE), which hold memcached commands back too.

// commandNames are the commands' names, for CLIENT LIST's cmd (the core
// keeps a pointer to one: server.Conn.SetCommand).
var commandNames = func() (names [256]string) {
	for i := range names {
		names[i] = memcache.Command(i).String()
	}
	names[memcache.CmdNone] = "NULL"
	return names
}()

// writes reports whether req changes an item: the storage commands,
// delete, incr, decr, touch, gat, gats, flush_all, ms, md, ma, and mg with
// a flag that touches or creates (T, N). A pause of writes (CLIENT PAUSE
// WRITE) holds these back (a pause of everything, ALL, holds every
// command back), and durable mode refuses them while the disk is failed;
// reads, stats, version, verbosity and mn go on.
func writes(req *memcache.Request) bool {
	switch req.Command {
	case memcache.CmdSet, memcache.CmdAdd, memcache.CmdReplace, memcache.CmdAppend, memcache.CmdPrepend,
		memcache.CmdCAS, memcache.CmdDelete, memcache.CmdIncr, memcache.CmdDecr, memcache.CmdTouch,
		memcache.CmdGat, memcache.CmdGats, memcache.CmdFlushAll,
		memcache.CmdMetaSet, memcache.CmdMetaDelete, memcache.CmdMetaArithmetic:
		return true
	case memcache.CmdMetaGet:
		return req.Meta.Has('T') || req.Meta.Has('N')
	}
	return false
}

// writeConns answers "stats conns" as memcached 1.6 does, one block per
// socket in descriptor order: the listeners (addr, state conn_listening)
// and every client connection of both ports (addr, listen_addr, state,
// secs_since_last_cmd), each keyed by its descriptor. The connection
// asking is conn_parse_cmd; one waiting for a command conn_read, as
// memcached shows an idle one; one reading or running a command
// conn_parse_cmd; one held by a client pause or a blocking command
// conn_waiting.
func (c *conn) writeConns(w *memcache.Writer) {
	type entry struct {
		fd    int
		lines [][2]string
	}
	var entries []entry
	now := time.Now()
	for _, l := range c.p.srv.ListenerFds() {
		if l.Fd < 0 {
			continue
		}
		entries = append(entries, entry{l.Fd, [][2]string{
			{"addr", "tcp:" + l.Addr},
			{"state", "conn_listening"},
			{"secs_since_last_cmd", strconv.FormatInt(int64(now.Sub(c.p.srv.Started())/time.Second), 10)},
		}})
	}
	type connAddrs struct {
		sc          *server.Conn
		addr, laddr string // read under the server's lock (an event loop may swap the socket)
	}
	var conns []connAddrs
	c.p.srv.EachConn(func(sc *server.Conn) {
		conns = append(conns, connAddrs{sc, sc.RemoteAddr().String(), sc.LocalAddr().String()})
	})
	for _, ca := range conns {
		sc := ca.sc
		state := "conn_parse_cmd"
		switch {
		case sc == c.Conn:
		case sc.State() == server.StateWaiting:
			state = "conn_read"
		case sc.State() == server.StatePaused:
			state = "conn_waiting"
		}
		entries = append(entries, entry{sc.Fd(), [][2]string{
			{"addr", "tcp:" + ca.addr},
			{"listen_addr", "tcp:" + ca.laddr},
			{"state", state},
			{"secs_since_last_cmd", strconv.FormatInt(int64(now.Sub(sc.LastCommand())/time.Second), 10)},
		}})
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return cmp.Compare(a.fd, b.fd) })
	for _, e := range entries {
		key := strconv.Itoa(e.fd) + ":"
		for _, l := range e.lines {
			w.Stat(key+l[0], l[1])
		}
	}
}
