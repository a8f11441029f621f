package store

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// randomEntry is an entry with random header fields, each optional field
// present about half the time.
func randomEntry(r *rand.Rand, base uint64) entry {
	e := entry{cas: base + uint64(r.Uint32()), atime: r.Uint32()}
	if r.IntN(4) == 0 {
		e.cas = r.Uint64() // most likely too far from base for a short CAS
	}
	e.setFreq(uint8(r.IntN(4)))
	if r.IntN(2) == 0 {
		e.info |= infoFetched
	}
	if r.IntN(2) == 0 {
		e.deadline = r.Int64() | 1
	}
	if r.IntN(2) == 0 {
		e.flags = r.Uint32() | 1
	}
	if r.IntN(2) == 0 {
		e.meta = uint8(r.IntN(7) + 1)
	}
	return e
}

// checkDecoded compares what decodeHeader read back with what was encoded.
func checkDecoded(t testing.TB, got, want *entry, key, value, buf []byte) {
	t.Helper()
	if got.info != want.info || got.cas != want.cas || got.atime != want.atime ||
		got.deadline != want.deadline || got.flags != want.flags || got.meta != want.meta ||
		got.klen != uint32(len(key)) || got.vlen != uint32(len(value)) {
		t.Fatalf("decoded %+v, want %+v (klen %d vlen %d)", *got, *want, len(key), len(value))
	}
	if k := buf[got.body : got.body+got.klen]; !bytes.Equal(k, key) {
		t.Fatalf("decoded key %q, want %q", k, key)
	}
	if v := buf[got.body+got.klen : got.body+got.klen+got.vlen]; !bytes.Equal(v, value) {
		t.Fatalf("decoded value of %d bytes differs", len(v))
	}
}

// TestSegmentWalk builds segments of random records, kills some and
// rewrites the headers of others in place, then walks them as compaction,
// eviction and the sweeper do: every record must come back with its
// fields, and the lengths must add up to exactly the bytes used.
func TestSegmentWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 200 {
		buf := make([]byte, 1<<16)
		sg := &segment{buf: buf, baseCAS: r.Uint64() >> 1}
		var want []entry
		var keys, values [][]byte
		off := 0
		for {
			e := randomEntry(r, sg.baseCAS)
			key := make([]byte, 1+r.IntN(250))
			value := make([]byte, r.IntN([]int{10, 200, 5000}[r.IntN(3)]))
			for i := range key {
				key[i] = byte(r.Uint32())
			}
			for i := range value {
				value[i] = byte(r.Uint32())
			}
			layout := e.layout(sg.baseCAS)
			n := hdrSize(layout, len(key), len(value)) + len(key) + len(value)
			if off+n > len(buf) {
				break
			}
			e.klen, e.vlen = uint32(len(key)), uint32(len(value))
			h := encodeHeader(buf[off:], &e, layout, sg.baseCAS)
			if h != hdrSize(layout, len(key), len(value)) {
				t.Fatalf("encodeHeader wrote %d bytes, hdrSize says %d", h, hdrSize(layout, len(key), len(value)))
			}
			copy(buf[off+h:], key)
			copy(buf[off+h+len(key):], value)
			e.off, e.body = uint32(off), uint32(off+h)
			switch r.IntN(4) {
			case 0: // killed, as killLocked does
				e.info |= infoDead
				buf[off] = e.info
			case 1: // changed in place, as commitLocked does
				e.cas, e.atime = sg.baseCAS+uint64(r.Uint32()), r.Uint32()
				e.setFreq(uint8(r.IntN(4)))
				if e.deadline != 0 {
					e.deadline = r.Int64() | 1
				}
				if e.meta != 0 {
					e.meta = uint8(r.IntN(7) + 1)
				}
				if !fitsInPlace(sg, &e) {
					t.Fatalf("a token %d above the base does not fit in place", e.cas-sg.baseCAS)
				}
				writeInPlace(sg, &e)
			}
			want = append(want, e)
			keys, values = append(keys, key), append(values, value)
			off += n
		}
		var got entry
		walked := uint32(0)
		for i := range want {
			decodeHeader(sg, walked, &got)
			checkDecoded(t, &got, &want[i], keys[i], values[i], buf)
			if got.size() != want[i].size() {
				t.Fatalf("round %d record %d: size %d, want %d", round, i, got.size(), want[i].size())
			}
			walked += got.size()
		}
		if walked != uint32(off) {
			t.Fatalf("round %d: walk ended at %d, records end at %d", round, walked, off)
		}
	}
}

// FuzzRecordHeader round-trips header fields through encodeHeader and
// decodeHeader, in a segment with the given base token.
func FuzzRecordHeader(f *testing.F) {
	f.Add(uint8(0), uint64(1), uint64(0), uint32(0), int64(0), uint32(0), uint8(0), 14, 100)
	f.Add(uint8(0x7f), uint64(1<<63), uint64(1<<62), uint32(1<<31), int64(-1), uint32(1), uint8(7), 250, 1<<20)
	f.Fuzz(func(t *testing.T, info uint8, cas, base uint64, atime uint32, deadline int64, flags uint32, meta uint8, klen, vlen int) {
		klen, vlen = 1+abs(klen)%250, abs(vlen)%(1<<21)
		e := entry{info: info &^ (presence | infoDead), cas: cas, atime: atime, deadline: deadline, flags: flags, meta: meta}
		e.klen, e.vlen = uint32(klen), uint32(vlen)
		layout := e.layout(base)
		sg := &segment{buf: make([]byte, hdrSize(layout, klen, vlen)+klen+vlen), baseCAS: base}
		h := encodeHeader(sg.buf, &e, layout, base)
		var got entry
		decodeHeader(sg, 0, &got)
		if int(got.body) != h || got.size() != uint32(len(sg.buf)) {
			t.Fatalf("header %d bytes, body at %d; size %d, record %d", h, got.body, got.size(), len(sg.buf))
		}
		checkDecoded(t, &got, &e, sg.buf[h:h+klen], sg.buf[h+klen:], sg.buf)
	})
}

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}
