package lsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/minikv/minikv/lsm/vfs"
)

type tableEntry struct{ key, value []byte } // internal key

// fuzzTableEntries are the contents of every seed table: several versions of
// each user key, of all three kinds, newest first.
func fuzzTableEntries() []tableEntry {
	var es []tableEntry
	for u := 0; u < 12; u++ {
		for v := 0; v < 1+u%3; v++ {
			k := kind((u + v) % 3)
			var val []byte
			switch k {
			case kindSet:
				val = corruptionValue(u * v)
			case kindSetExpiring:
				val = binary.LittleEndian.AppendUint64(nil, uint64(u+1)<<40)
				val = append(val, corruptionValue(u)...)
			}
			es = append(es, tableEntry{appendInternalKey(nil, corruptionKey(u), uint64(100-v), k), val})
		}
	}
	return es
}

// writeFuzzTable writes entries with the engine's table writer and returns
// the file.
func writeFuzzTable(tb testing.TB, es []tableEntry, blockSize, bitsPerKey int) []byte {
	return writeFuzzTableWith(tb, es, &Options{BlockSize: blockSize, BloomBitsPerKey: bitsPerKey}, nil)
}

// writeFuzzTableWith writes entries with the engine's table writer, lets
// edit change the writer's state before it finishes (when edit is not nil)
// and returns the file.
func writeFuzzTableWith(tb testing.TB, es []tableEntry, o *Options, edit func(w *tableWriter)) []byte {
	tb.Helper()
	fs := vfs.NewMem()
	f, err := fs.Create("/t.sst")
	if err != nil {
		tb.Fatal(err)
	}
	w := newTableWriter(f, 1, o)
	for _, e := range es {
		w.add(e.key, e.value)
	}
	if edit != nil {
		edit(w)
	}
	if _, err := w.finish(); err != nil {
		tb.Fatal(err)
	}
	b, err := readAll(fs, "/t.sst")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// addTableSeeds adds tables of es as the writer makes them, and a few
// files that are not tables at all.
func addTableSeeds(f *testing.F, es []tableEntry) {
	f.Add(writeFuzzTable(f, es, 128, 10))
	f.Add(writeFuzzTable(f, es, 1, 0))    // one entry per block, no filter
	f.Add(writeFuzzTable(f, es, 4096, 4)) // one data block
	f.Add([]byte{})
	f.Add(make([]byte, footerLen))

	// Hand-made files with their checksums right: a filter of zero cache
	// lines, a footer whose index handle wraps around 2^64, and an index
	// whose block handle does.
	t := writeFuzzTable(f, es, 128, 10)
	ft := t[len(t)-footerLen:]
	fh := binary.LittleEndian.Uint64(ft)
	copy(t[fh:], []byte{1, 0, 0, 0, 0})
	binary.LittleEndian.PutUint64(ft[8:], 5)
	f.Add(fixTableChecksums(t))
	t = writeFuzzTable(f, es, 128, 10)
	ft = t[len(t)-footerLen:]
	binary.LittleEndian.PutUint64(ft[16:], 1<<63)
	binary.LittleEndian.PutUint64(ft[24:], 1<<63-blockTrailerLen)
	f.Add(fixTableChecksums(t))
	f.Add(writeFuzzTableIndex(f, es, blockHandle{10, 1<<64 - 10}))
}

// writeFuzzTableIndex writes es as one data block but indexes it with h.
func writeFuzzTableIndex(tb testing.TB, es []tableEntry, h blockHandle) []byte {
	return writeFuzzTableWith(tb, es, &Options{BlockSize: 1 << 20}, func(w *tableWriter) {
		w.flushBlock()
		w.index.reset()
		w.index.add(es[len(es)-1].key, binary.AppendUvarint(binary.AppendUvarint(nil, h.off), h.n))
	})
}

// FuzzTable opens arbitrary bytes as a table file (seeded with tables the
// engine wrote, which the fuzzer mutates) and reads it every way the engine
// does: open (footer, index, filter), full iteration with and without the
// cache path, seekGE and get for every key. Every block is checksummed, so a
// read must return exactly the seed table's data or an error wrapping
// ErrCorrupt; never a panic, never a wrong or missing entry.
func FuzzTable(f *testing.F) {
	es := fuzzTableEntries()
	addTableSeeds(f, es)
	f.Fuzz(func(t *testing.T, file []byte) {
		checkTable(t, file, es)
	})
}

// FuzzTableChecksummed is FuzzTable with the checksums out of the way: after
// the fuzzer mutates a file, the checksums of its footer, index, filter and
// every data block the index points to are recomputed, so the decoders
// behind them see the mutated bytes. The data may then be anything, but
// reading must not panic, must report inconsistencies as ErrCorrupt, and
// must only return well-formed entries (internal keys of a known kind, an
// expiring value with its expiry).
func FuzzTableChecksummed(f *testing.F) {
	es := fuzzTableEntries()
	addTableSeeds(f, es)
	f.Add(writeFuzzTable(f, es[:1], 4096, 10))
	f.Fuzz(func(t *testing.T, file []byte) {
		checkTable(t, fixTableChecksums(file), nil)
	})
}

// checkTable reads file as a table. With want set, everything read must be
// want's data; without, only well-formed.
func checkTable(t *testing.T, file []byte, want []tableEntry) {
	fs := vfs.NewMem()
	w, _ := fs.Create("/t.sst")
	_, _ = w.Write(file)
	_ = w.Close()
	f, err := fs.Open("/t.sst")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl, err := loadTable(f, 1, nil)
	if err != nil {
		if !errors.Is(err, ErrCorrupt) && !strings.Contains(err.Error(), "unsupported format version") {
			t.Fatalf("open: %v is neither ErrCorrupt nor a version error", err)
		}
		return
	}
	wellFormed := func(what string, k, v []byte) {
		t.Helper()
		if len(k) < trailerLen {
			t.Fatalf("%s: key %q shorter than a trailer", what, k)
		}
		if kd := kindOf(trailer(k)); kd > kindMax || (kd == kindSetExpiring && len(v) < 8) {
			t.Fatalf("%s: key %q of kind %d with %d-byte value", what, k, kd, len(v))
		}
	}
	corruptOnly := func(what string, err error) {
		t.Helper()
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: %v is not ErrCorrupt", what, err)
		}
	}

	// Full scans, through the cache path and the read-ahead path.
	for _, fill := range []bool{true, false} {
		it := newTableIter(tbl, fill)
		n := 0
		for ok := it.first(); ok; ok = it.next() {
			wellFormed("scan", it.key(), it.value())
			if want != nil && (n >= len(want) || !bytes.Equal(it.key(), want[n].key) || !bytes.Equal(it.value(), want[n].value)) {
				t.Fatalf("scan entry %d = %q %q, want %+v", n, it.key(), it.value(), want[min(n, len(want)-1)])
			}
			if n++; n > len(file) {
				t.Fatalf("scan does not end")
			}
		}
		corruptOnly("scan", it.error())
		if want != nil && it.error() == nil && n != len(want) {
			t.Fatalf("scan ended after %d of %d entries without an error", n, len(want))
		}
	}

	// Backward scans, both paths.
	for _, fill := range []bool{true, false} {
		it := newTableIter(tbl, fill)
		n := 0
		for ok := it.last(); ok; ok = it.prev() {
			wellFormed("backward scan", it.key(), it.value())
			if want != nil && (n >= len(want) || !bytes.Equal(it.key(), want[len(want)-1-n].key) || !bytes.Equal(it.value(), want[len(want)-1-n].value)) {
				t.Fatalf("backward scan entry %d = %q %q, want %+v", n, it.key(), it.value(), want[max(len(want)-1-n, 0)])
			}
			if n++; n > len(file) {
				t.Fatalf("backward scan does not end")
			}
		}
		corruptOnly("backward scan", it.error())
		if want != nil && it.error() == nil && n != len(want) {
			t.Fatalf("backward scan ended after %d of %d entries without an error", n, len(want))
		}
	}

	// Seeks and point lookups for each user key and around them.
	targets := [][]byte{nil, corruptionKey(-1), []byte("zzz")}
	for _, e := range fuzzTableEntries() {
		targets = append(targets, userKey(e.key))
	}
	for _, uk := range targets {
		for _, seq := range []uint64{maxSeq, 99} {
			ik := appendInternalKey(nil, uk, seq, kindMax)
			it := newTableIter(tbl, true)
			ok := it.seekGE(ik)
			if ok {
				wellFormed("seekGE", it.key(), it.value())
			}
			corruptOnly("seekGE", it.error())
			lt := newTableIter(tbl, true)
			ltOK := lt.seekLT(ik)
			if ltOK {
				wellFormed("seekLT", lt.key(), lt.value())
			}
			corruptOnly("seekLT", lt.error())
			var bloom int64
			k, v, found, err := tbl.get(uk, hash64(uk), seq, &bloom)
			corruptOnly("get", err)
			if found {
				wellFormed("get", appendInternalKey(nil, uk, 0, k), v)
			}
			if want == nil {
				continue
			}
			i, _ := slices.BinarySearchFunc(want, ik, func(e tableEntry, ik []byte) int { return compareInternal(e.key, ik) })
			if it.error() == nil && (ok != (i < len(want)) || (ok && !bytes.Equal(it.key(), want[i].key))) {
				t.Fatalf("seekGE(%q) = %v at %q, want entry %d", ik, ok, it.key(), i)
			}
			if lt.error() == nil && (ltOK != (i > 0) || (ltOK && !bytes.Equal(lt.key(), want[i-1].key))) {
				t.Fatalf("seekLT(%q) = %v at %q, want entry %d", ik, ltOK, lt.key(), i-1)
			}
			wantFound := i < len(want) && bytes.Equal(userKey(want[i].key), uk)
			if err == nil && (found != wantFound || (found && (k != kindOf(trailer(want[i].key)) || !bytes.Equal(v, want[i].value)))) {
				t.Fatalf("get(%q, %d) = %d %q %v, want %v", uk, seq, k, v, found, wantFound)
			}
		}
	}
}

