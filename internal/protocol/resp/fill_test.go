package resp

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// chunks is a reader that returns its chunks one per Read, then err.
type chunks struct {
	parts []string
	err   error
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, c.err
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	if c.parts[0] == "" {
		c.parts = c.parts[1:]
	}
	return n, nil
}

// TestFillKeepsWhatArrives: Fill buffers more input without consuming
// any, keeps it across a read error (a deadline), reports a full buffer
// without reading, and the requests then parse in order.
func TestFillKeepsWhatArrives(t *testing.T) {
	src := &chunks{parts: []string{"*1\r\n$4\r\nPING\r\n", "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n"}, err: os.ErrDeadlineExceeded}
	r := NewReader(src, 64, 0)
	if _, err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	n := r.Buffered()
	if full, err := r.Fill(); full || err != nil || r.Buffered() <= n {
		t.Fatalf("Fill = %v, %v with %d buffered (was %d)", full, err, r.Buffered(), n)
	}
	if full, err := r.Fill(); full || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Fill at a deadline = %v, %v", full, err)
	}
	src.err = io.EOF
	for _, want := range []string{"[PING]", "[ECHO hi]"} {
		argv, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		if got := "[" + string(joinArgs(argv)) + "]"; got != want {
			t.Fatalf("request %s, want %s", got, want)
		}
	}
	if _, err := r.Read(); err != io.EOF {
		t.Fatalf("after the requests: %v, want EOF", err)
	}

	// A full buffer: Fill says so and reads nothing.
	big := &chunks{parts: []string{strings.Repeat("x", 100)}, err: io.EOF}
	r = NewReader(big, 16, 0)
	for {
		full, err := r.Fill()
		if err != nil {
			t.Fatalf("Fill: %v", err)
		}
		if full {
			break
		}
	}
	if r.Buffered() != 16 || len(big.parts) != 1 || len(big.parts[0]) != 84 {
		t.Fatalf("full buffer: %d buffered, %d left to read", r.Buffered(), len(big.parts[0]))
	}
}

func joinArgs(argv [][]byte) []byte {
	var b []byte
	for i, a := range argv {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, a...)
	}
	return b
}
