package lsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// FuzzBlock feeds arbitrary bytes to the block decoder directly (no
// checksum in the way). Iteration in both directions, seekGE, seekLT and
// seekUser must terminate without a panic, return only internal keys, and
// report ErrCorrupt where the block is inconsistent. On a block whose
// entries decode in order and whose restart points all land on whole-key
// entries, the seeks and the backward scan must agree with a linear scan.
// The input also names keys for a block built with blockBuilder, which
// must read back exactly and seek like a linear scan.
func FuzzBlock(f *testing.F) {
	var w blockBuilder
	for _, interval := range []int{1, 2, 16} {
		w = blockBuilder{interval: interval}
		for i := 0; i < 40; i++ {
			w.add(appendInternalKey(nil, corruptionKey(i/2), uint64(100-i), kind(i%3)), corruptionValue(i))
		}
		f.Add(slices.Clone(w.finish()), appendInternalKey(nil, corruptionKey(7), 50, kindMax), uint64(90))
	}
	w = blockBuilder{interval: 16}
	w.add(appendInternalKey(nil, bytes.Repeat([]byte("k"), 200), 1, kindSet), bytes.Repeat([]byte("v"), 300))
	f.Add(slices.Clone(w.finish()), []byte("k"), uint64(1)) // multi-byte lengths
	f.Add([]byte{}, []byte{}, uint64(0))
	f.Add([]byte{0, 0, 0, 0}, []byte{}, uint64(0))
	f.Add([]byte{0, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0}, []byte{}, uint64(0))
	f.Add([]byte{0, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0xff, 0, 0, 0, 2, 0, 0, 0}, []byte{9}, uint64(0)) // restart past the entries
	f.Fuzz(func(t *testing.T, data, target []byte, seq uint64) {
		seq &= maxSeq
		ikey := appendInternalKey(slices.Clone(target), nil, seq, kindMax)
		keys, vals, consistent := scanBlock(t, data)
		if keys == nil {
			consistent = false
		}
		checkSeeks(t, data, ikey, target, seq, keys, vals, consistent)

		// A block built from the input's keys.
		want := blockKeys(data)
		w := blockBuilder{interval: 1 + int(seq%17)}
		for _, k := range want {
			w.add(k, k[:len(k)/2])
		}
		if len(want) == 0 {
			return
		}
		built := w.finish()
		keys, vals, consistent = scanBlock(t, built)
		if !consistent || len(keys) != len(want) {
			t.Fatalf("built block of %d keys scans to %d (consistent %v)", len(want), len(keys), consistent)
		}
		for i := range want {
			if !bytes.Equal(keys[i], want[i]) || !bytes.Equal(vals[i], want[i][:len(want[i])/2]) {
				t.Fatalf("entry %d = %q %q, want %q", i, keys[i], vals[i], want[i])
			}
		}
		checkSeeks(t, built, ikey, target, seq, keys, vals, true)
	})
}

// scanBlock iterates a block from first to end. It returns the entries (nil
// if init fails) and whether the block is consistent: the scan ended cleanly,
// keys strictly ascend, and the restart points are increasing offsets of
// entries that store their whole key, the first at offset 0.
func scanBlock(t *testing.T, data []byte) (keys, vals [][]byte, consistent bool) {
	t.Helper()
	var it blockIter
	if err := it.init(data); err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("init: %v is not ErrCorrupt", err)
		}
		return nil, nil, false
	}
	keys = [][]byte{}
	whole := map[int]bool{} // entry offset -> stores its whole key
	for ok := it.first(); ok; ok = it.nextEntry() {
		if len(keys) > len(data)/3 {
			t.Fatalf("more entries than the block can hold")
		}
		if len(it.key) < trailerLen {
			t.Fatalf("entry at %d: key %q shorter than a trailer", it.off, it.key)
		}
		shared, _ := binary.Uvarint(it.data[it.off:])
		whole[it.off] = shared == 0
		keys = append(keys, slices.Clone(it.key))
		vals = append(vals, slices.Clone(it.val))
	}
	consistent = it.err == nil && len(keys) > 0
	for i := 1; consistent && i < len(keys); i++ {
		consistent = compareInternal(keys[i-1], keys[i]) < 0
	}
	for i := 0; consistent && i < it.nrestart; i++ {
		off := it.restart(i)
		consistent = whole[off] && (i > 0 || off == 0) && (i == 0 || off > it.restart(i-1))
	}
	return keys, vals, consistent
}

