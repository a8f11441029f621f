package rdb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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
const RedisVersion = "7.2.4"

// SaveOptions are what Save writes beyond the keys.
type SaveOptions struct {
	// Aux are AUX fields written after the standard ones (redis-ver,
	// redis-bits, ctime, used-mem, aof-base): replication adds
	// repl-stream-db, repl-id and repl-offset.
	Aux [][2]string

	// AtSnapshot, if set, is called at the instant the file captures
	// (in memory mode while every shard is held, so no write of either
	// port comes between it and the copy; in durable mode before the
	// walk), and the AUX fields it returns are written after Aux:
	// replication's full resync names there the stream offset the file
	// stands for (repl-offset). It runs inside store.Exclusive: it must
	// not call the store.
	AtSnapshot func() [][2]string

	// Functions is the hook for FUNCTION LOAD's libraries: it returns
	// the code of each (its "#!lua name=..." source), written as one
	// RDB_OPCODE_FUNCTION2 record apiece before the keys, where Redis
	// 7.0 writes them. Nil: the file holds no functions.
	Functions func() [][]byte

	// Flags writes a string's memcached flags, when not zero, as an AUX
	// field FlagsAux ("minikv-flags" <decimal>) right before the key
	// (before its EXPIRETIME_MS): replication's full resync, so a MiniKV
	// replica gets them. Redis's loader takes an AUX field anywhere
	// between keys and ignores the ones it does not know (at its DEBUG
	// log level), so redis-server loads such a file as if it had none.
	Flags bool
}

// FlagsAux is the AUX field that gives the next key memcached flags
// (SaveOptions.Flags); a loader applies it to the next key only.
const FlagsAux = "minikv-flags"

// appendFlags appends the FlagsAux field for flags, if any.
func appendFlags(b []byte, flags uint32) []byte {
	if flags == 0 {
		return b
	}
	b = AppendString(append(b, opAux), []byte(FlagsAux))
	return AppendString(b, strconv.AppendUint(nil, uint64(flags), 10))
}

// SaveStats describe a saved file.
type SaveStats struct {
	Keys    int64         // keys written
	Expires int64         // of which with a deadline
	Bytes   int64         // the file's size
	Hold    time.Duration // how long every shard was held (the pause clients saw)
}

