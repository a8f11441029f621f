package store

import (
	"bytes"
	"slices"
)

// Consumer groups: a stream's groups, each with its last delivered ID,
// its count of entries read, its pending entries list (PEL: the entries
// delivered and not acknowledged, by ID) and its consumers, each with
// its own PEL, the IDs of the group's pending entries it owns. Redis
// keeps each PEL in a radix tree; here a slice sorted by ID, which
// XREADGROUP appends to (new IDs come last) and XACK cuts from.

// StreamCG is a consumer group, valid while the handle's function runs.
type StreamCG struct {
	name        []byte
	lastID      StreamID
	entriesRead int64
	pel         []pendingEntry
	consumers   []*StreamCGConsumer // by name
}

// pendingEntry is one NACK of a group's PEL.
type pendingEntry struct {
	id            StreamID
	deliveryTime  int64
	deliveryCount uint64
	consumer      *StreamCGConsumer
}

// StreamCGConsumer is a consumer of a group.
type StreamCGConsumer struct {
	name       []byte
	seenTime   int64
	activeTime int64
	pel        []StreamID
}

// What the groups are charged: Redis's own structures' sizes, roughly.
const (
	cgBytes       = 96
	consumerBytes = 64
	nackBytes     = 56 // the group's entry and the consumer's ID
)

// StreamInvalidEntriesRead is a group's entries-read when it is unknown.
const StreamInvalidEntriesRead = -1

// Name is the group's name.
func (g *StreamCG) Name() []byte { return g.name }

// LastID is the group's last delivered ID.
func (g *StreamCG) LastID() StreamID { return g.lastID }

// EntriesRead is the group's read counter, or StreamInvalidEntriesRead.
func (g *StreamCG) EntriesRead() int64 { return g.entriesRead }

// PendingCount is the number of entries in the group's PEL.
func (g *StreamCG) PendingCount() int { return len(g.pel) }

// Consumers are the group's consumers by name.
func (g *StreamCG) Consumers() []*StreamCGConsumer { return g.consumers }

// Name is the consumer's name.
func (c *StreamCGConsumer) Name() []byte { return c.name }

// SeenTime is the Unix ms of the consumer's last attempted interaction.
func (c *StreamCGConsumer) SeenTime() int64 { return c.seenTime }

// ActiveTime is the Unix ms of its last successful interaction, or -1.
func (c *StreamCGConsumer) ActiveTime() int64 { return c.activeTime }

// PendingCount is the number of entries pending for the consumer.
func (c *StreamCGConsumer) PendingCount() int { return len(c.pel) }

// Pending are the IDs pending for the consumer, in order; read only.
func (c *StreamCGConsumer) Pending() []StreamID { return c.pel }

// Seen records an attempted interaction at now (Unix ms).
func (c *StreamCGConsumer) Seen(now int64) { c.seenTime = now }

// Active records a successful interaction at now.
func (c *StreamCGConsumer) Active(now int64) { c.activeTime = now }

// Groups are the stream's groups by name.
func (st *Stream) Groups() []*StreamCG {
	if st.c.obj == nil {
		return nil
	}
	return st.o().groups
}

func cgIndex(gs []*StreamCG, name []byte) (int, bool) {
	return slices.BinarySearchFunc(gs, name, func(g *StreamCG, n []byte) int { return bytes.Compare(g.name, n) })
}

// Group returns the group named name, or nil.
func (st *Stream) Group(name []byte) *StreamCG {
	if st.c.obj == nil {
		return nil
	}
	gs := st.o().groups
	if i, ok := cgIndex(gs, name); ok {
		return gs[i]
	}
	return nil
}

// CreateGroup adds a group at last ID id; false if one has the name.
func (st *Stream) CreateGroup(name []byte, id StreamID, entriesRead int64) (*StreamCG, bool) {
	o := st.o()
	i, ok := cgIndex(o.groups, name)
	if ok {
		return o.groups[i], false
	}
	g := &StreamCG{name: bytes.Clone(name), lastID: id, entriesRead: entriesRead}
	o.groups = slices.Insert(o.groups, i, g)
	o.groupBytes += cgBytes + int64(len(name))
	st.c.dirty = true
	return g, true
}

// DestroyGroup removes the group named name; false if there is none.
func (st *Stream) DestroyGroup(name []byte) bool {
	o := st.o()
	i, ok := cgIndex(o.groups, name)
	if !ok {
		return false
	}
	g := o.groups[i]
	o.groupBytes -= cgBytes + int64(len(g.name)) + int64(len(g.pel))*nackBytes
	for _, c := range g.consumers {
		o.groupBytes -= consumerBytes + int64(len(c.name))
	}
	o.groups = slices.Delete(o.groups, i, i+1)
	st.c.dirty = true
	return true
}

