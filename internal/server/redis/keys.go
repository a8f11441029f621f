package redis

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Keyspace commands of the RESP port: DEL, EXISTS, TYPE, the EXPIRE and
// TTL families, KEYS, SCAN, RANDOMKEY, DBSIZE, FLUSHDB/FLUSHALL and
// BGREWRITEAOF (SAVE, BGSAVE and LASTSAVE: persist.go).

// cmdDel is DEL key [key ...] (and UNLINK, which frees memory at once
// too: there is nothing to free lazily).
func cmdDel(rc *conn, argv [][]byte) {
	st := rc.st
	var n int64
	for _, key := range argv[1:] {
		if st.Delete(key) == nil {
			rc.Count(server.StatDeleteHits)
			rc.notify(server.EventGeneric, "del", key)
			n++
		} else {
			rc.Count(server.StatDeleteMisses)
		}
	}
	rc.w.Int(n)
}

// cmdExists is EXISTS key [key ...]; a key named twice counts twice.
func cmdExists(rc *conn, argv [][]byte) {
	st := rc.st
	var n int64
	for _, key := range argv[1:] {
		if _, ok := st.Peek(key); ok {
			n++
		} else {
			rc.keymiss(key)
		}
	}
	rc.w.Int(n)
}

// cmdType is TYPE key.
func cmdType(rc *conn, argv [][]byte) {
	if it, ok := rc.st.Peek(argv[1]); ok {
		rc.w.Simple(it.Kind.String())
	} else {
		rc.keymiss(argv[1])
		rc.w.Simple("none")
	}
}

// Flags of EXPIRE's NX|XX|GT|LT options.
const (
	expireNX = 1 << iota
	expireXX
	expireGT
	expireLT
)

// EXPIRE key s, PEXPIRE key ms, EXPIREAT key t, PEXPIREAT key t, each with
// [NX|XX|GT|LT].
func cmdExpire(rc *conn, argv [][]byte) {
	rc.expire(argv, rc.nowMilli(), true)
}

func cmdPExpire(rc *conn, argv [][]byte) {
	rc.expire(argv, rc.nowMilli(), false)
}
func cmdExpireAt(rc *conn, argv [][]byte)  { rc.expire(argv, 0, true) }
func cmdPExpireAt(rc *conn, argv [][]byte) { rc.expire(argv, 0, false) }

