package lsm

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/minikv/minikv/lsm/vfs"
)

// Damage is one damaged file found by Check.
type Damage struct {
	// File is the file's name in the data directory ("000012.sst",
	// "MANIFEST-000007", "000009.log", "CURRENT").
	File string
	// Err wraps ErrCorrupt; its message gives the offset and the reason.
	Err error
}

func (d Damage) String() string { return d.File + ": " + d.Err.Error() }

// CheckReport is what Check found in a data directory.
type CheckReport struct {
	Dir string
	// Manifest is the manifest CURRENT names ("" if none).
	Manifest string
	// What was read and verified.
	Tables  int   // tables opened (footer, index and filter verified)
	Blocks  int   // data blocks read and verified
	Entries int64 // table entries decoded
	Logs    int   // live write-ahead logs read
	Records int   // log records verified
	// Damage lists every damaged file; empty when the directory is healthy.
	Damage []Damage
	// Notes are findings that are not damage: files a crash left behind
	// that Open removes, torn log tails that recovery drops.
	Notes []string
}

// OK reports whether Check found no damage.
func (r *CheckReport) OK() bool { return len(r.Damage) == 0 }

// Err returns nil for a healthy directory, or an error wrapping ErrCorrupt
// that names every damaged file (Damage has the reasons).
func (r *CheckReport) Err() error {
	if r.OK() {
		return nil
	}
	files := make([]string, len(r.Damage))
	for i, d := range r.Damage {
		files[i] = d.File
	}
	return fmt.Errorf("%w: %s: damaged: %s", ErrCorrupt, r.Dir, strings.Join(files, ", "))
}

// Check verifies a data directory that no process has open, writing
// nothing, and reports every damaged file with the reason:
//
//   - CURRENT names a manifest, and the manifest's every record passes its
//     checksum and decodes, and replays into a tree (Open's rules: a torn
//     last record is dropped, a whole one with wrong bytes is damage);
//   - every table the manifest lists exists with the recorded size; its
//     footer, index, filter and every data block pass their checksums and
//     decode; its keys ascend, each index entry is its block's last key,
//     the filter holds every key, and its first and last keys, entry
//     counts and sequence numbers (none above the manifest's last one)
//     agree with the manifest;
//   - levels L1 and deeper are sorted and do not overlap, and across the
//     tree no older version of a key sits above a newer one (reads would
//     return it);
//   - every live write-ahead log reads to its end under recovery's rules
//     (a torn tail is a note, not damage), with sequence numbers that
//     ascend;
//   - the manifest is not behind the directory: a manifest that lost its
//     last edits (truncated at a record boundary, or cut inside one) looks
//     valid on its own, but the log it still needs is gone and tables
//     newer than that log are not listed — Open would start without them.
//
// The error is nil when the directory is healthy; it wraps ErrCorrupt when
// Check found damage (the report lists it); any other error (ErrInUse while
// a process has the directory open, a directory that holds no database)
// means the check did not run, and the report is nil.
func Check(dir string, o InspectOptions) (*CheckReport, error) {
	fsys := o.fs()
	lock, err := lockShared(fsys, dir)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	off, err := newOffline(fsys, dir)
	if err != nil {
		return nil, err
	}
	defer off.release()
	c := &checker{fs: fsys, dir: dir, off: off, r: &CheckReport{Dir: dir}}
	file, err := off.replay()
	c.r.Manifest = off.manifest
	switch {
	case err != nil && !errors.Is(err, ErrCorrupt):
		return nil, err
	case err != nil:
		c.damage(file, err)
		c.checkWithoutManifest()
	default:
		c.checkTree()
	}
	return c.r, c.r.Err()
}

type checker struct {
	fs  vfs.FS
	dir string
	off *offline
	r   *CheckReport
}

func (c *checker) damage(file string, err error) {
	if !errors.Is(err, ErrCorrupt) {
		err = fmt.Errorf("%w: %s: %w", ErrCorrupt, file, err)
	}
	c.r.Damage = append(c.r.Damage, Damage{File: file, Err: err})
}

func (c *checker) notef(format string, args ...any) {
	c.r.Notes = append(c.r.Notes, fmt.Sprintf(format, args...))
}

