package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// ErrInUse is returned by Check, Inspect and ReadManifest for a data
// directory that a running process has open: reading files the engine is
// rewriting would report damage that is not there (and Open in another
// process would fail the same way, with vfs.ErrLocked).
var ErrInUse = errors.New("lsm: data directory is in use by another process (LOCK held)")

// InspectOptions configures the offline readers: Check, Inspect and
// ReadManifest.
type InspectOptions struct {
	// FS is the filesystem; vfs.Default (the OS) if nil.
	FS vfs.FS
}

func (o InspectOptions) fs() vfs.FS {
	if o.FS == nil {
		return vfs.Default
	}
	return o.FS
}

// lockShared takes the directory's LOCK for a reader that writes nothing
// (see vfs.SharedLocker). A filesystem without locks is not locked.
func lockShared(fsys vfs.FS, dir string) (io.Closer, error) {
	l, ok := fsys.(vfs.SharedLocker)
	if !ok {
		return io.NopCloser(nil), nil
	}
	c, err := l.LockShared(dirPath(dir, "LOCK"))
	if errors.Is(err, vfs.ErrLocked) {
		return nil, fmt.Errorf("%w: %s", ErrInUse, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("lsm: lock %s: %w", dir, err)
	}
	return c, nil
}

func dirPath(dir, name string) string { return filepath.Join(dir, name) }

// offline is a data directory's tree as the manifest describes it, rebuilt
// by the engine's own recovery code (DB.replayManifest) on a DB value that
// never runs: nothing is written, no goroutine starts.
type offline struct {
	d        *DB
	names    []string // the directory's entries
	manifest string   // the manifest CURRENT names, "" for a new directory
}

// readCurrent applies Open's rules to CURRENT and returns the manifest it
// names ("" when the directory has none yet).
func readCurrent(fsys vfs.FS, dir string, names []string) (string, error) {
	var someTable, someLog string
	for _, n := range names {
		if _, ok := parseNum(n, ".sst"); ok {
			someTable = n
		} else if _, ok := parseNum(n, ".log"); ok {
			someLog = n
		}
	}
	cur, err := readAll(fsys, dirPath(dir, "CURRENT"))
	switch {
	case errors.Is(err, fs.ErrNotExist) && someTable != "":
		return "", fmt.Errorf("%w: CURRENT is missing but the directory holds tables (%s)", ErrCorrupt, someTable)
	case errors.Is(err, fs.ErrNotExist) && someLog == "":
		return "", fmt.Errorf("lsm: %s is not a data directory (no CURRENT, no tables, no logs)", dir)
	case errors.Is(err, fs.ErrNotExist):
		return "", nil // a first Open that crashed before writing CURRENT
	case err != nil:
		return "", fmt.Errorf("lsm: read CURRENT: %w", err)
	}
	name := strings.TrimSpace(string(cur))
	if _, err := strconv.ParseUint(strings.TrimPrefix(name, "MANIFEST-"), 10, 64); err != nil || !strings.HasPrefix(name, "MANIFEST-") {
		return "", fmt.Errorf("%w: CURRENT names %q, not a manifest", ErrCorrupt, name)
	}
	return name, nil
}

// newOffline lists dir and starts an empty tree on a DB that is never
// opened; replay fills it from the manifest.
func newOffline(fsys vfs.FS, dir string) (*offline, error) {
	names, err := fsys.List(dir)
	if err != nil {
		return nil, fmt.Errorf("lsm: %w", err)
	}
	d := &DB{dir: dir, fs: fsys}
	base := &version{release: d.releaseFile}
	base.refs.Store(1)
	d.current = base
	return &offline{d: d, names: names}, nil
}

// replay reads CURRENT and replays the manifest it names. The error names
// the file at fault.
func (o *offline) replay() (file string, err error) {
	o.manifest, err = readCurrent(o.d.fs, o.d.dir, o.names)
	if err != nil {
		return "CURRENT", err
	}
	if o.manifest == "" {
		return "", nil
	}
	return o.manifest, o.d.replayManifest(o.manifest)
}

func (o *offline) release() { o.d.current.unref() }

// liveLogs returns the numbers of the logs recovery would replay, in order.
func (o *offline) liveLogs() []uint64 {
	var out []uint64
	for _, n := range o.names {
		if num, ok := parseNum(n, ".log"); ok && num >= o.d.logNum {
			out = append(out, num)
		}
	}
	return out
}

// logFormat is the record format of a log, for readLog.
type logFormat int

const (
	formatLegacy     logFormat = iota
	formatRecyclable           // the manifest's recyclableLogs
	formatGuess                // no manifest to say: recyclable if it holds a recyclable record
)

// logFormat is the format of the logs the replayed manifest covers.
func (d *DB) logFormat() logFormat {
	if d.walRecyclable {
		return formatRecyclable
	}
	return formatLegacy
}

// logInfo describes one write-ahead log read by readLog.
type logInfo struct {
	records, entries int
	maxSeq           uint64
	size             int
	tornAt           int // offset of a torn tail recovery drops, -1 if none
}

// readLog reads log num with recovery's rules (a torn tail is dropped,
// other damage is ErrCorrupt naming the log and the offset of the record at
// fault) and calls fn with each entry, reading the log in format f.
func readLog(fsys vfs.FS, dir string, num uint64, f logFormat, fn func(k kind, key, value []byte, seq uint64) error) (logInfo, error) {
	info := logInfo{tornAt: -1}
	buf, err := readAll(fsys, dirPath(dir, walName(num)))
	if err != nil {
		return info, fmt.Errorf("lsm: read WAL %06d: %w", num, err)
	}
	info.size = len(buf)
	r := recordReader{buf: buf, name: walName(num), recyclable: f == formatRecyclable || f == formatGuess && holdsRecyclable(buf), logNum: num}
	for {
		off := r.off // the record's start: where an operator may cut the log
		rec, err := r.next()
		if err != nil {
			return info, err
		}
		if rec == nil {
			break
		}
		info.records++
		it, err := newBatchIter(rec)
		if err != nil {
			return info, fmt.Errorf("%w: %s offset %d: %v", ErrCorrupt, walName(num), off, err)
		}
		for {
			k, key, value, seq, ok, err := it.next()
			if err != nil {
				return info, fmt.Errorf("%w: %s offset %d: %v", ErrCorrupt, walName(num), off, err)
			}
			if !ok {
				break
			}
			info.entries++
			info.maxSeq = max(info.maxSeq, seq)
			if err := fn(k, key, value, seq); err != nil {
				return info, err
			}
		}
	}
	// A mapped or preallocated log holds zeros past its records, a
	// recycled one its previous use's records: neither is a torn record.
	if r.torn && !r.clean {
		info.tornAt = r.validEnd
	}
	return info, nil
}

// Inspector reads a data directory that no process has open, without
// writing to it: the tables the manifest lists and the writes its logs hold
// (replayed into memory, where Open would flush them to new tables). It is
// what the minikv-lsm tool's scan, get and stats use.
//
// Inspect holds a shared lock on the directory until Close, so the engine
// cannot open it meanwhile. Its methods may be called concurrently, except
// Close; its Iterators are not safe for concurrent use.
type Inspector struct {
	dir      string
	manifest string
	rs       *readState
	seq      uint64
	logs     []LogStats
	lock     io.Closer
}

// Inspect opens dir for reading. It fails with ErrInUse when a process has
// the directory open, and, wrapping ErrCorrupt and naming the file, on the
// damage Open would refuse; damage inside a data block surfaces later, from
// the read that reaches it. Check reports every damaged file at once.
func Inspect(dir string, o InspectOptions) (in *Inspector, err error) {
	fsys := o.fs()
	lock, err := lockShared(fsys, dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = lock.Close()
		}
	}()
	off, err := newOffline(fsys, dir)
	if err != nil {
		return nil, err
	}
	if _, err := off.replay(); err != nil {
		off.release()
		return nil, err
	}
	d := off.d
	in = &Inspector{dir: dir, manifest: off.manifest, lock: lock, seq: d.lastSeq}
	mems, err := in.load(off)
	if err != nil {
		off.release()
		return nil, err
	}
	in.rs = &readState{mems: mems, v: d.current}
	in.rs.refs.Store(1)
	return in, nil
}

