package rdb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// Opcodes of an RDB file (rdb.h), in the place of a type byte.
const (
	opFunction2     = 245 // a function library's code (Redis 7.0)
	opFunctionPreGA = 246 // functions of 7.0's release candidates
	opModuleAux     = 247
	opIdle          = 248 // LRU idle seconds of the next key
	opFreq          = 249 // LFU counter of the next key
	opAux           = 250 // a key, value pair about the file
	opResizeDB      = 251 // hint: keys and keys with a TTL in this db
	opExpireTimeMS  = 252 // the next key's deadline, Unix ms, 8 bytes LE
	opExpireTime    = 253 // the same in seconds, 4 bytes LE (before RDB 3)
	opSelectDB      = 254
	opEOF           = 255
)

// magic begins every file; four digits of version follow it.
const magic = "REDIS"

// RedisVersion is what the redis-ver AUX field says: the Redis release
// whose semantics MiniKV serves (and whose RDB version it writes).
const RedisVersion = "7.0.15"

// SaveOptions are what Save writes beyond the keys.
type SaveOptions struct {
	// Aux are AUX fields written after the standard ones (redis-ver,
	// redis-bits, ctime, used-mem, aof-base): replication adds
	// repl-stream-db, repl-id and repl-offset.
	Aux [][2]string

	// Functions is the hook for FUNCTION LOAD's libraries: it returns
	// the code of each (its "#!lua name=..." source), written as one
	// RDB_OPCODE_FUNCTION2 record apiece before the keys, where Redis
	// 7.0 writes them. Nil: the file holds no functions.
	Functions func() [][]byte
}

// SaveStats describe a saved file.
type SaveStats struct {
	Keys    int64         // keys written
	Expires int64         // of which with a deadline
	Bytes   int64         // the file's size
	Hold    time.Duration // how long every shard was held (the pause clients saw)
}

// Save writes the store's keys to w as an RDB file in Redis 7.0's format
// (version 10), which redis-server and redis-check-rdb read:
//
//	"REDIS0010"
//	AUX redis-ver 7.0.15, AUX redis-bits 64, AUX ctime <unix s>,
//	AUX used-mem <bytes>, AUX aof-base 0, AUX <opt.Aux> ...
//	FUNCTION2 <code> ...                            (opt.Functions)
//	SELECTDB 0, RESIZEDB <keys> <keys with a TTL>
//	[EXPIRETIME_MS <unix ms, 8 B LE>] <type> <key> <object>   per key
//	EOF, crc64 of everything before (8 B LE)
//
// An object is what DUMP writes for the value (object.go). Memcached
// flags and CAS tokens have no place in the format and are not saved.
//
// Consistency. Redis forks and writes the child's frozen memory. MiniKV,
// without a store in memory alone (no --data-dir), takes a point-in-time
// copy: it holds every shard at once (store.Exclusive, as EXEC does) while
// it walks the index, keeping for each key a reference to the key's and
// a string's bytes, which the store never rewrites, and encoding
// collections, whose bytes it may rewrite in place, into a buffer; then
// it lets go, and compresses and writes everything with no lock held. So
// the file is the store at one instant, as Redis's is, and clients wait
// for the walk only: about 60 ns per string key on the team's VM (SaveStats.Hold;
// a big collection costs its encoding). The copy costs about 70 bytes of
// memory per key (references, deadline) plus the encoded collections,
// until Save returns.
//
// In durable mode (--data-dir) memory is a cache over the disk, which
// holds the keyspace: Save walks the disk in key order (store.ScanKeys)
// and reads each key as DUMP does. Each value is one instant's, but the
// file is not one instant: a key written during the walk may be found
// with its old value or its new one, and one created or deleted during
// it may or may not be in the file; every key present throughout is.
func Save(w io.Writer, st *store.Store, opt SaveOptions) (SaveStats, error) {
	var stats SaveStats
	cw := &crcWriter{w: w}
	bw := bufio.NewWriterSize(cw, 64<<10)
	buf := make([]byte, 0, 256)

	buf = append(buf, magic...)
	buf = append(buf, strconv.Itoa(Version + 10000)[1:]...) // "0010"
	aux := func(k, v string) {
		buf = append(buf, opAux)
		buf = AppendString(buf, []byte(k))
		buf = AppendString(buf, []byte(v))
	}
	aux("redis-ver", RedisVersion)
	aux("redis-bits", "64")
	aux("ctime", strconv.FormatInt(time.Now().Unix(), 10))
	aux("used-mem", strconv.FormatInt(st.Stats().Bytes, 10))
	aux("aof-base", "0")
	for _, kv := range opt.Aux {
		aux(kv[0], kv[1])
	}
	if opt.Functions != nil {
		for _, code := range opt.Functions() {
			buf = AppendString(append(buf, opFunction2), code)
		}
	}
	if _, err := bw.Write(buf); err != nil {
		return stats, err
	}
	var err error
	if st.Durable() {
		err = saveWalk(bw, st, &stats)
	} else {
		err = saveSnapshot(bw, st, &stats)
	}
	if err != nil {
		return stats, err
	}
	if err := bw.WriteByte(opEOF); err != nil {
		return stats, err
	}
	if err := bw.Flush(); err != nil {
		return stats, err
	}
	if _, err := w.Write(binary.LittleEndian.AppendUint64(nil, cw.crc)); err != nil {
		return stats, err
	}
	stats.Bytes = cw.n + 8
	return stats, nil
}