// checkWithoutManifest checks every table and log of the directory on its
// own when the manifest cannot say which are live: it tells the operator
// which files are intact.
func (c *checker) checkWithoutManifest() {
	c.notef("the manifest could not be replayed: every table and log in the directory was checked on its own")
	var seq uint64
	for _, n := range c.off.names {
		if num, ok := parseNum(n, ".sst"); ok {
			if t := c.checkTable(num, nil, -1, maxSeq); t != nil {
				_ = t.close()
			}
		} else if num, ok := parseNum(n, ".log"); ok {
			c.checkLog(num, formatGuess, &seq)
		}
	}
}

// checkTree checks the replayed tree and the files around it.
func (c *checker) checkTree() {
	d := c.off.d
	live := make(map[uint64]bool)
	healthy := true
	for level, files := range d.current.levels {
		for _, f := range files {
			live[f.num] = true
			t := c.checkTable(f.num, f, level, d.lastSeq)
			f.t = t // closed with the version
			healthy = healthy && t != nil
		}
	}
	c.checkLevels(d.current)
	c.checkBehind(live)
	var seq uint64
	for _, num := range c.off.liveLogs() {
		c.checkLog(num, d.logFormat(), &seq)
	}
	for _, n := range c.off.names {
		if num, ok := parseNum(n, ".log"); ok && num < d.logNum {
			c.notef("%s: obsolete log (the manifest's log number is %d); Open deletes it", n, d.logNum)
		} else if strings.HasPrefix(n, "MANIFEST-") && n != c.off.manifest {
			c.notef("%s: obsolete manifest (CURRENT names %s); Open deletes it", n, c.off.manifest)
		} else if n == "CURRENT.tmp" {
			c.notef("%s: left by a crash while CURRENT was replaced; Open deletes it", n)
		}
	}
	if healthy {
		c.checkVersionOrder(d.current)
	} else {
		c.notef("the order of versions across tables was not checked: some tables are damaged")
	}
}

// checkBehind notes tables the manifest does not list (a crash leaves
// them; Open deletes them) and a torn last record of the manifest, and
// reports the manifest as damaged when the
// directory shows it lost edits: the log the manifest still needs is gone
// (deleted after a later edit made it obsolete) while a table newer than
// that log is unlisted (added by such an edit). A crash in the middle of an
// append leaves the log in place, since a log is deleted only after the
// edit that retires it is durable.
func (c *checker) checkBehind(live map[uint64]bool) {
	d := c.off.d
	var orphans []string
	var newer []string
	for _, n := range c.off.names {
		num, ok := parseNum(n, ".sst")
		if !ok || live[num] {
			continue
		}
		orphans = append(orphans, n)
		if num > d.logNum {
			newer = append(newer, n)
		}
	}
	if c.off.manifest == "" {
		return
	}
	torn := ""
	if dump, err := readManifest(c.fs, c.dir, c.off.manifest); err == nil && dump.TornAt >= 0 {
		torn = fmt.Sprintf("last record cut short at offset %d", dump.TornAt)
	}
	behind := false
	if len(newer) > 0 {
		f, err := c.fs.Open(dirPath(c.dir, walName(d.logNum)))
		if err == nil {
			_ = f.Close()
		}
		behind = errors.Is(err, fs.ErrNotExist)
	}
	switch {
	case behind:
		if torn != "" {
			torn = " (" + torn + ")"
		}
		c.damage(c.off.manifest, fmt.Errorf("%w: %s is behind the directory, truncated%s: it still needs log %s, which is gone, "+
			"and does not list %s, written after that log; Open would delete them and lose their writes",
			ErrCorrupt, c.off.manifest, torn, walName(d.logNum), strings.Join(newer, ", ")))
		return
	case torn != "":
		c.notef("%s: %s; recovery drops it (what a crash in the middle of an append leaves)", c.off.manifest, torn)
	}
	if len(orphans) > 0 {
		c.notef("%s: not in the manifest (left by a crash); Open deletes them", strings.Join(orphans, ", "))
	}
}

// checkTable opens and verifies table num, which the manifest lists in
// level with meta (nil, level -1: checked on its own). It returns the open
// table, or nil after reporting damage.
func (c *checker) checkTable(num uint64, meta *fileMeta, level int, lastSeq uint64) *table {
	name := tableName(num)
	var size uint64
	if meta != nil {
		size = meta.size
	}
	t, err := openTableSized(c.fs, dirPath(c.dir, name), num, size, nil)
	if errors.Is(err, fs.ErrNotExist) {
		c.damage(name, fmt.Errorf("%w: %s is missing (%s lists it in L%d)", ErrCorrupt, name, c.off.manifest, level))
		return nil
	}
	if err != nil {
		c.damage(name, err)
		return nil
	}
	c.r.Tables++
	if err := c.walkTable(t, meta, lastSeq); err != nil {
		_ = t.close()
		c.damage(name, err)
		return nil
	}
	return t
}

