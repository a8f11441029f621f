package resp

import (
	"bytes"
	"fmt"
	"testing"
	"testing/iotest"
)

// readAllWith parses every request of in with a Reader of the given
// buffer and bulk limit, calling Ready before each Read when ready is
// set, and returns the requests and the error that ended the parse.
func readAllWith(in []byte, size, maxBulk int, unauth, slow, ready bool, one bool) ([]string, error) {
	var src = bytes.NewReader(in)
	r := NewReader(src, size, maxBulk)
	if one {
		r = NewReader(iotest.OneByteReader(src), size, maxBulk)
	}
	r.slowOnly = slow
	r.SetUnauthenticated(unauth)
	var got []string
	for {
		if ready {
			if r.Ready() == FrameComplete {
				// Read must not need the stream: check it did not grow.
				before := r.Buffered()
				argv, err := r.Read()
				if err != nil {
					return got, fmt.Errorf("Ready said complete, Read: %w", err)
				}
				if r.Buffered() > before {
					return got, fmt.Errorf("Ready said complete, Read read more")
				}
				got = append(got, fmt.Sprintf("%q %v", argv, r.TooLarge()))
				continue
			}
		}
		argv, err := r.Read()
		if err != nil {
			return got, err
		}
		got = append(got, fmt.Sprintf("%q %v", argv, r.TooLarge()))
	}
}

// FuzzReadyMatchesRead checks the one-pass parse of buffered requests
// (Ready, and Read's fast path) against readMultibulk alone: the same
// requests, the same TooLarge flags and the same final error, whether the
// bytes arrive whole or one at a time, authenticated or not.
func FuzzReadyMatchesRead(f *testing.F) {
	for _, tt := range readerTests {
		if len(tt.in) < 4096 {
			f.Add([]byte(tt.in), false)
		}
	}
	for _, tt := range frameTests {
		f.Add([]byte(tt.in), true)
	}
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$70\r\n"+string(bytes.Repeat([]byte("x"), 70))+"\r\n*1\r\n$4\r\nPING\r\n"), false)
	f.Add([]byte("*11\r\n"+string(bytes.Repeat([]byte("$1\r\nx\r\n"), 11))), true)
	f.Fuzz(func(t *testing.T, in []byte, unauth bool) {
		const maxBulk = 64
		want, wantErr := readAllWith(in, 32, maxBulk, unauth, true, false, false)
		for _, mode := range []struct{ ready, one bool }{{false, false}, {true, false}, {true, true}} {
			got, err := readAllWith(in, 32, maxBulk, unauth, false, mode.ready, mode.one)
			if fmt.Sprint(got) != fmt.Sprint(want) || !sameError(err, wantErr) {
				t.Fatalf("%q (unauth %v, ready %v, one byte %v):\n got %v, %v\nwant %v, %v",
					in, unauth, mode.ready, mode.one, got, err, want, wantErr)
			}
		}
	})
}
