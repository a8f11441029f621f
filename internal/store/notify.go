package store

import "sync/atomic"

// Keyspace events the store reports on its own: a key that leaves it
// because its deadline passed or to make room, a key that a write
// creates, and a read that finds no key. A protocol front end sees its own commands' effects, but not
// these: expiry and eviction happen on any goroutine (a lookup of the key,
// the sweeper, another key's write that needed memory), and whether a
// write created its key is known only under the shard lock. Redis's
// keyspace notifications publish them as "expired", "evicted", "new"
// and "keymiss".

// Event is one kind of keyspace event, a bit of a mask.
type Event uint8

const (
	// EventExpired: a key was removed because its deadline had passed,
	// found by a lookup (lazily), by the sweeper or under memory pressure.
	EventExpired Event = 1 << iota
	// EventEvicted: a live key was removed to make room for a write. A
	// durable store keeps evicted items on its disk, so it never reports
	// this event: the key is still there.
	EventEvicted
	// EventNew: a write created the key (no live item was under it). A
	// write whose deadline had already passed creates the key and loses
	// it in the same instant: it reports EventNew, and no EventExpired.
	EventNew
	// EventKeyMiss: a read (Get, GetAndTouch, Take, MetaGet, a
	// collection's view) found no live item under the key.
	EventKeyMiss
)

// notifier is what SetNotify installed.
type notifier struct {
	mask Event
	fn   func(key []byte, ev Event)
}

// notifyState lives in the Store's core. mask mirrors the notifier's, so
// that every write tests it with one atomic load, inlined, when off.
type notifyState struct {
	mask atomic.Uint32
	p    atomic.Pointer[notifier]
}

// SetNotify makes the store call fn for each event in mask from now on; a
// zero mask or a nil fn turns reporting off. It may be called at any time,
// from any goroutine.
//
// fn runs while the store holds the key's shard lock (and, inside a Tx or
// Exclusive, other shards' locks): it must be quick, must not block, and
// must not call back into the Store, which would deadlock. key is valid
// only for the call. The events of one key come in the order they
// happened; a command's own effects on its keys are not reported.
func (s *Store) SetNotify(mask Event, fn func(key []byte, ev Event)) {
	if mask == 0 || fn == nil {
		s.notify.mask.Store(0)
		s.notify.p.Store(nil)
		return
	}
	s.notify.p.Store(&notifier{mask: mask, fn: fn})
	s.notify.mask.Store(uint32(mask))
}

// notifyLocked reports ev for key if it is wanted. It costs one atomic
// load when reporting is off, inlined in the write paths.
func (s *Store) notifyLocked(key []byte, ev Event) {
	if Event(s.notify.mask.Load())&ev != 0 {
		s.report(key, ev)
	}
}

func (s *Store) report(key []byte, ev Event) {
	if n := s.notify.p.Load(); n != nil && n.mask&ev != 0 {
		n.fn(key, ev)
	}
}