// load opens the tables of the replayed version and replays the live logs
// into memtables, newest first.
func (in *Inspector) load(off *offline) ([]*memTable, error) {
	d := off.d
	for level, files := range d.current.levels {
		for _, f := range files {
			t, err := openTableSized(d.fs, d.path(tableName(f.num)), f.num, f.size, nil)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return nil, fmt.Errorf("%w: %s is missing (%s lists it in L%d)", ErrCorrupt, tableName(f.num), off.manifest, level)
			case err != nil:
				return nil, err
			}
			f.t = t
		}
	}
	var mems []*memTable
	for _, num := range off.liveLogs() {
		var mem *memTable
		info, err := readLog(d.fs, d.dir, num, d.logFormat(), func(k kind, key, value []byte, seq uint64) error {
			if mem != nil {
				if err := mem.add(key, seq, k, value); err != errMemFull {
					return err
				}
			}
			mem = newMemTable(max(4<<20, len(key)+len(value)+4096), num)
			mems = append([]*memTable{mem}, mems...) // newest first
			return mem.add(key, seq, k, value)
		})
		if err != nil {
			return nil, err
		}
		in.seq = max(in.seq, info.maxSeq)
		in.logs = append(in.logs, LogStats{File: walName(num), Bytes: int64(info.size), Entries: uint64(info.entries)})
	}
	return mems, nil
}

