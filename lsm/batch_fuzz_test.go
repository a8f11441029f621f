package lsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"
)

type batchEntry struct {
	k          kind
	key, value []byte
	seq        uint64
}

// decodeBatch decodes a whole batch payload, as WAL replay does.
func decodeBatch(data []byte) ([]batchEntry, error) {
	it, err := newBatchIter(data)
	if err != nil {
		return nil, err
	}
	var out []batchEntry
	for {
		k, key, value, seq, ok, err := it.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, batchEntry{k, key, value, seq})
	}
}

// encodeBatch writes entries back with the engine's Batch methods.
func encodeBatch(es []batchEntry) []byte {
	b := NewBatch()
	for _, e := range es {
		switch e.k {
		case kindSet:
			b.Put(e.key, e.value)
		case kindSetExpiring:
			b.PutExpiring(e.key, e.value[8:], time.Unix(0, int64(binary.LittleEndian.Uint64(e.value))))
		case kindDelete:
			b.Delete(e.key)
		}
	}
	seq := uint64(0)
	if len(es) > 0 {
		seq = es[0].seq
	}
	b.setSeq(seq)
	return b.data
}

// FuzzBatchDecode feeds arbitrary bytes to the batch decoder that WAL replay
// and the memtable insert use. It must return an error or a well-formed batch
// (known kinds, expiring values with their 8-byte expiry, consecutive
// sequence numbers that fit a trailer, nothing left over), never panic; a
// decoded batch re-encoded with Batch decodes to the same entries. The input
// also drives a script of Put/PutExpiring/Delete whose batch must decode to
// exactly what was added.
func FuzzBatchDecode(f *testing.F) {
	ef := makeEngineFiles(f)
	for _, rec := range ef.walRecs {
		f.Add(rec)
	}
	b := NewBatch()
	b.Put([]byte("k"), bytes.Repeat([]byte("v"), 200)) // two-byte uvarint
	b.setSeq(maxSeq)
	f.Add(slices.Clone(b.data))
	f.Add([]byte{})
	f.Add(make([]byte, batchHeaderLen))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, byte(kindSetExpiring), 1, 'k', 7, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, byte(kindSet), 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := decodeBatch(data)
		if err != nil {
			if !errors.Is(err, errBadBatch) {
				t.Fatalf("error %v is not errBadBatch", err)
			}
		} else {
			for i, e := range es {
				if e.k > kindMax || (e.k == kindSetExpiring && len(e.value) < 8) {
					t.Fatalf("entry %d: kind %d with %d-byte value", i, e.k, len(e.value))
				}
				if e.seq > maxSeq || (i > 0 && e.seq != es[i-1].seq+1) {
					t.Fatalf("entry %d: seq %d after %+v", i, e.seq, es[max(i-1, 0)])
				}
			}
			again, err := decodeBatch(encodeBatch(es))
			if err != nil || !sameEntries(again, es) {
				t.Fatalf("re-encoded batch decodes to %+v, %v; want %+v", again, err, es)
			}
		}
		// The memtable insert, which decodes a batch in groups it
		// prefetches: it fails exactly where decoding fails, and what it
		// inserts reads back at each entry's sequence number.
		m := newMemTable(4096+16*len(data), 1)
		if ierr := insertBatch(m, data); (ierr != nil) != (err != nil) {
			t.Fatalf("insertBatch: %v; decodeBatch: %v", ierr, err)
		} else if err == nil {
			for _, e := range es {
				k, v, ok := m.get(e.key, e.seq)
				if !ok || k != e.k || !bytes.Equal(v, e.value) {
					t.Fatalf("get(%q, %d) = %d %q %v; want %+v", e.key, e.seq, k, v, ok, e)
				}
			}
		}

		// The input as a script of writes.
		want := batchScript(data)
		got, err := decodeBatch(encodeBatch(want))
		if err != nil || !sameEntries(got, want) {
			t.Fatalf("batch of %+v decodes to %+v, %v", want, got, err)
		}
	})
}

// batchScript turns fuzz bytes into entries: an op byte (kind in the low two
// bits, key length in the rest), a value length byte, then key and value.
func batchScript(b []byte) []batchEntry {
	var out []batchEntry
	seq := uint64(1)
	if len(b) > 0 {
		seq = uint64(b[0]) << 48
		b = b[1:]
	}
	for len(b) >= 2 {
		k := kind(b[0] % 3)
		klen, vlen := min(int(b[0]>>2), len(b)-2), int(b[1])
		key := b[2 : 2+klen]
		b = b[2+klen:]
		vlen = min(vlen, len(b))
		var value []byte
		switch k {
		case kindSet:
			value = b[:vlen]
		case kindSetExpiring:
			value = binary.LittleEndian.AppendUint64(nil, uint64(vlen)+1)
			value = append(value, b[:vlen]...)
		}
		b = b[vlen:]
		out = append(out, batchEntry{k, key, value, seq + uint64(len(out))})
	}
	return out
}

func sameEntries(a, b []batchEntry) bool {
	return slices.EqualFunc(a, b, func(x, y batchEntry) bool {
		return x.k == y.k && x.seq == y.seq && bytes.Equal(x.key, y.key) && bytes.Equal(x.value, y.value)
	})
}
