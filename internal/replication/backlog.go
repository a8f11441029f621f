package replication

import (
	"sync"
	"sync/atomic"
)

// Backlog is the replication stream's recent bytes, a ring of fixed size
// (repl-backlog-size), addressed by stream offset: byte number off of the
// stream, counted from the primary's start as Redis's master_repl_offset
// is, sits at ring position off % size while it is among the last size
// bytes. A replica that reconnects at an offset the ring still holds
// continues from it (PSYNC +CONTINUE); one further behind needs a full
// resync.
type Backlog struct {
	mu   sync.Mutex // protects what follows
	buf  []byte
	base int64 // the offset it began at: it never holds bytes before
	end  int64 // offset just past the last byte appended

	onAppend atomic.Pointer[func()] // OnAppend
}

// NewBacklog returns an empty backlog of size bytes whose next byte is
// offset start.
func NewBacklog(size int, start int64) *Backlog {
	return &Backlog{buf: make([]byte, max(size, 1)), base: start, end: start}
}

// Append adds b at the end of the stream.
func (bl *Backlog) Append(b []byte) {
	if len(b) == 0 {
		return
	}
	bl.mu.Lock()
	n := int64(len(bl.buf))
	if int64(len(b)) > n {
		bl.end += int64(len(b)) - n // only the last n bytes can be kept
		b = b[int64(len(b))-n:]
	}
	for len(b) > 0 {
		at := bl.end % n
		c := copy(bl.buf[at:], b)
		b = b[c:]
		bl.end += int64(c)
	}
	bl.mu.Unlock()
	if f := bl.onAppend.Load(); f != nil {
		(*f)()
	}
}

// OnAppend has every Append call f once its bytes are in, on the
// appending goroutine (nil: nothing): a primary sends them to its
// replicas there (ReadFrom), with no goroutine to wake.
func (bl *Backlog) OnAppend(f func()) {
	if f == nil {
		bl.onAppend.Store(nil)
		return
	}
	bl.onAppend.Store(&f)
}

// ReadFrom appends to dst the bytes from offset off on, at most limit of
// them, and returns it with the offset after them (nothing at the end).
// ok is false when the ring no longer holds off (the reader fell behind
// by more than the ring's size). Whoever waits for more bytes is told by
// OnAppend's function.
func (bl *Backlog) ReadFrom(dst []byte, off int64, limit int) (out []byte, next int64, ok bool) {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	n := int64(len(bl.buf))
	if off > bl.end || off < bl.startLocked() {
		return dst, off, false
	}
	want := min(bl.end-off, int64(limit))
	for want > 0 {
		at := off % n
		c := min(want, n-at)
		dst = append(dst, bl.buf[at:at+c]...)
		off += c
		want -= c
	}
	return dst, off, true
}

// End is the offset just past the stream's last byte: Redis's
// master_repl_offset.
func (bl *Backlog) End() int64 {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	return bl.end
}

// Start is the offset of the oldest byte the ring still holds.
func (bl *Backlog) Start() int64 {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	return bl.startLocked()
}

func (bl *Backlog) startLocked() int64 {
	return max(bl.end-int64(len(bl.buf)), bl.base, 0)
}

// Size is the ring's capacity in bytes.
func (bl *Backlog) Size() int { return len(bl.buf) }

// Holds reports whether the bytes from offset off to the end are still in
// the ring: a replica asking to continue from off can.
func (bl *Backlog) Holds(off int64) bool {
	bl.mu.Lock()
	defer bl.mu.Unlock()
	return off <= bl.end && off >= bl.startLocked()
}
