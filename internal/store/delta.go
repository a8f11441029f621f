package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// Durable big hashes and sets written as deltas. A big hash or set is a
// table (table.go), and its flat encoding is its entries in the table's
// slot order, which one HSET may reorder; so unlike a stream's or a
// list's nodes (patch.go), no run of the base's bytes survives a change.
// What does survive is every entry but the ones changed. After writing
// the table whole (its base), the store writes the next changes as a
// delta patch: the record's new header and, for each field changed since
// the base, its value now or that it is gone. The table keeps the set of
// those fields (tableDelta), so the patch grows with the fields changed,
// not with the changes: an HINCRBY of one counter a thousand times
// writes the same few bytes each time.
//
// When to write the table whole again. A patch of n bytes costs a copy
// for every command that writes it (about b·n/16, b the cost of a byte
// written to the log) and a write to the log for every commit that takes
// it (b·n: the Disk keeps a key's newest patch until its batch is taken,
// PatchDisk); a base of S bytes costs b·S. With k commands and j commits
// since the base, each adding g bytes, writes are least when the table
// is written whole once n·(k + 16·j) would pass 32·S. Each command its
// own commit, that is n·k ≈ 2·S: a patch of at most √(2·S·g) bytes, about
// 17 KB for a 4 MB hash of 35-byte fields, where every change wrote 4 MB
// before. Sixteen commands a commit, the patch may grow √8 times larger
// and the table is written whole √8 times less often; many more, up to
// four times.
//
// The Disk keeps the delta as it keeps any patch (PatchDisk) and, to read
// the key back, has MergeDelta make the record of the base and the delta.

// tableDelta is what a table's last whole durable record holds and what
// changed since: the fields changed (dirty, with where enc holds each
// one's entry) and the delta as last written (enc). A write appends the
// entries of the fields changed for the first time since the base
// (fresh). A field enc already holds that changed again (again) has its
// entry rewritten where it is when its value keeps its length, or when
// it is the last entry (a counter changed over and over); otherwise the
// write encodes every dirty field again (stale).
type tableDelta struct {
	key      []byte // the key it was written under
	head     [diskHeader]byte
	size     int            // its length
	deadline int64          // its deadline
	dirty    map[string]int // the entry's offset in enc; -1: not there yet
	fresh    []string
	again    []int // offsets in enc of entries whose field changed again
	stale    bool
	enc      []byte
	bytes    int // the dirty fields' lengths, and 4 bytes each
	cmds     int // patches written since the base
	commits  int // of them, those that did not replace one of the same commit
}

// note records that field changed. Past half the base's size the table
// gives up: the next write is whole.
func (d *tableDelta) note(field []byte) {
	if d.dirty == nil {
		return // gave up
	}
	if off, ok := d.dirty[string(field)]; ok {
		if off >= 0 {
			d.again = append(d.again, off)
		}
		return
	}
	f := string(field)
	d.dirty[f] = -1
	d.fresh = append(d.fresh, f)
	d.bytes += len(f) + 4
	if d.bytes > d.size/2 {
		d.dirty = nil
	}
}

// due reports whether a patch of n bytes is to be written (else the
// table is written whole): see above.
func (d *tableDelta) due(n int) bool {
	return n <= d.size/2 && n*(d.cmds+1+16*(d.commits+1)) <= 32*d.size
}

// rebase makes d the delta of rec, just written whole for key.
func (d *tableDelta) rebase(key, rec []byte, deadline int64) {
	d.key = append(d.key[:0], key...)
	copy(d.head[:], rec)
	d.size, d.deadline, d.bytes, d.cmds, d.commits = len(rec), deadline, 0, 0, 0
	if d.dirty == nil {
		d.dirty = make(map[string]int)
	} else {
		clear(d.dirty)
	}
	d.fresh, d.again, d.stale, d.enc = d.fresh[:0], d.again[:0], false, d.enc[:0]
}

// persistTable queues t (e's big hash or set) for the Disk: a delta of
// its base when it can, else whole (and, when feed, for the Feed: it gets
// the whole record).
func (s *Store) persistTable(sh *shard, e *entry, obj object, t *table, feed bool) {
	key := sh.key(e)
	pd, bases := s.disk.(PatchDisk)
	if bases && !(feed && s.feeder() != nil) && s.writeDelta(pd, sh, e, key, t) {
		return
	}
	rec := obj.appendFlat(withRoom(recordHead(sh, e), obj.size()))
	s.queueRecordTo(sh, key, rec, e, feed)
	t.rebaseDelta(bases, key, rec, e.deadline)
}

// writeDelta writes t's delta as key's patch, if t has a base for key as
// e is and the delta is due; it reports whether it did.
func (s *Store) writeDelta(pd PatchDisk, sh *shard, e *entry, key []byte, t *table) bool {
	d := t.delta
	if d == nil || d.dirty == nil || d.deadline != e.deadline || !bytes.Equal(d.key, key) {
		return false
	}
	t.encodeDelta()
	if !d.due(len(d.enc)) {
		return false
	}
	d.cmds++
	if !pd.WritePatch(key, &Patch{Head: recordHead(sh, e), Delta: d.enc, BaseLen: d.size, BaseHead: d.head[:]}, e.deadline) {
		d.commits++
	}
	s.diskWrites.Add(1)
	return true
}

// rebaseDelta notes rec, just written whole for key, as the base of t's
// next deltas, if the Disk takes patches (bases) and rec is large enough.
func (t *table) rebaseDelta(bases bool, key, rec []byte, deadline int64) {
	if !bases || len(rec) < patchMinBase {
		t.delta = nil
		return
	}
	if t.delta == nil {
		t.delta = &tableDelta{}
	}
	t.delta.rebase(key, rec, deadline)
}

