package replication

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestBacklogKeepsTheLastBytes appends random pieces to a small ring and
// reads back from every offset it must still hold, against a model of the
// whole stream; offsets behind the ring, or before the offset the backlog
// began at (a replica's after a full resync), are refused.
func TestBacklogKeepsTheLastBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const start = 1000
	bl := NewBacklog(64, start)
	var stream []byte
	for range 500 {
		piece := make([]byte, r.IntN(100))
		for i := range piece {
			piece[i] = byte(r.IntN(256))
		}
		bl.Append(piece)
		stream = append(stream, piece...)
		end := int64(start + len(stream))
		if bl.End() != end {
			t.Fatalf("End %d, want %d", bl.End(), end)
		}
		from := max(end-64, start)
		if bl.Start() != from || !bl.Holds(from) || bl.Holds(from-1) || bl.Holds(0) {
			t.Fatalf("end %d: Start %d, Holds(%d) %v, Holds(%d) %v", end, bl.Start(), from, bl.Holds(from), from-1, bl.Holds(from-1))
		}
		off := from + int64(r.IntN(int(end-from)+1))
		got, next, ok := bl.ReadFrom(nil, off, 1<<20)
		if !ok || next != end || !bytes.Equal(got, stream[off-start:]) {
			t.Fatalf("ReadFrom(%d) = %d bytes, next %d, ok %v; want %d bytes to %d", off, len(got), next, ok, end-off, end)
		}
		if _, _, ok := bl.ReadFrom(nil, from-1, 10); ok {
			t.Fatalf("ReadFrom(%d) before the ring's start (%d) succeeded", from-1, from)
		}
	}
}

// TestBacklogReadFromAndOnAppend: ReadFrom at the end and past the ring,
// and OnAppend's function runs once per Append, after the
// bytes are in.
func TestBacklogReadFromAndOnAppend(t *testing.T) {
	bl := NewBacklog(8, 100)
	var seen []int64
	bl.OnAppend(func() { seen = append(seen, bl.End()) })
	bl.Append([]byte("abcde"))
	bl.Append([]byte("fgh"))
	if len(seen) != 2 || seen[0] != 105 || seen[1] != 108 {
		t.Fatalf("OnAppend saw ends %v, want [105 108]", seen)
	}
	out, next, ok := bl.ReadFrom(nil, 102, 4)
	if !ok || string(out) != "cdef" || next != 106 {
		t.Fatalf("ReadFrom(102, 4) = %q, %d, %v", out, next, ok)
	}
	if out, next, ok = bl.ReadFrom(nil, 108, 4); !ok || len(out) != 0 || next != 108 {
		t.Fatalf("ReadFrom at the end = %q, %d, %v", out, next, ok)
	}
	bl.Append([]byte("ijk")) // the ring holds 103..111 now
	if _, _, ok = bl.ReadFrom(nil, 102, 4); ok {
		t.Fatal("ReadFrom(102) after the ring passed it: ok")
	}
	if out, _, ok = bl.ReadFrom(nil, 103, 100); !ok || string(out) != "defghijk" {
		t.Fatalf("ReadFrom(103) = %q, %v", out, ok)
	}
	bl.OnAppend(nil)
	bl.Append([]byte("l"))
	if len(seen) != 3 {
		t.Fatalf("OnAppend(nil) still called: %v", seen)
	}
}
