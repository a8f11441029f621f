package memcache

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// noMoreReader hands out its bytes and then fails: Read must never ask
// for bytes past a request Frame called complete.
type noMoreReader struct{ r *bytes.Reader }

var errAskedForMore = errors.New("asked for bytes past the frame")

func (m noMoreReader) Read(p []byte) (int, error) {
	if m.r.Len() == 0 {
		return 0, errAskedForMore
	}
	return m.r.Read(p)
}

// frameReader returns a Reader of buffer size over in, with the fuzz
// tests' small limits, and its buffer filled as far as in and size allow.
func frameReader(rd io.Reader, size, fill int) *Reader {
	r := NewReader(rd, size, fuzzMaxValue)
	r.maxLine, r.maxRetrievalLine = fuzzMaxLine, fuzzMaxRetrievalLine
	_, _ = r.br.Peek(fill)
	return r
}

func TestFrame(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Framing
	}{
		{"", FrameNeedMore},
		{"get a", FrameNeedMore},
		{"get a\r", FrameNeedMore},
		{"get a\r\n", FrameComplete},
		{"get a\n", FrameComplete},
		{"bogus\r\n", FrameComplete},
		{"set a 0 0 1\r\n", FrameNeedMore},
		{"set a 0 0 1\r\nx", FrameNeedMore},
		{"set a 0 0 1\r\nx\r\n", FrameComplete},
		{"set a 0 0 x\r\n", FrameComplete},
		{"ms a 2\r\nhi", FrameNeedMore},
		{"ms a 2\r\nhi\r\n", FrameComplete},
		{"ms a 2 !\r\nhi\r\n", FrameComplete},
		{"set a 0 0 1000\r\n", FrameOther},
		{"\x80\x01", FrameOther},
	} {
		var scratch Request
		r := frameReader(bytes.NewReader([]byte(tt.in)), 256, len(tt.in))
		if got := r.Frame(&scratch); got != tt.want {
			t.Errorf("Frame(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// FuzzFrame checks Frame against Read, the parser it vouches for: from a
// buffer Frame calls complete, Read parses a request (or refuses one)
// without reading further; a buffer Frame says needs more is, cut there,
// one Read finds unfinished.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{
		"get a\r\n", "set a 0 0 1\r\nx\r\n", "set a 0 0 3\r\nabcdef\r\n", "set a 0 0 400\r\n",
		"cas a 1 2 1 3 noreply\r\nx\r\n", "set k 0 0 noreply\r\nx\r\n", "ms a 2 T0 F5\r\nhi\r\n",
		"ms a 2 !\r\nhi\r\nmn\r\n", "ms a 400\r\n", "ms a x\r\nhi\r\n", "mg a v\r\n", "\r\n",
		"GET / HTTP/1.1\r\n", "\x80\x01\x00\x00", "get " + string(bytes.Repeat([]byte("k"), 300)) + "\r\n",
	} {
		f.Add([]byte(s), uint8(64))
	}
	f.Fuzz(func(t *testing.T, in []byte, size uint8) {
		if len(in) > fuzzMaxInput {
			return
		}
		bufSize := max(int(size), 16)
		var scratch Request
		r := frameReader(bytes.NewReader(in), bufSize, min(len(in), bufSize))
		buffered := append([]byte(nil), r.Pending()...)
		var req Request
		switch r.Frame(&scratch) {
		case FrameComplete:
			r2 := frameReader(noMoreReader{bytes.NewReader(buffered)}, bufSize, len(buffered))
			err := r2.Read(&req)
			if errors.Is(err, errAskedForMore) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				t.Fatalf("Frame(%q) complete, but Read: %v", buffered, err)
			}
		case FrameNeedMore:
			r2 := frameReader(bytes.NewReader(buffered), bufSize, len(buffered))
			err := r2.Read(&req)
			if len(buffered) == 0 {
				if err != io.EOF {
					t.Fatalf("Read of nothing: %v", err)
				}
				return
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Frame(%q) needs more, but Read: %v", buffered, err)
			}
		}
	})
}
