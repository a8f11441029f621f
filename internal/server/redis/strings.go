package redis

import (
	"bytes"
	"errors"
	"math"
	"slices"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// String commands of the RESP port. Read-modify-write commands (INCRBY,
// APPEND, SETRANGE, SET ... GET, GETSET, KEEPTTL, INCRBYFLOAT) read and
// write in one store.Update, under the key's shard lock, so no other
// write can fall between the read and the write.

// Option flags of SET and GETEX, with Redis's names (t_string.c).
const (
	optNX = 1 << iota
	optXX
	optGET
	optKeepTTL
	optPersist
	optEX
	optPX
	optEXAT
	optPXAT
	optExpire = optEX | optPX | optEXAT | optPXAT
)

// parseSetOptions parses SET's (isSet) or GETEX's options from argv[from:]
// with Redis's conflict rules (parseExtendedStringArgumentsOrReply): an
// option that conflicts with one already seen is a syntax error, and the
// last of repeated EX (or PX...) wins.
func (rc *conn) parseSetOptions(argv [][]byte, from int, isSet bool) (flags int, expire []byte, ok bool) {
	for j := from; j < len(argv); j++ {
		opt := argv[j]
		next := j < len(argv)-1
		switch {
		case isSet && is(opt, "nx") && flags&optXX == 0:
			flags |= optNX
		case isSet && is(opt, "xx") && flags&optNX == 0:
			flags |= optXX
		case isSet && is(opt, "get"):
			flags |= optGET
		case isSet && is(opt, "keepttl") && flags&(optPersist|optExpire) == 0:
			flags |= optKeepTTL
		case !isSet && is(opt, "persist") && flags&(optExpire|optKeepTTL) == 0:
			flags |= optPersist
		case is(opt, "ex") && next && flags&(optKeepTTL|optPersist|optExpire&^optEX) == 0:
			flags |= optEX
			expire = argv[j+1]
			j++
		case is(opt, "px") && next && flags&(optKeepTTL|optPersist|optExpire&^optPX) == 0:
			flags |= optPX
			expire = argv[j+1]
			j++
		case is(opt, "exat") && next && flags&(optKeepTTL|optPersist|optExpire&^optEXAT) == 0:
			flags |= optEXAT
			expire = argv[j+1]
			j++
		case is(opt, "pxat") && next && flags&(optKeepTTL|optPersist|optExpire&^optPXAT) == 0:
			flags |= optPXAT
			expire = argv[j+1]
			j++
		default:
			rc.w.Error(errSyntax)
			return 0, nil, false
		}
	}
	return flags, expire, true
}

// expireDeadline turns an EX/PX/EXAT/PXAT argument into a store deadline
// (Unix ms) with Redis's checks (getExpireMillisecondsOrReply): not an
// integer is errNotInt; zero, negative or overflowing is "invalid expire
// time in '<cmd>' command". It returns the error text, or "" when valid.
func expireDeadline(arg []byte, flags int, cmd string, nowMs int64) (int64, string) {
	ms, ok := resp.ParseInt(arg)
	if !ok {
		return 0, errNotInt
	}
	seconds := flags&(optEX|optEXAT) != 0
	if ms <= 0 || seconds && ms > math.MaxInt64/1000 {
		return 0, invalidExpire(cmd)
	}
	if seconds {
		ms *= 1000
	}
	if flags&(optEX|optPX) != 0 {
		ms += nowMs // may wrap, as in Redis; caught below
	}
	if ms <= 0 {
		return 0, invalidExpire(cmd)
	}
	return msToDeadline(ms), ""
}

func invalidExpire(cmd string) string {
	return "ERR invalid expire time in '" + cmd + "' command"
}

// msToDeadline converts Unix milliseconds to a store deadline, which is
// in Unix milliseconds too, so every time Redis accepts reads back
// exactly; a time at or before the epoch becomes 1 (passed), never 0,
// which means "no deadline".
func msToDeadline(ms int64) int64 {
	return max(ms, 1)
}

// cmdGet is GET key.
func cmdGet(rc *conn, argv [][]byte) {
	it, ok := rc.st.Get(argv[1])
	rc.countGet(ok)
	rc.writeValue(it, ok)
}

func (rc *conn) countGet(hit bool) {
	rc.Count(server.StatCmdGet)
	if hit {
		rc.Count(server.StatGetHits)
	} else {
		rc.Count(server.StatGetMisses)
	}
}

// cmdSet is SET key value [NX|XX] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL].
func cmdSet(rc *conn, argv [][]byte) {
	flags, expire, ok := rc.parseSetOptions(argv, 3, true)
	if !ok {
		return
	}
	var deadline int64
	if expire != nil {
		var msg string
		if deadline, msg = expireDeadline(expire, flags, "set", rc.nowMilli()); msg != "" {
			rc.w.Error(msg)
			return
		}
	}
	rc.set(argv[1], argv[2], flags, deadline)
}

// set stores value under key with SET's flags and replies as SET does:
// OK, or null when NX/XX refused; with GET, the old value (or null)
// whatever happened.
func (rc *conn) set(key, value []byte, flags int, deadline int64) {
	st := rc.st
	rc.Count(server.StatCmdSet)
	if flags&(optGET|optKeepTTL) == 0 {
		mode := store.ModeSet
		switch {
		case flags&optNX != 0:
			mode = store.ModeAdd
		case flags&optXX != 0:
			mode = store.ModeReplace
		}
		_, err := st.Store(mode, key, value, rc.nextFlags(), deadline, 0)
		switch {
		case err == nil:
			rc.notifySet(key, deadline)
			rc.w.OK()
		case errors.Is(err, store.ErrNotStored):
			if mode == store.ModeAdd {
				st.Use(key) // Redis's lookupKeyWrite found it: a use (OBJECT FREQ)
			}
			rc.w.Null()
		default:
			rc.storeError(err)
		}
		return
	}
	var old store.Item
	var found bool
	wrong, put, missed := false, false, false
	if flags&optGET != 0 {
		// GET's read is a lookup of its own before the write's, as in
		// Redis: two uses of an existing key (OBJECT FREQ).
		st.Use(key)
	}
	_, err := st.Update(key, func(it store.Item, ok bool) store.Change {
		old, found, put = it, ok, false
		if !ok && flags&optGET != 0 && !missed {
			// GET's read comes first, before the key is created ("new"):
			// published here, once even if fn runs again.
			rc.keymiss(key)
			missed = true
		}
		// SET overwrites any kind of value; only GET must read a string.
		if wrong = flags&optGET != 0 && ok && it.Kind != store.KindString; wrong {
			return store.Change{}
		}
		if flags&optNX != 0 && ok || flags&optXX != 0 && !ok {
			return store.Change{}
		}
		dl := deadline
		if flags&optKeepTTL != 0 && ok {
			dl = it.Deadline
		}
		put = true
		return store.Change{Op: store.Put, Value: value, Deadline: dl}
	})
	if wrong && err == nil {
		err = store.ErrWrongType
	}
	if put && err == nil {
		rc.notifySet(key, deadline)
	}
	if found && !put && !wrong && err == nil {
		st.Use(key) // refused by NX: the write's lookup was still a use
	}
	rc.setReply(flags, old, found, err)
}

// notifySet reports a SET's events: "set", then "expire" when it gave
// the key a deadline, and "expired" when that deadline had passed (the
// store never keeps such a value; Redis keeps it until the next lookup,
// which finds it expired).
func (rc *conn) notifySet(key []byte, deadline int64) {
	rc.notify(server.EventString, "set", key)
	if deadline != 0 {
		rc.notify(server.EventGeneric, "expire", key)
		if deadline <= rc.nowMilli() {
			rc.notify(server.EventExpired, "expired", key)
		}
	}
}

func (rc *conn) setReply(flags int, old store.Item, found bool, err error) {
	if err != nil {
		rc.storeError(err)
		return
	}
	if flags&optGET != 0 {
		rc.countGet(found)
		rc.writeValue(old, found)
		return
	}
	if flags&(optNX|optXX) != 0 && (flags&optNX != 0) == found {
		rc.w.Null() // refused
		return
	}
	rc.w.OK()
}

// cmdSetNX is SETNX key value.
func cmdSetNX(rc *conn, argv [][]byte) {
	rc.Count(server.StatCmdSet)
	_, err := rc.st.Store(store.ModeAdd, argv[1], argv[2], 0, 0, 0)
	switch {
	case err == nil:
		rc.notify(server.EventString, "set", argv[1])
		rc.w.Int(1)
	case errors.Is(err, store.ErrNotStored):
		rc.st.Use(argv[1]) // Redis's lookupKeyWrite found it: a use (OBJECT FREQ)
		rc.w.Int(0)
	default:
		rc.storeError(err)
	}
}

// cmdSetEX is SETEX key seconds value; cmdPSetEX is PSETEX key ms value.
func cmdSetEX(rc *conn, argv [][]byte)  { rc.setWithExpire(argv, optEX, "setex") }
func cmdPSetEX(rc *conn, argv [][]byte) { rc.setWithExpire(argv, optPX, "psetex") }

func (rc *conn) setWithExpire(argv [][]byte, unit int, cmd string) {
	deadline, msg := expireDeadline(argv[2], unit, cmd, rc.nowMilli())
	if msg != "" {
		rc.w.Error(msg)
		return
	}
	rc.set(argv[1], argv[3], 0, deadline)
}

// cmdGetSet is GETSET key value: SET key value GET.
func cmdGetSet(rc *conn, argv [][]byte) { rc.set(argv[1], argv[2], optGET, 0) }

// cmdGetDel is GETDEL key.
func cmdGetDel(rc *conn, argv [][]byte) {
	it, ok := rc.st.Take(argv[1]) // a collection is left, and refused below
	rc.countGet(ok)
	if ok && it.Kind == store.KindString {
		rc.Count(server.StatDeleteHits)
		rc.notify(server.EventGeneric, "del", argv[1])
	}
	rc.writeValue(it, ok)
}

// cmdGetEX is GETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST]. As in Redis, a
// missing key is null even when the expire argument is invalid.
func cmdGetEX(rc *conn, argv [][]byte) {
	flags, expire, ok := rc.parseSetOptions(argv, 2, false)
	if !ok {
		return
	}
	st := rc.st
	key := argv[1]
	var deadline int64
	if expire != nil {
		var msg string
		if deadline, msg = expireDeadline(expire, flags, "getex", rc.nowMilli()); msg != "" {
			switch it, found := st.Peek(key); {
			case !found:
				rc.countGet(false)
				rc.w.Null()
			case it.Kind != store.KindString:
				rc.w.Error(errWrongType) // the type is checked before the expiry
			default:
				rc.w.Error(msg)
			}
			return
		}
	}
	var it store.Item
	switch {
	case flags&(optEXAT|optPXAT) != 0 && deadline <= rc.nowMilli():
		// A time already past deletes the key, as Redis's GETEX does
		// (checkAlreadyExpired): "del", not a later "expired".
		it, ok = st.Take(key)
		rc.Count(server.StatCmdTouch)
		rc.countTouch(ok)
		if ok && it.Kind == store.KindString {
			rc.notify(server.EventGeneric, "del", key)
		}
	case flags&(optExpire|optPersist) != 0:
		hadDeadline := true
		if flags&optPersist != 0 && rc.p.srv.KeyEventsOn(server.EventGeneric) {
			// "persist" only when a deadline is removed.
			prev, _ := st.Peek(key)
			hadDeadline = prev.Deadline != 0
		}
		it, ok = st.GetAndTouch(key, deadline)
		rc.Count(server.StatCmdTouch)
		rc.countTouch(ok)
		switch {
		case !ok || it.Kind != store.KindString:
		case flags&optPersist == 0:
			rc.notify(server.EventGeneric, "expire", key)
		case hadDeadline:
			rc.notify(server.EventGeneric, "persist", key)
		}
	default:
		it, ok = st.Get(key)
	}
	rc.countGet(ok)
	rc.writeValue(it, ok)
}

func (rc *conn) countTouch(hit bool) {
	if hit {
		rc.Count(server.StatTouchHits)
	} else {
		rc.Count(server.StatTouchMisses)
	}
}

// cmdMGet is MGET key [key ...].
func cmdMGet(rc *conn, argv [][]byte) {
	st := rc.st
	rc.w.Array(len(argv) - 1)
	for _, key := range argv[1:] {
		it, ok := st.Get(key)
		ok = ok && it.Kind == store.KindString // Redis: nil, not WRONGTYPE
		rc.countGet(ok)
		rc.writeValue(it, ok)
	}
}

// cmdMSet is MSET key value [key value ...]. Every pair is checked
// against the item size before any is written, so a too-large value
// changes nothing; the pairs are then stored one by one (the store has
// no multi-key transaction, so a concurrent reader may see some of them
// first).
func cmdMSet(rc *conn, argv [][]byte) {
	if !rc.checkPairs(argv, "mset") {
		return
	}
	// One store.SetAll over the last value of each key: the command is
	// one step for every reader, as in Redis, and a key given twice is
	// written once (its earlier values are never visible).
	var kbuf, vbuf [16][]byte
	var cbuf [16]bool
	keys, values, created := kbuf[:0], vbuf[:0], cbuf[:0]
	last := lastOfEachKey(argv)
	for i := 1; i < len(argv); i += 2 {
		rc.Count(server.StatCmdSet)
		if last(i) {
			keys = append(keys, argv[i])
			values = append(values, argv[i+1])
			created = append(created, false)
		}
	}
	if err := rc.st.SetAll(keys, values, created); err != nil {
		rc.storeError(err)
		return
	}
	newKeys := rc.p.srv.KeyEventsOn(server.EventNew)
	for i := 1; i < len(argv); i += 2 {
		if newKeys && firstOf(argv, i) && created[slices.IndexFunc(keys, func(k []byte) bool { return bytes.Equal(k, argv[i]) })] {
			rc.notify(server.EventNew, "new", argv[i])
		}
		rc.notify(server.EventString, "set", argv[i])
	}
	rc.w.OK()
}

// checkPairs checks that argv holds key value pairs after the command
// name, each value within the item size, and answers the error if not.
func (rc *conn) checkPairs(argv [][]byte, name string) bool {
	if len(argv)%2 == 0 {
		rc.w.Error("ERR wrong number of arguments for '" + name + "' command")
		return false
	}
	for i := 1; i < len(argv); i += 2 {
		if int64(len(argv[i+1])) > rc.maxString(len(argv[i])) {
			rc.Count(server.StatCmdSet)
			rc.Count(server.StatStoreTooLarge)
			rc.w.Error(errTooLarge)
			return false
		}
	}
	return true
}

// cmdMSetNX is MSETNX key value [key value ...]: 1 if every key was
// missing and all were set, else 0 and nothing set. A key given twice is
// set once, to its last value, as in Redis. The check and the writes are
// one store.AddAll, atomic across the keys' shards.
func cmdMSetNX(rc *conn, argv [][]byte) {
	if !rc.checkPairs(argv, "msetnx") {
		return
	}
	last := lastOfEachKey(argv)
	keys := make([][]byte, 0, len(argv)/2)
	values := make([][]byte, 0, len(argv)/2)
	for i := 1; i < len(argv); i += 2 {
		if last(i) {
			keys = append(keys, argv[i])
			values = append(values, argv[i+1])
		}
	}
	added, err := rc.st.AddAll(keys, values)
	switch {
	case err != nil:
		rc.storeError(err)
	case added:
		for range keys {
			rc.Count(server.StatCmdSet)
		}
		// Each pair, as Redis sets each: a key's first is a "new" one
		// (store.AddAll leaves that to its caller).
		for i := 1; i < len(argv); i += 2 {
			if rc.p.srv.KeyEventsOn(server.EventNew) && firstOf(argv, i) {
				rc.notify(server.EventNew, "new", argv[i])
			}
			rc.notify(server.EventString, "set", argv[i])
		}
		rc.w.Int(1)
	default:
		rc.w.Int(0)
	}
}

// firstOf reports whether the key at argv[i] (keys at odd positions)
// is that key's first occurrence.
func firstOf(argv [][]byte, i int) bool {
	for j := 1; j < i; j += 2 {
		if bytes.Equal(argv[j], argv[i]) {
			return false
		}
	}
	return true
}

// lastOfEachKey returns a test of whether the key at argv[i] (keys at odd
// positions, values after them) is that key's last occurrence in argv. A
// few pairs are compared directly; many go through a map, so a long
// command stays linear.
func lastOfEachKey(argv [][]byte) func(i int) bool {
	if len(argv) <= 2*16+1 {
		return func(i int) bool {
			for j := i + 2; j < len(argv); j += 2 {
				if bytes.Equal(argv[j], argv[i]) {
					return false
				}
			}
			return true
		}
	}
	lastAt := make(map[string]int, len(argv)/2)
	for i := 1; i < len(argv); i += 2 {
		lastAt[string(argv[i])] = i
	}
	return func(i int) bool { return lastAt[string(argv[i])] == i }
}