// Save writes the store's keys to w as an RDB file in Redis 7.2's format
// (version 11), which redis-server 7.2 and its redis-check-rdb read
// (Redis 7.0 refuses version 11):
//
//	"REDIS0011"
//	AUX redis-ver 7.2.4, AUX redis-bits 64, AUX ctime <unix s>,
//	AUX used-mem <bytes>, AUX aof-base 0, AUX <opt.Aux> ...
//	FUNCTION2 <code> ...                            (opt.Functions)
//	SELECTDB 0, RESIZEDB <keys> <keys with a TTL>
//	[EXPIRETIME_MS <unix ms, 8 B LE>] <type> <key> <object>   per key
//	EOF, crc64 of everything before (8 B LE)
//
// An object is what DUMP writes for the value (object.go). Memcached
// flags and CAS tokens have no place in the format and are not saved,
// unless opt.Flags asks for the flags as AUX fields (FlagsAux).
//
// Consistency. Redis forks and writes the child's frozen memory. MiniKV,
// with the store in memory alone (no --data-dir), takes a point-in-time
// copy: it holds every shard at once (store.Exclusive, as EXEC does) while
// it walks the index (store.ScanItemsFreq, which prefetches the records
// ahead), keeping for each key a reference to the key's and a string's
// bytes, which the store never rewrites, copying a small collection's
// listpack or intset, which it may rewrite in place, and encoding a large
// collection; then it lets go, and encodes, compresses and writes
// everything else with no lock held. So the file is the store at one
// instant, as Redis's is, and clients wait for the walk only
// (SaveStats.Hold): about 50-65 ns per key on the team's 2-core VM
// (BenchmarkSave: 201k keys, 10-13 ms), and 0.16-0.19 s for the 1 M
// keys of mixed types of the full-sync benchmark (docs/benchmarks.md),
// most of it the cache misses of reading each record; a large collection
// adds its encoding. Redis's fork costs about 10-20 ms per GB of memory
// instead, so for many small keys MiniKV's pause is the longer one. The
// copy costs about 90 bytes per key (references, deadline) plus the
// small collections' bytes and the large ones encoded, until Save
// returns, and segments the store compacts away meanwhile stay alive
// until then (at worst the store's size again, the worst case of Redis's
// copy-on-write too).
//
// In durable mode (--data-dir) memory is a cache over the disk, which
// holds the keyspace: Save walks the disk in key order (store.ScanKeys)
// and reads each key as DUMP does. Each value is one instant's, but the
// file is not one instant: a key written during the walk may be found
// with its old value or its new one, and one created or deleted during
// it may or may not be in the file; every key present throughout is.
func Save(w io.Writer, st *store.Store, opt SaveOptions) (SaveStats, error) {
	var stats SaveStats
	// The copy comes first, so that AtSnapshot's fields, taken at its
	// instant, can go in the header.
	var snap *snapshot
	var atAux [][2]string
	at := func() {
		if opt.AtSnapshot != nil {
			atAux = opt.AtSnapshot()
		}
	}
	if st.Durable() {
		at()
	} else {
		var err error
		if snap, err = takeSnapshot(st, at, &stats); err != nil {
			return stats, err
		}
	}

	cw := &crcWriter{w: w}
	bw := bufio.NewWriterSize(cw, 64<<10)
	buf := make([]byte, 0, 256)
	buf = append(buf, magic...)
	buf = append(buf, strconv.Itoa(Version + 10000)[1:]...) // "0011"
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
	for _, kv := range append(opt.Aux, atAux...) {
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
	if snap != nil {
		err = snap.write(bw, &stats, opt.Flags)
	} else {
		err = saveWalk(bw, st, &stats, opt.Flags)
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

// dbHeader is SELECTDB db and RESIZEDB keys, expires.
func dbHeader(db int, keys, expires int64) []byte {
	b := AppendLen([]byte{opSelectDB}, uint64(db))
	b = append(b, opResizeDB)
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
// alias the store's records (never rewritten once built); a small
// collection's bytes (its listpack or intset), which the store may
// rewrite in place, are copied into the snapshot's arena, and encoded
// once the store is let go (raw); a large one's type byte, key and
// object are encoded during the hold, in obj.
type snapKey struct {
	key, str []byte
	deadline int64
	flags    uint32 // a string's memcached flags
	obj      []byte // nil for a string
	db       uint8  // the key's database (store.SplitDBKey)
	raw      bool   // obj is a small collection's bytes, of kind and enc
	kind     store.Kind
	enc      store.Encoding
	lfu      bool // freq is the key's LFU counter, saved with RDB_OPCODE_FREQ
	freq     uint8
}

// snapshot is the point-in-time copy of the store (see Save).
type snapshot struct {
	keys    []snapKey
	expires int64
	arena   []byte // where small collections' bytes are copied
}

// copyBytes copies b into the arena, in blocks of 256 KiB (a bigger b
// alone), so that the hold allocates once per block, not once per key.
func (snap *snapshot) copyBytes(b []byte) []byte {
	if len(b) > cap(snap.arena)-len(snap.arena) {
		snap.arena = make([]byte, 0, max(256<<10, len(b)))
	}
	n := len(snap.arena)
	snap.arena = append(snap.arena, b...)
	return snap.arena[n:len(snap.arena):len(snap.arena)]
}

// takeSnapshot copies the store's keys with every shard held, calling at
// during the hold.
func takeSnapshot(st *store.Store, at func(), stats *SaveStats) (*snapshot, error) {
	// Room for every key, allocated before the hold: the count may grow
	// before the hold begins, and append takes care of that.
	snap := &snapshot{keys: make([]snapKey, 0, st.Stats().Items+64)}
	start := time.Now()
	err := st.Exclusive(func(v *store.Store) error {
		at()
		var big []snapKey // the shard's large collections, encoded after its walk
		lfu := v.LFU()    // Redis saves the LFU counters under an LFU policy
		for i := range v.NumShards() {
			big = big[:0]
			v.ScanItemsFreq(i, func(k []byte, it store.Item, enc store.Encoding, freq uint8) bool {
				db, _ := store.SplitDBKey(k)
				sk := snapKey{key: k, deadline: it.Deadline, db: uint8(db), lfu: lfu, freq: freq}
				switch {
				case it.Kind == store.KindString:
					sk.str, sk.flags = it.Value, it.Flags
				case enc == store.EncodingObject:
					big = append(big, sk)
					return true
				default:
					sk.obj, sk.raw, sk.kind, sk.enc = snap.copyBytes(it.Value), true, it.Kind, enc
				}
				snap.keys = append(snap.keys, sk)
				return true
			})
			for _, sk := range big {
				obj, _, ok, err := appendObject(nil, v, sk.key, true)
				if err != nil {
					return err
				}
				if ok {
					sk.obj = obj
					snap.keys = append(snap.keys, sk)
				}
			}
		}
		return nil
	})
	stats.Hold = time.Since(start)
	snap.arena = nil
	if err != nil {
		return nil, err
	}
	for i := range snap.keys {
		if snap.keys[i].deadline != 0 {
			snap.expires++
		}
	}
	return snap, nil
}

// write writes the copied keys: encoding them (compressing strings,
// encoding small collections) is most of a save's work once the store is
// let go, so chunks of keys are encoded on snapWorkers goroutines and
// written in order, as they come back. Each key's references go to the
// collector once it is encoded.
func (snap *snapshot) write(bw *bufio.Writer, stats *SaveStats, flags bool) error {
	// Each database's keys after its SELECTDB (store.DBKey): in the
	// order of the walk when every key is database 0's, as usual.
	var keys, expires [store.MaxDBs]int64
	sorted := true
	last := uint8(0)
	for i := range snap.keys {
		db := snap.keys[i].db
		keys[db]++
		if snap.keys[i].deadline != 0 {
			expires[db]++
		}
		sorted = sorted && db >= last
		last = db
	}
	if !sorted {
		slices.SortStableFunc(snap.keys, func(a, b snapKey) int { return int(a.db) - int(b.db) })
	}
	if len(snap.keys) == 0 {
		if _, err := bw.Write(dbHeader(0, 0, 0)); err != nil {
			return err
		}
	}
	// The chunks, each within one database, the first of each database
	// after its header.
	type chunk struct {
		head     []byte
		from, to int
		out      chan []byte
	}
	quit := make(chan struct{})
	defer close(quit)
	todo := make(chan *chunk, snapInFlight)
	inOrder := make(chan *chunk, snapInFlight)
	go func() {
		defer close(todo)
		defer close(inOrder)
		prev := -1 // the last chunk's database (its keys are a worker's now)
		for from := 0; from < len(snap.keys); {
			db := snap.keys[from].db
			c := &chunk{from: from, out: make(chan []byte, 1)}
			if int(db) != prev {
				c.head = dbHeader(int(db), keys[db], expires[db])
				prev = int(db)
			}
			c.to = min(from+snapChunkKeys, len(snap.keys))
			for i := from + 1; i < c.to; i++ {
				if snap.keys[i].db != db {
					c.to = i
				}
			}
			from = c.to
			select {
			case inOrder <- c:
			case <-quit:
				return
			}
			select {
			case todo <- c:
			case <-quit:
				return
			}
		}
	}()
	for range snapWorkers() {
		go func() {
			for c := range todo {
				c.out <- snap.encode(c.head, snap.keys[c.from:c.to], flags)
			}
		}()
	}
	for c := range inOrder {
		if _, err := bw.Write(<-c.out); err != nil {
			return err
		}
	}
	stats.Keys, stats.Expires = int64(len(snap.keys)), snap.expires
	return nil
}

// snapChunkKeys is how many keys a chunk of the snapshot holds, and
// snapInFlight how many chunks are encoded or waiting to be written at
// once.
const (
	snapChunkKeys = 2048
	snapInFlight  = 8
)

// snapWorkers is how many goroutines encode a snapshot's keys: one per
// CPU the runtime uses, at most 4.
func snapWorkers() int { return min(runtime.GOMAXPROCS(0), 4) }

// encode returns head followed by the keys' encoding, and clears them.
func (snap *snapshot) encode(head []byte, keys []snapKey, flags bool) []byte {
	buf := make([]byte, 0, 64*len(keys))
	buf = append(buf, head...)
	for i := range keys {
		sk := &keys[i]
		if flags {
			buf = appendFlags(buf, sk.flags)
		}
		buf = appendExpire(buf, sk.deadline)
		if sk.lfu {
			buf = append(buf, opFreq, sk.freq)
		}
		_, k := store.SplitDBKey(sk.key)
		switch {
		case sk.raw:
			at := buf
			buf = appendCompact(func(typ byte) []byte { return AppendString(append(at, typ), k) }, sk.kind, sk.enc, sk.obj)
		case sk.obj != nil:
			buf = append(buf, sk.obj...)
		default:
			buf = AppendString(AppendString(append(buf, typeString), k), sk.str)
		}
		*sk = snapKey{}
	}
	return buf
}

// saveWalkBatch is how many keys the durable walk reads per step.
const saveWalkBatch = 512

// saveWalk writes the store's keys by a walk over the disk (see Save).
func saveWalk(bw *bufio.Writer, st *store.Store, stats *SaveStats, flags bool) error {
	n, err := st.Len() // RESIZEDB is a hint: the count before the walk
	if err != nil {
		return err
	}
	if _, err := bw.Write(dbHeader(0, n, 0)); err != nil {
		return err
	}
	cur := 0 // the disk's key order keeps each database's keys together (store.DBKey)
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
			if db, _ := store.SplitDBKey(k); db != cur {
				cur = db
				if _, err := bw.Write(AppendLen([]byte{opSelectDB}, uint64(db))); err != nil {
					return err
				}
			}
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
			if flags && it.Kind == store.KindString && it.Flags != 0 {
				if _, err := bw.Write(appendFlags(nil, it.Flags)); err != nil {
					return err
				}
			}
			if it.Deadline != 0 {
				stats.Expires++
				if _, err := bw.Write(appendExpire(nil, it.Deadline)); err != nil {
					return err
				}
			}
			if st.LFU() {
				if oi, ok := st.Object(k); ok {
					if _, err := bw.Write([]byte{opFreq, oi.Freq}); err != nil {
						return err
					}
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
