package lsm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// randomEntries returns n distinct internal keys with values, sorted: few
// user keys, so most have several versions, of every kind.
func randomEntries(rng *rand.Rand, n, users int) []tableEntry {
	seen := map[string]bool{}
	var es []tableEntry
	for len(es) < n {
		u := fmt.Appendf(nil, "u%0*d", 1+rng.IntN(3), rng.IntN(users)) // varying lengths share prefixes
		k := kind(rng.IntN(3))
		ik := appendInternalKey(nil, u, 1+uint64(rng.IntN(1<<20)), k)
		if seen[string(ik)] {
			continue
		}
		seen[string(ik)] = true
		var v []byte
		if k == kindSetExpiring {
			v = binary.LittleEndian.AppendUint64(nil, 1<<62)
		}
		if k != kindDelete {
			v = append(v, bytes.Repeat([]byte{byte(len(es))}, rng.IntN(40))...)
			v = fmt.Appendf(v, "%d", len(es))
		}
		es = append(es, tableEntry{ik, v})
	}
	slices.SortFunc(es, func(a, b tableEntry) int { return compareInternal(a.key, b.key) })
	return es
}

// buildTable writes es (sorted) to a table in fs and opens it.
func buildTable(t testing.TB, fs vfs.FS, num uint64, es []tableEntry, blockSize int) *fileMeta {
	t.Helper()
	name := fmt.Sprintf("/%06d.sst", num)
	f, err := fs.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w := newTableWriter(f, num, &Options{BlockSize: blockSize, BloomBitsPerKey: 10})
	for _, e := range es {
		w.add(e.key, e.value)
	}
	meta, err := w.finish()
	if err != nil {
		t.Fatal(err)
	}
	if meta.t, err = openTable(fs, name, num, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = meta.t.close() })
	return meta
}

func buildMem(t testing.TB, es []tableEntry) *memTable {
	t.Helper()
	m := newMemTable(1<<20, 1)
	for _, e := range es {
		if err := m.add(userKey(e.key), seqOf(trailer(e.key)), kindOf(trailer(e.key)), e.value); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// splitByUser cuts sorted entries into n runs that do not share a user key,
// as the tables of a sorted level.
func splitByUser(rng *rand.Rand, es []tableEntry, n int) [][]tableEntry {
	var runs [][]tableEntry
	start := 0
	for i := 1; i < len(es); i++ {
		if len(runs) < n-1 && rng.IntN(len(es)/n+1) == 0 &&
			!bytes.Equal(userKey(es[i-1].key), userKey(es[i].key)) {
			runs = append(runs, es[start:i])
			start = i
		}
	}
	return append(runs, es[start:])
}

// TestInternalIterReverse drives every internal iterator (memtable, block,
// table, level, merging) with random positionings and Next/Prev
// sequences, direction changes included, and checks each position
// against the sorted entries.
func TestInternalIterReverse(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			testInternalIterReverse(t, rng, randomEntries(rng, 100+rng.IntN(800), 5+rng.IntN(200)))
		})
	}
}

func testInternalIterReverse(t *testing.T, rng *rand.Rand, es []tableEntry) {
	fs := vfs.NewMem()
	num := uint64(1)
	table := func(es []tableEntry, blockSize int) *fileMeta {
		num++
		return buildTable(t, fs, num, es, blockSize)
	}
	level := func(es []tableEntry, n int) *levelIter {
		var files []*fileMeta
		for _, run := range splitByUser(rng, es, n) {
			files = append(files, table(run, 64+rng.IntN(512)))
		}
		return &levelIter{files: files, fillCache: true}
	}
	merged := func() *mergingIter {
		// Deal the entries to a memtable, two L0-like tables and a level.
		parts := make([][]tableEntry, 4)
		for _, e := range es {
			i := rng.IntN(4)
			parts[i] = append(parts[i], e)
		}
		return &mergingIter{children: []internalIterator{
			&memIter{m: buildMem(t, parts[0])},
			newTableIter(table(parts[1], 128).t, true),
			newTableIter(table(parts[2], 4096).t, false),
			level(parts[3], 5),
		}}
	}
	block := func() internalIterator {
		var w blockBuilder
		w.interval = 1 + rng.IntN(20)
		for _, e := range es {
			w.add(e.key, e.value)
		}
		b := &blockAdapter{}
		if err := b.it.init(w.finish()); err != nil {
			t.Fatal(err)
		}
		return b
	}
	iters := []struct {
		name string
		it   internalIterator
	}{
		{"mem", &memIter{m: buildMem(t, es)}},
		{"block", block()},
		{"table/tiny-blocks", newTableIter(table(es, 1).t, true)},
		{"table", newTableIter(table(es, 256).t, true)},
		{"table/readahead", newTableIter(table(es, 1024).t, false)},
		{"level", level(es, 7)},
		{"level/one", level(es, 1)},
		{"merging", merged()},
		{"merging/empty", &mergingIter{}},
	}
	for _, tc := range iters {
		t.Run(tc.name, func(t *testing.T) {
			want := es
			if tc.name == "merging/empty" {
				want = nil
			}
			checkInternalIter(t, rng, tc.it, want, 3000)
		})
	}
}