// walkTable reads every data block of t through its index and checks each
// entry, then compares what it read with the manifest's record of the
// table (meta, if not nil).
func (c *checker) walkTable(t *table, meta *fileMeta, lastSeq uint64) error {
	num := t.num
	var ii blockIter
	if ii.init(t.index) != nil {
		return corruptf(num, t.indexOff, "bad index block")
	}
	var first, prev []byte
	var entries, deletes, expiring uint64
	for ok := ii.first(); ok; ok = ii.nextEntry() {
		h, ok := decodeHandle(ii.val)
		if !ok {
			return corruptf(num, t.indexOff, "bad block handle in index block")
		}
		b, err := t.readRaw(h, "data")
		if err != nil {
			return err
		}
		c.r.Blocks++
		var bi blockIter
		if bi.init(b) != nil {
			return corruptf(num, h.off, "bad data block")
		}
		n := 0
		for ok := bi.first(); ok; ok = bi.nextEntry() {
			k := bi.key
			switch {
			case !entryOK(k, bi.val):
				return corruptf(num, h.off, "bad entry kind or expiry at %v", entryKey(k))
			case prev != nil && compareInternal(prev, k) >= 0:
				return corruptf(num, h.off, "keys out of order: %v after %v", entryKey(k), entryKey(prev))
			case t.hasFilter && !t.filter.mayContain(hash64(userKey(k))):
				return corruptf(num, h.off, "the filter block does not hold key %q (reads would miss it)", userKey(k))
			case seqOf(trailer(k)) > lastSeq:
				return corruptf(num, h.off, "entry %v is newer than the manifest's last sequence number %d", entryKey(k), lastSeq)
			}
			if first == nil {
				first = append([]byte(nil), k...)
			}
			prev = append(prev[:0], k...)
			switch kindOf(trailer(k)) {
			case kindDelete:
				deletes++
			case kindSetExpiring:
				expiring++
			}
			entries++
			n++
		}
		if bi.err != nil {
			return corruptf(num, h.off, "bad data block entry")
		}
		if n == 0 {
			return corruptf(num, h.off, "empty data block")
		}
		if !bytes.Equal(prev, ii.key) {
			return corruptf(num, t.indexOff, "index entry %v does not match the last key %v of its block at offset %d",
				entryKey(ii.key), entryKey(prev), h.off)
		}
	}
	if ii.err != nil {
		return corruptf(num, t.indexOff, "bad index block entry")
	}
	c.r.Entries += int64(entries)
	if meta == nil {
		return nil
	}
	switch {
	case !bytes.Equal(first, meta.smallest):
		return corruptf(num, 0, "first key %v, but the manifest says %v", entryKey(first), entryKey(meta.smallest))
	case !bytes.Equal(prev, meta.largest):
		return corruptf(num, 0, "last key %v, but the manifest says %v", entryKey(prev), entryKey(meta.largest))
	case entries != meta.entries || deletes != meta.deletes || expiring != meta.expiring:
		return corruptf(num, 0, "holds %d entries (%d tombstones, %d expiring), but the manifest says %d (%d, %d)",
			entries, deletes, expiring, meta.entries, meta.deletes, meta.expiring)
	}
	return nil
}

// checkLevels checks the shape of the tree the manifest describes: every
// table's key range is ordered, and levels below L0 are sorted runs.
func (c *checker) checkLevels(v *version) {
	for level, files := range v.levels {
		for i, f := range files {
			if compareInternal(f.smallest, f.largest) > 0 {
				c.damage(c.off.manifest, fmt.Errorf("%w: %s: L%d %s: smallest key %v sorts after largest %v",
					ErrCorrupt, c.off.manifest, level, tableName(f.num), entryKey(f.smallest), entryKey(f.largest)))
			}
			if level > 0 && i > 0 && bytes.Compare(files[i-1].largestUser(), f.smallestUser()) >= 0 {
				c.damage(c.off.manifest, fmt.Errorf("%w: %s: L%d tables %s and %s overlap or are out of order",
					ErrCorrupt, c.off.manifest, level, tableName(files[i-1].num), tableName(f.num)))
			}
		}
	}
}

