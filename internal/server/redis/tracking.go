package redis

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
)

// Client-side caching (Redis 7.0's tracking.c): CLIENT TRACKING,
// CACHING, GETREDIR and TRACKINGINFO, and the invalidation messages.
//
// A tracking client's reads remember their keys in the table (key →
// client IDs; OPTIN and OPTOUT with CLIENT CACHING choose which reads).
// Any change of such a key, from either port, by expiry or eviction,
// sends each of those clients one "invalidate" message with the key and
// forgets the key for them; a FLUSHALL sends every tracking client a
// null (every key). In BCAST mode nothing is remembered: a change of any
// key under one of the client's prefixes is sent to it. The changes reach
// here through the server's tracking sink (server.SetTracking), which is
// on while any client tracks, with the connection that made them.
//
// Messages go out as RESP3 pushes on the client's own connection, or,
// with REDIRECT, to another connection: a RESP3 push, or, to a RESP2
// subscriber, a message on __redis__:invalidate. A connection that tracks
// without REDIRECT in RESP3 has an Outbox, like a subscriber, since the
// messages come from other connections' goroutines. A message about a
// change the client made itself comes after the reply of the command that
// made it (Redis's tracking_pending_keys), and BCAST messages about a
// command's changes go out together once it has run (Redis gathers them
// per event loop pass), or at once for a change with no connection.

// trackingChannel is where RESP2 redirect targets get invalidations.
const trackingChannel = "__redis__:invalidate"

// tracker is one tracking client's settings. Its fields are set by the
// client's goroutine under tracking.mu before others can see them, except
// broken.
type tracker struct {
	rc       *conn // for telling the client's own changes apart; its fields are its goroutine's
	id       uint64
	out      *server.Outbox // its own Outbox (RESP3 without REDIRECT); nil otherwise
	resp3    bool
	redirect uint64
	bcast    bool
	optin    bool
	optout   bool
	noloop   bool
	prefixes []string
	broken   atomic.Bool // the REDIRECT target is gone (flag R)
}

// tracking is the server's tracking state.
type tracking struct {
	mu       sync.Mutex
	clients  map[uint64]*tracker            // tracking on
	table    map[string]map[uint64]struct{} // key -> the clients that may cache it (not BCAST)
	items    int64                          // IDs in table
	prefixes map[string]map[*tracker]bool   // BCAST prefix -> its clients
	maxKeys  atomic.Int64                   // tracking-table-max-keys (0: no limit)
}

func (t *tracking) init() { t.maxKeys.Store(1000000) }

// trackState is a connection's own part: CLIENT CACHING's flag for its
// next command, and the messages about its own changes waiting for the
// reply of the command that made them.
type trackState struct {
	caching bool
	next    bool     // caching was set by the command that just ran (CLIENT CACHING)
	pending [][]byte // keys; nil: a flush
	flushed bool     // a null is pending
	bcast   [][]byte // BCAST: keys this command changed, for the prefixes' clients
}

// trackingCommands are CLIENT's tracking subcommands (table.go adds them).
func trackingCommands() []*respCommand {
	return []*respCommand{
		sub("client|tracking", -3, "6.0.0", "Controls server-assisted client-side caching for the connection.",
			"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix>]... [OPTIN] [OPTOUT] [NOLOOP]",
			"Control server assisted client side caching.", cmdClientTracking),
		sub("client|caching", 3, "6.0.0", "Instructs the server whether to track the keys in the next request.", "CACHING (YES|NO)",
			"Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.", cmdClientCaching),
		sub("client|getredir", 2, "6.0.0", "Returns the client ID to which the connection's tracking notifications are redirected.", "GETREDIR",
			"Return the client ID we are redirecting to when tracking is enabled.", cmdClientGetRedir),
		sub("client|trackinginfo", 2, "6.2.0", "Returns information about server-assisted client-side caching for the connection.", "TRACKINGINFO",
			"Return information about client side caching for the current connection.", cmdClientTrackingInfo),
	}
}

