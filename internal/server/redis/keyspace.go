package redis

import (
	"bytes"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// RENAME, RENAMENX and COPY: commands that move or duplicate a value of
// any kind between two keys, each one store.Tx over both; and TOUCH.

func keyspaceCommands() []respCommand {
	w := []string{"write"}
	two := func(name string, arity int, since, complexity, summary string, args []docArg, run func(*conn, [][]byte)) respCommand {
		return respCommand{name: name, arity: arity, flags: w, firstKey: 1, lastKey: 2, step: 1, group: "generic",
			since: since, complexity: complexity, summary: summary, args: args, run: run}
	}
	return []respCommand{
		two("rename", 3, "1.0.0", "O(1)", "Renames a key and overwrites the destination.", []docArg{key("key"), key("newkey")}, cmdRename),
		two("renamenx", 3, "1.0.0", "O(1)", "Renames a key only when the target key name doesn't exist.", []docArg{key("key"), key("newkey")}, cmdRenameNX),
		two("copy", -3, "6.2.0", "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.",
			"Copies the value of a key to a new key.",
			[]docArg{key("source"), key("destination"), opt(tokArg("DB", "destination-db", "integer")), opt(token("REPLACE"))}, cmdCopy),
		{name: "move", arity: 3, flags: []string{"write", "fast"}, firstKey: 1, lastKey: 1, step: 1, group: "generic",
			since: "1.0.0", complexity: "O(1)", summary: "Moves a key to another database.",
			args: []docArg{key("key"), integ("db")}, run: cmdMove},
		{name: "swapdb", arity: 3, flags: []string{"write", "fast"}, group: "server",
			since: "4.0.0", complexity: "O(N) where N is the count of clients watching or blocking on keys from both databases.",
			summary: "Swaps two Redis databases.", args: []docArg{integ("index1"), integ("index2")}, run: cmdSwapDB},
		{name: "touch", arity: -2, flags: []string{"readonly", "fast"}, firstKey: 1, lastKey: -1, step: 1, group: "generic",
			since: "3.2.1", complexity: "O(N) where N is the number of keys that will be touched.",
			summary: "Returns the number of existing keys out of those specified after updating the time they were last accessed.",
			args:    []docArg{keys("key")}, run: cmdTouch},
	}
}

// cmdTouch is TOUCH key [key ...]: each existing key, of any kind, counts
// as read (its access time and the eviction walk's access bit), as Redis
// looks each one up; the reply is how many exist (a key named twice
// counts twice).
func cmdTouch(rc *conn, argv [][]byte) {
	n := 0
	for _, k := range argv[1:] {
		if _, ok := rc.st.Get(k); ok {
			n++
		}
	}
	rc.w.Int(int64(n))
}

// cmdRename is RENAME key newkey: the value, its TTL and kind move.
func cmdRename(rc *conn, argv [][]byte) { rc.rename(argv[1], argv[2], false) }

// cmdRenameNX is RENAMENX key newkey: 1 if renamed, 0 if newkey exists.
func cmdRenameNX(rc *conn, argv [][]byte) { rc.rename(argv[1], argv[2], true) }

func (rc *conn) rename(src, dst []byte, nx bool) {
	found, done := false, false
	_ = rc.st.Tx([][]byte{src, dst}, func(tx *store.Tx) error {
		if _, found = tx.Kind(src); !found {
			return nil
		}
		if bytes.Equal(src, dst) {
			tx.Use(src) // Redis looked it up
			done = !nx  // Redis: OK for RENAME, 0 for RENAMENX
			return nil
		}
		if done = tx.Rename(src, dst, nx); !done { // RENAMENX over a key: Redis looked both up
			tx.Use(src)
			tx.Use(dst)
		}
		return nil
	})
	if done && !bytes.Equal(src, dst) {
		rc.notify(server.EventGeneric, "rename_from", src)
		rc.notify(server.EventGeneric, "rename_to", dst)
	}
	switch {
	case !found:
		rc.w.Error("ERR no such key")
	case nx:
		rc.w.Int(int64(b2i(done)))
	default:
		rc.w.OK()
	}
}

// cmdCopy is COPY source destination [DB destination-db] [REPLACE].
func cmdCopy(rc *conn, argv [][]byte) {
	src, dst := argv[1], argv[2]
	replace := false
	dstDB := rc.db
	for i := 3; i < len(argv); i++ {
		switch {
		case is(argv[i], "replace"):
			replace = true
		case is(argv[i], "db") && i+1 < len(argv):
			i++
			n, ok := rc.parseInt(argv[i])
			if !ok {
				return
			}
			if n < math32Min || n > math32Max {
				rc.w.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
				return
			}
			if n < 0 || n >= int64(rc.p.databases()) {
				rc.w.Error(errDBRange)
				return
			}
			dstDB = int(n)
		default:
			rc.w.Error(errSyntax)
			return
		}
	}
	if dstDB != rc.db {
		if rc.p.cluster != nil {
			rc.w.Error("ERR Copying to another database is not allowed in cluster mode")
			return
		}
		dst = store.DBKey(nil, dstDB, userKey(dst)) // the key of the destination's database (db.go)
	}
	if bytes.Equal(src, dst) {
		rc.w.Error("ERR source and destination objects are the same")
		return
	}
	copied := false
	_ = rc.st.Tx([][]byte{src, dst}, func(tx *store.Tx) error {
		if _, ok := tx.Kind(src); !ok {
			rc.keymiss(src) // Redis reads the source
			return nil
		}
		copied = tx.Copy(src, dst, replace)
		return nil
	})
	if copied {
		rc.notify(server.EventGeneric, "copy_to", dst)
	}
	rc.w.Int(int64(b2i(copied)))
}
