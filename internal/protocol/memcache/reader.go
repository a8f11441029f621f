package memcache

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

const (
	// MaxLineLen is the longest command line accepted, not counting its
	// line ending. memcached closes a connection that sends 2048 bytes
	// without a newline; MiniKV applies the limit to every line, complete or
	// not, so the outcome does not depend on how TCP split the bytes.
	MaxLineLen = 2048

	// MaxRetrievalLineLen caps the line of a retrieval command (get, gets,
	// gat, gats, mget), whose key list may legitimately exceed MaxLineLen.
	// memcached has no cap; 2 MiB is about 8000 maximum-length keys.
	MaxRetrievalLineLen = 2 << 20

	// DefaultMaxValueLen is the data-block limit used when NewReader is
	// given a nil maxValueLen: memcached's default item size (-I 1m).
	DefaultMaxValueLen = 1 << 20

	// retainLimit is the largest spill buffer (long line, or large value
	// and its CRLF) a Reader keeps between requests. Larger ones serve one
	// request and are then dropped, so a burst of big requests on many
	// connections does not pin their peak size per connection for the life
	// of each connection (1024 connections x 1 MiB would dwarf a 64 MiB
	// cache).
	retainLimit = 64<<10 + 2

	// binaryMagic is the first byte of a memcached binary-protocol request.
	binaryMagic = 0x80
)

// Reader parses requests from a byte stream.
//
// It reads through a bufio.Reader. Lines and data blocks that fit in its
// buffer are returned by aliasing it (no copy); longer ones are gathered in
// spill buffers owned by the Reader, which are sized only by bytes actually
// received, or by a declared length that has already been checked against
// maxValueLen. After Read returns an error for which ErrorReply says close,
// the Reader is out of step and must not be used again.
type Reader struct {
	br          *bufio.Reader
	maxValueLen func(keyLen int) int
	// Line limits, MaxLineLen and MaxRetrievalLineLen outside tests: the
	// fuzz tests shrink them so that short inputs reach every limit path.
	maxLine, maxRetrievalLine int
	long                      []byte           // a line longer than br's buffer
	val                       []byte           // a data block longer than br's buffer
	key                       [MaxKeyLen]byte  // storage key, copied before br may slide
	b64key                    [MaxKeyLen]byte  // meta b key, decoded
	mline                     [MaxLineLen]byte // ms line, copied before br may slide
	keepLine                  bool             // KeepLine
	line                      []byte           // the last command line, when keepLine
}

// NewReader returns a Reader with a read buffer of size bytes.
// maxValueLen reports the largest acceptable data block for a key length;
// larger declared lengths are rejected with ErrTooLarge and swallowed.
// A nil maxValueLen allows DefaultMaxValueLen bytes for every key.
func NewReader(r io.Reader, size int, maxValueLen func(keyLen int) int) *Reader {
	if maxValueLen == nil {
		maxValueLen = defaultMaxValueLen
	}
	return &Reader{
		br:               bufio.NewReaderSize(r, size),
		maxValueLen:      maxValueLen,
		maxLine:          MaxLineLen,
		maxRetrievalLine: MaxRetrievalLineLen,
	}
}

func defaultMaxValueLen(int) int { return DefaultMaxValueLen }

// Reset discards any buffered data and makes the Reader read from rd, keeping
// its buffers, so Readers can be pooled across connections.
func (r *Reader) Reset(rd io.Reader) {
	r.br.Reset(rd)
	r.dropSpill()
}

// Buffered is the number of bytes already read and not yet parsed.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// Read parses the next request into req, which it resets first (keeping the
// capacity of its slices). It returns io.EOF at a clean end of stream,
// io.ErrUnexpectedEOF when the stream ends inside a request, one of the
// package's sentinel errors for bad input, or the underlying reader's error.
func (r *Reader) Read(req *Request) error {
	req.Reset()
	r.dropSpill()
	line, err := r.readLine()
	if err != nil {
		return err
	}
	if r.keepLine {
		r.line = append(r.line[:0], line...)
	}
	if err := r.parse(line, req); err != nil {
		if req.hasData {
			// A meta set whose length parsed: memcached swallows its data
			// block after any later error, so the stream stays in step.
			if _, derr := r.br.Discard(req.Bytes + 2); derr != nil {
				return noEOF(derr)
			}
		}
		return err
	}
	if req.Command.IsStorage() || req.hasData {
		return r.readData(req)
	}
	return nil
}

// KeepLine has Read keep a copy of every command line from now on (on),
// for a server that shows the commands it serves (MONITOR), or stop.
func (r *Reader) KeepLine(on bool) {
	r.keepLine = on
	if !on && r.line != nil {
		r.line = nil
	}
}

// Line is the command line of the last request Read parsed, without its
// line ending, when KeepLine is on (else empty). It is valid until the
// next Read.
func (r *Reader) Line() []byte { return r.line }

// dropSpill forgets spill buffers above retainLimit. It runs before a new
// request is read, when nothing aliases them any more.
func (r *Reader) dropSpill() {
	if cap(r.long) > retainLimit {
		r.long = nil
	}
	if cap(r.val) > retainLimit {
		r.val = nil
	}
}

