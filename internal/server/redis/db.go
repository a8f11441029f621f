package redis

import (
	"errors"
	"time"
	"unsafe"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// Databases (SELECT, MOVE, SWAPDB, COPY ... DB, FLUSHDB, DBSIZE). The
// store knows nothing of them: a key of database n is stored under a
// prefix (store.DBKey), so a command's keys are rewritten into their
// store form once, in call, before the command runs, and every command
// works on its database's keys unchanged. Database 0's keys are stored
// as they are (one byte test per key: only a key that begins with
// store.DBMark is escaped), so a client that never selects another
// database pays nothing. What leaves the port is turned back: SCAN,
// KEYS and RANDOMKEY list the selected database's keys, a blocking pop
// names the key as the client gave it, keyspace events carry the
// database's number, RDB files carry a SELECTDB per database and the
// replication stream a SELECT before each database's changes.

// defaultDatabases is Redis's databases default.
const defaultDatabases = 16

// databases is how many databases SELECT offers: --databases, 1 in
// cluster mode's terms (SELECT n refused there).
func (p *Protocol) databases() int {
	if n := p.cfg.Databases; n > 0 {
		return min(n, store.ScratchDB) // 255 is SWAPDB's scratch
	}
	return defaultDatabases
}

// servedDatabases is how many databases hold keys: one in cluster mode.
func (p *Protocol) servedDatabases() int {
	if p.cluster != nil {
		return 1
	}
	return p.databases()
}

// dbArgv returns argv with its keys as the store names them in database
// db: argv itself when none needs a change (database 0, no key that
// begins with store.DBMark). A script's keys (EVAL, FCALL) are left as
// they are: the commands the script runs are rewritten themselves.
func dbArgv(cmd *respCommand, argv [][]byte, db int) [][]byte {
	if cmd.firstKey <= 0 && cmd.keysOf == nil {
		return argv
	}
	if cmd.keysOf == nil {
		last := cmd.lastKey
		if last < 0 {
			last += len(argv)
		}
		step := max(cmd.step, 1)
		if db == 0 {
			need := false
			for i := cmd.firstKey; i <= last && i < len(argv); i += step {
				if store.DBKeyNeeded(0, argv[i]) {
					need = true
					break
				}
			}
			if !need {
				return argv
			}
		}
		out := make([][]byte, len(argv))
		copy(out, argv)
		for i := cmd.firstKey; i <= last && i < len(argv); i += step {
			out[i] = store.DBKey(nil, db, argv[i])
		}
		return out
	}
	if cmd.script || cmd.name == "fcall" || cmd.name == "fcall_ro" {
		return argv
	}
	var buf [8][]byte
	ks, _ := cmd.keysOf(argv, buf[:0])
	if db == 0 {
		need := false
		for _, k := range ks {
			if store.DBKeyNeeded(0, k) {
				need = true
				break
			}
		}
		if !need {
			return argv
		}
	}
	out := make([][]byte, len(argv))
	copy(out, argv)
	for _, k := range ks {
		for i, a := range argv {
			if sameSlice(a, k) {
				out[i] = store.DBKey(nil, db, a)
				break
			}
		}
	}
	return out
}

// mayNeedDBKey is call's quick test for database 0: false when the one
// key of a single-key command does not begin with store.DBMark (GET,
// SET ...), so dbArgv is not called.
func mayNeedDBKey(cmd *respCommand, argv [][]byte) bool {
	if cmd.lastKey != cmd.firstKey || cmd.firstKey >= len(argv) {
		return true // dbArgv looks
	}
	k := argv[cmd.firstKey]
	return len(k) > 0 && k[0] == store.DBMark
}

// sameSlice reports whether a and b are the same bytes of memory (a key
// keysOf returned is one of the arguments).
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// userKey is the key a client of rc's database knows a store's key k by.
func userKey(k []byte) []byte {
	_, key := store.SplitDBKey(k)
	return key
}

// scratchDB is where SWAPDB parks a database's keys while it moves the
// other's: a number --databases never offers.
const scratchDB = store.ScratchDB

// parseDB reads a database number as Redis's getIntFromObjectOrReply: an
// integer in int32's range, else msg ("" for Redis's own), and then one
// of the databases, else "DB index is out of range".
func (rc *conn) parseDB(arg []byte, msg string) (int, bool) {
	n, ok := resp.ParseInt(arg)
	switch {
	case msg != "" && (!ok || n < math32Min || n > math32Max):
		rc.w.Error(msg)
		return 0, false
	case !ok:
		rc.w.Error(errNotInt)
		return 0, false
	case n < math32Min || n > math32Max:
		rc.w.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
		return 0, false
	}
	if n < 0 || n >= int64(rc.p.databases()) {
		rc.w.Error(errDBRange)
		return 0, false
	}
	return int(n), true
}

// cmdMove is MOVE key db: the key, its value and TTL, to the same name in
// another database, unless that one holds it already (0).
func cmdMove(rc *conn, argv [][]byte) {
	if rc.p.cluster != nil {
		rc.w.Error("ERR MOVE is not allowed in cluster mode")
		return
	}
	db, ok := rc.parseDB(argv[2], "")
	if !ok {
		return
	}
	if db == rc.db {
		rc.w.Error("ERR source and destination objects are the same")
		return
	}
	src := argv[1] // the store's key (call rewrote it)
	dst := store.DBKey(nil, db, userKey(src))
	moved := false
	_ = rc.st.Tx([][]byte{src, dst}, func(tx *store.Tx) error {
		if _, ok := tx.Kind(src); !ok {
			return nil
		}
		if moved = tx.Rename(src, dst, true); !moved { // Redis looked both up
			tx.Use(src)
			tx.Use(dst)
		}
		return nil
	})
	if moved {
		rc.notify(server.EventGeneric, "move_from", src)
		rc.notify(server.EventGeneric, "move_to", dst)
		if rc.p.blocked.n.Load() != 0 {
			rc.p.blocked.markReady(dst) // a stream arriving serves its readers, as Redis's dbAdd
			rc.p.wake(dst)
		}
	}
	rc.w.Int(int64(b2i(moved)))
}

// cmdSwapDB is SWAPDB index1 index2. Redis swaps two tables; MiniKV's
// databases share one store, so their keys are renamed, with the store
// held (store.Exclusive): no client sees a database half swapped. It
// costs a rename per key of both (a documented difference).
func cmdSwapDB(rc *conn, argv [][]byte) {
	if rc.p.cluster != nil {
		rc.w.Error("ERR SWAPDB is not allowed in cluster mode")
		return
	}
	a, ok := rc.parseDB(argv[1], "ERR invalid first DB index")
	if !ok {
		return
	}
	b, ok := rc.parseDB(argv[2], "ERR invalid second DB index")
	if !ok {
		return
	}
	if a == b {
		rc.w.OK()
		return
	}
	var woken [][]byte
	rc.HoldWrites() // the reply leaves once the changes are durable
	err := rc.st.Exclusive(func(v *store.Store) error {
		if err := moveDB(v, a, scratchDB, nil); err != nil {
			return err
		}
		if err := moveDB(v, b, a, &woken); err != nil {
			return err
		}
		return moveDB(v, scratchDB, b, &woken)
	})
	rc.ReleaseWrites()
	if err != nil {
		rc.storeError(err)
		return
	}
	if rc.p.blocked.n.Load() != 0 {
		for _, k := range woken {
			rc.p.blocked.markReady(k)
			rc.p.wake(k)
		}
	}
	rc.w.OK()
}

// moveDB renames every key of database from to database to (which holds
// none of them), in v, a store held exclusively; the new keys are added
// to moved when it is not nil.
func moveDB(v *store.Store, from, to int, moved *[][]byte) error {
	var keys [][]byte
	if err := v.DBKeys(from, func(k []byte) { keys = append(keys, append([]byte(nil), k...)) }); err != nil {
		return err
	}
	for _, k := range keys {
		src, dst := store.DBKey(nil, from, k), store.DBKey(nil, to, k)
		err := v.Tx([][]byte{src, dst}, func(tx *store.Tx) error {
			tx.Relabel(src, dst)
			return nil
		})
		if err != nil {
			return err
		}
		if moved != nil {
			*moved = append(*moved, dst)
		}
	}
	return nil
}

// flushDB deletes every key of database db, with the store held, so no
// write of another database can slip between a check and the flush;
// with one database served (--databases 1, cluster mode) it is
// FLUSHALL's flush (store.FlushAll, O(shards)).
func (rc *conn) flushDB(db int) error {
	if rc.p.servedDatabases() == 1 {
		rc.st.FlushAll(time.Now().UnixMilli())
		return nil
	}
	rc.HoldWrites()
	defer rc.ReleaseWrites()
	return rc.st.Exclusive(func(v *store.Store) error {
		var keys [][]byte
		if err := v.DBKeys(db, func(k []byte) { keys = append(keys, append([]byte(nil), k...)) }); err != nil {
			return err
		}
		for _, k := range keys {
			if err := v.Delete(store.DBKey(nil, db, k)); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return nil
	})
}