// fixTableChecksums returns a copy of file with the checksums recomputed
// wherever its own footer and index say blocks are: data blocks first, then
// the filter, the index and the footer, so the outer ones win where garbage
// handles make blocks overlap.
func fixTableChecksums(file []byte) []byte {
	b := slices.Clone(file)
	if len(b) < footerLen {
		return b
	}
	size := uint64(len(b))
	ft := b[size-footerLen:]
	fix := func(h blockHandle) {
		if h.n <= size && h.off <= size-h.n && size-h.n-h.off >= blockTrailerLen {
			binary.LittleEndian.PutUint32(b[h.off+h.n:], blockChecksum(b[h.off:h.off+h.n]))
		}
	}
	fh := blockHandle{binary.LittleEndian.Uint64(ft[0:]), binary.LittleEndian.Uint64(ft[8:])}
	ih := blockHandle{binary.LittleEndian.Uint64(ft[16:]), binary.LittleEndian.Uint64(ft[24:])}
	if ih.n <= size && ih.off <= size-ih.n {
		var it blockIter
		if it.init(slices.Clone(b[ih.off:ih.off+ih.n])) == nil {
			for ok, i := it.first(), 0; ok && i < 10000; ok, i = it.nextEntry(), i+1 {
				if h, ok := decodeHandle(it.val); ok {
					fix(h)
				}
			}
		}
	}
	fix(fh)
	fix(ih)
	binary.LittleEndian.PutUint32(ft[36:], blockChecksum(ft[:36]))
	return b
}