// blockAdapter makes a blockIter an internalIterator, for the conformance
// test.
type blockAdapter struct{ it blockIter }

func (b *blockAdapter) first() bool { return b.it.first() }
func (b *blockAdapter) last() bool  { return b.it.last() }
func (b *blockAdapter) seekGE(k []byte) bool {
	return b.it.seekGE(k, compareInternal)
}
func (b *blockAdapter) seekLT(k []byte) bool { return b.it.seekLT(k, compareInternal) }
func (b *blockAdapter) next() bool           { return b.it.nextEntry() }
func (b *blockAdapter) prev() bool           { return b.it.prev() }
func (b *blockAdapter) valid() bool          { return b.it.valid }
func (b *blockAdapter) key() []byte          { return b.it.key }
func (b *blockAdapter) value() []byte        { return b.it.val }
func (b *blockAdapter) error() error         { return b.it.err }
func (b *blockAdapter) close() error         { return nil }

// checkInternalIter runs ops random moves on it and checks each against
// want (sorted). Next and Prev are called only on a valid iterator, as the
// internalIterator contract says.
func checkInternalIter(t *testing.T, rng *rand.Rand, it internalIterator, want []tableEntry, ops int) {
	t.Helper()
	pos := -1 // index into want; -1 or len(want): invalid
	randKey := func() []byte {
		if len(want) > 0 && rng.IntN(2) == 0 {
			return want[rng.IntN(len(want))].key // an exact hit
		}
		u := fmt.Appendf(nil, "u%0*d", 1+rng.IntN(3), rng.IntN(100))
		return appendInternalKey(nil, u, uint64(rng.IntN(1<<20)), kind(rng.IntN(3)))
	}
	var trace []string
	for op := 0; op < ops; op++ {
		var ok bool
		r := rng.IntN(10)
		if pos < 0 || pos >= len(want) {
			r = rng.IntN(4)
		}
		switch r {
		case 0:
			ok = it.first()
			pos = 0
			trace = append(trace, "first")
		case 1:
			ok = it.last()
			pos = len(want) - 1
			trace = append(trace, "last")
		case 2:
			k := randKey()
			ok = it.seekGE(k)
			pos, _ = slices.BinarySearchFunc(want, k, func(e tableEntry, k []byte) int { return compareInternal(e.key, k) })
			trace = append(trace, fmt.Sprintf("seekGE(%q)", k))
		case 3:
			k := randKey()
			ok = it.seekLT(k)
			pos, _ = slices.BinarySearchFunc(want, k, func(e tableEntry, k []byte) int { return compareInternal(e.key, k) })
			pos--
			trace = append(trace, fmt.Sprintf("seekLT(%q)", k))
		case 4, 5, 6:
			ok = it.next()
			pos++
			trace = append(trace, "next")
		default:
			ok = it.prev()
			pos--
			trace = append(trace, "prev")
		}
		if len(trace) > 12 {
			trace = trace[1:]
		}
		if err := it.error(); err != nil {
			t.Fatalf("op %d: error %v after %v", op, err, trace)
		}
		wantOK := pos >= 0 && pos < len(want)
		if ok != wantOK || it.valid() != wantOK {
			t.Fatalf("op %d: ok %v valid %v, want %v (pos %d of %d) after %v", op, ok, it.valid(), wantOK, pos, len(want), trace)
		}
		if wantOK && (!bytes.Equal(it.key(), want[pos].key) || !bytes.Equal(it.value(), want[pos].value)) {
			t.Fatalf("op %d: at %q = %q, want %q = %q after %v", op, it.key(), it.value(), want[pos].key, want[pos].value, trace)
		}
	}
}

