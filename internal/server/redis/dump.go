package redis

import (
	"math"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/rdb"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// DUMP and RESTORE in Redis 7.2's serialization format (internal/rdb,
// which writes and reads RDB files with the same objects), so values
// move between Redis and MiniKV both ways.
//
// RESTORE decodes and checks the whole payload before it touches the
// key, then, in one store.Tx over the key, checks BUSYKEY, clears the key
// (REPLACE) and builds the value (rdb.Value.Build). IDLETIME sets the record's access time;
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
	p, ok, err := rdb.Dump(rc.st, argv[1])
	switch {
	case err != nil:
		rc.storeError(err)
	case !ok:
		rc.keymiss(argv[1])
		rc.w.Null()
	default:
		rc.st.Use(argv[1]) // Redis's lookupKeyRead: a use (OBJECT FREQ, IDLETIME)
		rc.w.Bulk(p)
	}
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
	var v *rdb.Value
	payloadErr := ""
	if obj, ok := rdb.Verify(argv[3]); !ok {
		payloadErr = errBadPayload
	} else if dv, err := rdb.DecodeValue(obj); err != nil {
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
		if v.Kind == store.KindString && int64(len(v.Str)) > rc.maxString(len(key)) {
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
		storeErr = v.Build(tx, key)
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
