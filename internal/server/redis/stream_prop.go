package redis

import (
	"strconv"
	"strings"

	"github.com/minikv/minikv/internal/replication"
	"github.com/minikv/minikv/internal/store"
)

// A stream's changes reach replicas as the commands Redis propagates for
// them (t_stream.c), not as the whole stream: an XADD of one entry to a
// 10 000-entry stream is one XADD on the stream, not a RESTORE of 10 000
// entries. Each command is one that a replica may apply again over a
// later state of the key without changing it, as a full resync's replay
// does (the stream's offset is marked before the snapshot is taken):
//
//	XADD key [MINID = first] id field value ...   an explicit ID: a replay
//	                                              is refused as too small
//	XTRIM key MINID = first                       trims exactly what was
//	XDEL key id ...   XACK key group id ...
//	XSETID ...        XGROUP SETID key group id ENTRIESREAD n
//	XGROUP CREATE key group id [MKSTREAM] ENTRIESREAD n   (for $ too)
//	XGROUP CREATECONSUMER|DELCONSUMER|DESTROY ...
//	XCLAIM key group consumer 0 id TIME ms RETRYCOUNT n FORCE JUSTID LASTID id
//	                                              one per delivery or claim
//
// store.Stream.Propagate collects them under the key's lock; the store
// hands them to the Feed in place of the stream's record (durable mode
// still writes the record). A call either propagates every change it
// makes or none (the whole state is sent).

// propagate adds the command cmd (its name, and a subcommand's) on key
// (the store's, which names the database: the Feed selects it) with args
// to the call's changes on st, when the store feeds a replication stream.
func propagate(st *store.Stream, cmd string, key []byte, args ...[]byte) {
	if !st.Feeding() {
		return
	}
	var argv [][]byte
	for w := range strings.FieldsSeq(cmd) {
		argv = append(argv, []byte(w))
	}
	argv = append(append(argv, userKey(key)), args...)
	st.Propagate(replication.AppendCommand(nil, argv...))
}

// streamIDArg is id as a command argument.
func streamIDArg(id store.StreamID) []byte { return id.AppendTo(nil) }

// exactTrim is the trim that leaves a replica's copy of st as the
// primary's after a trim from its head: MINID = its first entry (an
// empty stream: one past its last ID), which trims the same again
// whatever was added since.
func exactTrim(st *store.Stream) [][]byte {
	if st.Len() > 0 {
		return [][]byte{[]byte("MINID"), []byte("="), streamIDArg(st.FirstID())}
	}
	if next, ok := st.LastID().Next(); ok {
		return [][]byte{[]byte("MINID"), []byte("="), streamIDArg(next)}
	}
	return [][]byte{[]byte("MAXLEN"), []byte("="), []byte("0")}
}

// propagateXAdd propagates an XADD of id with fields, trimmed (when
// trimmed) as st is now.
func propagateXAdd(st *store.Stream, key []byte, id store.StreamID, fields [][]byte, trimmed bool) {
	if !st.Feeding() {
		return
	}
	args := make([][]byte, 0, 5+len(fields))
	if trimmed {
		args = append(args, exactTrim(st)...)
	}
	args = append(args, streamIDArg(id))
	args = append(args, fields...)
	propagate(st, "XADD", key, args...)
}

// propagateClaim propagates the state of the pending entry id of group g
// as XCLAIM ... FORCE JUSTID sets it, with the group's last ID (Redis's
// streamPropagateXCLAIM).
func propagateClaim(st *store.Stream, key []byte, g *store.StreamCG, id store.StreamID) {
	if !st.Feeding() {
		return
	}
	nack, ok := g.NACK(id)
	if !ok {
		return
	}
	propagate(st, "XCLAIM", key, g.Name(), nack.Consumer.Name(), []byte("0"), streamIDArg(id),
		[]byte("TIME"), strconv.AppendInt(nil, nack.DeliveryTime, 10),
		[]byte("RETRYCOUNT"), strconv.AppendUint(nil, nack.DeliveryCount, 10),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), streamIDArg(g.LastID()))
}

// propagateGroupID propagates group g's last ID and entries-read count.
func propagateGroupID(st *store.Stream, key []byte, g *store.StreamCG) {
	propagate(st, "XGROUP SETID", key, g.Name(), streamIDArg(g.LastID()),
		[]byte("ENTRIESREAD"), strconv.AppendInt(nil, g.EntriesRead(), 10))
}

// groupConsumer finds or makes group g's consumer name for a read at now
// and marks it seen (Redis 7.2 makes it whether or not anything is read);
// only its making is propagated (a replica's seen times are its own).
func groupConsumer(st *store.Stream, key []byte, g *store.StreamCG, name []byte, now int64) (*store.StreamCGConsumer, bool) {
	st.Quiet() // a group's change: WATCH holds
	cons, created := st.CreateConsumer(g, name, now)
	cons.Seen(now)
	if created {
		propagate(st, "XGROUP CREATECONSUMER", key, g.Name(), name)
	}
	st.Propagated()
	return cons, created
}