// checkWalk moves it through steps random positionings and Next/Prev
// calls and checks every position against m restricted to [lo, hi) (the
// iterator's bounds). seekKey returns keys to seek to.
func checkWalk(t *testing.T, op int, it *Iterator, m model, lo, hi []byte, rng *rand.Rand, steps int, seekKey func() []byte) {
	t.Helper()
	w := newWalk(it, m, lo, hi)
	for step := 0; step < steps; step++ {
		move := rng.IntN(10)
		if step == 0 {
			move = rng.IntN(4)
		}
		var k []byte
		if move == moveSeekGE || move == moveSeekLT {
			k = seekKey()
		}
		if err := w.step(move, k); err != nil {
			t.Fatalf("op %d: %v", op, err)
		}
	}
}

// The moves of a walk; 4 and up are Next (4..6) or Prev (7..).
const (
	moveFirst = iota
	moveLast
	moveSeekGE
	moveSeekLT
)

// walk checks an Iterator's moves against a model: the sorted keys in
// the iterator's bounds and the index it should be at, with Pebble's
// rules at the ends (a move off one end leaves the iterator there, and the
// move back returns the key at that end).
type walk struct {
	it    *Iterator
	m     model
	lo    []byte
	hi    []byte
	keys  []string
	idx   int // -1: before the first key; len(keys): after the last
	trace []string
}

func newWalk(it *Iterator, m model, lo, hi []byte) *walk {
	w := &walk{it: it, m: m, lo: lo, hi: hi}
	for k := range m {
		if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
			w.keys = append(w.keys, k)
		}
	}
	slices.Sort(w.keys)
	return w
}

// step makes one move (key is the seek key) and checks where it lands.
func (w *walk) step(move int, key []byte) error {
	var ok bool
	switch move {
	case moveFirst:
		ok, w.idx = w.it.First(), 0
		w.trace = append(w.trace, "First")
	case moveLast:
		ok, w.idx = w.it.Last(), len(w.keys)-1
		w.trace = append(w.trace, "Last")
	case moveSeekGE:
		ok = w.it.SeekGE(key)
		w.idx, _ = slices.BinarySearch(w.keys, string(key))
		w.trace = append(w.trace, fmt.Sprintf("SeekGE(%q)", key))
	case moveSeekLT:
		ok = w.it.SeekLT(key)
		w.idx, _ = slices.BinarySearch(w.keys, string(key))
		w.idx--
		w.trace = append(w.trace, fmt.Sprintf("SeekLT(%q)", key))
	case 4, 5, 6:
		ok = w.it.Next()
		if w.idx < len(w.keys) {
			w.idx++
		}
		w.trace = append(w.trace, "Next")
	default:
		ok = w.it.Prev()
		if w.idx >= 0 {
			w.idx--
		}
		w.trace = append(w.trace, "Prev")
	}
	if len(w.trace) > 10 {
		w.trace = w.trace[1:]
	}
	if err := w.it.Error(); err != nil {
		return fmt.Errorf("iterator error %v after %v", err, w.trace)
	}
	wantOK := w.idx >= 0 && w.idx < len(w.keys)
	if ok != wantOK || w.it.Valid() != wantOK {
		return fmt.Errorf("[%q,%q) ok %v valid %v at %q, want %v (index %d of %d) after %v",
			w.lo, w.hi, ok, w.it.Valid(), w.it.Key(), wantOK, w.idx, len(w.keys), w.trace)
	}
	if wantOK && (string(w.it.Key()) != w.keys[w.idx] || !bytes.Equal(w.it.Value(), w.m[w.keys[w.idx]])) {
		return fmt.Errorf("[%q,%q) at %q = %q, want %q = %q after %v",
			w.lo, w.hi, w.it.Key(), w.it.Value(), w.keys[w.idx], w.m[w.keys[w.idx]], w.trace)
	}
	return nil
}

