package redis

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// The stream commands (Redis 7.2's t_stream.c) over the store's stream
// (internal/store/stream.go): XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM,
// XSETID, XREAD and XREADGROUP here; the consumer groups' XGROUP, XACK,
// XPENDING, XCLAIM, XAUTOCLAIM and XINFO in stream_group.go. Each command
// is one store call, atomic on its key as Redis's. Replicas get each
// change as the commands Redis propagates for it (stream_prop.go: an XADD
// with its ID, an exact trim ...); durable mode writes the stream's new
// state. Metadata comes from cmddata.go.

func streamCommands() []respCommand {
	one := oneKey("stream")
	w, wf := []string{"write", "denyoom", "fast"}, []string{"write", "fast"}
	r, rf := []string{"readonly"}, []string{"readonly", "fast"}
	return []respCommand{
		one("xadd", -5, w, "5.0.0", "", "", nil, cmdXAdd),
		one("xlen", 2, rf, "5.0.0", "", "", nil, cmdXLen),
		one("xrange", -4, r, "5.0.0", "", "", nil, func(rc *conn, argv [][]byte) { rc.xrange(argv, false) }),
		one("xrevrange", -4, r, "5.0.0", "", "", nil, func(rc *conn, argv [][]byte) { rc.xrange(argv, true) }),
		one("xdel", -3, wf, "5.0.0", "", "", nil, cmdXDel),
		one("xtrim", -4, []string{"write"}, "5.0.0", "", "", nil, cmdXTrim),
		one("xsetid", -3, w, "5.0.0", "", "", nil, cmdXSetID),
		{name: "xread", arity: -4, flags: []string{"readonly", "blocking", "movablekeys"}, group: "stream", since: "5.0.0",
			keysOf: xreadKeys, run: cmdXRead},
		{name: "xreadgroup", arity: -7, flags: []string{"write", "blocking", "movablekeys"}, group: "stream", since: "5.0.0",
			keysOf: xreadKeys, run: cmdXRead},
		one("xack", -4, wf, "5.0.0", "", "", nil, cmdXAck),
		one("xpending", -3, r, "5.0.0", "", "", nil, cmdXPending),
		one("xclaim", -6, wf, "5.0.0", "", "", nil, cmdXClaim),
		one("xautoclaim", -6, wf, "6.2.0", "", "", nil, cmdXAutoClaim),
		xgroupCommand(),
		xinfoCommand(),
	}
}

// Errors of the stream commands, as Redis 7.2 words them.
const (
	errStreamID      = "ERR Invalid stream ID specified as stream command argument"
	errXAddSmaller   = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errXAddZero      = "ERR The ID specified in XADD must be greater than 0-0"
	errStreamExhaust = "ERR The stream has exhausted the last possible ID, unable to add more items"
)

// parseStreamID is Redis's streamGenericParseIDOrReply: "ms-seq", or "ms"
// with missing as its sequence; "-" and "+" unless strict; with seqStar,
// "ms-*" gives seqGiven false.
func parseStreamID(b []byte, missing uint64, strict, seqStar bool) (id store.StreamID, seqGiven, ok bool) {
	if len(b) > 127 {
		return id, false, false
	}
	if len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		if strict {
			return id, false, false
		}
		if b[0] == '+' {
			return store.MaxStreamID, true, true
		}
		return id, true, true
	}
	msPart, seqPart, dash := bytes.Cut(b, []byte{'-'})
	ms, ok := parseUint64(msPart)
	if !ok {
		return id, false, false
	}
	id.Ms = ms
	if !dash {
		id.Seq = missing
		return id, true, true
	}
	if seqStar && len(seqPart) == 1 && seqPart[0] == '*' {
		return id, false, true
	}
	seq, ok := parseUint64(seqPart)
	if !ok {
		return id, false, false
	}
	id.Seq = seq
	return id, true, true
}

