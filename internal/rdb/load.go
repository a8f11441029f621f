package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/minikv/minikv/internal/store"
)

// LoadOptions say what Load does with what the store cannot hold.
type LoadOptions struct {
	// limits are the store's, set by LoadBytes (reader.limits).
	limits *store.Limits

	// Function is the hook for RDB_OPCODE_FUNCTION2 records: it gets
	// each library's code, as FUNCTION LOAD would. Nil: the records are
	// skipped and counted (LoadStats.Functions), so the caller can warn.
	Function func(code []byte) error
	// Databases is how many databases are stored (0: one, database 0);
	// the keys of the others are skipped and counted.
	Databases int
	// Sum, if not nil, is a CRCWriter that the file went through as it
	// was received: its crc is checked against the file's instead of
	// reading the file for it.
	Sum *CRCWriter
}

// LoadStats describe a loaded file.
type LoadStats struct {
	Version   int               // the file's RDB version
	Keys      int64             // keys stored
	Expired   int64             // keys not stored: their deadline had passed
	OtherDBs  map[uint64]int64  // keys of databases past LoadOptions.Databases, not stored, by database
	Functions int               // function libraries (skipped when there is no hook)
	Aux       map[string]string // the AUX fields (redis-ver, ctime, repl-id, ...)
}

// LoadFile loads the RDB file at path into st (Load).
func LoadFile(path string, st *store.Store, opt LoadOptions) (LoadStats, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return LoadStats{}, err
	}
	return LoadBytes(data, st, opt)
}

// Load reads an RDB file from r and stores its keys in st (Load reads
// it whole into memory first: see LoadBytes).
func Load(r io.Reader, st *store.Store, opt LoadOptions) (LoadStats, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return LoadStats{}, err
	}
	return LoadBytes(data, st, opt)
}

// LoadBytes stores the keys of the RDB file data in st: the files
// redis-server writes (versions 1 to 11: every encoding Redis 7.2 reads,
// old.go among them), with their deadlines; a key already
// in st is replaced, a key whose deadline has passed is not stored, as
// Redis skips them when it loads as a primary. LRU idle times and LFU
// counters set the keys' access state, as RESTORE's IDLETIME and FREQ.
//
// The keys of databases 0 to opt.Databases-1 are stored under their
// database's store key (store.DBKey), those of others skipped and counted
// in LoadStats.OtherDBs (for the caller to warn about). Module types are
// refused (ErrModule), naming the key.
//
// The checksum (from version 5 on, unless the writer had rdbchecksum off)
// is checked before st is touched, so a damaged file stores nothing. Each
// object is then checked whole before it is stored; a file that is
// malformed although its checksum is right (a writer's bug), or a store
// error (over the memory limit with -M), stops the load with the keys so
// far stored. Decoding works on the file held in memory: the reader's
// bounds checks rely on knowing what is left, so no count in a bad file
// makes a large allocation.
func LoadBytes(data []byte, st *store.Store, opt LoadOptions) (LoadStats, error) {
	if err := checkSum(data, opt.Sum); err != nil {
		return LoadStats{}, err
	}
	// Decoding and storing run on two goroutines, handing keys over in
	// batches: each took about half of a 1 M-key load's CPU, and a
	// replica's full resync waits for the load (docs/benchmarks.md). The
	// decoder shares nothing between keys (every key and value is new or
	// a slice of data), so a key may be stored while the next decodes.
	const batchKeys = 256
	batches := make(chan []*fileKey, 8)
	failed := make(chan error, 1)
	var n int64
	stored := make(chan struct{})
	go func() {
		defer close(stored)
		for b := range batches {
			for _, k := range b {
				if err := storeKey(st, k); err != nil {
					failed <- err
					for range batches { // let the decoder finish sending
					}
					return
				}
				n++
			}
		}
	}()
	var cur []*fileKey
	send := func() error {
		select {
		case batches <- cur:
		case err := <-failed:
			return err
		}
		cur = make([]*fileKey, 0, batchKeys)
		return nil
	}
	lim := st.Limits()
	opt.limits = &lim
	stats, err := parse(data, opt, func(k *fileKey) error {
		if cur = append(cur, k); len(cur) == batchKeys {
			return send()
		}
		return nil
	})
	if err == nil && len(cur) > 0 {
		err = send()
	}
	close(batches)
	<-stored
	if err == nil {
		select {
		case err = <-failed:
		default:
		}
	}
	stats.Keys = n
	return stats, err
}

