package redis

import (
	"math"
	"slices"
	"strconv"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The consumer group commands of Redis 7.2's t_stream.c: XGROUP, XACK,
// XPENDING, XCLAIM, XAUTOCLAIM, and XINFO.

func keyAt2(c *respCommand) *respCommand {
	c.firstKey, c.lastKey, c.step = 2, 2, 1
	return c
}

func xgroupCommand() respCommand {
	return respCommand{name: "xgroup", arity: -2, group: "stream", since: "5.0.0", subs: []*respCommand{
		keyAt2(sub("xgroup|create", -5, "5.0.0", "", "CREATE <key> <groupname> <id|$> [option]",
			"Create a new consumer group. Options are:\n* MKSTREAM\n  Create the empty stream if it does not exist.\n* ENTRIESREAD entries_read\n  Set the group's entries_read counter (internal use).", cmdXGroup)),
		keyAt2(sub("xgroup|createconsumer", 5, "6.2.0", "", "CREATECONSUMER <key> <groupname> <consumer>",
			"Create a new consumer in the specified group.", cmdXGroup)),
		keyAt2(sub("xgroup|delconsumer", 5, "5.0.0", "", "DELCONSUMER <key> <groupname> <consumer>",
			"Remove the specified consumer.", cmdXGroup)),
		keyAt2(sub("xgroup|destroy", 4, "5.0.0", "", "DESTROY <key> <groupname>",
			"Remove the specified group.", cmdXGroup)),
		keyAt2(sub("xgroup|setid", -5, "5.0.0", "", "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
			"Set the current group ID and entries_read counter.", cmdXGroup)),
		helpSub("xgroup"),
	}}
}

func xinfoCommand() respCommand {
	return respCommand{name: "xinfo", arity: -2, group: "stream", since: "5.0.0", subs: []*respCommand{
		keyAt2(sub("xinfo|consumers", 4, "5.0.0", "", "CONSUMERS <key> <groupname>",
			"Show consumers of <groupname>.", cmdXInfoConsumers)),
		keyAt2(sub("xinfo|groups", 3, "5.0.0", "", "GROUPS <key>",
			"Show the stream consumer groups.", cmdXInfoGroups)),
		keyAt2(sub("xinfo|stream", -3, "5.0.0", "", "STREAM <key> [FULL [COUNT <count>]",
			"Show information about the stream.", cmdXInfoStream)),
		helpSub("xinfo"),
	}}
}

func subSyntax(rc *conn, argv [][]byte, container string) {
	rc.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(cString(argv[1], 128)) + "'. Try " + container + " HELP.")
}

