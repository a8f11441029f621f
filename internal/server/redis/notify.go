package redis

import (
	"strconv"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Keyspace notifications (Redis 7.2's notify.c): with
// notify-keyspace-events set, every change a command makes to a key is
// published on __keyspace@<db>__:<key> (the message is the event's name) and
// on __keyevent@<db>__:<event> (the message is the key), through the pub/sub
// hub like any PUBLISH.
//
// Each write command reports its changes with rc.notify, under Redis's
// event names and in Redis's order: "set", "lpush", "hincrbyfloat",
// "expire", "del" after the command's own event when it empties a
// collection, and so on (the list is in docs/redis.md). The store reports
// what no command sees: "expired" (a lookup, the sweeper or a write under
// memory pressure found the key past its deadline), "evicted" and "new";
// the memcached port reports its own writes. All of them meet in the
// server core (server.KeyEvent), whose sink is publishKeyEvent below.
//
// Off, rc.notify is one atomic load; nothing is built or allocated.

// notify reports that the running command changed key (Redis's
// notifyKeyspaceEvent).
func (rc *conn) notify(class server.EventClass, event string, key []byte) {
	rc.p.srv.KeyEventBy(rc, class, event, key)
}

// keymiss reports a read of a missing key ("m"): for the commands whose
// lookups do not go through a store read that reports it itself.
func (rc *conn) keymiss(key []byte) {
	rc.p.srv.KeyEvent(server.EventKeyMiss, "keymiss", key)
}

// notifyEmptied reports the "del" of a collection the command emptied,
// which Redis publishes after the command's own event.
func (rc *conn) notifyEmptied(key []byte, emptied bool) {
	if emptied {
		rc.p.srv.KeyEventBy(rc, server.EventGeneric, "del", key)
	}
}

// notifyStored reports what a *STORE command did to its destination: its
// event when it stored a result, or "del" when an empty result removed
// what was there.
func (rc *conn) notifyStored(class server.EventClass, event string, dst []byte, stored, cleared bool) {
	switch {
	case stored:
		rc.p.srv.KeyEventBy(rc, class, event, dst)
	case cleared:
		rc.p.srv.KeyEventBy(rc, server.EventGeneric, "del", dst)
	}
}

// notifyBlockPop reports what a blocking command popped, at once or for
// a waiter a push served: the events of its non-blocking twin (LPOP,
// LMOVE, ZPOPMIN, ...), as Redis's blocked.c publishes them.
func (p *Protocol) notifyBlockPop(b *blockCall, r *blockResult) {
	if r.errMsg != "" || r.timedOut {
		return
	}
	srv := p.srv
	switch {
	case b.zset():
		event := "zpopmin"
		if b.left { // the max side, for sorted sets
			event = "zpopmax"
		}
		srv.KeyEvent(server.EventZSet, event, r.key)
	case b.op == opBMove:
		srv.KeyEvent(server.EventList, pushEvent(b.toLeft), b.dst)
		srv.KeyEvent(server.EventList, popEvent(b.left), r.key)
	default:
		srv.KeyEvent(server.EventList, popEvent(b.left), r.key)
	}
	if r.emptied {
		srv.KeyEvent(server.EventGeneric, "del", r.key)
	}
}

// publishKeyEvent is the server's KeyEventSink: the event on the keyspace
// channel, then on the keyevent channel, as Redis publishes them. It runs
// on the writer's goroutine, possibly under store locks; the hub takes
// only its own lock and queues to subscribers' Outboxes, which never
// block.
func (p *Protocol) publishKeyEvent(flags, _ server.EventClass, event string, key []byte) {
	var buf [128]byte
	db, key := store.SplitDBKey(key) // the store's key: its database, then the client's key (db.go)
	if flags&server.EventKeyspace != 0 {
		ch := append(buf[:0], "__keyspace@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(append(ch, "__:"...), key...)
		p.pubsub.publish(ch, []byte(event))
	}
	if flags&server.EventKeyevent != 0 {
		ch := append(buf[:0], "__keyevent@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(append(ch, "__:"...), event...)
		p.pubsub.publish(ch, key)
	}
}

// keyspaceEventFlags maps notify-keyspace-events letters to classes, in
// the order Redis's keyspaceEventsFlagsToString writes them.
var keyspaceEventFlags = []struct {
	letter byte
	class  server.EventClass
}{
	{'g', server.EventGeneric}, {'$', server.EventString}, {'l', server.EventList}, {'s', server.EventSet},
	{'h', server.EventHash}, {'z', server.EventZSet}, {'x', server.EventExpired}, {'e', server.EventEvicted},
	{'t', server.EventStream}, {'d', server.EventModule}, {'n', server.EventNew},
	{'K', server.EventKeyspace}, {'E', server.EventKeyevent}, {'m', server.EventKeyMiss},
}

// ParseKeyspaceEvents reads a notify-keyspace-events value as Redis's
// keyspaceEventsStringToFlags does: any of the letters
// "Ag$lshzxeKEtmdn", in any order and repeated; "" is off. It reports
// false for any other character.
func ParseKeyspaceEvents(s string) (server.EventClass, bool) {
	var flags server.EventClass
next:
	for i := 0; i < len(s); i++ {
		if s[i] == 'A' {
			flags |= server.EventAll
			continue
		}
		for _, f := range keyspaceEventFlags {
			if f.letter == s[i] {
				flags |= f.class
				continue next
			}
		}
		return 0, false
	}
	return flags, true
}

// KeyspaceEventsString is flags as CONFIG GET notify-keyspace-events
// shows them (Redis's keyspaceEventsFlagsToString): "A" for every class
// of "A", else the classes' letters, then K, E and m. As in Redis, "A"
// hides n: "AKEn" reads back as "AKE" while n stays on.
func KeyspaceEventsString(flags server.EventClass) string {
	var b []byte
	all := flags&server.EventAll == server.EventAll
	if all {
		b = append(b, 'A')
	}
	for _, f := range keyspaceEventFlags {
		isClass := f.class&(server.EventKeyspace|server.EventKeyevent|server.EventKeyMiss) == 0
		if flags&f.class != 0 && !(all && isClass) {
			b = append(b, f.letter)
		}
	}
	return string(b)
}

// notifyConfigParam is notify-keyspace-events for CONFIG GET, SET and
// REWRITE (the --notify-keyspace-events flag at start). The classes live
// in the server core, which both ports' writes consult.
func notifyConfigParam() *configParam {
	return &configParam{
		name: "notify-keyspace-events",
		get:  func(rc *conn) string { return KeyspaceEventsString(rc.p.srv.KeyEvents()) },
		set: func(p *Protocol, v []byte) (func() string, string) {
			flags, ok := ParseKeyspaceEvents(string(v))
			if !ok {
				return nil, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
			}
			return func() string { p.srv.SetKeyEvents(flags); return "" }, ""
		},
		fileKey: "notify-keyspace-events",
	}
}
