package lsm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"
)

// numLevels is the depth of the tree: L0 (overlapping flushed tables) and
// L1..L6 (each a sorted run of non-overlapping tables, 10× the one above).
const numLevels = 7

// fileMeta describes one SSTable. Its fields are immutable once the table is
// in a version, except refs (atomic) and compacting (guarded by DB.mu).
type fileMeta struct {
	num      uint64
	size     uint64
	smallest []byte // internal keys
	largest  []byte
	entries  uint64
	deletes  uint64
	expiring uint64

	t          *table
	refs       atomic.Int32 // versions that contain the file
	compacting bool
	// obsolete is set once a version edit removes the file for good; the
	// file is deleted when its last reference goes.
	obsolete atomic.Bool
}

func (f *fileMeta) smallestUser() []byte { return userKey(f.smallest) }
func (f *fileMeta) largestUser() []byte  { return userKey(f.largest) }

// overlaps reports whether the file's user-key range meets [lo, hi].
func (f *fileMeta) overlaps(lo, hi []byte) bool {
	return bytes.Compare(f.largestUser(), lo) >= 0 && bytes.Compare(f.smallestUser(), hi) <= 0
}

// version is an immutable snapshot of the tables that make up the tree.
// L0 is ordered newest first; every other level by smallest key.
type version struct {
	levels [numLevels][]*fileMeta
	// l0Depth is the largest number of L0 tables that overlap at any key:
	// what a read may have to search, and what L0 compaction and write
	// stalls are measured by. Sequentially written tables do not overlap,
	// so many of them still count as depth 1 (Pebble's L0 sublevels make
	// the same distinction).
	l0Depth int
	refs    atomic.Int32
	// release is called with each file whose last reference goes away.
	release func(*fileMeta)
}

func (v *version) ref() { v.refs.Add(1) }

func (v *version) unref() {
	if v.refs.Add(-1) == 0 {
		for _, lvl := range v.levels {
			for _, f := range lvl {
				if f.refs.Add(-1) == 0 {
					v.release(f)
				}
			}
		}
	}
}

// overlapping returns the files of a level whose ranges meet [lo, hi].
func (v *version) overlapping(level int, lo, hi []byte) []*fileMeta {
	var out []*fileMeta
	for _, f := range v.levels[level] {
		if f.overlaps(lo, hi) {
			out = append(out, f)
		}
	}
	return out
}

// versionEdit is one atomic change to the tree, as logged in the manifest.
type versionEdit struct {
	logNum   uint64 // WALs numbered below this are no longer needed
	nextFile uint64
	lastSeq  uint64
	added    []newFile
	deleted  []deletedFile
	// recyclableLogs, in the first edit of a manifest, says the logs
	// written while this manifest is current (numbered at or above its
	// log number) hold recyclable records (record.go). Older engines do
	// not know the tag and refuse the manifest: the format changed.
	recyclableLogs bool
}

type newFile struct {
	level int
	meta  *fileMeta
}

type deletedFile struct {
	level int
	num   uint64
}

// Manifest edit encoding: a sequence of tagged fields.
const (
	tagLogNum   = 1
	tagNextFile = 2
	tagLastSeq  = 3
	tagAdd      = 4
	tagDelete   = 5
	// tagRecyclableLogs (value 1) marks the logs of this manifest as
	// written in the recyclable record format.
	tagRecyclableLogs = 6
)

func (e *versionEdit) encode() []byte {
	var b []byte
	b = binary.AppendUvarint(b, tagLogNum)
	b = binary.AppendUvarint(b, e.logNum)
	b = binary.AppendUvarint(b, tagNextFile)
	b = binary.AppendUvarint(b, e.nextFile)
	b = binary.AppendUvarint(b, tagLastSeq)
	b = binary.AppendUvarint(b, e.lastSeq)
	if e.recyclableLogs {
		b = binary.AppendUvarint(b, tagRecyclableLogs)
		b = binary.AppendUvarint(b, 1)
	}
	for _, d := range e.deleted {
		b = binary.AppendUvarint(b, tagDelete)
		b = binary.AppendUvarint(b, uint64(d.level))
		b = binary.AppendUvarint(b, d.num)
	}
	for _, a := range e.added {
		m := a.meta
		b = binary.AppendUvarint(b, tagAdd)
		b = binary.AppendUvarint(b, uint64(a.level))
		for _, x := range []uint64{m.num, m.size, m.entries, m.deletes, m.expiring} {
			b = binary.AppendUvarint(b, x)
		}
		b = binary.AppendUvarint(b, uint64(len(m.smallest)))
		b = append(b, m.smallest...)
		b = binary.AppendUvarint(b, uint64(len(m.largest)))
		b = append(b, m.largest...)
	}
	return b
}

