package server

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// MONITOR (Redis's replicationFeedMonitors): a connection that asks for it
// receives a line for every command any connection of either port runs,
//
//	+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"
//
// the time it ran, the database (always 0), the client's address, and its
// arguments quoted as Redis's sdscatrepr quotes them. A monitor's output
// goes through its Outbox, so one that does not read is cut off at the
// output limit (Config.PubsubOutputLimit) like a slow subscriber, and
// never slows the connections it watches. With no monitor, a command
// pays one atomic load (Monitored).

// monitorHub is the server's list of monitors.
type monitorHub struct {
	n    atomic.Int32 // len(list), read on every command
	mu   sync.Mutex   // protects list
	list []*Conn
}

// Monitored reports whether some connection is a monitor: only then do
// the protocols format their commands for FeedMonitors.
func (s *Server) Monitored() bool { return s.monitors.n.Load() > 0 }

// StartMonitor makes c a monitor: from now on every command fed to the
// monitors is queued to its Outbox (started here). Only the serving
// goroutine may call it.
func (c *Conn) StartMonitor() { c.StartMonitorAfter(nil) }

// StartMonitorAfter is StartMonitor that first runs reply (the MONITOR's
// +OK, written and flushed into the Outbox) with the monitors locked: the
// reply goes before any monitor line, and once a client has read it the
// connection is a monitor (a command sent after it is shown).
func (c *Conn) StartMonitorAfter(reply func()) {
	c.StartOutbox()
	h := &c.srv.monitors
	h.mu.Lock()
	defer h.mu.Unlock()
	if reply != nil {
		reply()
	}
	for _, m := range h.list {
		if m == c {
			return
		}
	}
	h.list = append(h.list, c)
	h.n.Store(int32(len(h.list)))
}

// SetMonitorMuted mutes the monitor lines to c (on) or lets them through
// again (off): Redis's CLIENT REPLY OFF silences a monitor too. It may be
// called before c becomes a monitor. Only the serving goroutine may call
// it.
func (c *Conn) SetMonitorMuted(on bool) { c.monitorMuted.Store(on) }

// StopMonitor ends c's monitoring, if on (Redis's RESET, or the
// connection's end).
func (c *Conn) StopMonitor() {
	h := &c.srv.monitors
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, m := range h.list {
		if m == c {
			h.list = append(h.list[:i:i], h.list[i+1:]...)
			h.n.Store(int32(len(h.list)))
			return
		}
	}
}

// FeedMonitors sends every monitor the line for a command of c with
// arguments args (each monitor's own commands included, as in Redis).
func (c *Conn) FeedMonitors(args [][]byte) { c.FeedMonitorsIn(0, args) }

// FeedMonitorsIn is FeedMonitors for a command run in database db (the
// number Redis shows before the client's address).
func (c *Conn) FeedMonitorsIn(db int, args [][]byte) { c.FeedMonitorsAfter(db, args, nil) }

// FeedMonitorsAfter is FeedMonitorsIn that first runs reply (a monitor's
// own command's reply, flushed into its Outbox) with the monitors locked:
// as in Redis's one output buffer, the reply and the line for the command
// go out together, so no command another client sends once it has read
// the reply can be shown before it.
func (c *Conn) FeedMonitorsAfter(db int, args [][]byte, reply func()) {
	h := &c.srv.monitors
	if h.n.Load() == 0 {
		return
	}
	now := time.Now()
	b := make([]byte, 0, 64)
	b = append(b, '+')
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(1000000+now.Nanosecond()/1000), 10)
	b = append(b[:len(b)-7], b[len(b)-6:]...) // the microseconds in 6 digits
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(db), 10)
	b = append(b, ' ')
	b = append(b, c.nc.RemoteAddr().String()...)
	b = append(b, "] "...)
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendRepr(b, a)
	}
	b = append(b, "\r\n"...)
	h.mu.Lock()
	defer h.mu.Unlock()
	if reply != nil {
		reply()
	}
	for _, m := range h.list {
		if m.out != nil && !m.monitorMuted.Load() {
			m.out.Push(b)
		}
	}
}

// appendRepr appends s quoted as Redis's sdscatrepr quotes it: "\\" and
// "\"" escaped, \n \r \t \a \b by name, other bytes outside ASCII's
// printable range as \xHH.
func appendRepr(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range s {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if ch >= 0x20 && ch < 0x7f {
				b = append(b, ch)
			} else {
				b = append(b, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(b, '"')
}
