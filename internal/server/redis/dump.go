package redis

import (
	"errors"
	"math"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// DUMP and RESTORE in Redis 7.0's serialization format (rdb.go), so
// values move between Redis and MiniKV both ways.
//
// DUMP writes a small collection's listpack (or intset) as it is: MiniKV
// keeps them in Redis's byte format. RESTORE decodes and checks the whole
// payload before it touches the key, then, in one store.Tx over the key,
// checks BUSYKEY, clears the key (REPLACE) and builds the value: a hash
// listpack that fits MiniKV's limits is stored as it came, anything else
// is built element by element through the kind's handle, which picks the
// encoding as a command would. IDLETIME sets the record's access time;
// FREQ, Redis's 0-255 LFU counter, sets the record's 0-3 access count
// (saturating).

func dumpCommands() []respCommand {
	return []respCommand{
		{name: "dump", arity: 2, flags: []string{"readonly"}, firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "2.6.0",
			complexity: "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
			summary:    "Returns a serialized representation of the value stored at a key.", args: []docArg{key("key")}, run: cmdDump},
		{name: "restore", arity: -4, flags: []string{"write", "denyoom"}, firstKey: 1, lastKey: 1, step: 1, group: "generic", since: "2.6.0",
			complexity: "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
			summary:    "Creates a key from the serialized representation of a value.",
			args: []docArg{key("key"), integ("ttl"), str("serialized-value"), opt(token("REPLACE")), opt(token("ABSTTL")),
				opt(tokArg("IDLETIME", "seconds", "integer")), opt(tokArg("FREQ", "frequency", "integer"))},
			run: cmdRestore},
	}
}

// cmdDump is DUMP key: the payload, or null for a missing key.
func cmdDump(rc *conn, argv [][]byte) {
	p, ok, err := dumpKey(rc.st, argv[1])
	switch {
	case err != nil:
		rc.storeError(err)
	case !ok:
		rc.keymiss(argv[1])
		rc.w.Null()
	default:
		rc.w.Bulk(p)
	}
}

// dumpKey serializes the value under key. The kind is read first, then
// the value through its handle; a key that changes kind in between is
// read again.
func dumpKey(st *store.Store, key []byte) ([]byte, bool, error) {
	for {
		it, ok := st.Peek(key)
		if !ok {
			return nil, false, nil
		}
		var p []byte
		var err error
		switch it.Kind {
		case store.KindString:
			p = rdbAppendString([]byte{rdbTypeString}, it.Value)
		case store.KindHash:
			var h store.Hash
			err = st.ViewHash(key, &h, func() error {
				if !h.Exists() {
					return nil
				}
				if lp := h.HashListpack(); lp != nil {
					p = rdbAppendString([]byte{rdbTypeHashListpack}, lp)
					return nil
				}
				p = rdbAppendLen([]byte{rdbTypeHash}, uint64(h.Len()))
				h.Each(func(f, v []byte) bool {
					p = rdbAppendString(rdbAppendString(p, f), v)
					return true
				})
				return nil
			})
		case store.KindSet:
			var s store.Set
			err = st.ViewSet(key, &s, func() error {
				if !s.Exists() {
					return nil
				}
				if is := s.Intset(); is != nil {
					p = rdbAppendString([]byte{rdbTypeSetIntset}, is)
					return nil
				}
				// A listpack set is Redis 7.2's encoding, which 7.0
				// cannot read: written as RDB_TYPE_SET, as a big one.
				p = rdbAppendLen([]byte{rdbTypeSet}, uint64(s.Len()))
				s.Each(func(m []byte) bool {
					p = rdbAppendString(p, m)
					return true
				})
				return nil
			})
		case store.KindList:
			var l store.List
			err = st.ViewList(key, &l, func() error {
				if !l.Exists() {
					return nil
				}
				p = dumpList(&l)
				return nil
			})
		case store.KindZSet:
			var z store.ZSet
			err = st.ViewZSet(key, &z, func() error {
				if !z.Exists() {
					return nil
				}
				if lp := z.Listpack(); lp != nil {
					p = rdbAppendString([]byte{rdbTypeZSetListpack}, lp)
					return nil
				}
				n := z.Len()
				p = rdbAppendLen([]byte{rdbTypeZSet2}, uint64(n))
				z.Range(0, n-1, true, func(m []byte, score float64) bool { // from the tail, as Redis writes it
					p = rdbAppendDouble(rdbAppendString(p, m), score)
					return true
				})
				return nil
			})
		default:
			p, err = dumpOther(st, key, it.Kind)
		}
		if errors.Is(err, store.ErrWrongType) {
			continue // changed kind since Peek
		}
		if err != nil {
			return nil, false, err
		}
		if p == nil {
			return nil, false, nil // deleted since Peek
		}
		return rdbSeal(p), true, nil
	}
}

// quicklistNodeBytes is the size of the listpacks DUMP cuts a big list
// into: list-max-listpack-size -2, Redis's default (8 KiB).
const quicklistNodeBytes = 8192

// dumpList writes a list as RDB_TYPE_LIST_QUICKLIST_2: a small list's
// listpack as one packed node, a big one cut into packed nodes of at
// most 8 KiB (an element larger than that alone in its node).
func dumpList(l *store.List) []byte {
	p := []byte{rdbTypeListQuick2}
	if lp := l.Listpack(); lp != nil {
		p = rdbAppendLen(p, 1)
		p = rdbAppendLen(p, quicklistPacked)
		return rdbAppendString(p, lp)
	}
	var nodes [][]byte
	var cur []byte
	l.Each(0, false, func(_ int, v []byte) bool {
		if cur != nil && store.ListpackBytes(cur)+len(v)+11 > quicklistNodeBytes {
			nodes = append(nodes, cur)
			cur = nil
		}
		if cur == nil {
			cur = store.ListpackNew()
		}
		cur = store.ListpackAppend(cur, v)
		return true
	})
	if cur != nil {
		nodes = append(nodes, cur)
	}
	p = rdbAppendLen(p, uint64(len(nodes)))
	for _, lp := range nodes {
		p = rdbAppendLen(p, quicklistPacked)
		p = rdbAppendString(p, lp)
	}
	return p
}

// dumpOther answers for a kind DUMP does not know (none today).
func dumpOther(_ *store.Store, _ []byte, k store.Kind) ([]byte, error) {
	return nil, errors.New("DUMP of a " + k.String() + " value is not supported")
}

// Errors of RESTORE, as Redis words them.
const (
	errBusyKey     = "BUSYKEY Target key name already exists."
	errBadPayload  = "ERR DUMP payload version or checksum are wrong"
	errBadFormat   = "ERR Bad data format"
	errInvalidTTL  = "ERR Invalid TTL value, must be >= 0"
	errInvalidIdle = "ERR Invalid IDLETIME value, must be >= 0"
	errInvalidFreq = "ERR Invalid FREQ value, must be >= 0 and <= 255"
)

// cmdRestore is RESTORE key ttl serialized-value [REPLACE] [ABSTTL]
// [IDLETIME seconds] [FREQ frequency], with Redis's order of checks:
// options, then BUSYKEY, then the TTL, then the payload's footer and
// contents.
func cmdRestore(rc *conn, argv [][]byte) {
	replace, absTTL := false, false
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(argv); j++ {
		more := len(argv) - j - 1
		switch {
		case is(argv[j], "replace"):
			replace = true
		case is(argv[j], "absttl"):
			absTTL = true
		case is(argv[j], "idletime") && more >= 1 && freq == -1:
			v, ok := rc.parseInt(argv[j+1])
			if !ok {
				return
			}
			if v < 0 {
				rc.w.Error(errInvalidIdle)
				return
			}
			idle = v
			j++
		case is(argv[j], "freq") && more >= 1 && idle == -1:
			v, ok := rc.parseInt(argv[j+1])
			if !ok {
				return
			}
			if v < 0 || v > 255 {
				rc.w.Error(errInvalidFreq)
				return
			}
			freq = v
			j++
		default:
			rc.w.Error(errSyntax)
			return
		}
	}
	key := argv[1]
	// Everything that does not depend on the key is worked out first;
	// errors are answered in Redis's order inside the Tx.
	ttl, ttlOK := resp.ParseInt(argv[2])
	var v *rdbValue
	payloadErr := ""
	if obj, ok := rdbVerify(argv[3]); !ok {
		payloadErr = errBadPayload
	} else if dv, err := rdbDecode(obj); err != nil {
		payloadErr = errBadFormat
	} else {
		v = dv
	}
	var reply string // an error, or "" for OK
	var storeErr error
	deleted, restored := false, false
	_ = rc.st.Tx([][]byte{key}, func(tx *store.Tx) error {
		_, exists := tx.Kind(key)
		switch {
		case exists && !replace:
			reply = errBusyKey
			return nil
		case !ttlOK:
			reply = errNotInt
			return nil
		case ttl < 0:
			reply = errInvalidTTL
			return nil
		case payloadErr != "":
			reply = payloadErr
			return nil
		}
		if v.kind == store.KindString && int64(len(v.str)) > rc.maxString(len(key)) {
			storeErr = store.ErrTooLarge // refused before REPLACE removes anything
			return nil
		}
		if exists {
			deleted = tx.Delete(key) // Redis deletes, then adds: a "new" key
		}
		var deadline int64
		if ttl > 0 {
			at := ttl
			if !absTTL {
				at = ttl + rc.nowMilli() // wraps past int64, as in Redis: then already expired
			}
			if at <= rc.nowMilli() {
				return nil // already expired: the key is deleted (REPLACE) and nothing stored
			}
			deadline = msToDeadline(at)
		}
		storeErr = restoreValue(tx, key, v)
		if storeErr == nil {
			tx.SetRestored(key, deadline, idle, int(min(freq, math.MaxInt32)))
			restored = true
		}
		return nil
	})
	switch {
	case restored:
		rc.notify(server.EventGeneric, "restore", key)
	case deleted && reply == "" && storeErr == nil:
		rc.notify(server.EventGeneric, "del", key) // REPLACE with a TTL already past
	}
	switch {
	case reply != "":
		rc.w.Error(reply)
	case storeErr != nil:
		rc.storeError(storeErr)
	default:
		rc.w.OK()
	}
}

// restoreValue builds v under key, which holds nothing, in tx.
func restoreValue(tx *store.Tx, key []byte, v *rdbValue) error {
	switch v.kind {
	case store.KindString:
		return tx.PutString(key, v.str)
	case store.KindHash:
		if v.lp != nil && tx.RestoreHashListpack(key, v.lp) {
			return nil
		}
		var h store.Hash
		if err := tx.Hash(key, &h, true); err != nil {
			return err
		}
		for i := 0; i < len(v.elems); i += 2 {
			h.Set(v.elems[i], v.elems[i+1])
		}
		tx.DoneHash(&h)
		return nil
	case store.KindSet:
		var s store.Set
		if err := tx.Set(key, &s, true); err != nil {
			return err
		}
		s.Prepare(v.elems[0], len(v.elems))
		for _, m := range v.elems {
			s.Add(m)
		}
		tx.DoneSet(&s)
		return nil
	case store.KindList:
		var l store.List
		if err := tx.List(key, &l, true); err != nil {
			return err
		}
		for _, e := range v.elems {
			l.Push(false, e)
		}
		tx.DoneList(&l)
		return nil
	case store.KindZSet:
		var z store.ZSet
		if err := tx.ZSet(key, &z, true); err != nil {
			return err
		}
		for i, m := range v.elems {
			z.Set(m, v.scores[i])
		}
		tx.DoneZSet(&z)
		return nil
	default:
		return restoreOther(tx, key, v)
	}
}

// restoreOther answers for a kind RESTORE does not build (none today:
// rdbDecode makes only the five kinds).
func restoreOther(_ *store.Tx, _ []byte, v *rdbValue) error {
	return errors.New("RESTORE of a " + v.kind.String() + " value is not supported")
}
