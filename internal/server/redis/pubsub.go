package redis

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
)

// Pub/sub (Redis 7.0's pubsub.c): SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE,
// PUNSUBSCRIBE, PUBLISH, the sharded SSUBSCRIBE, SUNSUBSCRIBE and
// SPUBLISH, PUBSUB, and RESET, the way out of subscribed mode.
//
// Shard channels are a namespace of their own: SPUBLISH reaches only
// SSUBSCRIBE's subscribers (no pattern), and a shard channel is a key
// for cluster routing (its slot must be this node's, several in one
// command must share a slot), so a client of a cluster subscribes on the
// node that serves the channel's slot, as in Redis Cluster.
//
// Messages come from other connections' goroutines, while the subscriber
// is blocked reading its socket, so a subscriber's output goes through
// its server.Outbox (started by its first SUBSCRIBE): an ordered, bounded
// queue with a writer goroutine of its own. PUBLISH encodes a message
// once per protocol version (and once per matching pattern for
// pmessage), and queues the same bytes to every subscriber without
// waiting for any socket; a subscriber that does not read is cut off when
// its queue passes Config.PubsubOutputLimit.
//
//	PUBLISH ch msg ─▶ hub.publish ── RLock ──▶ channels[ch]: each subscriber
//	                                           patterns: each whose glob matches
//	                                                 │ Outbox.Push(shared bytes)
//	                                                 ▼
//	                                           writer goroutine ─▶ socket
//
// Ordering. A (P)SUBSCRIBE confirmation is queued under the hub's write
// lock, together with the registration, so no message on the channel is
// queued before it (and none published after the subscriber read it is
// missed); an (P)UNSUBSCRIBE confirmation likewise comes after the last
// message. A subscribed connection's replies are flushed into the same
// queue before it publishes, so a message to itself lands after the
// replies before it, as in Redis's single output buffer.
//
// The hub's lock order is hub.mu, then an Outbox's lock; nothing holds an
// Outbox's lock while taking hub.mu.
//
// Keyspace notifications (notify-keyspace-events, notify.go) publish
// through hub.publish on __keyspace@<db>__:<key> and __keyevent@<db>__:<event>,
// from the write commands of both ports, the expiry sweeper and eviction;
// they may publish with store shard locks held, which is safe because
// nothing here takes a store lock.

