package memcache

import (
	"io"
	"strings"
	"testing"
)

// loopReader serves data over and over, like a client that never stops.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

// TestReadZeroAllocs proves the hot path allocates nothing once the Request
// and Reader are warm.
func TestReadZeroAllocs(t *testing.T) {
	tests := []struct{ name, in string }{
		{"get", "get user:1000\r\n"},
		{"get multi", "get k1 k2 k3 k4 k5 k6 k7 k8 k9 k10\r\n"},
		{"gets", "gets user:1000\r\n"},
		{"set", "set user:1000 0 0 32\r\n" + strings.Repeat("v", 32) + "\r\n"},
		{"set noreply", "set user:1000 7 3600 32 noreply\r\n" + strings.Repeat("v", 32) + "\r\n"},
		{"set 4 KB", "set user:1000 0 0 4096\r\n" + strings.Repeat("v", 4096) + "\r\n"},
		{"set 32 KB spill", "set user:1000 0 0 32768\r\n" + strings.Repeat("v", 32768) + "\r\n"},
		{"cas", "cas user:1000 0 0 2 123\r\nvv\r\n"},
		{"delete", "delete user:1000\r\n"},
		{"incr", "incr counter 1\r\n"},
		{"decr", "decr counter 1\r\n"},
		{"touch", "touch user:1000 60\r\n"},
		{"gat", "gat 60 user:1000\r\n"},
		{"pipeline", "get a\r\nset b 0 0 1\r\nx\r\ndelete c\r\nincr d 1\r\n"},
	}
	for _, tt := range tests {
		r := NewReader(&loopReader{data: []byte(tt.in)}, 16<<10, func(int) int { return 1 << 20 })
		var req Request
		for range 100 { // warm up: grow req.Keys and the spill buffer
			if err := r.Read(&req); err != nil {
				t.Fatalf("%s: Read(%q) = %v", tt.name, abbrev(tt.in), err)
			}
		}
		allocs := testing.AllocsPerRun(1000, func() {
			if err := r.Read(&req); err != nil {
				t.Fatalf("%s: Read = %v", tt.name, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: Read(%q) allocates %.1f times per request, want 0", tt.name, abbrev(tt.in), allocs)
		}
	}
}

// TestReadErrorZeroAllocs covers the common client errors: answering them
// must not allocate either.
func TestReadErrorZeroAllocs(t *testing.T) {
	for _, in := range []string{"bogus\r\n", "set a 0 0 x\r\n", "incr a x\r\n", "set a 0 0 3\r\nabcde\r\n"} {
		r := NewReader(&loopReader{data: []byte(in)}, 16<<10, nil)
		var req Request
		for range 10 {
			_ = r.Read(&req)
		}
		allocs := testing.AllocsPerRun(1000, func() { _ = r.Read(&req) })
		if allocs != 0 {
			t.Errorf("Read(%q) allocates %.1f times per request, want 0", in, allocs)
		}
	}
}

func TestWriterZeroAllocs(t *testing.T) {
	w := NewWriter(io.Discard, 16<<10)
	key, val := []byte("user:1000"), []byte(strings.Repeat("v", 32))
	tests := []struct {
		name string
		f    func()
	}{
		{"Value", func() { w.Value(key, 7, val, 0, false) }},
		{"Value cas", func() { w.Value(key, 7, val, 1<<40, true) }},
		{"Line", func() { w.Line(Stored) }},
		{"Uint", func() { w.Uint(1 << 50) }},
		{"Stat", func() { w.Stat("version", "1.6.18") }},
		{"StatUint", func() { w.StatUint("curr_items", 1<<40) }},
		{"StatInt", func() { w.StatInt("x", -1) }},
		{"Flush", func() { w.Line(End); _ = w.Flush() }},
	}
	for _, tt := range tests {
		if allocs := testing.AllocsPerRun(1000, tt.f); allocs != 0 {
			t.Errorf("Writer.%s allocates %.1f times per call, want 0", tt.name, allocs)
		}
	}
}
