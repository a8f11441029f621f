package lsm

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/minikv/minikv/lsm/vfs"
)

// EntryKind is the kind of one entry of a table or log.
type EntryKind uint8

// The kinds of entries (the low byte of an internal key's trailer).
const (
	KindDelete      = EntryKind(kindDelete)      // a tombstone
	KindSet         = EntryKind(kindSet)         // a value
	KindSetExpiring = EntryKind(kindSetExpiring) // a value with an expiry
)

// String returns DEL, SET or SETX.
func (k EntryKind) String() string {
	switch k {
	case KindDelete:
		return "DEL"
	case KindSet:
		return "SET"
	case KindSetExpiring:
		return "SETX"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// EntryKey is an internal key: a user key with the sequence number and kind
// of one write of it.
type EntryKey struct {
	Key  []byte
	Seq  uint64
	Kind EntryKind
}

func entryKey(ikey []byte) EntryKey {
	t := trailer(ikey)
	return EntryKey{Key: userKey(ikey), Seq: seqOf(t), Kind: EntryKind(kindOf(t))}
}

// String formats the key as "user key"#seq,KIND, the user key quoted as a
// Go string.
func (k EntryKey) String() string { return fmt.Sprintf("%q#%d,%s", k.Key, k.Seq, k.Kind) }

// TableInfo describes one table as the manifest records it.
type TableInfo struct {
	Level int
	Num   uint64
	// Size is the file's length in bytes.
	Size uint64
	// Entries counts every entry, Tombstones the deletions among them and
	// Expiring the values with an expiry.
	Entries    uint64
	Tombstones uint64
	Expiring   uint64
	// Smallest and Largest are the table's first and last entries.
	Smallest EntryKey
	Largest  EntryKey
}

func tableInfo(level int, f *fileMeta) TableInfo {
	return TableInfo{
		Level: level, Num: f.num, Size: f.size,
		Entries: f.entries, Tombstones: f.deletes, Expiring: f.expiring,
		Smallest: entryKey(f.smallest), Largest: entryKey(f.largest),
	}
}

// File is the table's file name in the data directory ("000012.sst").
func (t TableInfo) File() string { return tableName(t.Num) }

// String formats the table on one line.
func (t TableInfo) String() string {
	return fmt.Sprintf("L%d %s size=%d entries=%d tombstones=%d expiring=%d %v..%v",
		t.Level, t.File(), t.Size, t.Entries, t.Tombstones, t.Expiring, t.Smallest, t.Largest)
}

// TableRef names a table in a level.
type TableRef struct {
	Level int
	Num   uint64
}

// ManifestEdit is one record of a manifest: an atomic change to the tree.
// The first record of a manifest adds every table of the tree.
type ManifestEdit struct {
	// Offset is the record's offset in the manifest file.
	Offset int64
	// LogNum is the oldest log still needed (older ones are obsolete),
	// NextFile the next file number, LastSeq the newest sequence number.
	LogNum   uint64
	NextFile uint64
	LastSeq  uint64
	Deleted  []TableRef
	Added    []TableInfo
	// RecyclableLogs, in a manifest's first edit, says its logs are in
	// the recyclable record format (Options.RecycleWAL, MappedWAL).
	RecyclableLogs bool
}

// String formats the edit on one line: offset, counters, then each
// deleted and added table.
func (e ManifestEdit) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "@%d log=%s next-file=%d last-seq=%d", e.Offset, walName(e.LogNum), e.NextFile, e.LastSeq)
	if e.RecyclableLogs {
		b.WriteString(" logs=recyclable")
	}
	for _, d := range e.Deleted {
		fmt.Fprintf(&b, " del L%d %s", d.Level, tableName(d.Num))
	}
	for _, a := range e.Added {
		fmt.Fprintf(&b, " add %v", a)
	}
	return b.String()
}

// ManifestDump is the content of one manifest.
type ManifestDump struct {
	Name  string
	Edits []ManifestEdit
	// TornAt is the offset of a last record cut short, which recovery
	// drops as what a crash in the middle of an append leaves; -1 if none.
	TornAt int64
}

// ReadManifest decodes the manifest named name in dir, or the one CURRENT
// names if name is "". It reads the records with recovery's rules and, on
// damage, returns the edits before it along with an error that wraps
// ErrCorrupt and names the file and offset. Like Check it fails with
// ErrInUse while a process has the directory open.
func ReadManifest(dir, name string, o InspectOptions) (*ManifestDump, error) {
	fsys := o.fs()
	lock, err := lockShared(fsys, dir)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	return readManifest(fsys, dir, name)
}

// readManifest is ReadManifest without the lock.
func readManifest(fsys vfs.FS, dir, name string) (*ManifestDump, error) {
	if name == "" {
		names, err := fsys.List(dir)
		if err != nil {
			return nil, fmt.Errorf("lsm: %w", err)
		}
		if name, err = readCurrent(fsys, dir, names); err != nil {
			return nil, err
		}
		if name == "" {
			return nil, fmt.Errorf("lsm: %s has no manifest yet (no CURRENT)", dir)
		}
	}
	buf, err := readAll(fsys, dirPath(dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s is missing: %w", ErrCorrupt, name, err)
	case err != nil:
		return nil, fmt.Errorf("lsm: read %s: %w", name, err)
	}
	dump := &ManifestDump{Name: name, TornAt: -1}
	r := recordReader{buf: buf, name: name}
	for {
		off := r.off
		rec, err := r.next()
		if err != nil {
			return dump, err
		}
		if rec == nil {
			// The same judgements as DB.replayManifest.
			if len(dump.Edits) == 0 {
				return dump, fmt.Errorf("%w: %s offset 0: no complete record (empty, zeroed or cut short)", ErrCorrupt, name)
			}
			if r.torn && rottedRecord(buf, r.validEnd) {
				return dump, fmt.Errorf("%w: %s offset %d: checksum mismatch in the last record", ErrCorrupt, name, r.validEnd)
			}
			if r.torn {
				dump.TornAt = int64(r.validEnd)
			}
			return dump, nil
		}
		e, err := decodeEdit(rec)
		if err != nil {
			return dump, fmt.Errorf("%w: %s offset %d: malformed version edit", ErrCorrupt, name, off)
		}
		me := ManifestEdit{Offset: int64(off), LogNum: e.logNum, NextFile: e.nextFile, LastSeq: e.lastSeq, RecyclableLogs: e.recyclableLogs}
		for _, d := range e.deleted {
			me.Deleted = append(me.Deleted, TableRef{d.level, d.num})
		}
		for _, a := range e.added {
			me.Added = append(me.Added, tableInfo(a.level, a.meta))
		}
		dump.Edits = append(dump.Edits, me)
	}
}