func pubsubCommands() []respCommand {
	f := []string{"pubsub", "noscript", "loading", "stale"}
	return []respCommand{
		{name: "subscribe", arity: -2, flags: f, group: "pubsub", since: "2.0.0", complexity: "O(N) where N is the number of channels to subscribe to.",
			summary: "Listens for messages published to channels.", args: []docArg{{name: "channel", typ: "string", multiple: true}}, run: cmdSubscribe},
		{name: "unsubscribe", arity: -1, flags: f, group: "pubsub", since: "2.0.0", complexity: "O(N) where N is the number of channels to unsubscribe.",
			summary: "Stops listening to messages posted to channels.", args: []docArg{{name: "channel", typ: "string", optional: true, multiple: true}}, run: cmdUnsubscribe},
		{name: "psubscribe", arity: -2, flags: f, group: "pubsub", since: "2.0.0", complexity: "O(N) where N is the number of patterns to subscribe to.",
			summary: "Listens for messages published to channels that match one or more patterns.", args: []docArg{{name: "pattern", typ: "pattern", multiple: true}}, run: cmdPSubscribe},
		{name: "punsubscribe", arity: -1, flags: f, group: "pubsub", since: "2.0.0", complexity: "O(N) where N is the number of patterns to unsubscribe.",
			summary: "Stops listening to messages published to channels that match one or more patterns.",
			args:    []docArg{{name: "pattern", typ: "pattern", optional: true, multiple: true}}, run: cmdPUnsubscribe},
		{name: "ssubscribe", arity: -2, flags: f, firstKey: 1, lastKey: -1, step: 1, group: "pubsub", since: "7.0.0",
			complexity: "O(N) where N is the number of shard channels to subscribe to.",
			summary:    "Listen for messages published to the given shard channels", args: []docArg{{name: "shardchannel", typ: "string", multiple: true}}, run: cmdSSubscribe},
		{name: "sunsubscribe", arity: -1, flags: f, firstKey: 1, lastKey: -1, step: 1, group: "pubsub", since: "7.0.0",
			complexity: "O(N) where N is the number of clients already subscribed to a shard channel.",
			summary:    "Stop listening for messages posted to the given shard channels", args: []docArg{{name: "shardchannel", typ: "string", optional: true, multiple: true}}, run: cmdSUnsubscribe},
		{name: "spublish", arity: 3, flags: []string{"pubsub", "loading", "stale", "fast"}, firstKey: 1, lastKey: 1, step: 1, group: "pubsub", since: "7.0.0",
			complexity: "O(N) where N is the number of clients subscribed to the receiving shard channel.",
			summary:    "Post a message to a shard channel", args: []docArg{str("shardchannel"), str("message")}, run: cmdSPublish},
		{name: "publish", arity: 3, flags: []string{"pubsub", "loading", "stale", "fast"}, group: "pubsub", since: "2.0.0",
			complexity: "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).",
			summary:    "Posts a message to a channel.", args: []docArg{str("channel"), str("message")}, run: cmdPublish},
		{name: "pubsub", arity: -2, group: "pubsub", since: "2.8.0", complexity: "Depends on subcommand.",
			summary: "A container for Pub/Sub commands.", subs: []*respCommand{
				sub("pubsub|channels", -2, "2.8.0", "Returns the active channels.", "CHANNELS [<pattern>]",
					"Return the currently active channels matching a <pattern> (default: '*').", cmdPubsubChannels,
					docArg{name: "pattern", typ: "pattern", optional: true}),
				sub("pubsub|numpat", 2, "2.8.0", "Returns a count of unique pattern subscriptions.", "NUMPAT",
					"Return number of subscriptions to patterns.", cmdPubsubNumPat),
				sub("pubsub|numsub", -2, "2.8.0", "Returns a count of subscribers to channels.", "NUMSUB [<channel> ...]",
					"Return the number of subscribers for the specified channels, excluding pattern subscriptions(default: no channels).", cmdPubsubNumSub,
					docArg{name: "channel", typ: "string", optional: true, multiple: true}),
				sub("pubsub|shardchannels", -2, "7.0.0", "Returns the active shard channels.", "SHARDCHANNELS [<pattern>]",
					"Return the currently active shard level channels matching a <pattern> (default: '*').", cmdPubsubChannels,
					docArg{name: "pattern", typ: "pattern", optional: true}),
				sub("pubsub|shardnumsub", -2, "7.0.0", "Returns the count of subscribers of shard channels.", "SHARDNUMSUB [<shardchannel> ...]",
					"Return the number of subscribers for the specified shard level channel(s)", cmdPubsubNumSub,
					docArg{name: "shardchannel", typ: "string", optional: true, multiple: true}),
				sub("pubsub|help", 2, "6.2.0", "Returns helpful text about the different subcommands.", "HELP",
					"Print this help.", cmdPubsubHelp),
			}},
		{name: "reset", arity: 1, flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}, group: "connection", since: "6.2.0",
			complexity: "O(1)", summary: "Resets the connection.", noAuth: true, run: cmdReset},
	}
}

// hub is the RESP port's pub/sub registry; its zero value is empty. One RWMutex guards it:
// PUBLISH takes it shared (a map lookup and a scan of the patterns), and
// only (un)subscribing takes it exclusively. Redis runs all of this on
// one thread; a shared lock keeps concurrent publishers from waiting on
// each other.
type hub struct {
	mu       sync.RWMutex             // protects channels, shards, patterns, patIndex and every subscriber's resp3
	channels map[string][]*subscriber // channel -> its subscribers
	shards   map[string][]*subscriber // shard channel -> its subscribers (SSUBSCRIBE)
	patterns []*patternSubs           // in the order they were first subscribed
	patIndex map[string]*patternSubs  // pattern -> its entry in patterns
	ids      map[uint64]*subscriber   // connection ID -> its state, once it subscribed (client tracking's REDIRECT)
}

// byID returns the Outbox of the connection id if it ever subscribed
// (nil otherwise), its protocol, and whether it is subscribed now.
func (h *hub) byID(id uint64) (out *server.Outbox, resp3, subscribed bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	s := h.ids[id]
	if s == nil {
		return nil, false, false
	}
	return s.out, s.resp3, s.total() > 0
}

// patternSubs is one pattern and the connections subscribed to it.
type patternSubs struct {
	pattern []byte
	glob    *glob
	subs    []*subscriber
}