// SetGroupID sets the group's last ID and read counter (XGROUP SETID).
func (st *Stream) SetGroupID(g *StreamCG, id StreamID, entriesRead int64) {
	g.lastID = id
	g.entriesRead = entriesRead
	st.c.dirty = true
}

func consIndex(cs []*StreamCGConsumer, name []byte) (int, bool) {
	return slices.BinarySearchFunc(cs, name, func(c *StreamCGConsumer, n []byte) int { return bytes.Compare(c.name, n) })
}

// Consumer returns the group's consumer named name, or nil.
func (g *StreamCG) Consumer(name []byte) *StreamCGConsumer {
	if i, ok := consIndex(g.consumers, name); ok {
		return g.consumers[i]
	}
	return nil
}

// CreateConsumer adds a consumer to g, seen at now and never active; it
// returns the one already there and false if the name is taken.
func (st *Stream) CreateConsumer(g *StreamCG, name []byte, now int64) (*StreamCGConsumer, bool) {
	i, ok := consIndex(g.consumers, name)
	if ok {
		return g.consumers[i], false
	}
	c := &StreamCGConsumer{name: bytes.Clone(name), seenTime: now, activeTime: -1}
	g.consumers = slices.Insert(g.consumers, i, c)
	st.o().groupBytes += consumerBytes + int64(len(name))
	st.c.dirty = true
	return c, true
}

// DeleteConsumer removes a consumer and its pending entries from g and
// returns how many it had; ok is false if there was none.
func (st *Stream) DeleteConsumer(g *StreamCG, name []byte) (pending int, ok bool) {
	i, ok := consIndex(g.consumers, name)
	if !ok {
		return 0, false
	}
	c := g.consumers[i]
	pending = len(c.pel)
	for _, id := range slices.Clone(c.pel) {
		st.Ack(g, id)
	}
	g.consumers = slices.Delete(g.consumers, i, i+1)
	st.o().groupBytes -= consumerBytes + int64(len(name))
	st.c.dirty = true
	return pending, true
}

func pelIndex(pel []pendingEntry, id StreamID) (int, bool) {
	return slices.BinarySearchFunc(pel, id, func(e pendingEntry, id StreamID) int { return e.id.Compare(id) })
}

func idIndex(ids []StreamID, id StreamID) (int, bool) {
	return slices.BinarySearchFunc(ids, id, func(a, b StreamID) int { return a.Compare(b) })
}

func (c *StreamCGConsumer) addID(id StreamID) {
	if n := len(c.pel); n == 0 || c.pel[n-1].Less(id) {
		c.pel = append(c.pel, id)
		return
	}
	if i, ok := idIndex(c.pel, id); !ok {
		c.pel = slices.Insert(c.pel, i, id)
	}
}

func (c *StreamCGConsumer) removeID(id StreamID) {
	if i, ok := idIndex(c.pel, id); ok {
		c.pel = slices.Delete(c.pel, i, i+1)
	}
}

// PendingEntry is a NACK as the handle shows it.
type PendingEntry struct {
	ID            StreamID
	Consumer      *StreamCGConsumer
	DeliveryTime  int64
	DeliveryCount uint64
}

// NACK returns the group's pending entry for id.
func (g *StreamCG) NACK(id StreamID) (PendingEntry, bool) {
	i, ok := pelIndex(g.pel, id)
	if !ok {
		return PendingEntry{}, false
	}
	e := &g.pel[i]
	return PendingEntry{ID: e.id, Consumer: e.consumer, DeliveryTime: e.deliveryTime, DeliveryCount: e.deliveryCount}, true
}

// PendingRange calls fn with the group's pending entries from start to
// end in ID order until it returns false. fn must not change the PEL.
func (g *StreamCG) PendingRange(start, end StreamID, fn func(PendingEntry) bool) {
	i, _ := pelIndex(g.pel, start)
	for ; i < len(g.pel); i++ {
		e := &g.pel[i]
		if end.Less(e.id) {
			return
		}
		if !fn(PendingEntry{ID: e.id, Consumer: e.consumer, DeliveryTime: e.deliveryTime, DeliveryCount: e.deliveryCount}) {
			return
		}
	}
}

// FirstPending and LastPending are the PEL's smallest and largest IDs.
func (g *StreamCG) FirstPending() StreamID { return g.pel[0].id }

// LastPending is the PEL's largest ID.
func (g *StreamCG) LastPending() StreamID { return g.pel[len(g.pel)-1].id }