// TestIterReverse runs scripts of Iterator moves over one set of writes,
// with the data in the memtable, in overlapping L0 tables, in one sorted
// run, and spread over all three, and checks each move's key and value
// ("." for an invalid iterator).
func TestIterReverse(t *testing.T) {
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	type write struct {
		key, value string // value "": delete
		exp        time.Time
	}
	writes := []write{
		{"a", "a1", time.Time{}},
		{"b", "b1", time.Time{}},
		{"c", "c1", time.Time{}},
		{"d", "d1", past},
		{"e", "e1", future},
		{"f", "", time.Time{}},
		{"g", "g1", time.Time{}},
		{"b", "b2", time.Time{}},
		{"c", "", time.Time{}},
		{"f", "f2", time.Time{}},
		{"h", "h1", time.Time{}},
		{"h", "", time.Time{}},
	}
	shapes := map[string]func(db *DB, i int) error{
		"memtable":  func(*DB, int) error { return nil },
		"l0":        func(db *DB, i int) error { return db.Flush() },
		"compacted": func(db *DB, i int) error { return db.Compact() },
		"mixed": func(db *DB, i int) error {
			switch {
			case i == 5:
				return db.Compact()
			case i == 7 || i == 9:
				return db.Flush()
			}
			return nil
		},
	}
	tests := []struct {
		lo, hi string // "": unbounded
		script string
		want   string
	}{
		{"", "", "Last Prev Prev Prev Prev Prev", "g=g1 f=f2 e=e1+ b=b2 a=a1 ."},
		{"", "", "Last Prev Next Next Prev", "g=g1 f=f2 g=g1 . g=g1"},
		{"", "", "First Prev Next Next", "a=a1 . a=a1 b=b2"},
		{"", "", "First Prev Prev Next", "a=a1 . . a=a1"},
		{"", "", "Last Next Next Prev", "g=g1 . . g=g1"},
		{"", "", "SeekLT(c) Next Prev Prev", "b=b2 e=e1+ b=b2 a=a1"},
		{"", "", "SeekLT(a) Next", ". a=a1"},
		{"", "", "SeekGE(c) Prev Prev Next", "e=e1+ b=b2 a=a1 b=b2"},
		{"", "", "SeekLT(z) Prev", "g=g1 f=f2"},
		{"", "", "SeekLT(bb) Prev Next Next", "b=b2 a=a1 b=b2 e=e1+"},
		{"", "", "SeekGE(z) Prev", ". g=g1"},
		{"b", "f", "Last Prev Prev", "e=e1+ b=b2 ."},
		{"b", "f", "First Prev Next", "b=b2 . b=b2"},
		{"b", "f", "SeekLT(z) Next Prev", "e=e1+ . e=e1+"},
		{"b", "f", "SeekGE(a) SeekLT(b) Next", "b=b2 . b=b2"},
		{"b", "f", "SeekLT(a) Next", ". b=b2"},
		{"bb", "ee", "Last Prev", "e=e1+ ."},
		{"c", "d", "First Last Next Prev", ". . . ."},
		{"h", "", "Last First", ". ."},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			db, err := Open("/db", Options{FS: vfs.NewMem(), DisableAutoCompaction: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for i, w := range writes {
				switch {
				case w.value == "":
					err = db.Delete([]byte(w.key))
				case !w.exp.IsZero():
					err = db.PutExpiring([]byte(w.key), []byte(w.value), w.exp)
				default:
					err = db.Put([]byte(w.key), []byte(w.value))
				}
				if err == nil {
					err = shape(db, i)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, tc := range tests {
				o := &IterOptions{}
				if tc.lo != "" {
					o.LowerBound = []byte(tc.lo)
				}
				if tc.hi != "" {
					o.UpperBound = []byte(tc.hi)
				}
				it, err := db.NewIter(o)
				if err != nil {
					t.Fatal(err)
				}
				if got := runIterScript(it, tc.script); got != tc.want {
					t.Errorf("[%q,%q) %s = %s, want %s", tc.lo, tc.hi, tc.script, got, tc.want)
				}
				if err := it.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// runIterScript runs space-separated moves (First, Last, Next, Prev,
// SeekGE(k), SeekLT(k)) and returns what each one left: "key=value", or
// "." when the iterator is not valid. An expiring key gets a "+" after its
// value.
func runIterScript(it *Iterator, script string) string {
	var out []string
	for _, op := range strings.Fields(script) {
		var ok bool
		switch {
		case op == "First":
			ok = it.First()
		case op == "Last":
			ok = it.Last()
		case op == "Next":
			ok = it.Next()
		case op == "Prev":
			ok = it.Prev()
		case strings.HasPrefix(op, "SeekGE("):
			ok = it.SeekGE([]byte(op[7 : len(op)-1]))
		case strings.HasPrefix(op, "SeekLT("):
			ok = it.SeekLT([]byte(op[7 : len(op)-1]))
		default:
			panic("bad op " + op)
		}
		switch {
		case ok != it.Valid():
			out = append(out, "mismatch")
		case !ok:
			out = append(out, ".")
		default:
			s := string(it.Key()) + "=" + string(it.Value())
			if !it.Expiry().IsZero() {
				s += "+"
			}
			out = append(out, s)
		}
	}
	if err := it.Error(); err != nil {
		out = append(out, "error: "+err.Error())
	}
	return strings.Join(out, " ")
}
