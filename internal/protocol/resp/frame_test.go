package resp

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

var frameTests = []struct {
	in   string
	n    int
	want Framing
}{
	{"", 0, FrameNeedMore},
	{"*", 0, FrameNeedMore},
	{"*1\r", 0, FrameNeedMore},
	{"*1\r\n", 0, FrameNeedMore},
	{"*1\r\n$4\r\nPING", 0, FrameNeedMore},
	{"*1\r\n$4\r\nPING\r", 0, FrameNeedMore},
	{"*1\r\n$4\r\nPING\r\n", 14, FrameComplete},
	{"*1\r\n$4\r\nPING\r\n*1\r\n", 14, FrameComplete},
	{"*2\r\n$3\r\nGET\r\n$0\r\n\r\n", 19, FrameComplete},
	{"*1\r\n$4\r\nPINGxx", 0, FrameOther},
	{"*1\r\n:4\r\n", 0, FrameOther},
	{"*0\r\n", 0, FrameOther},
	{"*-1\r\n", 0, FrameOther},
	{"*x\r\n", 0, FrameOther},
	{"*1\rx", 0, FrameOther},
	{"*1\r\n$-1\r\n", 0, FrameOther},
	{"*" + string(bytes.Repeat([]byte("1"), 40)), 0, FrameOther},
	{"PING\r\n", 0, FrameOther},
	{"\r\n", 0, FrameOther},
}

func TestFrame(t *testing.T) {
	for _, tt := range frameTests {
		n, got := Frame([]byte(tt.in))
		if n != tt.n || got != tt.want {
			t.Errorf("Frame(%q) = %d, %d; want %d, %d", tt.in, n, got, tt.n, tt.want)
		}
	}
}

// noMoreReader hands out its bytes and then fails the test's way: Read
// must never ask for bytes past a request Frame called complete.
type noMoreReader struct{ r *bytes.Reader }

var errAskedForMore = errors.New("asked for bytes past the frame")

func (m noMoreReader) Read(p []byte) (int, error) {
	if m.r.Len() == 0 {
		return 0, errAskedForMore
	}
	return m.r.Read(p)
}

// FuzzFrame checks Frame against Read, the parser it vouches for: a
// request Frame calls complete is parsed by Read from exactly its bytes,
// without reading further, with no error or with a ProtocolError it can
// give without more input; one Frame says needs more is, cut there, a
// prefix Read finds unfinished (io.ErrUnexpectedEOF), never malformed.
func FuzzFrame(f *testing.F) {
	for _, tt := range frameTests {
		f.Add([]byte(tt.in))
	}
	for _, tt := range readerTests {
		if len(tt.in) < 4096 {
			f.Add([]byte(tt.in))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		n, st := Frame(in)
		switch st {
		case FrameComplete:
			if n <= 0 || n > len(in) {
				t.Fatalf("Frame(%q) complete with length %d", in, n)
			}
			r := NewReader(noMoreReader{bytes.NewReader(in[:n])}, 64, 0)
			argv, err := r.Read()
			if err != nil {
				t.Fatalf("Frame(%q) complete at %d, but Read: %v", in, n, err)
			}
			if len(argv) == 0 || r.Buffered() != 0 {
				t.Fatalf("Frame(%q) complete at %d, but Read gave %q with %d bytes left", in, n, argv, r.Buffered())
			}
		case FrameNeedMore:
			r := NewReader(bytes.NewReader(in), 64, 0)
			_, err := r.Read()
			if len(in) == 0 {
				if err != io.EOF {
					t.Fatalf("Read of nothing: %v", err)
				}
				return
			}
			if err != io.ErrUnexpectedEOF {
				t.Fatalf("Frame(%q) needs more, but Read: %v", in, err)
			}
		}
	})
}