// cmdClientTracking is CLIENT TRACKING ON|OFF with its options, checked
// in Redis's order and with its errors.
func cmdClientTracking(rc *conn, argv [][]byte) {
	var redirect uint64
	var bcast, optin, optout, noloop bool
	var prefixes []string
	for j := 3; j < len(argv); j++ {
		more := j+1 < len(argv)
		switch {
		case is(argv[j], "redirect") && more:
			j++
			if redirect != 0 {
				rc.w.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, err := strconv.ParseInt(string(argv[j]), 10, 64)
			if err != nil {
				rc.w.Error(errNotInt)
				return
			}
			if uint64(id) == rc.ID() {
				rc.w.Error("ERR A client can't redirect to itself")
				return
			}
			if !rc.p.connExists(uint64(id)) {
				rc.w.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			redirect = uint64(id)
		case is(argv[j], "bcast"):
			bcast = true
		case is(argv[j], "optin"):
			optin = true
		case is(argv[j], "optout"):
			optout = true
		case is(argv[j], "noloop"):
			noloop = true
		case is(argv[j], "prefix") && more:
			j++
			prefixes = append(prefixes, string(argv[j]))
		default:
			rc.w.Error(errSyntax)
			return
		}
	}
	switch {
	case is(argv[2], "on"):
		cur := rc.trk
		switch {
		case !bcast && len(prefixes) > 0:
			rc.w.Error("ERR PREFIX option requires BCAST mode to be enabled")
			return
		case cur != nil && cur.bcast != bcast:
			rc.w.Error("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		case optin && optout:
			rc.w.Error("ERR You can't specify both OPTIN mode and OPTOUT mode")
			return
		case (optin || optout) && bcast:
			rc.w.Error("ERR OPTIN and OPTOUT are not compatible with BCAST")
			return
		case cur != nil && (cur.optin && optout || cur.optout && optin):
			rc.w.Error("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		}
		if bcast && !rc.prefixesFit(cur, prefixes) {
			return
		}
		rc.enableTracking(redirect, bcast, optin, optout, noloop, prefixes)
	case is(argv[2], "off"):
		rc.disableTracking()
	default:
		rc.w.Error(errSyntax)
		return
	}
	rc.publish()
	rc.w.OK()
}

// prefixesFit answers Redis's error when a prefix overlaps another of the
// client's (one a prefix of the other), among those it has or those given.
func (rc *conn) prefixesFit(cur *tracker, prefixes []string) bool {
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range prefixes {
		if cur != nil {
			for _, q := range cur.prefixes {
				if overlap(p, q) {
					rc.w.Error("ERR Prefix '" + p + "' overlaps with an existing prefix '" + q + "'. Prefixes for a single client must not overlap.")
					return false
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				rc.w.Error("ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap.")
				return false
			}
		}
	}
	return true
}

// enableTracking turns tracking on (or changes its settings), as Redis's
// enableTracking: a BCAST client adds the prefixes given (the empty one
// with none) to those it has.
func (rc *conn) enableTracking(redirect uint64, bcast, optin, optout, noloop bool, prefixes []string) {
	t := &rc.p.tracking
	var out *server.Outbox
	if redirect == 0 && rc.w.RESP3() {
		out = rc.StartOutbox() // its messages come from other goroutines
	}
	t.mu.Lock()
	old := rc.trk
	nt := &tracker{rc: rc, id: rc.ID(), out: out, resp3: rc.w.RESP3(), redirect: redirect, bcast: bcast,
		optin: optin, optout: optout, noloop: noloop}
	if old != nil {
		nt.prefixes = old.prefixes
		t.removePrefixesLocked(old)
	}
	if bcast {
		if len(prefixes) == 0 && len(nt.prefixes) == 0 {
			prefixes = []string{""}
		}
		for _, p := range prefixes {
			if !containsString(nt.prefixes, p) {
				nt.prefixes = append(nt.prefixes, p)
			}
		}
		if t.prefixes == nil {
			t.prefixes = make(map[string]map[*tracker]bool)
		}
		for _, p := range nt.prefixes {
			if t.prefixes[p] == nil {
				t.prefixes[p] = make(map[*tracker]bool)
			}
			t.prefixes[p][nt] = true
		}
	}
	if t.clients == nil {
		t.clients = make(map[uint64]*tracker)
		t.table = make(map[string]map[uint64]struct{})
	}
	t.clients[nt.id] = nt
	rc.trk = nt
	rc.pub.tracker.Store(nt)
	n := len(t.clients)
	t.mu.Unlock()
	if n == 1 || old == nil {
		rc.p.srv.SetTracking(true)
	}
}

// disableTracking turns tracking off; the table forgets the client's keys
// lazily, as Redis's does.
func (rc *conn) disableTracking() {
	if rc.trk == nil {
		return
	}
	t := &rc.p.tracking
	t.mu.Lock()
	t.removePrefixesLocked(rc.trk)
	delete(t.clients, rc.trk.id)
	n := len(t.clients)
	t.mu.Unlock()
	rc.trk = nil
	rc.trkState = trackState{}
	rc.pub.tracker.Store(nil)
	if n == 0 {
		rc.p.srv.SetTracking(false)
	}
}

func (t *tracking) removePrefixesLocked(tr *tracker) {
	for _, p := range tr.prefixes {
		if m := t.prefixes[p]; m != nil {
			delete(m, tr)
			if len(m) == 0 {
				delete(t.prefixes, p)
			}
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cmdClientCaching is CLIENT CACHING YES|NO: whether the next command's
// keys are tracked, in OPTIN (YES) or OPTOUT (NO) mode.
func cmdClientCaching(rc *conn, argv [][]byte) {
	tr := rc.trk
	if tr == nil {
		rc.w.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case is(argv[2], "yes"):
		if !tr.optin {
			rc.w.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case is(argv[2], "no"):
		if !tr.optout {
			rc.w.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		rc.w.Error(errSyntax)
		return
	}
	rc.trkState.caching, rc.trkState.next = true, true
	rc.w.OK()
}

// cmdClientGetRedir is CLIENT GETREDIR: -1 without tracking, 0 without
// REDIRECT, else the target's ID.
func cmdClientGetRedir(rc *conn, _ [][]byte) {
	switch tr := rc.trk; {
	case tr == nil:
		rc.w.Int(-1)
	default:
		rc.w.Int(int64(tr.redirect))
	}
}

// cmdClientTrackingInfo is CLIENT TRACKINGINFO: flags, redirect, prefixes.
func cmdClientTrackingInfo(rc *conn, _ [][]byte) {
	tr := rc.trk
	rc.w.Map(3)
	rc.w.BulkString("flags")
	var flags []string
	switch {
	case tr == nil:
		flags = []string{"off"}
	default:
		flags = []string{"on"}
		if tr.bcast {
			flags = append(flags, "bcast")
		}
		if tr.optin {
			flags = append(flags, "optin")
			if rc.trkState.caching {
				flags = append(flags, "caching-yes")
			}
		}
		if tr.optout {
			flags = append(flags, "optout")
			if rc.trkState.caching {
				flags = append(flags, "caching-no")
			}
		}
		if tr.noloop {
			flags = append(flags, "noloop")
		}
		if tr.broken.Load() {
			flags = append(flags, "broken_redirect")
		}
	}
	rc.w.Set(len(flags))
	for _, f := range flags {
		rc.w.BulkString(f)
	}
	rc.w.BulkString("redirect")
	switch {
	case tr == nil:
		rc.w.Int(-1)
	default:
		rc.w.Int(int64(tr.redirect))
	}
	rc.w.BulkString("prefixes")
	if tr == nil {
		rc.w.Array(0)
		return
	}
	rc.w.Array(len(tr.prefixes))
	for _, p := range slices.Sorted(slices.Values(tr.prefixes)) {
		rc.w.BulkString(p)
	}
}

// trackPending reports whether the connection has something for
// afterTracked: tracking on, or messages about its changes waiting.
func (rc *conn) trackPending() bool {
	st := &rc.trkState
	return rc.trk != nil || len(st.bcast) > 0 || len(st.pending) > 0 || st.flushed
}

// afterTracked runs after each command of a tracking connection, or of
// one with invalidations of its own changes pending: it remembers the
// keys a read fetched, ends CLIENT CACHING's one-command flag, and, once
// the outermost command (an EXEC, a script) is over, sends the messages
// its changes caused, after its reply.
func (rc *conn) afterTracked(cmd *respCommand, argv [][]byte, nested bool) {
	st := &rc.trkState
	if tr := rc.trk; tr != nil && !tr.bcast && cmd.stat.tracked {
		if !(tr.optin && !st.caching) && !(tr.optout && st.caching) {
			rc.p.tracking.remember(tr, cmd.keys(argv, nil))
		}
	}
	if st.next {
		st.next = false // CLIENT CACHING itself: the flag is for the next command
	} else if !nested {
		st.caching = false
	}
	if nested || len(st.pending) == 0 && !st.flushed && len(st.bcast) == 0 {
		return
	}
	rc.sendOwnInvalidations()
}

// remember records that tr may cache keys, and keeps the table within
// tracking-table-max-keys by invalidating keys it drops, as Redis does.
func (t *tracking) remember(tr *tracker, keys [][]byte) {
	if len(keys) == 0 {
		return
	}
	t.mu.Lock()
	for _, k := range keys {
		ids := t.table[string(k)]
		if ids == nil {
			ids = make(map[uint64]struct{})
			t.table[string(k)] = ids
		}
		if _, ok := ids[tr.id]; !ok {
			ids[tr.id] = struct{}{}
			t.items++
		}
	}
	if limit := t.maxKeys.Load(); limit > 0 {
		for k := range t.table { // map order: a random key
			if int64(len(t.table)) <= limit {
				break
			}
			t.invalidateLocked(tr.rc, true, k, nil)
		}
	}
	t.mu.Unlock()
}

// invalidate is the server's tracking sink: key changed (nil: every key
// was flushed), by origin (a *conn of this port, or nil).
func (p *Protocol) invalidate(origin any, key []byte) {
	self, _ := origin.(*conn)
	t := &p.tracking
	t.mu.Lock()
	defer t.mu.Unlock()
	if key == nil {
		for _, tr := range t.clients {
			if tr.rc == self {
				self.trkState.flushed = true // after its FLUSHALL's reply
				continue
			}
			t.send(tr, nil, true)
		}
		t.table = make(map[string]map[uint64]struct{})
		t.items = 0
		return
	}
	key = userKey(key) // the store's key: tracking names keys without their database, as Redis (db.go)
	t.invalidateLocked(self, false, string(key), key)
	if len(t.prefixes) == 0 {
		return
	}
	if self != nil {
		self.trkState.bcast = append(self.trkState.bcast, append([]byte(nil), key...))
		return
	}
	t.broadcastLocked(nil, [][]byte{key})
}

// invalidateLocked sends key's message to the clients that may cache it
// and forgets it; the client that changed it (self) gets its message after
// its command's reply, or none with NOLOOP. A key dropped for the table's
// limit (evict) changed for nobody: self, the connection whose read went
// past the limit, hears of it after its reply, NOLOOP or not.
func (t *tracking) invalidateLocked(self *conn, evict bool, k string, key []byte) {
	ids, ok := t.table[k]
	if !ok {
		return
	}
	delete(t.table, k)
	t.items -= int64(len(ids))
	if key == nil {
		key = []byte(k)
	}
	for id := range ids {
		tr := t.clients[id]
		if tr == nil || tr.bcast {
			continue
		}
		if self != nil && tr.rc == self {
			if !tr.noloop || evict {
				self.trkState.pending = append(self.trkState.pending, append([]byte(nil), key...))
			}
			continue
		}
		t.send(tr, encodeKeys([][]byte{key}), false)
	}
}

// broadcastLocked sends the BCAST clients of every prefix the keys
// changed under their messages: one per prefix, the keys in the order
// changed; a NOLOOP client does not hear of the keys its own connection
// changed (self).
func (t *tracking) broadcastLocked(self *conn, keys [][]byte) {
	for _, p := range slices.Sorted(maps.Keys(t.prefixes)) { // in order, as Redis's radix tree
		clients := t.prefixes[p]
		var matched [][]byte
		for _, k := range keys {
			if strings.HasPrefix(string(k), p) && !containsKey(matched, k) {
				matched = append(matched, k)
			}
		}
		if len(matched) == 0 {
			continue
		}
		all := encodeKeys(matched)
		for tr := range clients {
			if tr.noloop && self != nil && tr.rc == self {
				continue
			}
			t.send(tr, all, false) // self's: sendOwnInvalidations calls this after its reply

		}
	}
}

func containsKey(list [][]byte, k []byte) bool {
	for _, x := range list {
		if string(x) == string(k) {
			return true
		}
	}
	return false
}

// encodeKeys is an invalidation's array of keys.
func encodeKeys(keys [][]byte) []byte {
	b := []byte("*" + strconv.Itoa(len(keys)) + "\r\n")
	for _, k := range keys {
		b = resp.AppendBulk(b, k)
	}
	return b
}

// send queues one invalidation (the encoded keys, or a null for a flush)
// to tr: on its own connection, or to its REDIRECT target. t.mu is held.
func (t *tracking) send(tr *tracker, keys []byte, null bool) {
	if tr.redirect == 0 {
		if tr.out == nil || !tr.resp3 {
			return // RESP2 without REDIRECT: nowhere to send it, as in Redis
		}
		tr.out.Push(invalidateMsg(true, keys, null))
		return
	}
	out, resp3, subscribed := tr.rc.p.pubsub.byID(tr.redirect)
	if out == nil {
		if !tr.rc.p.connExists(tr.redirect) {
			tr.broken.Store(true)
			if tr.out != nil && tr.resp3 {
				tr.out.Push(append(append([]byte(">2\r\n$21\r\ntracking-redir-broken\r\n:"), strconv.FormatUint(tr.redirect, 10)...), '\r', '\n'))
			}
		}
		return
	}
	tr.broken.Store(false)
	if resp3 || subscribed {
		out.Push(invalidateMsg(resp3, keys, null))
	}
}

// invalidateMsg is an "invalidate" push (RESP3) or a message on
// __redis__:invalidate (RESP2) carrying keys, or a null for a flush.
func invalidateMsg(resp3 bool, keys []byte, null bool) []byte {
	var b []byte
	if resp3 {
		b = append(b, ">2\r\n$10\r\ninvalidate\r\n"...)
	} else {
		b = append(b, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"...)
	}
	switch {
	case null && resp3:
		return append(b, "_\r\n"...)
	case null:
		return append(b, "*-1\r\n"...)
	}
	return append(b, keys...)
}

// sendOwnInvalidations sends the messages about the connection's own
// changes once its command's reply is out: Redis's pending keys, and the
// BCAST messages of the command's changes.
func (rc *conn) sendOwnInvalidations() {
	st := &rc.trkState
	_ = rc.w.Flush() // the reply first, into the Outbox when there is one
	t := &rc.p.tracking
	t.mu.Lock()
	if tr := rc.trk; tr != nil {
		if st.flushed {
			t.send(tr, nil, true)
		}
		for _, k := range st.pending {
			t.send(tr, encodeKeys([][]byte{k}), false)
		}
	}
	if len(st.bcast) > 0 {
		t.broadcastLocked(rc, st.bcast)
	}
	t.mu.Unlock()
	st.pending, st.flushed, st.bcast = st.pending[:0], false, st.bcast[:0]
}

// connExists reports whether a connection of either port has ID id.
func (p *Protocol) connExists(id uint64) bool {
	found := false
	p.srv.EachConn(func(c *server.Conn) {
		if c.ID() == id {
			found = true
		}
	})
	return found
}

// trackingInfo is INFO's tracking figures.
func (t *tracking) info() (clients, keys, items, prefixes int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return int64(len(t.clients)), int64(len(t.table)), t.items, int64(len(t.prefixes))
}

// trackingConfigParam is tracking-table-max-keys: the most keys the table
// remembers (0: no limit); past it, keys are dropped with their
// invalidation, as in Redis.
func trackingConfigParam() *configParam {
	return &configParam{
		name: "tracking-table-max-keys",
		get:  func(rc *conn) string { return strconv.FormatInt(rc.p.tracking.maxKeys.Load(), 10) },
		set: func(p *Protocol, v []byte) (func() string, string) {
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || n < 0 {
				return nil, "argument couldn't be parsed into an integer"
			}
			return func() string { p.tracking.maxKeys.Store(n); return "" }, ""
		},
		fileKey: "tracking-table-max-keys",
		def:     "1000000",
	}
}