// Deliver records id delivered to c at now: a new NACK, or one moved to c
// with its count reset (XREADGROUP's new entries).
func (st *Stream) Deliver(g *StreamCG, c *StreamCGConsumer, id StreamID, now int64) {
	st.SetNACK(g, c, id, now, 1)
}

// SetNACK makes id pending for c with the given delivery time and count,
// creating the NACK or moving it from its consumer (XCLAIM).
func (st *Stream) SetNACK(g *StreamCG, c *StreamCGConsumer, id StreamID, deliveryTime int64, count uint64) {
	st.c.dirty = true
	n := len(g.pel)
	var i int
	var ok bool
	if n == 0 || g.pel[n-1].id.Less(id) {
		i = n
	} else {
		i, ok = pelIndex(g.pel, id)
	}
	if ok {
		e := &g.pel[i]
		if e.consumer != c {
			e.consumer.removeID(id)
			c.addID(id)
			e.consumer = c
		}
		e.deliveryTime, e.deliveryCount = deliveryTime, count
		return
	}
	g.pel = slices.Insert(g.pel, i, pendingEntry{id: id, deliveryTime: deliveryTime, deliveryCount: count, consumer: c})
	c.addID(id)
	st.o().groupBytes += nackBytes
}

// Redeliver updates the NACK of id for a delivery at now (XREADGROUP of
// a consumer's history): the time set, the count up.
func (st *Stream) Redeliver(g *StreamCG, id StreamID, now int64) {
	if i, ok := pelIndex(g.pel, id); ok {
		g.pel[i].deliveryTime = now
		g.pel[i].deliveryCount++
		st.c.dirty = true
	}
}

// Ack removes id from the group's PEL and its consumer's; false if it
// was not pending.
func (st *Stream) Ack(g *StreamCG, id StreamID) bool {
	i, ok := pelIndex(g.pel, id)
	if !ok {
		return false
	}
	g.pel[i].consumer.removeID(id)
	g.pel = slices.Delete(g.pel, i, i+1)
	st.o().groupBytes -= nackBytes
	st.c.dirty = true
	return true
}

// rangeHasTombstones is Redis's streamRangeHasTombstones from start to
// the end of the stream.
func (o *stream) rangeHasTombstones(start StreamID) bool {
	if o.length == 0 || o.maxDeleted.IsZero() {
		return false
	}
	if o.maxDeleted.Less(o.firstID) {
		return false
	}
	return !o.maxDeleted.Less(start)
}

// estimateDistance is Redis's streamEstimateDistanceFromFirstEverEntry:
// the read counter of id, or StreamInvalidEntriesRead.
func (o *stream) estimateDistance(id StreamID) int64 {
	if o.entriesAdded == 0 {
		return 0
	}
	if o.length == 0 && id.Compare(o.lastID) < 1 {
		return int64(o.entriesAdded)
	}
	switch id.Compare(o.lastID) {
	case 0:
		return int64(o.entriesAdded)
	case 1:
		return StreamInvalidEntriesRead
	}
	if o.maxDeleted.IsZero() || o.maxDeleted.Less(o.firstID) {
		switch id.Compare(o.firstID) {
		case -1:
			return int64(o.entriesAdded - o.length)
		case 0:
			return int64(o.entriesAdded - o.length + 1)
		}
	}
	return StreamInvalidEntriesRead
}

// EstimateEntriesRead is the read counter of a group whose last ID is id
// (XGROUP CREATE and SETID without ENTRIESREAD).
func (st *Stream) EstimateEntriesRead(id StreamID) int64 { return st.o().estimateDistance(id) }

// Advance moves the group's last ID to id, read past it (XREADGROUP),
// keeping its read counter as Redis does.
func (st *Stream) Advance(g *StreamCG, id StreamID) {
	o := st.o()
	if !g.lastID.Less(id) {
		return
	}
	if g.entriesRead != StreamInvalidEntriesRead && !o.rangeHasTombstones(id) {
		g.entriesRead++
	} else if o.entriesAdded != 0 {
		g.entriesRead = o.estimateDistance(id)
	}
	g.lastID = id
	st.c.dirty = true
}

// Lag is the group's lag (XINFO GROUPS); ok is false when it is unknown.
func (st *Stream) Lag(g *StreamCG) (lag int64, ok bool) {
	o := st.o()
	if o.entriesAdded == 0 {
		return 0, true
	}
	if g.entriesRead != StreamInvalidEntriesRead && !o.rangeHasTombstones(g.lastID) {
		return int64(o.entriesAdded) - g.entriesRead, true
	}
	if r := o.estimateDistance(g.lastID); r != StreamInvalidEntriesRead {
		return int64(o.entriesAdded) - r, true
	}
	return 0, false
}
