package server

import (
	"sync"
	"sync/atomic"

	"github.com/minikv/minikv/internal/store"
)

// Keyspace events: Redis's keyspace notifications (notify-keyspace-events)
// for the writes of both ports. A port reports each change a command makes
// with KeyEvent (the RESP port: "set", "lpush", "del", ...; the memcached
// port: the same names for its set, delete, incr, touch), the store
// reports expiry, eviction and key creation on its own (store.SetNotify),
// and the sink that SetKeyEventSink installs publishes them: the RESP
// port's pub/sub hub, on __keyspace@<db>__:<key> and __keyevent@<db>__:<event>.
// Ports know nothing of each other; they share this.
//
// Off (the default), KeyEvent is one atomic load and a test, allocates
// nothing, and the store reports nothing.

// EventClass is a set of event classes and channel kinds, one bit per
// letter of Redis's notify-keyspace-events, with Redis's values
// (NOTIFY_KEYSPACE ... NOTIFY_NEW in server.h).
type EventClass uint32

const (
	EventKeyspace EventClass = 1 << iota // K: publish on __keyspace@<db>__:<key>
	EventKeyevent                        // E: publish on __keyevent@<db>__:<event>
	EventGeneric                         // g: DEL, EXPIRE, RENAME, ...
	EventString                          // $
	EventList                            // l
	EventSet                             // s
	EventHash                            // h
	EventZSet                            // z
	EventExpired                         // x: a key expired
	EventEvicted                         // e: a key was evicted
	EventStream                          // t (MiniKV has no streams)
	EventKeyMiss                         // m: a read found no key
	EventModule                          // d (MiniKV has no modules)
	EventNew                             // n: a key was created
)

// EventAll is Redis's "A": every class but m and n.
const EventAll = EventGeneric | EventString | EventList | EventSet | EventHash | EventZSet |
	EventExpired | EventEvicted | EventStream | EventModule

// KeyEventSink publishes one event: flags are the configured classes (the
// sink reads EventKeyspace and EventKeyevent from them), class the
// event's. It runs on the goroutine of the write, possibly with store
// shard locks held: it must not block nor call into the Store.
type KeyEventSink func(flags, class EventClass, event string, key []byte)

// keyEvents is the Server's notification state.
type keyEvents struct {
	mu       sync.Mutex    // one setEvents at a time
	flags    atomic.Uint32 // as configured
	notify   atomic.Uint32 // the classes published: flags, or 0 without K or E
	on       atomic.Uint32 // the classes reported at all: notify's, and TrackedEvents while tracking
	tracking atomic.Bool   // a client tracks keys (SetTracking)
	removals atomic.Bool   // the removal sink wants the store's removals (WatchRemovals)
	sink     atomic.Pointer[KeyEventSink]
	track    atomic.Pointer[TrackingSink]
	removed  atomic.Pointer[RemovalSink]
}

// RemovalSink is told of each key the store removed on its own (expired,
// evicted) while WatchRemovals is on. It runs as KeyEventSink does, with
// the key's shard lock held: it must not block nor call into the Store,
// and key is valid only for the call.
type RemovalSink func(key []byte)

// SetRemovalSink installs the function told of the store's removals.
func (s *Server) SetRemovalSink(fn RemovalSink) { s.events.removed.Store(&fn) }

// WatchRemovals turns the reporting of the store's removals to the
// removal sink on or off (on while a RESP client waits in XREADGROUP,
// which a removal of its stream ends).
func (s *Server) WatchRemovals(on bool) {
	s.events.removals.Store(on)
	s.setEvents(EventClass(s.events.flags.Load()))
}

// TrackedEvents are the classes of the changes that invalidate a key a
// client caches (Redis's signalModifiedKey, and expiry and eviction):
// every change, not a miss nor a creation (its write reports itself).
const TrackedEvents = EventGeneric | EventString | EventList | EventSet | EventHash | EventZSet |
	EventExpired | EventEvicted | EventStream | EventModule

// TrackingSink is told of every change of a key while a client tracks
// keys (client-side caching), with the connection that made it (origin,
// the port's own value; nil for the store's expiry and eviction and the
// memcached port), and of every flush (key nil). It runs as KeyEventSink
// does.
type TrackingSink func(origin any, key []byte)