// subscriber is a connection's pub/sub state. The lists of what it is
// subscribed to belong to its serving goroutine (they give the counts in
// the confirmations and the order of UNSUBSCRIBE without arguments).
type subscriber struct {
	conn     *server.Conn
	out      *server.Outbox
	resp3    bool     // messages as RESP3 pushes; guarded by hub.mu
	channels []string // in subscription order
	patterns []string
	shards   []string // shard channels
}

// count is the number (P)SUBSCRIBE's and (P)UNSUBSCRIBE's confirmations
// carry: channels and patterns; S(UN)SUBSCRIBE's count shard channels.
func (s *subscriber) count() int { return len(s.channels) + len(s.patterns) }

// total counts every subscription: with any, the connection is in
// pub/sub mode.
func (s *subscriber) total() int { return s.count() + len(s.shards) }

// subscribed reports whether the connection is in pub/sub mode: it has
// at least one subscription.
func (rc *conn) subscribed() bool { return rc.sub != nil && rc.sub.total() > 0 }

// refusedWhileSubscribed reports whether cmd is refused because the
// connection is subscribed under RESP2, which allows only
// (P)SUBSCRIBE, (P)UNSUBSCRIBE, PING, QUIT and RESET; it answers the
// refusal (dispatch calls it before queueing in MULTI, as Redis's
// processCommand checks it).
func (rc *conn) refusedWhileSubscribed(cmd *respCommand) bool {
	if !rc.subscribed() || rc.w.RESP3() {
		return false
	}
	switch cmd.name {
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "ping", "quit", "reset":
		return false
	}
	rc.reject("ERR Can't execute '" + cmd.name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	return true
}

// subscriber returns the connection's pub/sub state, starting its
// Outbox on first use: from here on all its output is queued.
func (rc *conn) subscriber() *subscriber {
	if rc.sub == nil {
		rc.sub = &subscriber{conn: rc.Conn, out: rc.StartOutbox(), resp3: rc.w.RESP3()}
		h := &rc.p.pubsub
		h.mu.Lock()
		if h.ids == nil {
			h.ids = make(map[uint64]*subscriber)
		}
		h.ids[rc.ID()] = rc.sub
		h.mu.Unlock()
	}
	return rc.sub
}

// Close leaves every channel and pattern when the connection ends (quit,
// error, idle timeout, output limit, shutdown); the core then drains and
// stops its Outbox.
func (rc *conn) Close() error {
	rc.leavePubsub()
	if rc.sub != nil {
		h := &rc.p.pubsub
		h.mu.Lock()
		delete(h.ids, rc.ID())
		h.mu.Unlock()
	}
	rc.disableTracking() // tracking.go
	rc.stopMonitor()
	rc.endLink()                        // replication.go
	rc.p.ops.stats.unregister(rc.stats) // cmdstats.go
	return nil
}

// leavePubsub leaves every channel and pattern.
func (rc *conn) leavePubsub() {
	if rc.subscribed() {
		h := &rc.p.pubsub
		h.mu.Lock()
		h.removeAllLocked(rc.sub)
		h.mu.Unlock()
		rc.sub.channels, rc.sub.patterns, rc.sub.shards = nil, nil, nil
	}
}

// setRESP3 switches the connection's protocol. A subscriber switches
// under the hub's lock, after its replies so far are queued, so every
// message after the switch is in the new protocol and none before it is.
func (rc *conn) setRESP3(on bool) {
	if rc.sub == nil || rc.sub.resp3 == on {
		rc.w.SetRESP3(on)
		return
	}
	h := &rc.p.pubsub
	h.mu.Lock()
	defer h.mu.Unlock()
	_ = rc.w.Flush()
	rc.w.SetRESP3(on)
	rc.sub.resp3 = on
}

// subReply writes a (P)(UN)SUBSCRIBE confirmation: the kind, the channel
// or pattern (null for an UNSUBSCRIBE of nothing), the subscription count.
// Like every pub/sub push in Redis (its CLIENT_PUSHING flag), it is sent
// even under CLIENT REPLY OFF or SKIP, in RESP2 too: a client that
// silenced its replies still learns its subscriptions.
func (rc *conn) subReply(kind string, name []byte, null bool, count int) {
	if rc.muted {
		rc.unmute()
		defer rc.mute() // sends the confirmation, then drops replies again
	}
	rc.w.Push(3)
	rc.w.BulkString(kind)
	if null {
		rc.w.Null()
	} else {
		rc.w.Bulk(name)
	}
	rc.w.Int(int64(count))
}

func cmdSubscribe(rc *conn, argv [][]byte) {
	s := rc.subscriber()
	h := &rc.p.pubsub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.channels == nil {
		h.channels = make(map[string][]*subscriber)
	}
	for _, ch := range argv[1:] {
		if !slices.Contains(s.channels, string(ch)) {
			name := string(ch)
			s.channels = append(s.channels, name)
			h.channels[name] = append(h.channels[name], s)
		}
		rc.subReply("subscribe", ch, false, s.count())
	}
	rc.publish()     // CLIENT LIST's sub= and flag P, before the reply can be read
	_ = rc.w.Flush() // into the Outbox, before any message can follow
	rc.SetIdleExempt(true)
}

func cmdPSubscribe(rc *conn, argv [][]byte) {
	s := rc.subscriber()
	h := &rc.p.pubsub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.patIndex == nil {
		h.patIndex = make(map[string]*patternSubs)
	}
	for _, pat := range argv[1:] {
		if !slices.Contains(s.patterns, string(pat)) {
			name := string(pat)
			s.patterns = append(s.patterns, name)
			ps := h.patIndex[name]
			if ps == nil {
				ps = &patternSubs{pattern: []byte(name), glob: compileGlob(pat)}
				h.patIndex[name] = ps
				h.patterns = append(h.patterns, ps)
			}
			ps.subs = append(ps.subs, s)
		}
		rc.subReply("psubscribe", pat, false, s.count())
	}
	rc.publish() // CLIENT LIST's psub= and flag P, before the reply can be read
	_ = rc.w.Flush()
	rc.SetIdleExempt(true)
}

// cmdSSubscribe is SSUBSCRIBE: like SUBSCRIBE, to shard channels, whose
// confirmations count the shard channels. Redis refuses it inside EXEC
// (a DENY BLOCKING client), though it lets SUBSCRIBE through.
func cmdSSubscribe(rc *conn, argv [][]byte) {
	if rc.inExec() {
		rc.w.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
		return
	}
	s := rc.subscriber()
	h := &rc.p.pubsub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.shards == nil {
		h.shards = make(map[string][]*subscriber)
	}
	for _, ch := range argv[1:] {
		if !slices.Contains(s.shards, string(ch)) {
			name := string(ch)
			s.shards = append(s.shards, name)
			h.shards[name] = append(h.shards[name], s)
		}
		rc.subReply("ssubscribe", ch, false, len(s.shards))
	}
	rc.publish()     // CLIENT LIST's ssub= and flag P, before the reply can be read
	_ = rc.w.Flush() // into the Outbox, before any message can follow
	rc.SetIdleExempt(true)
}

func cmdUnsubscribe(rc *conn, argv [][]byte) { rc.unsubscribe(argv[1:], subChannel) }

func cmdPUnsubscribe(rc *conn, argv [][]byte) { rc.unsubscribe(argv[1:], subPattern) }

func cmdSUnsubscribe(rc *conn, argv [][]byte) { rc.unsubscribe(argv[1:], subShard) }

// The three kinds of subscription.
const (
	subChannel = iota
	subPattern
	subShard
)

// unsubscribe is (P|S)UNSUBSCRIBE: the names given, or with none every
// channel (pattern, shard channel) in the order subscribed; a
// confirmation for each, and one with a null name when there was nothing
// to leave.
func (rc *conn) unsubscribe(names [][]byte, kindOf int) {
	kind := [...]string{"unsubscribe", "punsubscribe", "sunsubscribe"}[kindOf]
	s := rc.sub
	if s == nil {
		// Never subscribed: answered without starting an Outbox.
		for _, n := range names {
			rc.subReply(kind, n, false, 0)
		}
		if len(names) == 0 {
			rc.subReply(kind, nil, true, 0)
		}
		return
	}
	h := &rc.p.pubsub
	h.mu.Lock()
	defer h.mu.Unlock()
	list, count := &s.channels, s.count
	switch kindOf {
	case subPattern:
		list = &s.patterns
	case subShard:
		list, count = &s.shards, func() int { return len(s.shards) }
	}
	if len(names) == 0 {
		if len(*list) == 0 {
			rc.subReply(kind, nil, true, count())
		}
		for len(*list) > 0 {
			name := (*list)[0]
			*list = (*list)[1:]
			h.removeLocked(s, name, kindOf)
			rc.subReply(kind, []byte(name), false, count())
		}
		*list = nil
	}
	for _, n := range names {
		if i := slices.Index(*list, string(n)); i >= 0 {
			*list = slices.Delete(*list, i, i+1)
			h.removeLocked(s, string(n), kindOf)
		}
		rc.subReply(kind, n, false, count())
	}
	rc.publish()     // CLIENT LIST's counts, before the reply can be read
	_ = rc.w.Flush() // after the last message on what was left
	if s.total() == 0 {
		rc.SetIdleExempt(false)
	}
}

// removeLocked takes s off one channel's (pattern's, shard channel's)
// list, and drops the channel when it was the last subscriber.
func (h *hub) removeLocked(s *subscriber, name string, kindOf int) {
	if kindOf != subPattern {
		m := h.channels
		if kindOf == subShard {
			m = h.shards
		}
		subs := deleteSub(m[name], s)
		if len(subs) == 0 {
			delete(m, name)
		} else {
			m[name] = subs
		}
		return
	}
	ps := h.patIndex[name]
	if ps == nil {
		return
	}
	if ps.subs = deleteSub(ps.subs, s); len(ps.subs) == 0 {
		delete(h.patIndex, name)
		h.patterns = slices.DeleteFunc(h.patterns, func(p *patternSubs) bool { return p == ps })
	}
}

func (h *hub) removeAllLocked(s *subscriber) {
	for _, ch := range s.channels {
		h.removeLocked(s, ch, subChannel)
	}
	for _, p := range s.patterns {
		h.removeLocked(s, p, subPattern)
	}
	for _, ch := range s.shards {
		h.removeLocked(s, ch, subShard)
	}
}

// deleteSub removes s from subs, keeping the order (Redis keeps its
// subscribers in a list and searches it too).
func deleteSub(subs []*subscriber, s *subscriber) []*subscriber {
	if i := slices.Index(subs, s); i >= 0 {
		subs = slices.Delete(subs, i, i+1)
	}
	return subs
}

// cmdPublish is PUBLISH channel message: the number of receivers, the
// channel's subscribers plus one per matching pattern subscription.
func cmdPublish(rc *conn, argv [][]byte) {
	if rc.sub != nil {
		// A message to itself must come after the replies before it.
		_ = rc.w.Flush()
	}
	// Never with every shard held (EXEC); once per batch and channel: the
	// requests of a batch all arrived before the first one was served, so
	// what the receivers sent before it is what they sent before the rest.
	if !rc.inExec() && !(rc.awaitOK && !rc.awaitedShard && bytes.Equal(rc.awaited, argv[1])) {
		rc.p.pubsub.awaitEarlier(argv[1], rc.Conn, false)
		rc.awaited, rc.awaitOK, rc.awaitedShard = append(rc.awaited[:0], argv[1]...), true, false
	}
	rc.w.Int(int64(rc.p.pubsub.publish(argv[1], argv[2])))
}

// cmdSPublish is SPUBLISH shardchannel message: PUBLISH to the shard
// channel's subscribers ("smessage"), patterns aside.
func cmdSPublish(rc *conn, argv [][]byte) {
	if rc.sub != nil {
		_ = rc.w.Flush() // a message to itself comes after the replies before it
	}
	if !rc.inExec() && !(rc.awaitOK && rc.awaitedShard && bytes.Equal(rc.awaited, argv[1])) {
		rc.p.pubsub.awaitEarlier(argv[1], rc.Conn, true)
		rc.awaited, rc.awaitOK, rc.awaitedShard = append(rc.awaited[:0], argv[1]...), true, true
	}
	rc.w.Int(int64(rc.p.pubsub.spublish(argv[1], argv[2])))
}

// maxAwaitEarlier bounds how long a PUBLISH waits for its receivers'
// earlier requests (awaitEarlier): a safety valve for a receiver that is
// starved or runs a long command, not a timing anything relies on (in
// ns; tests raise it).
var maxAwaitEarlier atomic.Int64

func init() { maxAwaitEarlier.Store(int64(100 * time.Millisecond)) }

// earlierInput is a receiver whose input up to mark (or, where the mark
// cannot be read, any input) is not served yet.
type earlierInput struct {
	c      *server.Conn
	mark   uint64
	marked bool
}

func (e earlierInput) served() bool {
	if e.marked {
		return e.c.InputServed(e.mark)
	}
	return !e.c.InputPending()
}

// awaitEarlier lets the connections that would receive a message on
// channel serve the requests they sent before this PUBLISH (from self)
// first. Redis's one thread serves clients in the order their requests
// arrive, so a client that sends UNSUBSCRIBE and then, on another
// connection, PUBLISH (without waiting for the confirmation) counts no
// receiver; here the two connections run at once, and the UNSUBSCRIBE may
// not have been read yet when the PUBLISH is served. Only the input that
// arrived before the PUBLISH is waited for, so a receiver that keeps
// sending never holds it up, and for at most maxAwaitEarlier. A
// subscriber sends little (subscriptions, PING): the check is nearly
// always one socket query per receiver that finds everything served.
// Keyspace notifications do not wait (they publish from inside writes).
func (h *hub) awaitEarlier(channel []byte, self *server.Conn, shard bool) {
	var buf [4]earlierInput
	waits := h.earlierInputs(channel, self, shard, buf[:0])
	if len(waits) == 0 {
		return
	}
	deadline := time.Now().Add(time.Duration(maxAwaitEarlier.Load()))
	for _, w := range waits {
		for !w.served() {
			if time.Now().After(deadline) {
				return
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// earlierInputs appends to out the receivers of channel (its subscribers
// and those of the patterns matching it; or of the shard channel), other
// than self, whose input so far is not all served.
func (h *hub) earlierInputs(channel []byte, self *server.Conn, shard bool, out []earlierInput) []earlierInput {
	h.mu.RLock()
	defer h.mu.RUnlock()
	check := func(s *subscriber) {
		if s.conn == self {
			return
		}
		e := earlierInput{c: s.conn}
		e.mark, e.marked = s.conn.InputMark()
		if !e.served() {
			out = append(out, e)
		}
	}
	if shard {
		for _, s := range h.shards[string(channel)] {
			check(s)
		}
		return out
	}
	for _, s := range h.channels[string(channel)] {
		check(s)
	}
	for _, ps := range h.patterns {
		if ps.glob.match(channel) {
			for _, s := range ps.subs {
				check(s)
			}
		}
	}
	return out
}

// publish queues message to every subscriber of channel and of a
// pattern matching it, and returns how many it reached. Each encoding is
// built once, at the first subscriber that needs it, and the same bytes
// are queued to every one: nothing is allocated per subscriber.
func (h *hub) publish(channel, message []byte) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := 0
	var enc [2][]byte // RESP2, RESP3
	for _, s := range h.channels[string(channel)] {
		v := b2i(s.resp3)
		if enc[v] == nil {
			enc[v] = encodeMessage(s.resp3, nil, channel, message)
		}
		s.out.Push(enc[v])
		n++
	}
	for _, ps := range h.patterns {
		if !ps.glob.match(channel) {
			continue
		}
		var penc [2][]byte
		for _, s := range ps.subs {
			v := b2i(s.resp3)
			if penc[v] == nil {
				penc[v] = encodeMessage(s.resp3, ps.pattern, channel, message)
			}
			s.out.Push(penc[v])
			n++
		}
	}
	return n
}

// spublish queues message to every subscriber of the shard channel and
// returns how many it reached.
func (h *hub) spublish(channel, message []byte) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var enc [2][]byte // RESP2, RESP3
	subs := h.shards[string(channel)]
	for _, s := range subs {
		v := b2i(s.resp3)
		if enc[v] == nil {
			enc[v] = encodeSMessage(s.resp3, channel, message)
		}
		s.out.Push(enc[v])
	}
	return len(subs)
}

// encodeSMessage is an "smessage" push (shard channel, message).
func encodeSMessage(resp3 bool, channel, message []byte) []byte {
	b := make([]byte, 0, 48+len(channel)+len(message))
	b = resp.AppendPush(b, resp3, 3)
	b = append(b, "$8\r\nsmessage\r\n"...)
	b = resp.AppendBulk(b, channel)
	return resp.AppendBulk(b, message)
}

// encodeMessage is a "message" push (channel, message), or a "pmessage"
// one (pattern, channel, message) when pattern is not nil.
func encodeMessage(resp3 bool, pattern, channel, message []byte) []byte {
	b := make([]byte, 0, 48+len(pattern)+len(channel)+len(message))
	if pattern == nil {
		b = resp.AppendPush(b, resp3, 3)
		b = append(b, "$7\r\nmessage\r\n"...)
	} else {
		b = resp.AppendPush(b, resp3, 4)
		b = append(b, "$8\r\npmessage\r\n"...)
		b = resp.AppendBulk(b, pattern)
	}
	b = resp.AppendBulk(b, channel)
	return resp.AppendBulk(b, message)
}

// counts are INFO's pubsub_channels, pubsub_patterns and
// pubsubshard_channels.
func (h *hub) counts() (channels, patterns, shards int) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.channels), len(h.patterns), len(h.shards)
}

// channelMap is the map PUBSUB's subcommand argv[1] lists: channels, or
// shard channels for SHARDCHANNELS and SHARDNUMSUB. h.mu is held.
func (h *hub) channelMap(argv [][]byte) map[string][]*subscriber {
	if len(argv[1]) > 5 && (argv[1][0]|0x20) == 's' && (argv[1][1]|0x20) == 'h' {
		return h.shards
	}
	return h.channels
}

// PUBSUB's subcommands (the table lists them under "pubsub").

func cmdPubsubChannels(rc *conn, argv [][]byte) {
	if len(argv) > 3 {
		rc.subcommandSyntaxError(argv)
		return
	}
	var g *glob
	if len(argv) == 3 {
		g = compileGlob(argv[2])
	}
	h := &rc.p.pubsub
	h.mu.RLock()
	var names []string
	for ch := range h.channelMap(argv) {
		if g == nil || g.match([]byte(ch)) {
			names = append(names, ch)
		}
	}
	h.mu.RUnlock()
	rc.w.Array(len(names))
	for _, ch := range names {
		rc.w.BulkString(ch)
	}
}

func cmdPubsubNumSub(rc *conn, argv [][]byte) {
	h := &rc.p.pubsub
	h.mu.RLock()
	defer h.mu.RUnlock()
	m := h.channelMap(argv)
	rc.w.Array(2 * (len(argv) - 2)) // a flat array in RESP3 too, as Redis 7.0 answers
	for _, ch := range argv[2:] {
		rc.w.Bulk(ch)
		rc.w.Int(int64(len(m[string(ch)])))
	}
}

func cmdPubsubNumPat(rc *conn, _ [][]byte) {
	_, n, _ := rc.p.pubsub.counts()
	rc.w.Int(int64(n))
}

// cmdPubsubHelp is PUBSUB HELP in Redis's words, whose NUMSUB line wraps.
func cmdPubsubHelp(rc *conn, _ [][]byte) {
	lines := []string{"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"}
	for _, sc := range respCommands["pubsub"].subs {
		lines = append(lines, sc.usage)
		if sc.name == "pubsub|numsub" {
			lines = append(lines, "    Return the number of subscribers for the specified channels, excluding",
				"    pattern subscriptions(default: no channels).")
			continue
		}
		lines = append(lines, "    "+sc.help)
	}
	rc.w.Array(len(lines))
	for _, l := range lines {
		rc.w.Simple(l)
	}
}

// subcommandSyntaxError is Redis's addReplySubcommandSyntaxError.
func (rc *conn) subcommandSyntaxError(argv [][]byte) {
	name := make([]byte, 0, len(argv[0]))
	for _, c := range argv[0] {
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		name = append(name, c)
	}
	rc.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(cString(argv[1], 128)) +
		"'. Try " + string(name) + " HELP.")
}

// cmdReset is RESET: the connection as new, as Redis's resetCommand
// leaves it. The transaction and watches are dropped, every subscription
// left (without confirmations), RESP2, no name, and auth again if the
// server requires it.
func cmdReset(rc *conn, _ [][]byte) {
	rc.multi = multiState{}
	rc.watched = nil
	rc.leavePubsub()
	rc.disableTracking() // tracking.go
	rc.stopMonitor()
	if rc.sub != nil {
		rc.SetIdleExempt(false)
	}
	rc.setRESP3(false)
	rc.name = ""
	rc.db = 0 // database 0 again, as Redis's RESET
	rc.pub.db.Store(0)
	rc.resetClient()
	rc.ResetAuth()
	rc.r.SetUnauthenticated(!rc.Authed())
	rc.w.Simple("RESET")
}
