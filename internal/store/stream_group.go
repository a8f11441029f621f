package store

import (
	"bytes"
	"slices"

	"github.com/google/btree"
)

// Consumer groups: a stream's groups, each with its last delivered ID,
// its count of entries read, its pending entries list (PEL: the entries
// delivered and not acknowledged, by ID) and its consumers, each with
// its own PEL, the IDs of the group's pending entries it owns. Redis
// keeps each PEL in a radix tree; here a B-tree by ID (google/btree):
// XACK of any entry of a PEL of millions is O(log n), as in Redis.

// StreamCG is a consumer group, valid while the handle's function runs.
type StreamCG struct {
	name        []byte
	lastID      StreamID
	entriesRead int64
	pel         *btree.BTreeG[pendingEntry] // by value: a search compares keys in the node, no pointer to follow
	consumers   []*StreamCGConsumer         // by name
}

// pelDegree is the B-trees' degree: nodes of up to 63 items.
const pelDegree = 32

func nackLess(a, b pendingEntry) bool { return a.id.Less(b.id) }
func idLess(a, b StreamID) bool       { return a.Less(b) }

func newCG(name []byte, last StreamID, entriesRead int64) *StreamCG {
	return &StreamCG{name: bytes.Clone(name), lastID: last, entriesRead: entriesRead,
		pel: btree.NewG(pelDegree, nackLess)}
}

func newConsumer(name []byte, seen, active int64) *StreamCGConsumer {
	return &StreamCGConsumer{name: bytes.Clone(name), seenTime: seen, activeTime: active,
		pel: btree.NewG(pelDegree, idLess)}
}

// nack returns the group's pending entry for id.
func (g *StreamCG) nack(id StreamID) (pendingEntry, bool) {
	return g.pel.Get(pendingEntry{id: id})
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
	pel        *btree.BTreeG[StreamID]
}

// What the groups are charged: Redis's own structures' sizes, roughly.
const (
	cgBytes       = 96
	consumerBytes = 64
	nackBytes     = 64 // the group's entry (40) and the consumer's ID (16), in B-tree nodes
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
func (g *StreamCG) PendingCount() int { return g.pel.Len() }

// Consumers are the group's consumers by name.
func (g *StreamCG) Consumers() []*StreamCGConsumer { return g.consumers }

// Name is the consumer's name.
func (c *StreamCGConsumer) Name() []byte { return c.name }

// SeenTime is the Unix ms of the consumer's last attempted interaction.
func (c *StreamCGConsumer) SeenTime() int64 { return c.seenTime }

// ActiveTime is the Unix ms of its last successful interaction, or -1.
func (c *StreamCGConsumer) ActiveTime() int64 { return c.activeTime }

// PendingCount is the number of entries pending for the consumer.
func (c *StreamCGConsumer) PendingCount() int { return c.pel.Len() }

// Pending are the IDs pending for the consumer, in order.
func (c *StreamCGConsumer) Pending() []StreamID {
	ids := make([]StreamID, 0, c.pel.Len())
	c.pel.Ascend(func(id StreamID) bool { ids = append(ids, id); return true })
	return ids
}

// PendingFrom calls fn with the consumer's pending IDs from start on, in
// order, until it returns false. fn must not change the PEL.
func (c *StreamCGConsumer) PendingFrom(start StreamID, fn func(StreamID) bool) {
	c.pel.AscendGreaterOrEqual(start, fn)
}

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
	g := newCG(name, id, entriesRead)
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
	o.groupBytes -= cgBytes + int64(len(g.name)) + int64(g.pel.Len())*nackBytes
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
	c := newConsumer(name, now, -1)
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
	pending = c.pel.Len()
	for _, id := range c.Pending() {
		st.Ack(g, id)
	}
	g.consumers = slices.Delete(g.consumers, i, i+1)
	st.o().groupBytes -= consumerBytes + int64(len(name))
	st.c.dirty = true
	return pending, true
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
	e, ok := g.nack(id)
	if !ok {
		return PendingEntry{}, false
	}
	return PendingEntry{ID: e.id, Consumer: e.consumer, DeliveryTime: e.deliveryTime, DeliveryCount: e.deliveryCount}, true
}

// PendingRange calls fn with the group's pending entries from start to
// end in ID order until it returns false. fn must not change the PEL.
func (g *StreamCG) PendingRange(start, end StreamID, fn func(PendingEntry) bool) {
	g.pel.AscendGreaterOrEqual(pendingEntry{id: start}, func(e pendingEntry) bool {
		if end.Less(e.id) {
			return false
		}
		return fn(PendingEntry{ID: e.id, Consumer: e.consumer, DeliveryTime: e.deliveryTime, DeliveryCount: e.deliveryCount})
	})
}

// FirstPending is the PEL's smallest ID; the PEL must not be empty.
func (g *StreamCG) FirstPending() StreamID {
	e, _ := g.pel.Min()
	return e.id
}

// LastPending is the PEL's largest ID; the PEL must not be empty.
func (g *StreamCG) LastPending() StreamID {
	e, _ := g.pel.Max()
	return e.id
}

// Deliver records id delivered to c at now: a new NACK, or one moved to c
// with its count reset (XREADGROUP's new entries).
func (st *Stream) Deliver(g *StreamCG, c *StreamCGConsumer, id StreamID, now int64) {
	st.SetNACK(g, c, id, now, 1)
}

// SetNACK makes id pending for c with the given delivery time and count,
// creating the NACK or moving it from its consumer (XCLAIM).
func (st *Stream) SetNACK(g *StreamCG, c *StreamCGConsumer, id StreamID, deliveryTime int64, count uint64) {
	st.c.dirty = true
	// One descent: the new entry replaces an old one for id, if any,
	// which then changes hands.
	if old, ok := g.pel.ReplaceOrInsert(pendingEntry{id: id, deliveryTime: deliveryTime, deliveryCount: count, consumer: c}); ok {
		if old.consumer != c {
			old.consumer.pel.Delete(id)
			c.pel.ReplaceOrInsert(id)
		}
		return
	}
	c.pel.ReplaceOrInsert(id)
	st.o().groupBytes += nackBytes
}

// Redeliver updates the NACK of id for a delivery at now (XREADGROUP of
// a consumer's history): the time set, the count up.
func (st *Stream) Redeliver(g *StreamCG, id StreamID, now int64) {
	if e, ok := g.nack(id); ok {
		e.deliveryTime = now
		e.deliveryCount++
		g.pel.ReplaceOrInsert(e)
		st.c.dirty = true
	}
}

// Ack removes id from the group's PEL and its consumer's; false if it
// was not pending.
func (st *Stream) Ack(g *StreamCG, id StreamID) bool {
	e, ok := g.pel.Delete(pendingEntry{id: id})
	if !ok {
		return false
	}
	e.consumer.pel.Delete(id)
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