// KeyEvent reports that a command changed key, with Redis's event name
// and class; it publishes it when that class is on. Cheap when off: one
// atomic load.
func (s *Server) KeyEvent(class EventClass, event string, key []byte) {
	if EventClass(s.events.on.Load())&class != 0 {
		s.keyEventBy(nil, class, event, key)
	}
}

// KeyEventBy is KeyEvent for a change the connection origin made (a
// port's own connection value), which client tracking tells apart.
func (s *Server) KeyEventBy(origin any, class EventClass, event string, key []byte) {
	if EventClass(s.events.on.Load())&class != 0 {
		s.keyEventBy(origin, class, event, key)
	}
}

func (s *Server) keyEventBy(origin any, class EventClass, event string, key []byte) {
	if EventClass(s.events.notify.Load())&class != 0 {
		s.publishKeyEvent(class, event, key)
	}
	if class&TrackedEvents != 0 && s.events.tracking.Load() {
		if fn := s.events.track.Load(); fn != nil {
			(*fn)(origin, key)
		}
	}
}

// Flushed reports that every key was flushed (FLUSHALL from either port,
// a replica's full resync), for client tracking; origin as in KeyEventBy.
func (s *Server) Flushed(origin any) {
	if s.events.tracking.Load() {
		if fn := s.events.track.Load(); fn != nil {
			(*fn)(origin, nil)
		}
	}
}

// SetTrackingSink installs the function told of changes while tracking
// is on (SetTracking).
func (s *Server) SetTrackingSink(fn TrackingSink) { s.events.track.Store(&fn) }

// SetTracking turns the reporting of every change to the tracking sink on
// or off: on while any client tracks keys.
func (s *Server) SetTracking(on bool) {
	s.events.tracking.Store(on)
	s.setEvents(EventClass(s.events.flags.Load()))
}

// KeyEventsOn reports whether any of the classes is published, for a port
// that must work something out before it can report an event.
func (s *Server) KeyEventsOn(class EventClass) bool {
	return EventClass(s.events.on.Load())&class != 0
}

func (s *Server) publishKeyEvent(class EventClass, event string, key []byte) {
	if fn := s.events.sink.Load(); fn != nil {
		(*fn)(EventClass(s.events.flags.Load()), class, event, key)
	}
}

// SetKeyEventSink installs the function that publishes events; nil drops
// them.
func (s *Server) SetKeyEventSink(fn KeyEventSink) {
	if fn == nil {
		s.events.sink.Store(nil)
		return
	}
	s.events.sink.Store(&fn)
}

// KeyEvents returns the configured classes.
func (s *Server) KeyEvents() EventClass { return EventClass(s.events.flags.Load()) }

// SetKeyEvents sets the classes published (CONFIG SET
// notify-keyspace-events). As in Redis, nothing is published unless K or
// E is among them. The store is asked for the events it reports only
// while their class is on.
func (s *Server) SetKeyEvents(flags EventClass) { s.setEvents(flags) }

func (s *Server) setEvents(flags EventClass) {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	notify := flags
	if flags&(EventKeyspace|EventKeyevent) == 0 {
		notify = 0
	}
	on := notify
	if s.events.tracking.Load() {
		on |= TrackedEvents
	}
	s.events.flags.Store(uint32(flags))
	s.events.notify.Store(uint32(notify))
	s.events.on.Store(uint32(on))
	var mask store.Event
	if on&EventExpired != 0 || s.events.removals.Load() {
		mask |= store.EventExpired
	}
	if on&EventEvicted != 0 || s.events.removals.Load() {
		mask |= store.EventEvicted
	}
	if on&EventNew != 0 {
		mask |= store.EventNew
	}
	if on&EventKeyMiss != 0 {
		mask |= store.EventKeyMiss
	}
	s.store.SetNotify(mask, s.storeEvent)
}

// storeEvent is the store's report, as a keyspace event.
func (s *Server) storeEvent(key []byte, ev store.Event) {
	if ev&(store.EventExpired|store.EventEvicted) != 0 && s.events.removals.Load() {
		if fn := s.events.removed.Load(); fn != nil {
			(*fn)(key)
		}
	}
	switch ev {
	case store.EventExpired:
		s.KeyEvent(EventExpired, "expired", key)
	case store.EventEvicted:
		s.KeyEvent(EventEvicted, "evicted", key)
	case store.EventNew:
		s.KeyEvent(EventNew, "new", key)
	case store.EventKeyMiss:
		s.KeyEvent(EventKeyMiss, "keymiss", key)
	}
}