// dbHeader is SELECTDB 0 and RESIZEDB keys, expires.
func dbHeader(keys, expires int64) []byte {
	b := []byte{opSelectDB, 0, opResizeDB}
	b = AppendLen(b, uint64(keys))
	return AppendLen(b, uint64(expires))
}

// appendExpire appends the EXPIRETIME_MS of a deadline, if any.
func appendExpire(b []byte, deadline int64) []byte {
	if deadline == 0 {
		return b
	}
	return binary.LittleEndian.AppendUint64(append(b, opExpireTimeMS), uint64(deadline))
}

// snapKey is one key of the point-in-time copy. A string's key and value
// alias the store's records (never rewritten once built); a
// collection's type byte, key and object are encoded in obj.
type snapKey struct {
	key, str []byte
	deadline int64
	obj      []byte // nil for a string
}

// saveSnapshot writes the store's keys from a point-in-time copy (see
// Save).
func saveSnapshot(bw *bufio.Writer, st *store.Store, stats *SaveStats) error {
	var keys []snapKey
	var expires int64
	start := time.Now()
	err := st.Exclusive(func(v *store.Store) error {
		keys = make([]snapKey, 0, v.Stats().Items)
		var names [][]byte
		for i := range v.NumShards() {
			names = names[:0]
			v.ScanShard(i, func(k []byte) bool {
				names = append(names, k)
				return true
			})
			for _, k := range names {
				it, ok := v.Peek(k)
				if !ok {
					continue
				}
				sk := snapKey{key: k, deadline: it.Deadline}
				if it.Kind == store.KindString {
					sk.str = it.Value
				} else {
					obj, _, ok, err := appendObject(nil, v, k, true)
					if err != nil {
						return err
					}
					if !ok {
						continue
					}
					sk.obj = obj
				}
				if it.Deadline != 0 {
					expires++
				}
				keys = append(keys, sk)
			}
		}
		return nil
	})
	stats.Hold = time.Since(start)
	if err != nil {
		return err
	}
	if _, err := bw.Write(dbHeader(int64(len(keys)), expires)); err != nil {
		return err
	}
	var buf []byte
	for i := range keys {
		sk := &keys[i]
		buf = appendExpire(buf[:0], sk.deadline)
		if sk.obj != nil {
			buf = append(buf, sk.obj...)
		} else {
			buf = AppendString(AppendString(append(buf, typeString), sk.key), sk.str)
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
		*sk = snapKey{} // let the collector have it
	}
	stats.Keys, stats.Expires = int64(len(keys)), expires
	return nil
}

// saveWalkBatch is how many keys the durable walk reads per step.
const saveWalkBatch = 512

// saveWalk writes the store's keys by a walk over the disk (see Save).
func saveWalk(bw *bufio.Writer, st *store.Store, stats *SaveStats) error {
	n, err := st.Len() // RESIZEDB is a hint: the count before the walk
	if err != nil {
		return err
	}
	if _, err := bw.Write(dbHeader(n, 0)); err != nil {
		return err
	}
	var names [][]byte
	var buf []byte
	cursor := uint64(0)
	for {
		names = names[:0]
		cursor, err = st.ScanKeys(cursor, saveWalkBatch, func(k []byte) {
			names = append(names, append([]byte(nil), k...))
		})
		if err != nil {
			return err
		}
		for _, k := range names {
			// The deadline goes before the object: the object is built
			// after it, and the expiry patched in once the item is known.
			obj, it, ok, err := appendObject(buf[:0], st, k, true)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			buf = obj
			if it.Deadline != 0 {
				stats.Expires++
				if _, err := bw.Write(appendExpire(nil, it.Deadline)); err != nil {
					return err
				}
			}
			if _, err := bw.Write(obj); err != nil {
				return err
			}
			stats.Keys++
		}
		if cursor == 0 {
			return nil
		}
	}
}

// crcWriter counts and checksums what passes to w.
type crcWriter struct {
	w   io.Writer
	crc uint64
	n   int64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.crc = CRC64(c.crc, p[:n])
	c.n += int64(n)
	return n, err
}

// errShortFile is the error of a file that ends before its EOF opcode.
var errShortFile = errors.New("rdb: unexpected end of file")

// SaveFile writes the store to path as Save does, atomically: into a
// temporary file in the same directory (temp-<pid>-<n>.rdb, as Redis
// names its own), fsynced, then renamed over path, and the directory
// fsynced, so a crash leaves the old file or the new one, never a part.
func SaveFile(path string, st *store.Store, opt SaveOptions) (SaveStats, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "temp-"+strconv.Itoa(os.Getpid())+"-*.rdb")
	if err != nil {
		return SaveStats{}, err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	bw := bufio.NewWriterSize(f, 1<<20)
	stats, err := Save(bw, st, opt)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return stats, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return stats, err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return stats, nil
}
