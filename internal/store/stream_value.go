package store

// A stream's whole state in Redis's own terms, for RESTORE, DUMP and RDB
// files (internal/rdb reads and writes it in Redis's stream format): the
// entries are the listpack nodes exactly as Redis keeps them under its
// radix tree, keyed by their master IDs; the consumer groups and their
// pending entries lists are plain values.

// StreamID is a stream entry's ID: milliseconds, then a sequence number.
type StreamID struct{ Ms, Seq uint64 }

// StreamNode is one node of a stream's entries: Redis's listpack of a
// master entry and entries whose IDs are deltas from Master, the ID the
// node is keyed under (t_stream.c draws the layout; stream.go here).
type StreamNode struct {
	Master StreamID
	LP     []byte
	raw    int // in the store: > 0, LP is compressed (stream_pack.go)
}

// StreamNACK is one entry of a group's pending entries list: delivered to
// a consumer and not yet acknowledged.
type StreamNACK struct {
	ID            StreamID
	DeliveryTime  int64 // Unix milliseconds of the last delivery
	DeliveryCount uint64
}

// StreamConsumer is a consumer of a group; PEL lists the IDs pending for
// it, each of which is in the group's PEL.
type StreamConsumer struct {
	Name       []byte
	SeenTime   int64 // Unix milliseconds of its last attempted interaction
	ActiveTime int64 // Unix milliseconds of its last successful interaction; -1 unknown
	PEL        []StreamID
}

// StreamGroup is a consumer group.
type StreamGroup struct {
	Name        []byte
	LastID      StreamID
	EntriesRead int64 // -1: not known (SCG_INVALID_ENTRIES_READ)
	PEL         []StreamNACK
	Consumers   []StreamConsumer
}

// StreamValue is a whole stream: its nodes in ID order, its counters, its
// groups in name order.
type StreamValue struct {
	Nodes        []StreamNode
	Length       uint64
	LastID       StreamID
	FirstID      StreamID
	MaxDeletedID StreamID
	EntriesAdded uint64
	Groups       []StreamGroup
}