// storeKey stores one key of a file.
func storeKey(st *store.Store, k *fileKey) error {
	if k.v.Kind == store.KindString && k.idle < 0 && k.freq < 0 {
		// One store call, as SET: most keys of most files.
		if _, err := st.Store(store.ModeSet, k.key, k.v.Str, k.flags, k.deadline, 0); err != nil {
			return fmt.Errorf("rdb: storing key %q: %w", k.key, err)
		}
		return nil
	}
	var berr error
	_ = st.Tx([][]byte{k.key}, func(tx *store.Tx) error {
		if _, ok := tx.Kind(k.key); ok {
			tx.Delete(k.key)
		}
		if berr = k.v.Build(tx, k.key); berr == nil {
			tx.SetRestored(k.key, k.deadline, k.idle, k.freq)
		}
		return nil
	})
	if berr != nil {
		return fmt.Errorf("rdb: storing key %q: %w", k.key, berr)
	}
	return nil
}

// Check decodes the RDB file data without storing anything, as
// redis-check-rdb does: nil when MiniKV can load it.
func Check(data []byte) (LoadStats, error) {
	if err := checkSum(data, nil); err != nil {
		return LoadStats{}, err
	}
	var n int64
	stats, err := parse(data, LoadOptions{}, func(*fileKey) error { n++; return nil })
	stats.Keys = n
	return stats, err
}

// CheckSum checks data's header and the crc64 that ends an RDB file of
// version 5 on, and reports whether the file carries one (0: written with
// rdbchecksum off, not checked). sum, if not nil, is a CRCWriter that
// data went through as it was received, whose sum is compared instead of
// reading data again.
func CheckSum(data []byte, sum *CRCWriter) (summed bool, err error) {
	if err := checkSum(data, sum); err != nil {
		return false, err
	}
	ver, _ := header(data)
	return ver >= 5 && binary.LittleEndian.Uint64(data[len(data)-8:]) != 0, nil
}

// checkSum checks the header and the crc64 that ends a file of version 5
// on (0: written with rdbchecksum off, not checked), with sum's crc when
// it is not nil.
func checkSum(data []byte, sum *CRCWriter) error {
	ver, err := header(data)
	if err != nil || ver < 5 {
		return err
	}
	if len(data) < 9+1+8 {
		return errShortFile
	}
	want := binary.LittleEndian.Uint64(data[len(data)-8:])
	if want == 0 {
		return nil
	}
	var got uint64
	if sum != nil && sum.n == int64(len(data)) {
		got = sum.crc
	} else {
		got = CRC64(0, data[:len(data)-8])
	}
	if got != want {
		return errors.New("rdb: wrong checksum: the file is damaged or cut short")
	}
	return nil
}

// CRCWriter computes, as an RDB file is written through it (a replica
// receiving its primary's), the crc64 that the file's last 8 bytes hold:
// that of every byte before them.
type CRCWriter struct {
	crc  uint64
	n    int64   // bytes written
	tail [8]byte // the last bytes written, not yet summed
	held int     // how many of tail
}

func (c *CRCWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	if len(p) >= 8 {
		c.crc = CRC64(c.crc, c.tail[:c.held])
		c.crc = CRC64(c.crc, p[:len(p)-8])
		c.held = copy(c.tail[:], p[len(p)-8:])
		return len(p), nil
	}
	var all [16]byte
	n := copy(all[:], c.tail[:c.held])
	n += copy(all[n:], p)
	k := max(n-8, 0)
	c.crc = CRC64(c.crc, all[:k])
	c.held = copy(c.tail[:], all[k:n])
	return len(p), nil
}

// header checks the signature and returns the version.
func header(data []byte) (int, error) {
	if len(data) < 9 || string(data[:5]) != magic {
		return 0, errors.New("rdb: not an RDB file (no REDIS signature)")
	}
	ver, err := strconv.Atoi(string(data[5:9]))
	if err != nil || ver < 1 || ver > MaxVersion {
		return 0, fmt.Errorf("rdb: can't handle RDB format version %q", data[5:9])
	}
	return ver, nil
}

