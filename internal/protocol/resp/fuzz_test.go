package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"testing"
	"testing/iotest"
)

// FuzzReader feeds arbitrary bytes to the Reader. It must never panic,
// never return an argument longer than the bulk limit or the inline limit,
// and parse the same requests whether the bytes arrive whole or one at a
// time.
func FuzzReader(f *testing.F) {
	for _, tt := range readerTests {
		if len(tt.in) < 4096 {
			f.Add([]byte(tt.in))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		const maxBulk = 64
		whole, errWhole := readAll(bytes.NewReader(in), 32, maxBulk)
		split, errSplit := readAll(iotest.OneByteReader(bytes.NewReader(in)), 32, maxBulk)
		if fmt.Sprint(whole) != fmt.Sprint(split) {
			t.Fatalf("Read(%q): whole %v, one byte at a time %v", in, whole, split)
		}
		if !sameError(errWhole, errSplit) {
			t.Fatalf("Read(%q): whole error %v, one byte at a time %v", in, errWhole, errSplit)
		}
		r := NewReader(bytes.NewReader(in), 32, maxBulk)
		for {
			argv, err := r.Read()
			if err != nil {
				var pe ProtocolError
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.As(err, &pe) {
					t.Fatalf("Read(%q): unexpected error type %T %v", in, err, err)
				}
				return
			}
			for _, a := range argv {
				if len(a) > MaxInlineLen {
					t.Fatalf("Read(%q): argument of %d bytes", in, len(a))
				}
			}
		}
	})
}

// sameError compares the errors that ended two parses of the same input.
// A protocol error may be found at a different point only if the stream
// was cut, which neither parse sees here, so they must match exactly.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}

// FuzzMultibulkRoundTrip encodes arguments as a multibulk request and
// checks they parse back unchanged, in RESP's binary-safe framing.
func FuzzMultibulkRoundTrip(f *testing.F) {
	f.Add([]byte("SET"), []byte("key"), []byte("value"))
	f.Add([]byte("ECHO"), []byte("\r\n"), []byte{})
	f.Add([]byte("*1\r\n"), []byte("$-1"), []byte("\x00\xff"))
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		var in bytes.Buffer
		in.WriteString("*3\r\n")
		for _, arg := range [][]byte{a, b, c} {
			in.WriteString("$" + strconv.Itoa(len(arg)) + "\r\n")
			in.Write(arg)
			in.WriteString("\r\n")
		}
		r := NewReader(iotest.HalfReader(&in), 16, 1<<20)
		argv, err := r.Read()
		if err != nil {
			t.Fatalf("Read = %v", err)
		}
		if len(argv) != 3 || !bytes.Equal(argv[0], a) || !bytes.Equal(argv[1], b) || !bytes.Equal(argv[2], c) {
			t.Fatalf("round trip of %q %q %q = %q", a, b, c, argv)
		}
	})
}

// FuzzReadRaw checks ReadRaw against Read: the same requests from the
// same bytes (with Ready's look-ahead or without), and when it hands out
// a request's bytes, they are that request exactly: read alone they
// parse to the same arguments and nothing is left over.
func FuzzReadRaw(f *testing.F) {
	for _, tt := range readerTests {
		if len(tt.in) < 4096 {
			f.Add([]byte(tt.in), false)
		}
	}
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nvv\r\n*1\r\n$4\r\nPING\r\n"), true)
	f.Fuzz(func(t *testing.T, in []byte, ready bool) {
		const maxBulk = 64
		want, _ := readAll(bytes.NewReader(in), 32, maxBulk)
		r := NewReader(bytes.NewReader(in), 32, maxBulk)
		var got []string
		var raw []byte
		for {
			if ready {
				r.Ready()
			}
			argv, out, ok, err := r.ReadRaw(raw[:0])
			if err != nil {
				break
			}
			if !ok && len(out) != 0 {
				t.Fatalf("ReadRaw(%q): not ok, yet %q appended", in, out)
			}
			raw = out
			got = append(got, fmt.Sprintf("%q", argv))
			if !ok {
				continue
			}
			alone := NewReader(bytes.NewReader(out), len(out)+16, maxBulk)
			again, err := alone.Read()
			if err != nil || fmt.Sprint(again) != fmt.Sprint(argv) || alone.Buffered() != 0 {
				t.Fatalf("ReadRaw(%q): request %q gave raw %q, which reads as %q (err %v, %d left)", in, argv, out, again, err, alone.Buffered())
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ReadRaw(%q): %q, Read: %q", in, got, want)
		}
	})
}