// encodeDelta brings the delta's encoding up to date: one entry per field
// changed since the base, in no particular order,
//
//	| uvarint len(field) | field | uvarint 0 (gone)                      |
//	| uvarint len(field) | field | uvarint len(value)+1 | value (set)    |
func (t *table) encodeDelta() {
	d := t.delta
	for _, off := range d.again {
		if d.stale {
			break
		}
		// The entry at off: its field, then its value's tag and bytes.
		f, rest, _ := cutFlat(d.enc[off:])
		fieldEnd := len(d.enc) - len(rest)
		tag, k := binary.Uvarint(rest)
		end := fieldEnd + k + int(max(tag, 1)-1)
		v, ok := t.get(f)
		switch {
		case end == len(d.enc): // the last entry: its value again
			d.enc = appendDeltaValue(d.enc[:fieldEnd], v, ok)
		case ok && tag == uint64(len(v))+1:
			copy(d.enc[fieldEnd+k:end], v)
		case !ok && tag == 0:
		default:
			d.stale = true
		}
	}
	d.again = d.again[:0]
	if d.stale {
		d.enc, d.fresh, d.stale = d.enc[:0], d.fresh[:0], false
		for f := range d.dirty {
			d.fresh = append(d.fresh, f)
		}
	}
	for _, f := range d.fresh {
		d.dirty[f] = len(d.enc)
		d.enc = binary.AppendUvarint(d.enc, uint64(len(f)))
		d.enc = append(d.enc, f...)
		v, ok := t.get([]byte(f))
		d.enc = appendDeltaValue(d.enc, v, ok)
	}
	d.fresh = d.fresh[:0]
}

// appendDeltaValue appends a delta entry's value part: v's length plus
// one and v, or 0 when the field is gone (!ok).
func appendDeltaValue(b, v []byte, ok bool) []byte {
	if !ok {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

var errDelta = errors.New("store: a delta does not fit its base record")

// MergeDelta returns the record a delta patch (Patch.Delta) makes of
// base, a big hash's, set's or sorted set's whole record: head (the new
// record's header), then base's entries but those the delta names, then
// the delta's set entries (for a sorted set, merged into the order of
// scores and members, as its record must be). It checks the bytes it
// reads, which come from disk: a delta that does not fit its base is an
// error.
func MergeDelta(base, head, delta []byte) ([]byte, error) {
	if len(base) < diskHeader || len(head) != diskHeader {
		return nil, errDelta
	}
	kind, enc := kindOf(base[0]), encOf(base[0])
	if enc != encBig || kind != KindHash && kind != KindSet && kind != KindZSet || head[0] != base[0] {
		return nil, errDelta
	}
	type set struct{ field, value []byte }
	changed := make(map[string]bool)
	var sets []set
	for b := delta; len(b) > 0; {
		f, rest, ok := cutFlat(b)
		if !ok {
			return nil, errDelta
		}
		tag, k := binary.Uvarint(rest)
		if k <= 0 || tag > uint64(len(rest)-k)+1 {
			return nil, errDelta
		}
		rest = rest[k:]
		if tag > 0 {
			v := rest[:tag-1]
			rest = rest[tag-1:]
			switch kind {
			case KindSet:
				if len(v) > 0 {
					return nil, errDelta
				}
			case KindZSet:
				if len(v) != 8 || math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(v))) {
					return nil, errDelta
				}
			}
			sets = append(sets, set{f, v})
		}
		if changed[string(f)] {
			return nil, errDelta
		}
		changed[string(f)] = true
		b = rest
	}
	body := base[diskHeader:]
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)) {
		return nil, errDelta
	}
	body = body[k:]
	// cut splits the first entry off b: its field (member) and length.
	cut := func(b []byte) (f []byte, size int, ok bool) {
		f, rest, ok := cutFlat(b)
		if !ok {
			return nil, 0, false
		}
		if kind == KindZSet {
			if len(rest) < 8 {
				return nil, 0, false
			}
			return f, len(b) - len(rest) + 8, true
		}
		_, rest, ok = cutFlat(rest)
		return f, len(b) - len(rest), ok
	}
	// Which base entries stay: those the delta does not name.
	kept, keptBytes := 0, 0
	for b, i := body, uint64(0); ; i++ {
		if i == n {
			if len(b) != 0 {
				return nil, errDelta
			}
			break
		}
		f, size, ok := cut(b)
		if !ok {
			return nil, errDelta
		}
		if !changed[string(f)] {
			kept++
			keptBytes += size
		}
		b = b[size:]
	}
	out := make([]byte, 0, diskHeader+binary.MaxVarintLen64+keptBytes+len(delta))
	out = append(out, head...)
	out = binary.AppendUvarint(out, uint64(kept+len(sets)))
	appendSet := func(out []byte, e set) []byte {
		out = binary.AppendUvarint(out, uint64(len(e.field)))
		out = append(out, e.field...)
		if kind != KindZSet {
			out = binary.AppendUvarint(out, uint64(len(e.value)))
		}
		return append(out, e.value...)
	}
	score := func(v []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(v)) }
	if kind == KindZSet {
		slices.SortFunc(sets, func(a, b set) int { return zcmp(score(a.value), a.field, score(b.value), b.field) })
	}
	for b := body; len(b) > 0; {
		f, size, _ := cut(b)
		if !changed[string(f)] {
			// A sorted set's entries go in order: the delta's before this one first.
			for kind == KindZSet && len(sets) > 0 && zcmp(score(sets[0].value), sets[0].field, score(b[size-8:size]), f) < 0 {
				out = appendSet(out, sets[0])
				sets = sets[1:]
			}
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	for _, e := range sets {
		out = appendSet(out, e)
	}
	return out, nil
}