func decodeEdit(b []byte) (*versionEdit, error) {
	e := &versionEdit{}
	bad := func() (*versionEdit, error) {
		return nil, fmt.Errorf("%w: malformed manifest edit", ErrCorrupt)
	}
	uv := func() (uint64, bool) {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return x, true
	}
	bytesField := func() ([]byte, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(b)) || n < trailerLen {
			return nil, false
		}
		out := append([]byte(nil), b[:n]...)
		b = b[n:]
		return out, true
	}
	for len(b) > 0 {
		tag, ok := uv()
		if !ok {
			return bad()
		}
		switch tag {
		case tagLogNum, tagNextFile, tagLastSeq:
			x, ok := uv()
			if !ok {
				return bad()
			}
			switch tag {
			case tagLogNum:
				e.logNum = x
			case tagNextFile:
				e.nextFile = x
			default:
				e.lastSeq = x
			}
		case tagRecyclableLogs:
			x, ok := uv()
			if !ok || x != 1 {
				return bad()
			}
			e.recyclableLogs = true
		case tagDelete:
			lvl, ok1 := uv()
			num, ok2 := uv()
			if !ok1 || !ok2 || lvl >= numLevels {
				return bad()
			}
			e.deleted = append(e.deleted, deletedFile{int(lvl), num})
		case tagAdd:
			var xs [6]uint64
			for i := range xs {
				if xs[i], ok = uv(); !ok {
					return bad()
				}
			}
			if xs[0] >= numLevels {
				return bad()
			}
			m := &fileMeta{num: xs[1], size: xs[2], entries: xs[3], deletes: xs[4], expiring: xs[5]}
			if m.smallest, ok = bytesField(); !ok {
				return bad()
			}
			if m.largest, ok = bytesField(); !ok {
				return bad()
			}
			e.added = append(e.added, newFile{int(xs[0]), m})
		default:
			return bad()
		}
	}
	return e, nil
}

// apply returns a new version: v with the edit's deletions and additions.
// Files keep their order invariants; the new version references its files.
func (v *version) apply(e *versionEdit) (*version, error) {
	nv := &version{release: v.release}
	for level := range v.levels {
		var del map[uint64]bool
		for _, d := range e.deleted {
			if d.level == level {
				if del == nil {
					del = make(map[uint64]bool)
				}
				del[d.num] = true
			}
		}
		for _, f := range v.levels[level] {
			if !del[f.num] {
				nv.levels[level] = append(nv.levels[level], f)
			}
		}
		for _, a := range e.added {
			if a.level == level {
				nv.levels[level] = append(nv.levels[level], a.meta)
			}
		}
		if level == 0 {
			slices.SortFunc(nv.levels[0], func(a, b *fileMeta) int {
				return -cmpUint(a.num, b.num)
			})
		} else {
			files := nv.levels[level]
			slices.SortFunc(files, func(a, b *fileMeta) int {
				return compareInternal(a.smallest, b.smallest)
			})
			for i := 1; i < len(files); i++ {
				if bytes.Compare(files[i-1].largestUser(), files[i].smallestUser()) >= 0 {
					return nil, fmt.Errorf("lsm: internal error: overlapping tables %06d and %06d in L%d",
						files[i-1].num, files[i].num, level)
				}
			}
		}
	}
	for _, lvl := range nv.levels {
		for _, f := range lvl {
			f.refs.Add(1)
		}
	}
	nv.l0Depth = overlapDepth(nv.levels[0])
	nv.refs.Store(1)
	return nv, nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// snapshotEdit describes the whole version as one edit, for a new manifest.
func (v *version) snapshotEdit() *versionEdit {
	e := &versionEdit{}
	for level, lvl := range v.levels {
		for _, f := range lvl {
			e.added = append(e.added, newFile{level, f})
		}
	}
	return e
}

// overlapDepth returns the largest number of files whose user-key ranges
// contain one key, by sweeping the sorted range boundaries.
func overlapDepth(files []*fileMeta) int {
	type edge struct {
		key   []byte
		start bool
	}
	edges := make([]edge, 0, 2*len(files))
	for _, f := range files {
		edges = append(edges, edge{f.smallestUser(), true}, edge{f.largestUser(), false})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		// Ranges are closed: at equal keys, open before closing.
		switch {
		case a.start && !b.start:
			return -1
		case !a.start && b.start:
			return 1
		}
		return 0
	})
	depth, best := 0, 0
	for _, e := range edges {
		if e.start {
			depth++
			best = max(best, depth)
		} else {
			depth--
		}
	}
	return best
}
