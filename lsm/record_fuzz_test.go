package lsm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// FuzzRecordReader feeds arbitrary bytes to the record reader as a whole log
// (WAL or manifest). It must return records or an error, never panic, and
// every record it returns must sit where the framing says with a checksum
// that verifies.
func FuzzRecordReader(f *testing.F) {
	ef := makeEngineFiles(f)
	f.Add(ef.wal)
	f.Add(ef.manifest)
	f.Add(append(append([]byte(nil), ef.wal...), make([]byte, 40)...)) // zero tail
	f.Add(ef.wal[:len(ef.wal)-3])                                      // torn payload
	f.Add([]byte{})
	f.Add(make([]byte, recordHeaderLen))
	f.Add(appendRecord(nil, nil))
	f.Add([]byte{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}) // length 2^32-1
	f.Fuzz(func(t *testing.T, log []byte) {
		r := recordReader{buf: log, name: "fuzz"}
		off := 0
		for i := 0; ; i++ {
			if i > len(log)/recordHeaderLen+1 {
				t.Fatalf("more records than the log can hold")
			}
			rec, err := r.next()
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v is not ErrCorrupt", err)
				}
				return
			}
			if rec == nil {
				if r.validEnd != off || (!r.torn && off != len(log)) {
					t.Fatalf("end at %d: validEnd %d torn %v, log %d bytes", off, r.validEnd, r.torn, len(log))
				}
				return
			}
			h := log[off:]
			n := binary.LittleEndian.Uint32(h[4:])
			if int(n) != len(rec) || ^n != binary.LittleEndian.Uint32(h[8:]) ||
				!bytes.Equal(h[recordHeaderLen:recordHeaderLen+len(rec)], rec) {
				t.Fatalf("record at %d is not what the header frames", off)
			}
			end := recordHeaderLen + len(rec)
			if crcMask(crc32.Checksum(h[4:end], crcTable)) != binary.LittleEndian.Uint32(h) {
				t.Fatalf("record at %d returned with a bad checksum", off)
			}
			off += end
		}
	})
}

// FuzzRecordRoundTrip checks the framing as a property: payloads written by
// appendRecord read back identically; the same log cut at any byte reads
// back as a prefix of them (a torn tail, never an error or garbage); and a
// zero-filled tail, as a preallocated log leaves, changes nothing.
func FuzzRecordRoundTrip(f *testing.F) {
	ef := makeEngineFiles(f)
	f.Add(splitEncode(ef.walRecs))
	f.Add(splitEncode(ef.edits))
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{1, 0xff, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		payloads := splitDecode(script)
		var log []byte
		var ends []int
		for _, p := range payloads {
			log = appendRecord(log, p)
			ends = append(ends, len(log))
		}
		check := func(buf []byte, want int, what string) {
			t.Helper()
			r := recordReader{buf: buf}
			for i := 0; ; i++ {
				rec, err := r.next()
				if err != nil {
					t.Fatalf("%s: record %d: %v", what, i, err)
				}
				if rec == nil {
					if i != want {
						t.Fatalf("%s: read %d records, want %d", what, i, want)
					}
					return
				}
				if i >= want || !bytes.Equal(rec, payloads[i]) {
					t.Fatalf("%s: record %d = %q, want payload %d of %d", what, i, rec, i, want)
				}
			}
		}
		check(log, len(payloads), "whole log")
		check(append(log[:len(log):len(log)], make([]byte, 3*recordHeaderLen)...), len(payloads), "zero tail")
		complete := 0
		for complete < len(ends) && ends[complete] <= len(log)/2 {
			complete++
		}
		check(log[:len(log)/2], complete, "cut in half")

		// Every cut, read from the start of the record it falls in (the
		// records before it are whole and read as above): a cut at a record
		// boundary is a clean end, any other cut a torn tail.
		//
		// The same cut followed by zeros is what a kill -9 leaves in a
		// mapped log (preallocated with zeros, written in address order):
		// also a clean end or a torn tail, even when the cut falls inside a
		// record's header, never ErrCorrupt.
		zeros := make([]byte, 2*recordHeaderLen)
		start := 0
		for i, end := range ends {
			for cut := start; cut < end; cut++ {
				r := recordReader{buf: log[:cut], off: start}
				rec, err := r.next()
				if rec != nil || err != nil || r.torn != (cut > start) || r.validEnd != start {
					t.Fatalf("log of %d records cut at %d (record at %d): %q, %v, torn %v, validEnd %d",
						len(payloads), cut, start, rec, err, r.torn, r.validEnd)
				}
				padded := append(log[:cut:cut], zeros...)
				r = recordReader{buf: padded, off: start}
				rec, err = r.next()
				if rec != nil && allZero(log[cut:end]) && bytes.Equal(rec, payloads[i]) {
					continue // the cut lost only zero bytes: the record is whole
				}
				if rec != nil || err != nil || !r.torn || r.validEnd != start {
					t.Fatalf("log of %d records cut at %d (record at %d) then zeros: %q, %v, torn %v, validEnd %d",
						len(payloads), cut, start, rec, err, r.torn, r.validEnd)
				}
			}
			start = end
		}
	})
}

// splitDecode turns fuzz bytes into payloads: a length byte, then that many
// bytes (fewer at the end of the input).
func splitDecode(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := min(int(b[0]), len(b)-1)
		out = append(out, b[1:1+n])
		b = b[1+n:]
	}
	return out
}

func splitEncode(ps [][]byte) []byte {
	var out []byte
	for _, p := range ps {
		p = p[:min(len(p), 255)]
		out = append(out, byte(len(p)))
		out = append(out, p...)
	}
	return out
}

// FuzzRecyclableReader feeds arbitrary bytes to the reader of a recyclable
// log (log 5): it must return records or ErrCorrupt, never panic, and every
// record it returns must be a whole record of log 5 whose checksum
// verifies, where the previous one ended.
func FuzzRecyclableReader(f *testing.F) {
	life, _ := logLife(nil, 5, 6, true)
	stale, _ := logLife(nil, 3, 12, true)
	f.Add(life)
	f.Add(append(bytes.Clone(life), make([]byte, 64)...))
	over := bytes.Clone(stale)
	copy(over, life)
	f.Add(over)
	f.Add(stale)
	f.Add(appendRecord(nil, []byte("legacy")))
	f.Add(make([]byte, recycHeaderLen))
	f.Fuzz(func(t *testing.T, log []byte) {
		r := recordReader{buf: log, name: "fuzz", recyclable: true, logNum: 5}
		off := 0
		for i := 0; ; i++ {
			if i > len(log)/recycHeaderLen+1 {
				t.Fatalf("more records than the log can hold")
			}
			rec, err := r.next()
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v is not ErrCorrupt", err)
				}
				return
			}
			if rec == nil {
				if r.validEnd != off || (!r.torn && off != len(log)) {
					t.Fatalf("end at %d: validEnd %d torn %v, log %d bytes", off, r.validEnd, r.torn, len(log))
				}
				return
			}
			p, n, num, _ := parseRecyclable(log[off:])
			if n == 0 || num != 5 || !bytes.Equal(p, rec) {
				t.Fatalf("record at %d is not a whole record of log 5", off)
			}
			off += n
		}
	})
}