// cmdXGroup is XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER.
func cmdXGroup(rc *conn, argv [][]byte) {
	op := argv[1]
	key, name := argv[2], argv[3]
	mkstream := false
	entriesRead := int64(store.StreamInvalidEntriesRead)
	create, setid := argIs(op, "create"), argIs(op, "setid")
	if create || setid {
		for i := 5; i < len(argv); {
			switch {
			case create && argIs(argv[i], "mkstream"):
				mkstream = true
				i++
			case argIs(argv[i], "entriesread") && i+1 < len(argv):
				n, ok := rc.parseInt(argv[i+1])
				if !ok {
					return
				}
				if n < 0 && n != store.StreamInvalidEntriesRead {
					rc.w.Error("ERR value for ENTRIESREAD must be positive or -1")
					return
				}
				entriesRead = n
				i += 2
			default:
				subSyntax(rc, argv, "XGROUP")
				return
			}
		}
	}
	if create && len(argv) > 8 || setid && len(argv) != 5 && len(argv) != 7 {
		subSyntax(rc, argv, "XGROUP")
		return
	}
	var st store.Stream
	msg := ""
	var reply func()
	event := ""
	err := rc.st.UpdateStream(key, &st, func() error {
		if !st.Exists() && !mkstream {
			msg = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."
			return nil
		}
		var g *store.StreamCG
		if st.Exists() {
			g = st.Group(name)
			st.Quiet() // only a new stream is a modified key
		}
		if g == nil && !create && !argIs(op, "destroy") {
			msg = "NOGROUP No such consumer group '" + string(name) + "' for key name '" + string(userKey(key)) + "'"
			return nil
		}
		switch {
		case create:
			var id store.StreamID
			if len(argv[4]) == 1 && argv[4][0] == '$' {
				if st.Exists() {
					id = st.LastID()
				}
			} else {
				var ok bool
				if id, _, ok = parseStreamID(argv[4], 0, true, false); !ok {
					msg = errStreamID
					return nil
				}
			}
			st.Create()
			g, ok := st.CreateGroup(name, id, entriesRead)
			if !ok {
				msg = "BUSYGROUP Consumer Group name already exists"
				return nil
			}
			if st.Feeding() { // $ made explicit: a replay resolves it alike
				args := [][]byte{name, streamIDArg(g.LastID())}
				if mkstream {
					args = append(args, []byte("MKSTREAM"))
				}
				propagate(&st, "XGROUP CREATE", key, append(args, []byte("ENTRIESREAD"), strconv.AppendInt(nil, g.EntriesRead(), 10))...)
			}
			event = "xgroup-create"
			reply = rc.w.OK
		case setid:
			var id store.StreamID
			if len(argv[4]) == 1 && argv[4][0] == '$' {
				id = st.LastID()
			} else {
				var ok bool
				if id, _, ok = parseStreamID(argv[4], 0, false, false); !ok {
					msg = errStreamID
					return nil
				}
			}
			st.SetGroupID(g, id, entriesRead)
			propagateGroupID(&st, key, g)
			event = "xgroup-setid"
			reply = rc.w.OK
		case argIs(op, "destroy"):
			if g != nil && st.DestroyGroup(name) {
				propagate(&st, "XGROUP DESTROY", key, name)
				event = "xgroup-destroy"
				reply = func() { rc.w.Int(1) }
			} else {
				reply = func() { rc.w.Int(0) }
			}
		case argIs(op, "createconsumer"):
			_, created := st.CreateConsumer(g, argv[4], rc.nowMilli())
			if created {
				propagate(&st, "XGROUP CREATECONSUMER", key, name, argv[4])
				event = "xgroup-createconsumer"
			}
			reply = func() { rc.w.Int(int64(b2i(created))) }
		case argIs(op, "delconsumer"):
			pending, ok := st.DeleteConsumer(g, argv[4])
			if ok {
				propagate(&st, "XGROUP DELCONSUMER", key, name, argv[4])
				event = "xgroup-delconsumer"
			}
			reply = func() { rc.w.Int(int64(pending)) }
		}
		return nil
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case msg != "":
		rc.w.Error(msg)
	default:
		if event != "" {
			rc.notify(server.EventStream, event, key)
		}
		if event == "xgroup-destroy" && rc.p.blocked.n.Load() != 0 {
			rc.p.wake(key) // XREADGROUP waiters get -NOGROUP
		}
		reply()
	}
}

// parseIDs parses stream IDs strictly, writing the error for a bad one.
func (rc *conn) parseIDs(ids []store.StreamID, args [][]byte) ([]store.StreamID, bool) {
	for _, a := range args {
		id, _, ok := parseStreamID(a, 0, true, false)
		if !ok {
			rc.w.Error(errStreamID)
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// cmdXAck is XACK key group id [id ...].
func cmdXAck(rc *conn, argv [][]byte) {
	var buf [8]store.StreamID // most XACKs name one ID: no allocation
	ids, ok := rc.parseIDs(buf[:0], argv[3:])
	if !ok {
		return
	}
	var st store.Stream
	n := 0
	rc.storeErrorIf(rc.st.UpdateStream(argv[1], &st, func() error {
		if !st.Exists() {
			rc.keymiss(argv[1])
		}
		if g := st.Group(argv[2]); g != nil {
			st.Quiet()
			var acked [][]byte
			for _, id := range ids {
				if st.Ack(g, id) {
					n++
					if st.Feeding() {
						acked = append(acked, streamIDArg(id))
					}
				}
			}
			if n > 0 {
				propagate(&st, "XACK", argv[1], append([][]byte{argv[2]}, acked...)...)
			}
		}
		rc.w.Int(int64(n))
		return nil
	}))
}

func noGroupKey(key, group []byte) string {
	return "NOGROUP No such key '" + string(userKey(key)) + "' or consumer group '" + string(group) + "'"
}

// cmdXPending is XPENDING key group [[IDLE min-idle-time] start end count
// [consumer]].
func cmdXPending(rc *conn, argv [][]byte) {
	if len(argv) != 3 && (len(argv) < 6 || len(argv) > 9) {
		rc.w.Error(errSyntax)
		return
	}
	var minIdle, count int64
	var start, end store.StreamID
	var consumer []byte
	if len(argv) >= 6 {
		at := 3
		if argIs(argv[3], "idle") {
			n, ok := rc.parseInt(argv[4])
			if !ok {
				return
			}
			minIdle = n
			if len(argv) < 8 {
				rc.w.Error(errSyntax)
				return
			}
			at += 2
		}
		n, ok := rc.parseInt(argv[at+2])
		if !ok {
			return
		}
		count = max(n, 0)
		if start, ok = rc.parseRangeID(argv[at], 0, true); !ok {
			return
		}
		if end, ok = rc.parseRangeID(argv[at+1], math.MaxUint64, false); !ok {
			return
		}
		if at+3 < len(argv) {
			consumer = argv[at+3]
		}
	}
	var st store.Stream
	rc.storeErrorIf(rc.st.ViewStream(argv[1], &st, func() error {
		g := st.Group(argv[2])
		if g == nil {
			rc.w.Error(noGroupKey(argv[1], argv[2]))
			return nil
		}
		if len(argv) == 3 {
			rc.w.Array(4)
			rc.w.Int(int64(g.PendingCount()))
			if g.PendingCount() == 0 {
				rc.w.Null()
				rc.w.Null()
				rc.w.NullArray()
				return nil
			}
			rc.writeStreamID(g.FirstPending())
			rc.writeStreamID(g.LastPending())
			n := 0
			for _, c := range g.Consumers() {
				if c.PendingCount() > 0 {
					n++
				}
			}
			rc.w.Array(n)
			for _, c := range g.Consumers() {
				if c.PendingCount() > 0 {
					rc.w.Array(2)
					rc.w.Bulk(c.Name())
					rc.w.BulkInt(int64(c.PendingCount()))
				}
			}
			return nil
		}
		var only *store.StreamCGConsumer
		if consumer != nil {
			if only = g.Consumer(consumer); only == nil {
				rc.w.Array(0)
				return nil
			}
		}
		now := rc.nowMilli()
		var out []store.PendingEntry
		g.PendingRange(start, end, func(e store.PendingEntry) bool {
			if int64(len(out)) >= count {
				return false
			}
			if only != nil && e.Consumer != only {
				return true
			}
			if minIdle != 0 && now-e.DeliveryTime < minIdle {
				return true
			}
			out = append(out, e)
			return true
		})
		rc.w.Array(len(out))
		for _, e := range out {
			rc.w.Array(4)
			rc.writeStreamID(e.ID)
			rc.w.Bulk(e.Consumer.Name())
			rc.w.Int(max(now-e.DeliveryTime, 0))
			rc.w.Int(int64(e.DeliveryCount))
		}
		return nil
	}))
}

// writeClaimed writes a claimed entry: its ID (JUSTID) or the entry, a
// null if it is gone.
func (rc *conn) writeClaimed(st *store.Stream, id store.StreamID, justID bool) {
	if justID {
		rc.writeStreamID(id)
		return
	}
	found := false
	st.Range(id, id, false, func(id store.StreamID, fv [][]byte) bool {
		rc.writeStreamEntry(id, fv)
		found = true
		return false
	})
	if !found {
		rc.w.Null()
	}
}

// claimer is XCLAIM's and XAUTOCLAIM's claiming: the key's group (or
// its -NOGROUP written), the consumer (made before claiming, whether
// anything is claimed or not, as Redis 7.2 does), and the IDs claimed.
type claimer struct {
	st      *store.Stream
	g       *store.StreamCG
	name    []byte
	now     int64
	key     []byte
	cons    *store.StreamCGConsumer
	created bool // the consumer was made (xgroup-createconsumer)
	claimed []store.StreamID
}

// open finds the group; false means the reply (-NOGROUP) is written.
func (c *claimer) open(rc *conn, key, group []byte) bool {
	c.key = key
	if !c.st.Exists() {
		rc.keymiss(key) // a read, as Redis looks the key up
	}
	if c.g = c.st.Group(group); c.g == nil {
		rc.w.Error(noGroupKey(key, group))
		return false
	}
	c.st.Quiet() // a group's change: WATCH holds
	return true
}

// consumer finds or makes the consumer at c.now and marks it seen (an
// attempted interaction: its XINFO idle time restarts).
func (c *claimer) consumer() {
	c.cons, c.created = c.st.CreateConsumer(c.g, c.name, c.now)
	c.cons.Seen(c.now)
	if c.created {
		propagate(c.st, "XGROUP CREATECONSUMER", c.key, c.g.Name(), c.name)
	}
}

// claim gives id to the consumer, with its delivery time and count.
func (c *claimer) claim(id store.StreamID, deliveryTime int64, count uint64) {
	c.st.SetNACK(c.g, c.cons, id, deliveryTime, count)
	c.claimed = append(c.claimed, id)
	propagateClaim(c.st, c.key, c.g, id)
}

// drop clears id, an entry no longer in the stream, from the PEL.
func (c *claimer) drop(id store.StreamID) {
	c.st.Ack(c.g, id)
	propagate(c.st, "XACK", c.key, c.g.Name(), streamIDArg(id))
}

// finish records the claims and writes the claimed entries (or IDs); a
// consumer that claimed something was active (XINFO's inactive and
// active-time), one that only cleared deleted entries was not.
func (c *claimer) finish(rc *conn, justID bool) {
	if len(c.claimed) > 0 {
		c.cons.Active(c.now)
	}
	c.st.Touch()
	c.st.Propagated() // the consumer's times are not sent
	rc.w.Array(len(c.claimed))
	for _, id := range c.claimed {
		rc.writeClaimed(c.st, id, justID)
	}
}

// notify reports the consumer the claims made, once the store is left.
func (c *claimer) notify(rc *conn, key []byte) {
	if c.created {
		rc.notify(server.EventStream, "xgroup-createconsumer", key)
	}
}

// cmdXClaim is XCLAIM key group consumer min-idle-time id [id ...] [IDLE
// ms] [TIME ms] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id].
func cmdXClaim(rc *conn, argv [][]byte) {
	key, group := argv[1], argv[2]
	var st store.Stream
	c := claimer{st: &st, name: argv[3]}
	rc.storeErrorIf(rc.st.UpdateStream(key, &st, func() error {
		if !c.open(rc, key, group) {
			return nil
		}
		g := c.g
		minIdle, ok := resp2Int(argv[4])
		if !ok {
			rc.w.Error("ERR Invalid min-idle-time argument for XCLAIM")
			return nil
		}
		minIdle = max(minIdle, 0)
		j := 5
		var ids []store.StreamID
		for ; j < len(argv); j++ {
			id, _, ok := parseStreamID(argv[j], 0, true, false)
			if !ok {
				break
			}
			ids = append(ids, id)
		}
		now := rc.nowMilli()
		retry, delivery := int64(-1), int64(-1)
		force, justID := false, false
		var lastID store.StreamID
		for ; j < len(argv); j++ {
			more := len(argv) - 1 - j
			o := argv[j]
			switch {
			case argIs(o, "force"):
				force = true
			case argIs(o, "justid"):
				justID = true
			case argIs(o, "idle") && more > 0:
				j++
				n, ok := xclaimInt(rc, argv[j], "IDLE")
				if !ok {
					return nil
				}
				delivery = now - n
			case argIs(o, "time") && more > 0:
				j++
				if delivery, ok = xclaimInt(rc, argv[j], "TIME"); !ok {
					return nil
				}
			case argIs(o, "retrycount") && more > 0:
				j++
				if retry, ok = xclaimInt(rc, argv[j], "RETRYCOUNT"); !ok {
					return nil
				}
			case argIs(o, "lastid") && more > 0:
				j++
				id, _, ok := parseStreamID(argv[j], 0, true, false)
				if !ok {
					rc.w.Error(errStreamID)
					return nil
				}
				lastID = id
			default:
				rc.w.Error("ERR Unrecognized XCLAIM option '" + string(cString(o, len(o))) + "'")
				return nil
			}
		}
		if g.LastID().Less(lastID) {
			st.SetGroupID(g, lastID, g.EntriesRead())
			propagateGroupID(&st, key, g)
		}
		if delivery < 0 || delivery > now {
			delivery = now
		}
		c.now = now
		c.consumer()
		for _, id := range ids {
			nack, pending := g.NACK(id)
			// An entry no longer in the stream leaves the PEL, as in
			// Redis; but not by a primary's XCLAIM ... FORCE JUSTID, which
			// sets a pending entry's state (stream_prop.go): a full
			// resync's replay applies it again after the entry was
			// trimmed, and must leave the entry pending as the snapshot
			// has it.
			if !st.Has(id) && !(rc.master && force && justID) {
				if pending {
					c.drop(id)
				}
				continue
			}
			count := uint64(0)
			if pending {
				if minIdle != 0 && now-nack.DeliveryTime < minIdle {
					continue
				}
				count = nack.DeliveryCount
			} else if force {
				count = 1
			} else {
				continue
			}
			switch {
			case retry >= 0:
				count = uint64(retry)
			case !justID:
				count++
			}
			c.claim(id, delivery, count)
		}
		c.finish(rc, justID)
		return nil
	}))
	c.notify(rc, key)
}

// xclaimInt parses XCLAIM's option opt's value, writing Redis's error
// for one that is not an integer.
func xclaimInt(rc *conn, b []byte, opt string) (int64, bool) {
	n, ok := resp2Int(b)
	if !ok {
		rc.w.Error("ERR Invalid " + opt + " option argument for XCLAIM")
	}
	return n, ok
}

// resp2Int parses a 64-bit integer as getLongLongFromObject does.
func resp2Int(b []byte) (int64, bool) {
	return resp.ParseInt(b)
}

// cmdXAutoClaim is XAUTOCLAIM key group consumer min-idle-time start
// [COUNT count] [JUSTID].
func cmdXAutoClaim(rc *conn, argv [][]byte) {
	key, group, name := argv[1], argv[2], argv[3]
	minIdle, ok := resp2Int(argv[4])
	if !ok {
		rc.w.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ok := rc.parseRangeID(argv[5], 0, true)
	if !ok {
		return
	}
	count, justID := int64(100), false
	const attemptsFactor = 10
	for j := 6; j < len(argv); j++ {
		more := len(argv) - 1 - j
		switch {
		case argIs(argv[j], "count") && more > 0:
			n, ok := resp2Int(argv[j+1])
			if !ok || n < 1 || n > math.MaxInt64/16 {
				rc.w.Error("ERR COUNT must be > 0")
				return
			}
			count = n
			j++
		case argIs(argv[j], "justid"):
			justID = true
		default:
			rc.w.Error(errSyntax)
			return
		}
	}
	var st store.Stream
	c := claimer{st: &st, name: name}
	rc.storeErrorIf(rc.st.UpdateStream(key, &st, func() error {
		if !c.open(rc, key, group) {
			return nil
		}
		g := c.g
		now := rc.nowMilli()
		c.now = now
		c.consumer()
		attempts := count * attemptsFactor
		var deleted []store.StreamID
		var pending []store.PendingEntry
		g.PendingRange(start, store.MaxStreamID, func(e store.PendingEntry) bool {
			pending = append(pending, e)
			return int64(len(pending)) <= attempts
		})
		next := store.StreamID{}
		i := 0
		for ; i < len(pending); i++ {
			if attempts == 0 || count == 0 {
				break
			}
			attempts--
			e := pending[i]
			if !st.Has(e.ID) {
				c.drop(e.ID)
				deleted = append(deleted, e.ID)
				count--
				continue
			}
			if minIdle != 0 && now-e.DeliveryTime < minIdle {
				continue
			}
			dc := e.DeliveryCount
			if !justID {
				dc++
			}
			c.claim(e.ID, now, dc)
			count--
		}
		if i < len(pending) {
			next = pending[i].ID
		}
		rc.w.Array(3)
		rc.writeStreamID(next)
		c.finish(rc, justID)
		rc.w.Array(len(deleted))
		for _, id := range deleted {
			rc.writeStreamID(id)
		}
		return nil
	}))
	c.notify(rc, key)
}

// viewStreamOrErr runs fn on the stream under key, answering "no such
// key" for a missing one.
func (rc *conn) viewStreamOrErr(key []byte, fn func(st *store.Stream)) {
	var st store.Stream
	rc.storeErrorIf(rc.st.ViewStream(key, &st, func() error {
		if !st.Exists() {
			rc.w.Error("ERR no such key")
			return nil
		}
		fn(&st)
		return nil
	}))
}

// cmdXInfoGroups is XINFO GROUPS key.
func cmdXInfoGroups(rc *conn, argv [][]byte) {
	rc.viewStreamOrErr(argv[2], func(st *store.Stream) {
		gs := st.Groups()
		rc.w.Array(len(gs))
		for _, g := range gs {
			rc.w.Map(6)
			rc.w.BulkString("name")
			rc.w.Bulk(g.Name())
			rc.w.BulkString("consumers")
			rc.w.Int(int64(len(g.Consumers())))
			rc.w.BulkString("pending")
			rc.w.Int(int64(g.PendingCount()))
			rc.w.BulkString("last-delivered-id")
			rc.writeStreamID(g.LastID())
			rc.writeGroupCounters(st, g)
		}
	})
}

// writeGroupCounters writes a group's entries-read and lag.
func (rc *conn) writeGroupCounters(st *store.Stream, g *store.StreamCG) {
	rc.w.BulkString("entries-read")
	if r := g.EntriesRead(); r != store.StreamInvalidEntriesRead {
		rc.w.Int(r)
	} else {
		rc.w.Null()
	}
	rc.w.BulkString("lag")
	if lag, ok := st.Lag(g); ok {
		rc.w.Int(lag)
	} else {
		rc.w.Null()
	}
}

// cmdXInfoConsumers is XINFO CONSUMERS key group.
func cmdXInfoConsumers(rc *conn, argv [][]byte) {
	rc.viewStreamOrErr(argv[2], func(st *store.Stream) {
		g := st.Group(argv[3])
		if g == nil {
			rc.w.Error("NOGROUP No such consumer group '" + string(argv[3]) + "' for key name '" + string(userKey(argv[2])) + "'")
			return
		}
		now := rc.nowMilli()
		cs := g.Consumers()
		rc.w.Array(len(cs))
		for _, c := range cs {
			rc.w.Map(4)
			rc.w.BulkString("name")
			rc.w.Bulk(c.Name())
			rc.w.BulkString("pending")
			rc.w.Int(int64(c.PendingCount()))
			rc.w.BulkString("idle")
			rc.w.Int(max(now-c.SeenTime(), 0))
			rc.w.BulkString("inactive") // Redis 7.2: not clamped, -1 if never active
			if a := c.ActiveTime(); a != -1 {
				rc.w.Int(now - a)
			} else {
				rc.w.Int(-1)
			}
		}
	})
}

// cmdXInfoStream is XINFO STREAM key [FULL [COUNT count]].
func cmdXInfoStream(rc *conn, argv [][]byte) {
	full, count := false, int64(10)
	if len(argv) > 3 {
		if !argIs(argv[3], "full") {
			subSyntax(rc, argv, "XINFO")
			return
		}
		full = true
		if len(argv) > 4 {
			if len(argv) != 6 || !argIs(argv[4], "count") {
				subSyntax(rc, argv, "XINFO")
				return
			}
			n, ok := rc.parseInt(argv[5])
			if !ok {
				return
			}
			count = max(n, 0)
		}
	}
	rc.viewStreamOrErr(argv[2], func(st *store.Stream) {
		if full {
			rc.w.Map(9)
		} else {
			rc.w.Map(10)
		}
		rc.w.BulkString("length")
		rc.w.Int(int64(st.Len()))
		rc.w.BulkString("radix-tree-keys")
		rc.w.Int(int64(st.Nodes()))
		rc.w.BulkString("radix-tree-nodes")
		rc.w.Int(int64(raxNodes(st)))
		rc.w.BulkString("last-generated-id")
		rc.writeStreamID(st.LastID())
		rc.w.BulkString("max-deleted-entry-id")
		rc.writeStreamID(st.MaxDeletedID())
		rc.w.BulkString("entries-added")
		rc.w.Int(int64(st.EntriesAdded()))
		rc.w.BulkString("recorded-first-entry-id")
		rc.writeStreamID(st.FirstID())
		if !full {
			rc.w.BulkString("groups")
			rc.w.Int(int64(len(st.Groups())))
			for _, rev := range []bool{false, true} {
				if rev {
					rc.w.BulkString("last-entry")
				} else {
					rc.w.BulkString("first-entry")
				}
				found := false
				st.Range(store.StreamID{}, store.MaxStreamID, rev, func(id store.StreamID, fv [][]byte) bool {
					rc.writeStreamEntry(id, fv)
					found = true
					return false
				})
				if !found {
					rc.w.Null()
				}
			}
			return
		}
		rc.w.BulkString("entries")
		if count == 0 {
			rc.writeRange(st, store.StreamID{}, store.MaxStreamID, false, -1)
		} else {
			rc.writeRange(st, store.StreamID{}, store.MaxStreamID, false, count)
		}
		rc.w.BulkString("groups")
		gs := st.Groups()
		rc.w.Array(len(gs))
		limit := func(n int) int {
			if count == 0 {
				return n
			}
			return int(min(int64(n), count))
		}
		for _, g := range gs {
			rc.w.Map(7)
			rc.w.BulkString("name")
			rc.w.Bulk(g.Name())
			rc.w.BulkString("last-delivered-id")
			rc.writeStreamID(g.LastID())
			rc.writeGroupCounters(st, g)
			rc.w.BulkString("pel-count")
			rc.w.Int(int64(g.PendingCount()))
			rc.w.BulkString("pending")
			n := limit(g.PendingCount())
			rc.w.Array(n)
			i := 0
			g.PendingRange(store.StreamID{}, store.MaxStreamID, func(e store.PendingEntry) bool {
				if i >= n {
					return false
				}
				i++
				rc.w.Array(4)
				rc.writeStreamID(e.ID)
				rc.w.Bulk(e.Consumer.Name())
				rc.w.Int(e.DeliveryTime)
				rc.w.Int(int64(e.DeliveryCount))
				return true
			})
			rc.w.BulkString("consumers")
			rc.w.Array(len(g.Consumers()))
			for _, c := range g.Consumers() {
				rc.w.Map(5)
				rc.w.BulkString("name")
				rc.w.Bulk(c.Name())
				rc.w.BulkString("seen-time")
				rc.w.Int(c.SeenTime())
				rc.w.BulkString("active-time")
				rc.w.Int(c.ActiveTime())
				rc.w.BulkString("pel-count")
				rc.w.Int(int64(c.PendingCount()))
				rc.w.BulkString("pending")
				ids := c.Pending()[:limit(c.PendingCount())]
				rc.w.Array(len(ids))
				for _, id := range ids {
					e, _ := g.NACK(id)
					rc.w.Array(3)
					rc.writeStreamID(id)
					rc.w.Int(e.DeliveryTime)
					rc.w.Int(int64(e.DeliveryCount))
				}
			}
		}
	})
}

// raxNodes is what Redis's radix tree of the stream's nodes would count
// (XINFO's radix-tree-nodes): the nodes of a compressed trie over the
// 16-byte big-endian master IDs, a branching node where keys part, a
// compressed node for a run they share, a leaf for each key.
func raxNodes(st *store.Stream) int {
	masters := st.Masters(nil)
	keys := make([][16]byte, len(masters))
	for i, m := range masters {
		for b := 0; b < 8; b++ {
			keys[i][b] = byte(m.Ms >> (56 - 8*b))
			keys[i][8+b] = byte(m.Seq >> (56 - 8*b))
		}
	}
	if len(keys) == 0 {
		return 1
	}
	var count func(ks [][16]byte, depth int) int
	count = func(ks [][16]byte, depth int) int {
		if depth == 16 {
			return 1
		}
		// The run all keys share from depth.
		l := 0
		for depth+l < 16 && slices.IndexFunc(ks, func(k [16]byte) bool { return k[depth+l] != ks[0][depth+l] }) < 0 {
			l++
		}
		if l > 0 {
			return 1 + count(ks, depth+l)
		}
		n := 1
		for i := 0; i < len(ks); {
			j := i
			for j < len(ks) && ks[j][depth] == ks[i][depth] {
				j++
			}
			n += count(ks[i:j], depth+1)
			i = j
		}
		return n
	}
	return count(keys, 0)
}