// checkSeeks runs seekGE and seekUser on a block and, if the block is
// consistent, compares them with a linear scan of keys.
func checkSeeks(t *testing.T, data, ikey, ukey []byte, seq uint64, keys, vals [][]byte, consistent bool) {
	t.Helper()
	var it blockIter
	if it.init(data) != nil {
		return
	}
	ok := it.seekGE(ikey, compareInternal)
	if ok && (len(it.key) < trailerLen || compareInternal(it.key, ikey) < 0) {
		t.Fatalf("seekGE(%q) landed on %q below it", ikey, it.key)
	}
	if !ok && it.err != nil && !errors.Is(it.err, ErrCorrupt) {
		t.Fatalf("seekGE: %v is not ErrCorrupt", it.err)
	}
	if consistent {
		i, _ := slices.BinarySearchFunc(keys, ikey, compareInternal)
		if ok != (i < len(keys)) || it.err != nil || (ok && (!bytes.Equal(it.key, keys[i]) || !bytes.Equal(it.val, vals[i]))) {
			t.Fatalf("seekGE(%q) = %v at %q (err %v), linear scan finds entry %d of %d", ikey, ok, it.key, it.err, i, len(keys))
		}
	}

	var su blockIter
	_ = su.init(data)
	ok = su.seekUser(ukey, seq)
	if ok && len(su.key) < trailerLen {
		t.Fatalf("seekUser(%q) landed on short key %q", ukey, su.key)
	}
	if consistent {
		// seekUser is seekGE of (ukey, seq, kindMax).
		i, _ := slices.BinarySearchFunc(keys, ikey, compareInternal)
		if ok != (i < len(keys)) || su.err != nil || (ok && !bytes.Equal(su.key, keys[i])) {
			t.Fatalf("seekUser(%q, %d) = %v at %q (err %v), linear scan finds entry %d of %d", ukey, seq, ok, su.key, su.err, i, len(keys))
		}
	}

	var lt blockIter
	_ = lt.init(data)
	ok = lt.seekLT(ikey, compareInternal)
	if ok && (len(lt.key) < trailerLen || compareInternal(lt.key, ikey) >= 0) {
		t.Fatalf("seekLT(%q) landed on %q at or above it", ikey, lt.key)
	}
	if !ok && lt.err != nil && !errors.Is(lt.err, ErrCorrupt) {
		t.Fatalf("seekLT: %v is not ErrCorrupt", lt.err)
	}
	if consistent {
		i, _ := slices.BinarySearchFunc(keys, ikey, compareInternal)
		i--
		if ok != (i >= 0) || lt.err != nil || (ok && (!bytes.Equal(lt.key, keys[i]) || !bytes.Equal(lt.val, vals[i]))) {
			t.Fatalf("seekLT(%q) = %v at %q (err %v), linear scan finds entry %d of %d", ikey, ok, lt.key, lt.err, i, len(keys))
		}
	}

	// A backward scan ends (each prev lands on an entry before the
	// current one, or stops) and, on a consistent block, reads the
	// entries in reverse.
	var bw blockIter
	_ = bw.init(data)
	n := 0
	for ok := bw.last(); ok; ok = bw.prev() {
		n++
		if n > len(data) {
			t.Fatalf("backward scan does not end")
		}
		if len(bw.key) < trailerLen {
			t.Fatalf("backward scan landed on short key %q", bw.key)
		}
		if consistent && (n > len(keys) || !bytes.Equal(bw.key, keys[len(keys)-n]) || !bytes.Equal(bw.val, vals[len(keys)-n])) {
			t.Fatalf("backward scan entry %d = %q, want entry %d of %d", n, bw.key, len(keys)-n, len(keys))
		}
	}
	if bw.err != nil && !errors.Is(bw.err, ErrCorrupt) {
		t.Fatalf("backward scan: %v is not ErrCorrupt", bw.err)
	}
	if consistent && (n != len(keys) || bw.err != nil) {
		t.Fatalf("backward scan read %d entries (err %v), want %d", n, bw.err, len(keys))
	}
}

// blockKeys turns fuzz bytes into sorted distinct internal keys: each byte
// b adds a key of the previous user key's prefix plus b, so neighbours share
// prefixes the way real keys do.
func blockKeys(data []byte) [][]byte {
	var out [][]byte
	var uk []byte
	for i, b := range data {
		if i >= 64 {
			break
		}
		uk = append(uk[:int(b)%(len(uk)+1)], b)
		out = append(out, appendInternalKey(nil, uk, uint64(i), kind(b%3)))
	}
	slices.SortFunc(out, compareInternal)
	return slices.CompactFunc(out, func(a, b []byte) bool { return bytes.Equal(userKey(a), userKey(b)) })
}