// fileKey is one key of a file, decoded.
type fileKey struct {
	key      []byte
	v        *Value
	deadline int64  // Unix ms, 0: none
	flags    uint32 // memcached flags (a FlagsAux field before the key)
	idle     int64  // -1: none
	freq     int    // -1: none
}

// parse decodes data and calls fn with each key of database 0 that has
// not expired, in file order.
func parse(data []byte, opt LoadOptions, fn func(*fileKey) error) (LoadStats, error) {
	stats := LoadStats{Aux: map[string]string{}}
	ver, err := header(data)
	if err != nil {
		return stats, err
	}
	stats.Version = ver
	r := &reader{b: data[9:], limits: opt.limits}
	now := time.Now().UnixMilli()
	var db uint64
	deadline, idle, freq := int64(0), int64(-1), -1
	var flags uint32
	at := func() int { return len(data) - len(r.b) }
	for {
		start := at()
		op := r.byte()
		if r.err != nil {
			return stats, errShortFile
		}
		switch op {
		case opEOF:
			return stats, checkTail(data, at(), ver)
		case opAux:
			k, v := r.str(), r.str()
			if r.err == nil && string(k) == FlagsAux {
				// The next key's memcached flags (SaveOptions.Flags).
				if n, err := strconv.ParseUint(string(v), 10, 32); err == nil {
					flags = uint32(n)
				}
			} else if r.err == nil {
				stats.Aux[string(k)] = string(v)
			}
		case opResizeDB:
			r.plainLength()
			r.plainLength()
		case opSelectDB:
			db = r.plainLength()
		case opExpireTimeMS:
			if b := r.take(8); b != nil {
				deadline = int64(binary.LittleEndian.Uint64(b))
			}
		case opExpireTime:
			if b := r.take(4); b != nil {
				deadline = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
			}
		case opIdle:
			idle = int64(min(r.plainLength(), 1<<40))
		case opFreq:
			freq = int(r.byte())
		case opFunction2:
			code := r.str()
			if r.err != nil {
				break
			}
			stats.Functions++
			if opt.Function != nil {
				if err := opt.Function(code); err != nil {
					return stats, fmt.Errorf("rdb: loading a function library: %w", err)
				}
			}
		case opFunctionPreGA:
			return stats, errors.New("rdb: functions in the format of Redis 7.0's release candidates are not supported (as in Redis 7.0)")
		case opModuleAux:
			return stats, ErrModule
		default:
			key := r.str()
			if r.err != nil {
				break
			}
			v, err := r.value(op)
			if errors.Is(err, ErrModule) {
				return stats, fmt.Errorf("%w (key %q)", err, key)
			}
			if err != nil {
				return stats, fmt.Errorf("%w: the value of key %q (type %d) at byte %d", err, key, op, start)
			}
			switch {
			case db >= uint64(max(opt.Databases, 1)) || db >= store.MaxDBs-1:
				if stats.OtherDBs == nil {
					stats.OtherDBs = map[uint64]int64{}
				}
				stats.OtherDBs[db]++
			case deadline != 0 && deadline <= now:
				stats.Expired++
			default:
				if store.DBKeyNeeded(int(db), key) {
					key = store.DBKey(nil, int(db), key)
				}
				if err := fn(&fileKey{key: key, v: v, deadline: max(deadline, 0), flags: flags, idle: idle, freq: freq}); err != nil {
					return stats, err
				}
			}
			deadline, idle, freq, flags = 0, -1, -1, 0
		}
		if r.err != nil {
			if len(r.b) == 0 {
				return stats, errShortFile
			}
			return stats, fmt.Errorf("%w (record at byte %d)", r.err, start)
		}
	}
}

// checkTail checks what follows the EOF opcode at end: from version 5 on
// exactly the checksum (checkSum checked it), before that nothing.
func checkTail(data []byte, end, ver int) error {
	want := len(data)
	if ver >= 5 {
		want -= 8
	}
	if end != want {
		return fmt.Errorf("rdb: the file does not end at its EOF opcode (byte %d of %d)", end, len(data))
	}
	return nil
}