// Close releases the directory's lock and the files of the Inspector (an
// Iterator still open keeps its tables open until it is closed).
func (in *Inspector) Close() error {
	if in.rs == nil {
		return ErrClosed
	}
	in.rs.release()
	in.rs = nil
	return in.lock.Close()
}

// Manifest returns the name of the manifest CURRENT names ("" for a
// directory whose first Open never finished).
func (in *Inspector) Manifest() string { return in.manifest }

// NewIter returns an iterator over the live keys, as the engine would show
// them after Open.
func (in *Inspector) NewIter(o *IterOptions) (*Iterator, error) {
	if in.rs == nil {
		return nil, ErrClosed
	}
	in.rs.refs.Add(1)
	return newIterator(in.rs, in.seq, o), nil
}

// Get returns the value of key and its expiry (zero if none), or
// ErrNotFound for a key that is absent, deleted or expired.
func (in *Inspector) Get(key []byte) ([]byte, time.Time, error) {
	it, err := in.NewIter(&IterOptions{LowerBound: key, UpperBound: append(key[:len(key):len(key)], 0)})
	if err != nil {
		return nil, time.Time{}, err
	}
	defer it.Close()
	if !it.First() {
		if err := it.Error(); err != nil {
			return nil, time.Time{}, err
		}
		return nil, time.Time{}, ErrNotFound
	}
	return bytes.Clone(it.Value()), it.Expiry(), nil
}

// Tables describes every table of the tree, level by level (L0 newest
// first, deeper levels in key order), from the manifest alone.
func (in *Inspector) Tables() []TableInfo {
	var out []TableInfo
	for level, files := range in.rs.v.levels {
		for _, f := range files {
			out = append(out, tableInfo(level, f))
		}
	}
	return out
}

// LevelStats counts the tables of one level and the entries in them.
type LevelStats struct {
	Files int
	Bytes int64
	// Entries counts every entry: values, tombstones and older versions.
	Entries uint64
	// Tombstones counts deletions, Expiring values with an expiry, and
	// Expired those whose expiry has passed (compactions drop them).
	Tombstones uint64
	Expiring   uint64
	Expired    uint64
}

func (s *LevelStats) add(k kind, v []byte, now int64) {
	s.Entries++
	switch {
	case k == kindDelete:
		s.Tombstones++
	case k == kindSetExpiring:
		s.Expiring++
		if expired(k, v, now) {
			s.Expired++
		}
	}
}

// LogStats describes one write-ahead log that holds writes not yet in a
// table.
type LogStats struct {
	File    string
	Bytes   int64
	Entries uint64
}

// Stats describes the whole tree.
type Stats struct {
	Levels [numLevels]LevelStats
	// Logs counts the writes of the live logs, which Open would replay.
	Logs     LevelStats
	LogFiles []LogStats
	// LiveKeys counts the keys a scan returns: neither deleted nor
	// expired, each counted once.
	LiveKeys uint64
	// LastSeq is the newest sequence number in the directory.
	LastSeq uint64
}

// Stats reads every entry of every table and log: it costs a full read of
// the directory (Tables answers from the manifest alone).
func (in *Inspector) Stats() (*Stats, error) {
	if in.rs == nil {
		return nil, ErrClosed
	}
	now := time.Now().UnixNano()
	s := &Stats{LastSeq: in.seq, LogFiles: in.logs}
	for level, files := range in.rs.v.levels {
		ls := &s.Levels[level]
		for _, f := range files {
			ls.Files++
			ls.Bytes += int64(f.size)
			it := newTableIter(f.t, false)
			for ok := it.first(); ok; ok = it.next() {
				ls.add(kindOf(trailer(it.key())), it.value(), now)
			}
			if err := it.error(); err != nil {
				return nil, err
			}
		}
	}
	for _, m := range in.rs.mems {
		it := memIter{m: m}
		for ok := it.first(); ok; ok = it.next() {
			s.Logs.add(kindOf(trailer(it.key())), it.value(), now)
		}
	}
	s.Logs.Files = len(in.logs)
	for _, l := range in.logs {
		s.Logs.Bytes += l.Bytes
	}
	it, err := in.NewIter(nil)
	if err != nil {
		return nil, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		s.LiveKeys++
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	return s, nil
}