// readLine returns the next command line without its "\n" or "\r\n". The
// line aliases br's buffer (or r.long) and is valid until br is read again.
//
// It does not use ReadSlice on the fast path because ReadSlice waits for a
// newline or a full buffer: a client that sends 3000 bytes and no newline
// must be cut off as soon as the bytes are here, not after 16 KiB.
func (r *Reader) readLine() ([]byte, error) {
	if r.br.Buffered() == 0 {
		if _, err := r.br.Peek(1); err != nil {
			return nil, err // io.EOF here is a clean end between requests
		}
	}
	buf, _ := r.br.Peek(r.br.Buffered())
	if buf[0] == binaryMagic {
		return nil, ErrBinary
	}
	lc := lineCheck{max: r.maxLine, maxRetrieval: r.maxRetrievalLine}
	scanned := 0
	for {
		if i := bytes.IndexByte(buf[scanned:], '\n'); i >= 0 {
			end := scanned + i + 1
			line := trimEOL(buf[:end])
			if !lc.ok(line, len(line)) {
				return nil, ErrLineTooLong
			}
			_, _ = r.br.Discard(end) // cannot fail: end bytes are buffered
			return line, nil
		}
		scanned = len(buf)
		if !lc.ok(buf, partialLen(buf)) {
			return nil, ErrLineTooLong
		}
		if scanned >= r.br.Size() {
			return r.readLongLine(&lc)
		}
		if _, err := r.br.Peek(scanned + 1); err != nil {
			return nil, noEOF(err)
		}
		buf, _ = r.br.Peek(r.br.Buffered())
	}
}

// readLongLine gathers a line that does not fit in br's buffer into r.long.
// It is reached with br's buffer full and holding no newline.
func (r *Reader) readLongLine(lc *lineCheck) ([]byte, error) {
	buf, _ := r.br.Peek(r.br.Buffered())
	r.long = append(r.long[:0], buf...)
	_, _ = r.br.Discard(len(buf))
	for {
		frag, err := r.br.ReadSlice('\n')
		r.long = append(r.long, frag...)
		if err == nil {
			line := trimEOL(r.long)
			if !lc.ok(line, len(line)) {
				return nil, ErrLineTooLong
			}
			return line, nil
		}
		if !lc.ok(r.long, partialLen(r.long)) {
			return nil, ErrLineTooLong
		}
		if err != bufio.ErrBufferFull {
			return nil, noEOF(err)
		}
	}
}

// lineCheck enforces the line-length limits on a line as it grows.
type lineCheck struct {
	max, maxRetrieval int  // MaxLineLen, MaxRetrievalLineLen
	decided           bool // the line has passed max and retrieval is set
	retrieval         bool // the line is a retrieval command
}

// ok reports whether a line of at least n bytes, beginning with prefix, may
// still be accepted: up to MaxLineLen for any command, up to
// MaxRetrievalLineLen for a retrieval command. Whether it is one is decided
// once, when the line first passes MaxLineLen, from its first MaxLineLen+1
// bytes only: the command name must be complete by then, the answer does
// not depend on how much of the line had arrived, and a slow client cannot
// make every new byte rescan the line. (memcached similarly gives up on a
// line whose get has more than 100 leading spaces.)
func (c *lineCheck) ok(prefix []byte, n int) bool {
	if n <= c.max {
		return true
	}
	if !c.decided {
		c.decided = true
		c.retrieval = isRetrievalLine(prefix[:c.max+1]) // len(prefix) >= n
	}
	return c.retrieval && n <= c.maxRetrieval
}

// isRetrievalLine reports whether the (possibly partial) line starts with a
// complete retrieval command name followed by a space.
func isRetrievalLine(prefix []byte) bool {
	i := 0
	for i < len(prefix) && prefix[i] == ' ' {
		i++
	}
	j := bytes.IndexByte(prefix[i:], ' ')
	if j < 0 {
		return false
	}
	return lookupCommand(prefix[i : i+j]).IsRetrieval()
}

// partialLen is the shortest length a line can have that begins with the
// newline-less prefix p: a final '\r' may yet turn out to be part of "\r\n".
func partialLen(p []byte) int {
	if len(p) > 0 && p[len(p)-1] == '\r' {
		return len(p) - 1
	}
	return len(p)
}

// trimEOL strips the final "\n" and one "\r" before it.
func trimEOL(line []byte) []byte {
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line
}

// readData reads the data block of a parsed storage command: exactly
// req.Bytes+2 octets, the last two of which must be CRLF. Whatever the
// outcome, those octets are consumed, so the next Read starts right after
// them, as memcached's conn_nread and conn_swallow states do.
func (r *Reader) readData(req *Request) error {
	total := req.Bytes + 2
	if req.Bytes > r.maxValueLen(len(req.Keys[0])) {
		// Skip the block through br's buffer: Discard reads it in
		// buffer-sized chunks, so a huge declared length costs no memory.
		if _, err := r.br.Discard(total); err != nil {
			return noEOF(err)
		}
		return ErrTooLarge
	}
	var data []byte
	if total <= r.br.Size() {
		d, err := r.br.Peek(total)
		if err != nil {
			return noEOF(err)
		}
		_, _ = r.br.Discard(total)
		data = d
	} else {
		if cap(r.val) < total {
			r.val = make([]byte, total) // total was checked against maxValueLen
		}
		data = r.val[:total]
		if _, err := io.ReadFull(r.br, data); err != nil {
			return noEOF(err)
		}
	}
	if data[req.Bytes] != '\r' || data[req.Bytes+1] != '\n' {
		return ErrBadChunk
	}
	req.Value = data[:req.Bytes:req.Bytes]
	return nil
}

// noEOF turns io.EOF inside a request into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
