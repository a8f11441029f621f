package redis

import (
	"strconv"
	"strings"

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

// cmdWriter appends one command, a RESP array of bulk strings, to the
// call's propagated commands (Stream.Props), allocating nothing else.
type cmdWriter struct{ b []byte }

func (w *cmdWriter) begin(n int) {
	w.b = append(w.b, '*')
	w.b = strconv.AppendInt(w.b, int64(n), 10)
	w.b = append(w.b, '\r', '\n')
}

func (w *cmdWriter) bulk(s []byte) {
	w.b = append(w.b, '$')
	w.b = strconv.AppendInt(w.b, int64(len(s)), 10)
	w.b = append(w.b, '\r', '\n')
	w.b = append(append(w.b, s...), '\r', '\n')
}

func (w *cmdWriter) str(s string) {
	w.b = append(w.b, '$')
	w.b = strconv.AppendInt(w.b, int64(len(s)), 10)
	w.b = append(w.b, '\r', '\n')
	w.b = append(append(w.b, s...), '\r', '\n')
}

func (w *cmdWriter) id(id store.StreamID) {
	var tmp [48]byte
	w.bulk(id.AppendTo(tmp[:0]))
}

func (w *cmdWriter) int(n int64) {
	var tmp [24]byte
	w.bulk(strconv.AppendInt(tmp[:0], n, 10))
}

// command begins a command of n arguments after cmd's words (its name,
// and a subcommand's) and key (the store's, which names the database:
// the Feed selects it).
func (w *cmdWriter) command(cmd string, key []byte, n int) {
	w.begin(strings.Count(cmd, " ") + 2 + n)
	for {
		word, rest, more := strings.Cut(cmd, " ")
		w.str(word)
		if !more {
			break
		}
		cmd = rest
	}
	w.bulk(userKey(key))
}

// propagate adds the command cmd on key with args to the call's changes
// on st, when the store feeds a replication stream.
func propagate(st *store.Stream, cmd string, key []byte, args ...[]byte) {
	if !st.Feeding() {
		return
	}
	w := cmdWriter{b: st.Props()}
	w.command(cmd, key, len(args))
	for _, a := range args {
		w.bulk(a)
	}
	st.Propagate(w.b)
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
	w := cmdWriter{b: st.Props()}
	n := 1 + len(fields)
	if trimmed {
		n += 3
	}
	w.command("XADD", key, n)
	if trimmed {
		for _, a := range exactTrim(st) {
			w.bulk(a)
		}
	}
	w.id(id)
	for _, f := range fields {
		w.bulk(f)
	}
	st.Propagate(w.b)
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
	w := cmdWriter{b: st.Props()}
	w.command("XCLAIM", key, 12)
	w.bulk(g.Name())
	w.bulk(nack.Consumer.Name())
	w.str("0")
	w.id(id)
	w.str("TIME")
	w.int(nack.DeliveryTime)
	w.str("RETRYCOUNT")
	w.int(int64(nack.DeliveryCount))
	w.str("FORCE")
	w.str("JUSTID")
	w.str("LASTID")
	w.id(g.LastID())
	st.Propagate(w.b)
}

// propagateGroupID propagates group g's last ID and entries-read count.
func propagateGroupID(st *store.Stream, key []byte, g *store.StreamCG) {
	if !st.Feeding() {
		return
	}
	w := cmdWriter{b: st.Props()}
	w.command("XGROUP SETID", key, 4)
	w.bulk(g.Name())
	w.id(g.LastID())
	w.str("ENTRIESREAD")
	w.int(g.EntriesRead())
	st.Propagate(w.b)
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