// expire is Redis's expireGenericCommand: options first, then the number,
// then overflow checks, then the key. A time at or before now deletes the
// key. The NX/XX/GT/LT comparison and the update happen in one
// store.Update, so no write can make the condition stale in between.
func (rc *conn) expire(argv [][]byte, basetime int64, seconds bool) {
	var flag int
	for _, opt := range argv[3:] {
		switch {
		case is(opt, "nx"):
			flag |= expireNX
		case is(opt, "xx"):
			flag |= expireXX
		case is(opt, "gt"):
			flag |= expireGT
		case is(opt, "lt"):
			flag |= expireLT
		default:
			rc.w.Error("ERR Unsupported option " + string(cString(opt, len(opt))))
			return
		}
	}
	if flag&expireNX != 0 && flag&(expireXX|expireGT|expireLT) != 0 {
		rc.w.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flag&expireGT != 0 && flag&expireLT != 0 {
		rc.w.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := rc.parseInt(argv[2])
	if !ok {
		return
	}
	cmd := lookupCommand(argv[0]).name // its name in lower case, as Redis's error gives it
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			rc.w.Error(invalidExpire(cmd))
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-basetime {
		rc.w.Error(invalidExpire(cmd))
		return
	}
	when += basetime
	st := rc.st
	key := argv[1]
	var found, refused, removed bool
	_, _ = st.Update(key, func(it store.Item, ok bool) store.Change {
		found, refused, removed = ok, false, false
		if !ok {
			return store.Change{}
		}
		if flag != 0 {
			cur := int64(-1)
			if it.Deadline != 0 {
				cur = it.Deadline
			}
			if flag&expireNX != 0 && cur != -1 ||
				flag&expireXX != 0 && cur == -1 ||
				flag&expireGT != 0 && (when <= cur || cur == -1) ||
				flag&expireLT != 0 && when >= cur && cur != -1 {
				refused = true
				return store.Change{}
			}
		}
		if when <= rc.nowMilli() {
			removed = true
			return store.Change{Op: store.Remove}
		}
		return store.Change{Op: store.Retime, Deadline: msToDeadline(when)}
	})
	rc.Count(server.StatCmdTouch)
	switch {
	case !found:
		rc.Count(server.StatTouchMisses)
		rc.w.Int(0)
	case refused:
		rc.w.Int(0)
	default:
		rc.Count(server.StatTouchHits)
		if removed {
			rc.notify(server.EventGeneric, "del", key)
		} else {
			rc.notify(server.EventGeneric, "expire", key)
		}
		rc.w.Int(1)
	}
}

// TTL key, PTTL key: -2 missing, -1 no deadline; TTL rounds to the
// nearest second as Redis does (roundSeconds).
func cmdTTL(rc *conn, argv [][]byte)  { rc.ttl(argv[1], false, false) }
func cmdPTTL(rc *conn, argv [][]byte) { rc.ttl(argv[1], true, false) }

// EXPIRETIME key, PEXPIRETIME key: the absolute deadline, EXPIRETIME
// rounded to the nearest second like TTL.
func cmdExpireTime(rc *conn, argv [][]byte)  { rc.ttl(argv[1], false, true) }
func cmdPExpireTime(rc *conn, argv [][]byte) { rc.ttl(argv[1], true, true) }

func (rc *conn) ttl(key []byte, ms, absolute bool) {
	it, ok := rc.st.Peek(key)
	switch {
	case !ok:
		rc.keymiss(key)
		rc.w.Int(-2)
		return
	case it.Deadline == 0:
		rc.w.Int(-1)
		return
	}
	left := it.Deadline // Unix ms, Redis's unit
	if !absolute {
		left = max(left-rc.nowMilli(), 0)
	}
	if !ms {
		left = roundSeconds(left)
	}
	rc.w.Int(left)
}

// roundSeconds is Redis's (ms+500)/1000 for ms >= 0, without its overflow:
// PEXPIREAT k 9223372036854775807 gives EXPIRETIME 9223372036854776.
func roundSeconds(ms int64) int64 {
	return ms/1000 + (ms%1000+500)/1000
}

// cmdPersist is PERSIST key: 1 if a deadline was removed.
func cmdPersist(rc *conn, argv [][]byte) {
	st := rc.st
	it, ok := st.Peek(argv[1])
	if !ok || it.Deadline == 0 {
		rc.w.Int(0)
		return
	}
	if st.Touch(argv[1], 0) {
		rc.notify(server.EventGeneric, "persist", argv[1])
		rc.w.Int(1)
	} else {
		rc.w.Int(0)
	}
}

// keyList gathers keys copied out of the store in one buffer.
type keyList struct {
	buf  []byte
	offs []int
}

func (l *keyList) add(k []byte) {
	l.buf = append(l.buf, k...)
	l.offs = append(l.offs, len(l.buf))
}

// filter returns the keys for which keep is true.
func (l *keyList) filter(keep func(k []byte) bool) keyList {
	var out keyList
	start := 0
	for _, end := range l.offs {
		if k := l.buf[start:end]; keep(k) {
			out.add(k)
		}
		start = end
	}
	return out
}

func (l *keyList) write(rc *conn) {
	rc.w.Array(len(l.offs))
	start := 0
	for _, end := range l.offs {
		rc.w.Bulk(l.buf[start:end])
		start = end
	}
}

// cmdKeys is KEYS pattern. It walks every shard, one lock at a time (in
// durable mode, the disk).
func cmdKeys(rc *conn, argv [][]byte) {
	var g *glob // nil: "*", every key
	if p := argv[1]; !(len(p) == 1 && p[0] == '*') {
		g = compileGlob(p)
	}
	var keys keyList
	err := rc.st.DBKeys(rc.db, func(k []byte) {
		if g == nil || g.match(k) {
			keys.add(k)
		}
	})
	if err != nil {
		rc.w.Error("ERR " + err.Error())
		return
	}
	keys.write(rc)
}

// cmdScan is SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]. The
// store's ScanKeys gives the cursor its meaning: in memory a shard index
// (each call walks whole shards until it has COUNT keys, so a full
// iteration ends after at most NumShards calls), in durable mode a place
// in the disk's key order. Either way a full iteration returns every key
// that was present throughout, as Redis guarantees.
func cmdScan(rc *conn, argv [][]byte) {
	cursor, ok := parseCursor(argv[1])
	if !ok {
		rc.w.Error("ERR invalid cursor")
		return
	}
	count := int64(10)
	var g *glob
	var typ []byte // TYPE: only keys of this type (a name Redis does not know matches nothing)
	for i := 2; i < len(argv); {
		more := len(argv) - i
		switch {
		case is(argv[i], "count") && more >= 2:
			n, ok := rc.parseInt(argv[i+1])
			if !ok {
				return
			}
			if n < 1 {
				rc.w.Error(errSyntax)
				return
			}
			count = n
		case is(argv[i], "match") && more >= 2:
			if p := argv[i+1]; !(len(p) == 1 && p[0] == '*') {
				g = compileGlob(p)
			}
		case is(argv[i], "type") && more >= 2:
			typ = argv[i+1]
		default:
			rc.w.Error(errSyntax)
			return
		}
		i += 2
	}
	var keys keyList
	db := rc.db
	next, err := rc.st.ScanKeys(cursor, int(min(count, math.MaxInt32)), func(k []byte) {
		if !store.InDB(k, db) {
			return // another database's (db.go)
		}
		if _, k = store.SplitDBKey(k); g == nil || g.match(k) {
			keys.add(k)
		}
	})
	if err != nil {
		rc.w.Error("ERR " + err.Error())
		return
	}
	if typ != nil {
		keys = keys.filter(func(k []byte) bool {
			it, ok := rc.st.Peek(store.DBKey(nil, db, k))
			return ok && is(typ, it.Kind.String())
		})
	}
	rc.w.Array(2)
	rc.w.Bulk(strconv.AppendUint(rc.scratch[:0], next, 10))
	keys.write(rc)
}

// parseCursor reads a SCAN cursor as Redis does (strtoul): an empty
// string is 0, a leading space or trailing junk is invalid, a '-' wraps.
func parseCursor(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	if isCSpace(b[0]) {
		return 0, false
	}
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		b = b[1:]
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil || len(b) > 0 && (b[0] < '0' || b[0] > '9') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// cmdRandomKey is RANDOMKEY: a random key of the selected database.
func cmdRandomKey(rc *conn, _ [][]byte) {
	if k, ok := rc.randomKey(); ok {
		rc.w.Bulk(k)
	} else {
		rc.w.Null()
	}
}

// randomKey picks a key of rc's database: the store's random key, when a
// few tries find one of the database, or else the first one a walk finds.
func (rc *conn) randomKey() ([]byte, bool) {
	for range 8 {
		k, ok := rc.st.RandomKey()
		if !ok {
			return nil, false
		}
		if store.InDB(k, rc.db) {
			return userKey(k), true
		}
	}
	var key []byte
	found := false
	err := rc.st.DBKeys(rc.db, func(k []byte) {
		if !found {
			key, found = append([]byte{}, k...), true
		}
	})
	return key, found && err == nil
}

// cmdDBSize is DBSIZE: the selected database's live items, from the
// shards' counts in memory mode (store.CountDB); in durable mode the live
// items on disk, counted by one walk over it.
func cmdDBSize(rc *conn, _ [][]byte) {
	n, err := rc.st.CountDB(rc.db)
	if err != nil {
		rc.w.Error("ERR " + err.Error())
		return
	}
	rc.w.Int(n)
}

// cmdBGRewriteAOF is BGREWRITEAOF: in durable mode, a full compaction of
// the engine in the background (store.Rewrite), after which the data
// directory holds about the live items, as a rewritten AOF does.
func cmdBGRewriteAOF(rc *conn, _ [][]byte) {
	started, err := rc.st.Rewrite()
	switch {
	case err != nil:
		rc.w.Error(saveError(err))
	case !started:
		rc.w.Error("ERR Background append only file rewriting already in progress")
	default:
		rc.w.Simple("Background append only file rewriting started")
	}
}

func saveError(err error) string {
	if errors.Is(err, store.ErrNotDurable) {
		return "ERR MiniKV runs without --data-dir: there is nothing to save to"
	}
	return "ERR " + err.Error()
}

// cmdFlushAll is FLUSHALL [ASYNC|SYNC]: every database, at once (the
// store's flush is already O(shards)).
func cmdFlushAll(rc *conn, argv [][]byte) { rc.flush(argv, true) }

// cmdFlushDB is FLUSHDB [ASYNC|SYNC]: the selected database's keys, each
// deleted with the store held (db.go).
func cmdFlushDB(rc *conn, argv [][]byte) { rc.flush(argv, false) }

func (rc *conn) flush(argv [][]byte, all bool) {
	if len(argv) > 2 || len(argv) == 2 && !is(argv[1], "sync") && !is(argv[1], "async") {
		rc.w.Error(errSyntax)
		return
	}
	if rc.p.cfg.DisableFlushAll {
		rc.w.Error("ERR FLUSHALL is disabled on this server (-F)")
		return
	}
	rc.Count(server.StatCmdFlush)
	if all {
		rc.st.FlushAll(time.Now().UnixMilli())
	} else if err := rc.flushDB(rc.db); err != nil {
		rc.storeError(err)
		return
	}
	rc.p.srv.Flushed(rc)     // client tracking: every key is invalid (tracking.go)
	rc.p.wakeStreamReaders() // XREADGROUP waiters lost their stream (stream.go)
	rc.w.OK()
}