// parseUint64 is Redis's string2ull: a canonical int64 that is not
// negative, or what strtoull takes whole (spaces and a + before digits).
func parseUint64(b []byte) (uint64, bool) {
	if n, ok := resp.ParseInt(b); ok {
		return uint64(n), n >= 0
	}
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	if i < len(b) && b[i] == '+' {
		i++
	}
	if i == len(b) {
		return 0, false
	}
	// strtoull's base 10 from here, whole: digits (leading zeros too, as
	// redis-benchmark's __rand_int__ writes them), no overflow.
	var v uint64
	for ; i < len(b); i++ {
		d := b[i] - '0'
		if d > 9 || v > (math.MaxUint64-uint64(d))/10 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	return v, true
}

// writeStreamID writes id as a bulk string.
func (rc *conn) writeStreamID(id store.StreamID) {
	rc.w.Bulk(id.AppendTo(rc.numBuf()))
}

// writeStreamEntry writes one entry: its ID and its fields and values.
func (rc *conn) writeStreamEntry(id store.StreamID, fv [][]byte) {
	rc.w.Array(2)
	rc.writeStreamID(id)
	rc.w.Array(len(fv))
	for _, b := range fv {
		rc.w.Bulk(b)
	}
}

// trimArgs are XADD's and XTRIM's trimming options.
type trimArgs struct {
	set   bool
	trim  store.StreamTrim
	limit bool // LIMIT given
}

// parseTrimOpt parses the trimming option at argv[i], if it is one, and
// returns the index after it; ok false means an error was written.
func (rc *conn) parseTrimOpt(argv [][]byte, i int, t *trimArgs) (next int, matched, ok bool) {
	more := len(argv) - 1 - i
	opt := argv[i]
	switch {
	case (argIs(opt, "maxlen") || argIs(opt, "minid")) && more > 0:
		if t.set {
			rc.w.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
			return i, true, false
		}
		minid := argIs(opt, "minid")
		t.trim.Approx = false
		if more >= 2 && len(argv[i+1]) == 1 && (argv[i+1][0] == '~' || argv[i+1][0] == '=') {
			t.trim.Approx = argv[i+1][0] == '~'
			i++
		}
		if minid {
			id, _, ok := parseStreamID(argv[i+1], 0, true, false)
			if !ok {
				rc.w.Error(errStreamID)
				return i, true, false
			}
			t.trim.MinID, t.trim.ID = true, id
		} else {
			n, ok := rc.parseInt(argv[i+1])
			if !ok {
				return i, true, false
			}
			if n < 0 {
				rc.w.Error("ERR The MAXLEN argument must be >= 0.")
				return i, true, false
			}
			t.trim.MaxLen = uint64(n)
		}
		t.set = true
		return i + 2, true, true
	case argIs(opt, "limit") && more > 0:
		n, ok := rc.parseInt(argv[i+1])
		if !ok {
			return i, true, false
		}
		if n < 0 {
			rc.w.Error("ERR The LIMIT argument must be >= 0.")
			return i, true, false
		}
		t.trim.Limit, t.limit = n, true
		return i + 2, true, true
	}
	return i, false, true
}

// finishTrim checks the trimming options once parsed and sets the
// default LIMIT of an approximate trim, as Redis does (none for the
// primary's link, whose trims are exact replays).
func (rc *conn) finishTrim(t *trimArgs, xadd bool) bool {
	if t.trim.Limit != 0 && !t.set {
		rc.w.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return false
	}
	if !xadd && !t.set {
		rc.w.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return false
	}
	if rc.master {
		t.trim.Limit = 0
		return true
	}
	if t.limit {
		if !t.trim.Approx {
			rc.w.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
			return false
		}
	} else if t.trim.Approx {
		_, entries := rc.p.accepted.streamNodeLimits()
		t.trim.Limit = 100 * entries
	} else {
		t.trim.Limit = 0
	}
	return true
}

// cmdXAdd is XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT
// count]] *|id field value [field value ...].
func cmdXAdd(rc *conn, argv [][]byte) {
	var t trimArgs
	noMk, auto := false, true
	var id store.StreamID
	seqGiven := true
	i := 2
	for ; i < len(argv); i++ {
		if len(argv[i]) == 1 && argv[i][0] == '*' {
			break
		}
		next, matched, ok := rc.parseTrimOpt(argv, i, &t)
		if !ok {
			return
		}
		if matched {
			i = next - 1
			continue
		}
		if argIs(argv[i], "nomkstream") {
			noMk = true
			continue
		}
		id, seqGiven, ok = parseStreamID(argv[i], 0, true, true)
		if !ok {
			rc.w.Error(errStreamID)
			return
		}
		auto = false
		break
	}
	if !rc.finishTrim(&t, true) {
		return
	}
	fields := argv[min(i+1, len(argv)):]
	if i >= len(argv) || len(fields) < 2 || len(fields)%2 == 1 {
		rc.w.Error("ERR wrong number of arguments for 'xadd' command")
		return
	}
	if !auto && seqGiven && id.IsZero() {
		rc.w.Error(errXAddZero)
		return
	}
	maxBytes, maxEntries := rc.p.accepted.streamNodeLimits()
	var st store.Stream
	var added store.StreamID
	var trimmed int64
	msg, null := "", false
	err := rc.st.UpdateStream(argv[1], &st, func() error {
		if !st.Exists() && noMk {
			null = true
			return nil
		}
		if !st.Exists() {
			st.Create()
		}
		last := st.LastID()
		if last == store.MaxStreamID {
			msg = errStreamExhaust
			return nil
		}
		switch {
		case auto:
			now := uint64(rc.nowMilli())
			if now > last.Ms {
				added = store.StreamID{Ms: now}
			} else {
				added, _ = last.Next()
			}
		case !seqGiven:
			added = id
			if last.Ms == id.Ms {
				if last.Seq == math.MaxUint64 {
					msg = errXAddSmaller
					return nil
				}
				added = store.StreamID{Ms: last.Ms, Seq: last.Seq + 1}
			}
		default:
			added = id
		}
		if !last.Less(added) {
			msg = errXAddSmaller
			return nil
		}
		st.Append(added, fields, maxBytes, maxEntries)
		if t.set {
			trimmed = st.Trim(t.trim)
		}
		propagateXAdd(&st, argv[1], added, fields, trimmed > 0)
		return nil
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case null:
		rc.w.Null()
	case msg != "":
		rc.w.Error(msg)
	default:
		rc.writeStreamID(added)
		rc.p.blocked.markReady(argv[1])
		rc.notify(server.EventStream, "xadd", argv[1])
		if trimmed > 0 {
			rc.notify(server.EventStream, "xtrim", argv[1])
		}
	}
}

// cmdXLen is XLEN key.
func cmdXLen(rc *conn, argv [][]byte) {
	var st store.Stream
	rc.storeErrorIf(rc.st.ViewStream(argv[1], &st, func() error {
		rc.w.Int(int64(st.Len()))
		return nil
	}))
}

// parseRangeID parses an XRANGE bound: "(" makes it exclusive.
func (rc *conn) parseRangeID(b []byte, missing uint64, start bool) (store.StreamID, bool) {
	excl := len(b) > 1 && b[0] == '('
	if excl {
		b = b[1:]
	}
	id, _, ok := parseStreamID(b, missing, excl, false)
	if !ok {
		rc.w.Error(errStreamID)
		return id, false
	}
	if !excl {
		return id, true
	}
	if start {
		if id, ok = id.Next(); !ok {
			rc.w.Error("ERR invalid start ID for the interval")
		}
	} else if id, ok = id.Prev(); !ok {
		rc.w.Error("ERR invalid end ID for the interval")
	}
	return id, ok
}

// xrange is XRANGE key start end [COUNT n] and XREVRANGE key end start
// [COUNT n].
func (rc *conn) xrange(argv [][]byte, rev bool) {
	sa, ea := argv[2], argv[3]
	if rev {
		sa, ea = ea, sa
	}
	start, ok := rc.parseRangeID(sa, 0, true)
	if !ok {
		return
	}
	end, ok := rc.parseRangeID(ea, math.MaxUint64, false)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(argv); j++ {
		if argIs(argv[j], "count") && j+1 < len(argv) {
			n, ok := rc.parseInt(argv[j+1])
			if !ok {
				return
			}
			count = max(n, 0)
			j++
			continue
		}
		rc.w.Error(errSyntax)
		return
	}
	var st store.Stream
	rc.storeErrorIf(rc.st.ViewStream(argv[1], &st, func() error {
		if !st.Exists() {
			rc.w.Array(0)
			return nil
		}
		if count == 0 {
			rc.w.NullArray()
			return nil
		}
		rc.writeRange(&st, start, end, rev, count)
		return nil
	}))
}

// writeRange writes the entries from start to end (count < 0: all) as an
// array.
func (rc *conn) writeRange(st *store.Stream, start, end store.StreamID, rev bool, count int64) {
	n := int64(0)
	st.Range(start, end, rev, func(store.StreamID, [][]byte) bool {
		n++
		return count < 0 || n < count
	})
	rc.w.Array(int(n))
	i := int64(0)
	st.Range(start, end, rev, func(id store.StreamID, fv [][]byte) bool {
		rc.writeStreamEntry(id, fv)
		i++
		return i < n
	})
}

// cmdXDel is XDEL key id [id ...].
func cmdXDel(rc *conn, argv [][]byte) {
	ids := make([]store.StreamID, 0, len(argv)-2)
	for _, a := range argv[2:] {
		id, _, ok := parseStreamID(a, 0, true, false)
		if !ok {
			rc.w.Error(errStreamID)
			return
		}
		ids = append(ids, id)
	}
	var st store.Stream
	deleted := 0
	err := rc.st.UpdateStream(argv[1], &st, func() error {
		if st.Exists() {
			deleted = st.DeleteIDs(ids)
		}
		if deleted > 0 {
			propagate(&st, "XDEL", argv[1], argv[2:]...)
		}
		return nil
	})
	if err != nil {
		rc.storeError(err)
		return
	}
	if deleted > 0 {
		rc.notify(server.EventStream, "xdel", argv[1])
	}
	rc.w.Int(int64(deleted))
}

// cmdXTrim is XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count].
func cmdXTrim(rc *conn, argv [][]byte) {
	var st store.Stream
	var deleted int64
	written := false
	err := rc.st.UpdateStream(argv[1], &st, func() error {
		if !st.Exists() {
			return nil
		}
		var t trimArgs
		for i := 2; i < len(argv); {
			next, matched, ok := rc.parseTrimOpt(argv, i, &t)
			if !ok {
				written = true
				return nil
			}
			if !matched {
				rc.w.Error(errSyntax)
				written = true
				return nil
			}
			i = next
		}
		if !rc.finishTrim(&t, false) {
			written = true
			return nil
		}
		deleted = st.Trim(t.trim)
		if deleted > 0 {
			propagate(&st, "XTRIM", argv[1], exactTrim(&st)...)
		}
		return nil
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case written:
	default:
		if deleted > 0 {
			rc.notify(server.EventStream, "xtrim", argv[1])
		}
		rc.w.Int(deleted)
	}
}

// cmdXSetID is XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id].
func cmdXSetID(rc *conn, argv [][]byte) {
	id, _, ok := parseStreamID(argv[2], 0, true, false)
	if !ok {
		rc.w.Error(errStreamID)
		return
	}
	var added *uint64
	var maxDel *store.StreamID
	for i := 3; i < len(argv); i++ {
		more := len(argv) - 1 - i
		switch {
		case argIs(argv[i], "entriesadded") && more > 0:
			n, ok := rc.parseInt(argv[i+1])
			if !ok {
				return
			}
			if n < 0 {
				rc.w.Error("ERR entries_added must be positive")
				return
			}
			u := uint64(n)
			added = &u
			i++
		case argIs(argv[i], "maxdeletedid") && more > 0:
			m, _, ok := parseStreamID(argv[i+1], 0, true, false)
			if !ok {
				rc.w.Error(errStreamID)
				return
			}
			if id.Less(m) {
				rc.w.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			maxDel = &m
			i++
		default:
			rc.w.Error(errSyntax)
			return
		}
	}
	var st store.Stream
	msg := ""
	err := rc.st.UpdateStream(argv[1], &st, func() error {
		if !st.Exists() {
			msg = "ERR no such key"
			return nil
		}
		// Redis 7.2 checks the stream's own max_deleted_entry_id first,
		// then the top item, then entries_added.
		if id.Less(st.MaxDeletedID()) {
			msg = "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"
			return nil
		}
		if st.Len() > 0 {
			if last, ok := st.Edge(true); ok && id.Less(last) {
				msg = "ERR The ID specified in XSETID is smaller than the target stream top item"
				return nil
			}
		}
		if added != nil && st.Len() > *added {
			msg = "ERR The entries_added specified in XSETID is smaller than the target stream length"
			return nil
		}
		st.SetID(id, added, maxDel)
		propagate(&st, "XSETID", argv[1], argv[2:]...)
		return nil
	})
	switch {
	case err != nil:
		rc.storeError(err)
	case msg != "":
		rc.w.Error(msg)
	default:
		rc.notify(server.EventStream, "xsetid", argv[1])
		rc.w.OK()
	}
}

// xreadKeys finds XREAD's and XREADGROUP's keys: the first half of what
// follows STREAMS.
func xreadKeys(argv [][]byte, dst [][]byte) ([][]byte, bool) {
	for i := 1; i < len(argv); i++ {
		if argIs(argv[i], "streams") {
			rest := argv[i+1:]
			if len(rest) == 0 || len(rest)%2 != 0 {
				return dst, false
			}
			return append(dst, rest[:len(rest)/2]...), true
		}
	}
	return dst, false
}

// xreadCall is a parsed XREAD or XREADGROUP.
type xreadCall struct {
	group, consumer []byte
	noack           bool
	count           int64
	keys            [][]byte
	ids             []store.StreamID // after which to read; MaxStreamID for ">"
}

// cmdXRead is XREAD [COUNT n] [BLOCK ms] STREAMS key ... id ... and
// XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS
// key ... id ....
func cmdXRead(rc *conn, argv [][]byte) {
	xgroup := len(argv[0]) == 10
	name := "xread"
	if xgroup {
		name = "xreadgroup"
	}
	var c xreadCall
	timeout := time.Duration(-1)
	streamsAt := 0
	for i := 1; i < len(argv); i++ {
		more := len(argv) - 1 - i
		o := argv[i]
		switch {
		case argIs(o, "block") && more > 0:
			if rc.script != nil && rc.w == rc.script.w {
				rc.w.Error("ERR " + string(argv[0]) + " command is not allowed with BLOCK option from scripts")
				return
			}
			i++
			ms, ok := resp.ParseInt(argv[i])
			if !ok {
				rc.w.Error("ERR timeout is not an integer or out of range")
				return
			}
			if timeout, ok = rc.blockTimeout(ms); !ok {
				return
			}
		case argIs(o, "count") && more > 0:
			i++
			n, ok := rc.parseInt(argv[i])
			if !ok {
				return
			}
			c.count = max(n, 0)
		case argIs(o, "streams") && more > 0:
			streamsAt = i + 1
			if (len(argv)-streamsAt)%2 != 0 {
				// Redis 7.2 names the command and, for XREADGROUP, '>'.
				id := "$"
				if xgroup {
					id = ">"
				}
				rc.w.Error("ERR Unbalanced '" + name + "' list of streams: for each stream key an ID or '" + id + "' must be specified.")
				return
			}
			i = len(argv)
		case argIs(o, "group") && more >= 2:
			if !xgroup {
				rc.w.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			c.group, c.consumer = argv[i+1], argv[i+2]
			i += 2
		case argIs(o, "noack"):
			if !xgroup {
				rc.w.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			c.noack = true
		default:
			rc.w.Error(errSyntax)
			return
		}
	}
	if streamsAt == 0 {
		rc.w.Error(errSyntax)
		return
	}
	if xgroup && c.group == nil {
		rc.w.Error("ERR Missing GROUP option for XREADGROUP")
		return
	}
	n := (len(argv) - streamsAt) / 2
	c.keys = argv[streamsAt : streamsAt+n]
	c.ids = make([]store.StreamID, n)
	if n == 1 && rc.p.blocked.n.Load() == 0 {
		switch rc.xreadOne(&c, argv[streamsAt+1], xgroup) {
		case xreadReplied:
			return
		case xreadNothing:
			if timeout < 0 || rc.inExec() {
				rc.w.NullArray()
				return
			}
			rc.blockStream(name, &c, timeout)
			return
		}
	}
	for j := 0; j < n; j++ {
		key, arg := c.keys[j], argv[streamsAt+n+j]
		var st store.Stream
		msg := ""
		err := rc.st.ViewStream(key, &st, func() error {
			if xgroup && (!st.Exists() || st.Group(c.group) == nil) {
				msg = "NOGROUP No such key '" + string(userKey(key)) + "' or consumer group '" + string(c.group) + "' in XREADGROUP with GROUP option"
				return nil
			}
			switch {
			case len(arg) == 1 && arg[0] == '$':
				if xgroup {
					msg = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."
					return nil
				}
				if st.Exists() {
					c.ids[j] = st.LastID()
				}
			case len(arg) == 1 && arg[0] == '>':
				if !xgroup {
					msg = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."
					return nil
				}
				c.ids[j] = store.MaxStreamID
			default:
				id, _, ok := parseStreamID(arg, 0, true, false)
				if !ok {
					msg = errStreamID
					return nil
				}
				c.ids[j] = id
			}
			return nil
		})
		if err != nil {
			rc.storeError(err)
			return
		}
		if msg != "" {
			rc.w.Error(msg)
			return
		}
	}
	if timeout >= 0 && !rc.inExec() && rc.p.blocked.n.Load() != 0 {
		for _, k := range c.keys {
			rc.p.wake(k)
		}
	}
	res := &streamResult{}
	err := rc.xreadNow(&c, res)
	for _, k := range res.created {
		rc.notify(server.EventStream, "xgroup-createconsumer", k)
	}
	if err != nil {
		rc.storeError(err)
		return
	}
	if len(res.keys) > 0 || res.errMsg != "" {
		rc.writeStreamResult(res)
		return
	}
	if timeout < 0 || rc.inExec() {
		rc.w.NullArray()
		return
	}
	rc.blockStream(name, &c, timeout)
}

// What xreadOne did.
const (
	xreadReplied = iota // the reply (entries or an error) is written
	xreadNothing        // no entries: c.ids[0] is the ID to wait after
	xreadSlow           // a consumer's history: the general path serves it
)

// xreadOne serves an XREAD or XREADGROUP of one key in one store call,
// writing the entries as it reads them (the consumer loop's XREADGROUP
// ... COUNT n STREAMS key >, and XREAD of one stream).
func (rc *conn) xreadOne(c *xreadCall, arg []byte, xgroup bool) int {
	key := c.keys[0]
	var st store.Stream
	out := xreadNothing
	created := false
	fn := func() error {
		if xgroup && (!st.Exists() || st.Group(c.group) == nil) {
			if !st.Exists() {
				rc.keymiss(key) // a read, as Redis looks the key up
			}
			rc.w.Error("NOGROUP No such key '" + string(userKey(key)) + "' or consumer group '" + string(c.group) + "' in XREADGROUP with GROUP option")
			out = xreadReplied
			return nil
		}
		var id store.StreamID
		switch {
		case len(arg) == 1 && arg[0] == '$':
			if xgroup {
				rc.w.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				out = xreadReplied
				return nil
			}
			if st.Exists() {
				id = st.LastID()
			}
		case len(arg) == 1 && arg[0] == '>':
			if !xgroup {
				rc.w.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				out = xreadReplied
				return nil
			}
			id = store.MaxStreamID
		default:
			var ok bool
			if id, _, ok = parseStreamID(arg, 0, true, false); !ok {
				rc.w.Error(errStreamID)
				out = xreadReplied
				return nil
			}
			if xgroup {
				out = xreadSlow // the consumer's history
				return nil
			}
		}
		c.ids[0] = id
		if !st.Exists() {
			rc.keymiss(key) // looked up twice by Redis's XREAD
			return nil
		}
		after := id
		var g *store.StreamCG
		var cons *store.StreamCGConsumer
		now := rc.nowMilli()
		if xgroup {
			g = st.Group(c.group)
			after = g.LastID()
			// Redis 7.2 makes the consumer and marks it seen whether
			// or not there is anything to read (7.0 made it only to
			// deliver).
			cons, created = groupConsumer(&st, key, g, c.consumer, now)
		}
		last, ok := st.Edge(true)
		if !ok || !after.Less(last) {
			return nil
		}
		start, _ := after.Next()
		limit := int64(-1)
		if c.count > 0 {
			limit = c.count
		}
		if rc.w.RESP3() {
			rc.w.Map(1)
		} else {
			rc.w.Array(1)
			rc.w.Array(2)
		}
		rc.w.Bulk(userKey(key))
		out = xreadReplied
		if !xgroup {
			rc.writeRange(&st, start, store.MaxStreamID, false, limit)
			return nil
		}
		n := int64(0)
		st.Range(start, store.MaxStreamID, false, func(store.StreamID, [][]byte) bool {
			n++
			return limit < 0 || n < limit
		})
		rc.w.Array(int(n))
		i := int64(0)
		st.Range(start, store.MaxStreamID, false, func(id store.StreamID, fv [][]byte) bool {
			rc.writeStreamEntry(id, fv)
			st.Advance(g, id)
			if !c.noack {
				st.Deliver(g, cons, id, now)
				propagateClaim(&st, key, g, id)
			}
			i++
			return i < n
		})
		if !c.noack {
			cons.Active(now) // entries went into its PEL; NOACK reads leave it inactive, as in Redis 7.2
		}
		propagateGroupID(&st, key, g)
		st.Touch()
		return nil
	}
	var err error
	if xgroup {
		err = rc.st.UpdateStream(key, &st, fn)
	} else {
		err = rc.st.ViewStream(key, &st, fn)
	}
	if created {
		rc.notify(server.EventStream, "xgroup-createconsumer", key)
	}
	if err != nil {
		rc.storeError(err)
		return xreadReplied
	}
	return out
}

// streamResult is what an XREAD or XREADGROUP read: per key, its entries
// (copied: a blocked client writes them on its own goroutine).
type streamResult struct {
	keys    [][]byte
	entries [][]streamEntry
	errMsg  string
	created [][]byte // keys whose group got a new consumer (xgroup-createconsumer)
}

// streamEntry is one entry read; fv nil is an entry pending for the
// consumer but deleted from the stream.
type streamEntry struct {
	id      store.StreamID
	fv      [][]byte
	deleted bool
}

func copyFields(fv [][]byte) [][]byte {
	n := 0
	for _, b := range fv {
		n += len(b)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(fv))
	for i, b := range fv {
		buf = append(buf, b...)
		out[i] = buf[len(buf)-len(b) : len(buf) : len(buf)]
	}
	return out
}

// xreadNow serves the call from what the streams hold now, into res.
func (rc *conn) xreadNow(c *xreadCall, res *streamResult) error {
	now := rc.nowMilli()
	for j, key := range c.keys {
		var st store.Stream
		fn := func() error {
			xreadFrom(&st, c, j, key, res, now)
			return nil
		}
		var err error
		if c.group != nil {
			err = rc.st.UpdateStream(key, &st, fn)
		} else {
			err = rc.st.ViewStream(key, &st, fn)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// xreadFrom reads st, the stream under key (open for writing for
// XREADGROUP), for call c's j-th key into res, and reports whether it
// read: XREAD the entries after its ID; XREADGROUP makes its consumer
// and marks it seen (Redis 7.2 does so whether or not there is anything
// to read), then reads the consumer's history after its ID or, for ">",
// the entries after the group's last ID, delivering them.
func xreadFrom(st *store.Stream, c *xreadCall, j int, key []byte, res *streamResult, now int64) bool {
	if !st.Exists() {
		return false
	}
	after := c.ids[j]
	if c.group == nil {
		if last, ok := st.Edge(true); !ok || !after.Less(last) {
			return false
		}
		start, _ := after.Next()
		var es []streamEntry
		st.Range(start, store.MaxStreamID, false, func(id store.StreamID, fv [][]byte) bool {
			es = append(es, streamEntry{id: id, fv: copyFields(fv)})
			return c.count == 0 || int64(len(es)) < c.count
		})
		res.keys = append(res.keys, key)
		res.entries = append(res.entries, es)
		return true
	}
	g := st.Group(c.group)
	if g == nil {
		return false
	}
	cons, created := groupConsumer(st, key, g, c.consumer, now)
	if created {
		res.created = append(res.created, key)
	}
	history := after != store.MaxStreamID
	if !history {
		if last, ok := st.Edge(true); !ok || !g.LastID().Less(last) {
			return false
		}
	}
	var es []streamEntry
	if history {
		var ids []store.StreamID
		if from, ok := after.Next(); ok { // after the ID given, as Redis's streamIncrID
			cons.PendingFrom(from, func(id store.StreamID) bool {
				if c.count > 0 && int64(len(ids)) >= c.count {
					return false
				}
				ids = append(ids, id)
				return true
			})
		}
		for _, id := range ids {
			e := streamEntry{id: id, deleted: true}
			st.Range(id, id, false, func(_ store.StreamID, fv [][]byte) bool {
				e.fv, e.deleted = copyFields(fv), false
				return false
			})
			es = append(es, e)
		}
		for _, e := range es {
			if !e.deleted {
				st.Redeliver(g, e.id, now)
				propagateClaim(st, key, g, e.id)
			}
		}
		st.Touch()
	} else {
		start, _ := g.LastID().Next()
		st.Range(start, store.MaxStreamID, false, func(id store.StreamID, fv [][]byte) bool {
			es = append(es, streamEntry{id: id, fv: copyFields(fv)})
			return c.count == 0 || int64(len(es)) < c.count
		})
		for _, e := range es {
			st.Advance(g, e.id)
			if !c.noack {
				st.Deliver(g, cons, e.id, now)
				propagateClaim(st, key, g, e.id)
			}
		}
		if len(es) > 0 && !c.noack {
			cons.Active(now) // as in Redis 7.2: only entries put in its PEL
		}
		if len(es) > 0 {
			propagateGroupID(st, key, g)
		}
		st.Touch()
	}
	res.keys = append(res.keys, key)
	res.entries = append(res.entries, es)
	return true
}

// wakeStreamReaders serves the stream waiters of every key, after a
// FLUSHALL or FLUSHDB took their keys away.
func (p *Protocol) wakeStreamReaders() {
	if p.blocked.n.Load() == 0 {
		return
	}
	var keys [][]byte
	for i := range p.blocked.shards {
		sh := &p.blocked.shards[i]
		sh.mu.Lock()
		for k, ws := range sh.keys {
			if len(ws) > 0 && ws[0].call.op == opXRead {
				keys = append(keys, []byte(k))
			}
		}
		sh.mu.Unlock()
	}
	for _, k := range keys {
		p.wake(k)
	}
}

// writeStreamResult writes XREAD's reply: per key read, the key and its
// entries (a map in RESP3).
func (rc *conn) writeStreamResult(res *streamResult) {
	if res.errMsg != "" {
		rc.w.Error(res.errMsg)
		return
	}
	if rc.w.RESP3() {
		rc.w.Map(len(res.keys))
	} else {
		rc.w.Array(len(res.keys))
	}
	for i, k := range res.keys {
		if !rc.w.RESP3() {
			rc.w.Array(2)
		}
		rc.w.Bulk(userKey(k))
		rc.w.Array(len(res.entries[i]))
		for _, e := range res.entries[i] {
			if e.deleted {
				rc.w.Array(2)
				rc.writeStreamID(e.id)
				rc.w.NullArray()
				continue
			}
			rc.writeStreamEntry(e.id, e.fv)
		}
	}
}

// blockStream parks an XREAD or XREADGROUP that found nothing until an
// XADD serves it or timeout (0: forever) passes.
func (rc *conn) blockStream(name string, c *xreadCall, timeout time.Duration) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	w := &waiter{id: rc.ID(), timed: timeout > 0}
	w.call.op = opXRead
	xc := *c
	xc.group, xc.consumer = bytes.Clone(c.group), bytes.Clone(c.consumer)
	xc.keys = make([][]byte, len(c.keys))
	for i, k := range c.keys {
		xc.keys[i] = bytes.Clone(k)
	}
	xc.ids = append([]store.StreamID(nil), c.ids...)
	w.call.keys = xc.keys
	w.call.stream = &xc
	w.sw = rc.NewWaiter(name)
	if xc.group != nil {
		rc.p.groupReaders(1)
		defer rc.p.groupReaders(-1)
	}
	rc.p.blocked.add(w)
	for _, k := range w.call.keys {
		rc.p.wake(k)
	}
	waitStart := rc.beforeWait()
	end, _ := rc.Block(w.sw, deadline, rc.r.Fill)
	rc.waited += rc.p.ops.now() - waitStart
	rc.p.blocked.remove(w)
	rc.nowMs, rc.awaitOK = 0, false
	switch end {
	case server.BlockServed:
		rc.writeBlockResult(&w.call, &w.res)
	case server.BlockTimeout:
		rc.writeBlockTimeout()
	default:
		rc.quit = true
	}
}

// serveStream runs a blocked XREAD or XREADGROUP again after a write to
// key, one of its keys, as Redis 7.2 reprocesses a blocked command when
// one of its keys is signalled ready, and reports whether w was claimed
// and its result filled in.
//
// An XADD, or a command that put a whole value under the key (added),
// signals it; so, for XREADGROUP (which Redis unblocks on any change to
// its key), do a key deleted or replaced and a group destroyed, which
// are the writes that leave it an error to answer. An XREAD runs again
// only when key holds a stream. The run is the command's, over all its
// keys under one lock: each key's type and (XREADGROUP) group are
// checked first, in order, an error (WRONGTYPE, NOGROUP) being the
// reply; then the entries after each key's ID, for every key that has
// some. With none, it waits on (its timeout unchanged), behind the
// commands already waiting, after an XREADGROUP made its consumers and
// marked them seen. Any other write leaves the waiters as they were.
func (p *Protocol) serveStream(w *waiter, key []byte, added bool) (served bool) {
	c := w.call.stream
	if !slices.ContainsFunc(c.keys, func(k []byte) bool { return bytes.Equal(k, key) }) {
		return false
	}
	group := c.group != nil
	if !group && !added {
		return false
	}
	res := &streamResult{}
	requeue := false
	now := time.Now().UnixMilli()
	err := p.st.Tx(c.keys, func(tx *store.Tx) error {
		if !w.sw.Waiting() {
			return nil
		}
		has := false
		for j, k := range c.keys {
			var st store.Stream
			err := tx.Stream(k, &st, false)
			if errors.Is(err, store.ErrWrongType) {
				if !group && bytes.Equal(k, key) {
					return nil // an XREAD runs again only for a stream
				}
				res.errMsg = errWrongType
				break
			}
			if err != nil {
				return err
			}
			var last store.StreamID
			ok := false
			if st.Exists() {
				last, ok = st.Edge(true)
			}
			switch {
			case !group:
				if !st.Exists() && bytes.Equal(k, key) {
					tx.DoneStream(&st)
					return nil
				}
				has = has || ok && c.ids[j].Less(last)
			case !st.Exists() || st.Group(c.group) == nil:
				res.errMsg = "NOGROUP No such key '" + string(userKey(k)) + "' or consumer group '" + string(c.group) + "' in XREADGROUP with GROUP option"
			default:
				has = has || ok && st.Group(c.group).LastID().Less(last)
			}
			tx.DoneStream(&st)
			if res.errMsg != "" {
				break
			}
		}
		switch {
		case res.errMsg != "":
			served = w.sw.Claim()
			return nil
		case !added:
			return nil
		case has:
			if served = w.sw.Claim(); !served {
				return nil
			}
		case !group:
			requeue = true
			return nil
		default:
			requeue = true // XREADGROUP makes and marks its consumers
		}
		for j, k := range c.keys {
			var st store.Stream
			if err := tx.Stream(k, &st, group); err != nil {
				return err
			}
			xreadFrom(&st, c, j, k, res, now)
			tx.DoneStream(&st)
		}
		if !served {
			res.keys, res.entries = nil, nil
		}
		return nil
	})
	if err != nil && served {
		res.keys, res.entries, res.errMsg = nil, nil, "ERR "+err.Error()
	}
	for _, k := range res.created {
		p.srv.KeyEvent(server.EventStream, "xgroup-createconsumer", k)
	}
	if served {
		w.res.stream = res
	} else if requeue {
		p.blocked.requeue(w)
	}
	return served
}

// argIs reports whether argument b is the word lower, in any case.
func argIs(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