// checkLog reads log num with recovery's rules; seq is the last sequence
// number seen in earlier logs.
func (c *checker) checkLog(num uint64, f logFormat, seq *uint64) {
	name := walName(num)
	info, err := readLog(c.fs, c.dir, num, f, func(_ kind, _, _ []byte, s uint64) error {
		if s <= *seq {
			return fmt.Errorf("%w: %s: sequence number %d after %d", ErrCorrupt, name, s, *seq)
		}
		*seq = s
		return nil
	})
	c.r.Logs++
	c.r.Records += info.records
	if err != nil {
		c.damage(name, err)
		return
	}
	if info.tornAt >= 0 {
		c.notef("%s: last record cut short at offset %d (%d bytes); recovery drops it (what a crash in the middle of an append leaves)",
			name, info.tornAt, info.size-info.tornAt)
	}
}

// maxVersionReports bounds the out-of-order versions reported one by one.
const maxVersionReports = 10

// checkVersionOrder merges every table of the tree and checks that each
// key's versions, newest first, come from the top of the tree down: L0
// tables newest first, then L1, L2... A read stops at the first version it
// finds, so an older version above a newer one would be returned instead
// of it.
func (c *checker) checkVersionOrder(v *version) {
	var h rankHeap
	var sources []*rankedIter
	for i, f := range v.levels[0] {
		sources = append(sources, &rankedIter{rank: i, t: newTableIter(f.t, false)})
	}
	for level := 1; level < numLevels; level++ {
		if files := v.levels[level]; len(files) > 0 {
			sources = append(sources, &rankedIter{rank: len(v.levels[0]) + level, l: &levelIter{files: files}})
		}
	}
	for _, r := range sources {
		if r.first() {
			h = append(h, r)
		} else if err := r.error(); err != nil {
			c.damage(r.file(), err)
			return
		}
	}
	heap.Init(&h)
	var prev []byte
	var prevRank int
	var prevFile string
	reported := 0
	for len(h) > 0 {
		top := h[0]
		k := top.key()
		if prev != nil && bytes.Equal(userKey(k), userKey(prev)) &&
			seqOf(trailer(k)) < seqOf(trailer(prev)) && top.rank < prevRank {
			if reported < maxVersionReports {
				c.damage(top.file(), fmt.Errorf("%w: %s holds %v above %s, which holds the newer %v: reads would return the older version",
					ErrCorrupt, top.file(), entryKey(k), prevFile, entryKey(prev)))
			}
			reported++
		}
		prev = append(prev[:0], k...)
		prevRank, prevFile = top.rank, top.file()
		if top.next() {
			heap.Fix(&h, 0)
			continue
		}
		if err := top.error(); err != nil {
			c.damage(top.file(), err)
			return
		}
		heap.Pop(&h)
	}
	if reported > maxVersionReports {
		c.notef("%d more versions out of order across tables", reported-maxVersionReports)
	}
}

// rankedIter walks one L0 table (t) or one deeper level (l); rank orders
// the sources from the top of the tree down.
type rankedIter struct {
	rank int
	t    *tableIter
	l    *levelIter
}

func (r *rankedIter) key() []byte {
	if r.t != nil {
		return r.t.key()
	}
	return r.l.key()
}

func (r *rankedIter) first() bool {
	if r.t != nil {
		return r.t.first()
	}
	return r.l.first()
}

func (r *rankedIter) next() bool {
	if r.t != nil {
		return r.t.next()
	}
	return r.l.next()
}

func (r *rankedIter) error() error {
	if r.t != nil {
		return r.t.error()
	}
	return r.l.error()
}

// file names the table the iterator is in.
func (r *rankedIter) file() string {
	if r.t != nil {
		return tableName(r.t.t.num)
	}
	return tableName(r.l.files[min(r.l.i, len(r.l.files)-1)].num)
}

type rankHeap []*rankedIter

func (h rankHeap) Len() int           { return len(h) }
func (h rankHeap) Less(i, j int) bool { return compareInternal(h[i].key(), h[j].key()) < 0 }
func (h rankHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rankHeap) Push(x any)        { *h = append(*h, x.(*rankedIter)) }
func (h *rankHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
