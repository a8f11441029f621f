package resp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
)

const (
	// MaxInlineLen is the longest inline request line, and the longest
	// multibulk or bulk count line, accepted without its terminator:
	// Redis's PROTO_INLINE_MAX_SIZE.
	MaxInlineLen = 64 << 10

	// DefaultMaxArgs caps the element count of a multibulk request. Redis
	// accepts counts up to 2^31-1 and waits for the elements; MiniKV
	// refuses a count above this cap at once, so a client cannot hold a
	// connection in a request that can never complete.
	DefaultMaxArgs = 1 << 20

	// DefaultMaxBulk is the kept-bulk limit of a Reader built with a
	// maxBulk of 0: memcached's and MiniKV's default item size.
	DefaultMaxBulk = 1 << 20

	// MaxBulkLen is the default limit on a bulk string, Redis's default
	// proto-max-bulk-len (512 MB); SetMaxBulkLen changes a Reader's. A
	// longer length, or a malformed one, is a protocol error that closes
	// the connection; a bulk within it but over the Reader's maxBulk is
	// read and discarded (TooLarge).
	MaxBulkLen = 512 << 20

	// Limits for a connection that has not authenticated yet (Redis's
	// CVE-2021-32675 fix): at most 10 elements and 16 KiB per bulk.
	unauthMaxArgs = 10
	unauthMaxBulk = 16 << 10

	// argvPrealloc caps the argument vector's initial capacity, as Redis
	// caps its argv allocation at min(count, 1024): a declared count is
	// not trusted until the elements arrive.
	argvPrealloc = 1024

	// retainLimit is the largest arena (and inline spill buffer) kept
	// between requests; larger ones serve one request and are dropped, so
	// one big request does not pin its size for the connection's life.
	retainLimit = 64 << 10
)

// ProtocolError is a malformed request. Its text is Redis's, without the
// "ERR " prefix; the server answers "-ERR " + text and closes the
// connection, since the stream can no longer be trusted to be in step.
type ProtocolError string

func (e ProtocolError) Error() string { return string(e) }

// Reply is the error line the server sends before closing: Redis's
// "ERR Protocol error: ..." text.
func (e ProtocolError) Reply() string { return "ERR " + string(e) }

// Redis's protocol errors (networking.c), plus two of MiniKV's own for
// input that Redis mishandles (ErrExpectedCRLF, ErrInlineNUL).
const (
	ErrInvalidMultibulkLength ProtocolError = "Protocol error: invalid multibulk length"
	ErrInvalidBulkLength      ProtocolError = "Protocol error: invalid bulk length"
	ErrTooBigInline           ProtocolError = "Protocol error: too big inline request"
	ErrTooBigMultibulkCount   ProtocolError = "Protocol error: too big mbulk count string"
	ErrTooBigBulkCount        ProtocolError = "Protocol error: too big bulk count string"
	ErrUnbalancedQuotes       ProtocolError = "Protocol error: unbalanced quotes in request"
	ErrUnauthMultibulk        ProtocolError = "Protocol error: unauthenticated multibulk length"
	ErrUnauthBulk             ProtocolError = "Protocol error: unauthenticated bulk length"
	// ErrExpectedCRLF: a bulk's bytes are not followed by "\r\n", or a
	// count line's '\r' is not followed by '\n'. Redis skips those two
	// bytes unchecked and goes on out of step; MiniKV closes.
	ErrExpectedCRLF ProtocolError = "Protocol error: expected CRLF"
	// ErrInlineNUL: an inline line holds a NUL byte. Redis's strchr-based
	// scan stops at the NUL and stalls until 64 KiB arrive; MiniKV refuses
	// the line at once.
	ErrInlineNUL ProtocolError = "Protocol error: NUL byte in inline request"
)

// expectedDollar is Redis's "expected '$', got 'x'" for the first byte of
// an element. Redis's addReplyErrorFormat turns CR and LF into spaces.
func expectedDollar(c byte) ProtocolError {
	if c == '\r' || c == '\n' {
		c = ' '
	}
	return ProtocolError("Protocol error: expected '$', got '" + string([]byte{c}) + "'")
}

// Reader parses requests from a byte stream. The argument vector it
// returns aliases the Reader's own buffers and is valid until the next
// call to Read.
type Reader struct {
	br       *bufio.Reader
	maxBulk  int   // longest bulk kept
	maxLen   int64 // longest bulk accepted (proto-max-bulk-len); >= maxBulk
	maxArgs  int
	unauth   bool
	tooLarge bool // the current request had a bulk over maxBulk, discarded

	arena []byte // argument bytes of the current request
	offs  []int  // start,end pairs into arena, one pair per argument
	argv  [][]byte
	line  []byte // an inline line longer than br's buffer

	// ready: Ready parsed the next request into arena and offs; its
	// readyLen bytes are still buffered, and Read consumes them.
	ready    bool
	readyLen int
	slowOnly bool // tests: parse with readMultibulk alone
}

// NewReader returns a Reader with a read buffer of size bytes that keeps
// bulk strings of up to maxBulk bytes (DefaultMaxBulk if maxBulk <= 0).
// A longer bulk, up to MaxBulkLen, is consumed as it arrives without being
// kept: the request still parses, with that argument empty, and TooLarge
// reports it, so the server can refuse the command and stay in step
// without ever holding more than maxBulk of it.
func NewReader(r io.Reader, size, maxBulk int) *Reader {
	if maxBulk <= 0 {
		maxBulk = DefaultMaxBulk
	}
	return &Reader{br: bufio.NewReaderSize(r, size), maxBulk: min(maxBulk, MaxBulkLen), maxLen: MaxBulkLen, maxArgs: DefaultMaxArgs}
}

// SetMaxBulkLen changes the longest bulk string accepted, Redis's
// proto-max-bulk-len (MaxBulkLen by default), and the longest kept, to
// keep or n, whichever is smaller. A longer bulk is a protocol error.
func (r *Reader) SetMaxBulkLen(n int64, keep int) {
	r.maxLen = max(n, 0)
	r.maxBulk = int(min(int64(keep), r.maxLen))
}

// MaxBulkLen is the longest bulk string the Reader accepts.
func (r *Reader) MaxBulkLen() int64 { return r.maxLen }

// SetMaxArgs changes the multibulk element cap (DefaultMaxArgs by default).
func (r *Reader) SetMaxArgs(n int) { r.maxArgs = n }

// SetUnauthenticated turns on (or off) Redis's limits for a client that
// has not authenticated: 10 elements, 16 KiB per bulk.
func (r *Reader) SetUnauthenticated(on bool) { r.unauth = on }

// TooLarge reports whether the request the last Read returned carried a
// bulk string longer than maxBulk. Its bytes were read and dropped, and
// its place in the argument vector is empty: the request must be refused,
// not run.
func (r *Reader) TooLarge() bool { return r.tooLarge }

// Buffered is the number of bytes read from the stream and not yet parsed.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// Reset discards buffered input and makes the Reader read from rd.
func (r *Reader) Reset(rd io.Reader) {
	r.br.Reset(rd)
	r.ready = false
	r.arena, r.line = nil, nil
}

// Read parses the next request and returns its arguments. An empty
// vector with a nil error is a request with no arguments (an empty inline
// line, "*0" or "*-1"), which callers skip. Read returns io.EOF at a clean
// end of stream, io.ErrUnexpectedEOF inside a request, a ProtocolError for
// malformed input, or the underlying reader's error.
func (r *Reader) Read() ([][]byte, error) {
	if r.ready {
		r.ready = false
		_, _ = r.br.Discard(r.readyLen)
		return r.vector(), nil
	}
	r.begin()
	first, err := r.br.Peek(1)
	if err != nil {
		return nil, err // io.EOF here is a clean end between requests
	}
	if first[0] == '*' {
		if n := r.parseBuffered(); n > 0 {
			_, _ = r.br.Discard(n)
			return r.vector(), nil
		}
		err = r.readMultibulk()
	} else {
		err = r.readInline()
	}
	if err != nil {
		return nil, err
	}
	return r.vector(), nil
}

// ReadRaw is Read that also appends the request's bytes, as they came,
// to raw, and returns it: a replica keeps its primary's stream byte for
// byte (its offset counts those bytes, and its own backlog passes them
// on) without encoding every command again. ok is false, and raw as it
// was, when the request was not parsed from the buffer in one piece (an
// inline one, or one with a bulk longer than the buffer): the caller
// encodes that one itself.
func (r *Reader) ReadRaw(raw []byte) (argv [][]byte, out []byte, ok bool, err error) {
	if r.ready {
		r.ready = false
		raw = append(raw, r.Pending()[:r.readyLen]...)
		_, _ = r.br.Discard(r.readyLen)
		return r.vector(), raw, true, nil
	}
	r.begin()
	first, err := r.br.Peek(1)
	if err != nil {
		return nil, raw, false, err
	}
	if first[0] == '*' {
		if n := r.parseBuffered(); n > 0 {
			raw = append(raw, r.Pending()[:n]...)
			_, _ = r.br.Discard(n)
			return r.vector(), raw, true, nil
		}
		err = r.readMultibulk()
	} else {
		err = r.readInline()
	}
	if err != nil {
		return nil, raw, false, err
	}
	return r.vector(), raw, false, nil
}

// Ready reports how the buffered input frames (Frame) without waiting
// for more. When it is FrameComplete the next Read returns that request
// without reading; a request within every limit is parsed here already,
// in the one pass over its bytes, and Read only consumes them.
func (r *Reader) Ready() Framing {
	if r.ready {
		return FrameComplete
	}
	buf := r.Pending()
	if len(buf) > 0 && buf[0] == '*' {
		r.begin()
		if n := r.parseBuffered(); n > 0 {
			r.ready, r.readyLen = true, n
			return FrameComplete
		}
	}
	_, f := frame(buf, r.maxLen)
	return f
}

// ReadyIsAll reports whether the request Ready parsed is all the
// buffered input: nothing after it to look ahead at.
func (r *Reader) ReadyIsAll() bool { return r.ready && r.readyLen == r.br.Buffered() }

// parseBuffered parses a multibulk request that is complete in the read
// buffer and within every limit (element count, bulk sizes, the
// unauthenticated limits) in one pass, into arena and offs, and returns
// its length. For anything else (incomplete, malformed, over a limit,
// no elements) it returns 0 and leaves arena and offs empty: readMultibulk
// then reads it, and answers the errors, as before. What it accepts
// readMultibulk would parse to the same arguments (FuzzReadyMatchesRead).
func (r *Reader) parseBuffered() int {
	if r.slowOnly {
		return 0
	}
	buf := r.Pending()
	count, i, st := frameCount(buf, 0)
	if st != FrameComplete || count < 1 || count > int64(r.maxArgs) || r.unauth && count > unauthMaxArgs {
		return 0
	}
	for range count {
		if i == len(buf) || buf[i] != '$' {
			return r.unparse()
		}
		var size int64
		size, i, st = frameCount(buf, i)
		if st != FrameComplete || size < 0 || size > int64(r.maxBulk) || r.unauth && size > unauthMaxBulk ||
			int64(len(buf)-i) < size+2 {
			return r.unparse()
		}
		end := i + int(size)
		if buf[end] != '\r' || buf[end+1] != '\n' {
			return r.unparse()
		}
		start := len(r.arena)
		r.arena = append(r.arena, buf[i:end]...)
		r.offs = append(r.offs, start, len(r.arena))
		i = end + 2
	}
	return i
}

// unparse drops what parseBuffered had kept and returns 0.
func (r *Reader) unparse() int {
	r.arena, r.offs = r.arena[:0], r.offs[:0]
	return 0
}

// vector builds the argument vector from arena and offs.
func (r *Reader) vector() [][]byte {
	for i := 0; i < len(r.offs); i += 2 {
		s, e := r.offs[i], r.offs[i+1]
		r.argv = append(r.argv, r.arena[s:e:e])
	}
	return r.argv
}

// begin resets the per-request state, dropping buffers a big request grew.
func (r *Reader) begin() {
	if cap(r.arena) > retainLimit {
		r.arena = nil
	}
	if cap(r.line) > retainLimit {
		r.line = nil
	}
	if cap(r.argv) > argvPrealloc {
		r.argv, r.offs = nil, nil
	}
	r.arena, r.offs, r.argv = r.arena[:0], r.offs[:0], r.argv[:0]
	r.tooLarge = false
}

// readMultibulk reads "*<n>\r\n" and n bulk strings.
func (r *Reader) readMultibulk() error {
	line, err := r.readCountLine(ErrTooBigMultibulkCount)
	if err != nil {
		return err
	}
	n, ok := ParseInt(line[1:])
	if !ok || n > math.MaxInt32 || n > int64(r.maxArgs) {
		return ErrInvalidMultibulkLength
	}
	if r.unauth && n > unauthMaxArgs {
		return ErrUnauthMultibulk
	}
	if n <= 0 {
		return nil
	}
	if want := 2 * min(int(n), argvPrealloc); cap(r.offs) < want {
		r.offs = make([]int, 0, want)
		r.argv = make([][]byte, 0, want/2)
	}
	for range n {
		line, err := r.readCountLine(ErrTooBigBulkCount)
		if err != nil {
			return err
		}
		if line[0] != '$' {
			return expectedDollar(line[0])
		}
		size, ok := ParseInt(line[1:])
		if !ok || size < 0 || size > r.maxLen {
			return ErrInvalidBulkLength
		}
		if r.unauth && size > unauthMaxBulk {
			return ErrUnauthBulk
		}
		if size > int64(r.maxBulk) {
			if err := r.skipBulk(int(size)); err != nil {
				return err
			}
			continue
		}
		if err := r.readBulk(int(size)); err != nil {
			return err
		}
	}
	return nil
}

// readCountLine returns the next "*<n>" or "$<n>" line without its CRLF.
// Like Redis it looks for the '\r'; a line that has not ended within
// MaxInlineLen bytes is the error tooBig. A count line longer than a few
// dozen bytes can only be invalid, so its bytes are consumed as they come
// and only the first maxCountLine are kept: the line never needs more
// room than br's buffer, however long the client makes it.
func (r *Reader) readCountLine(tooBig ProtocolError) ([]byte, error) {
	const maxCountLine = 32
	seen := 0 // bytes of the line consumed so far (only when it is long)
	var head [maxCountLine]byte
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				return nil, noEOF(err)
			}
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		i := bytes.IndexByte(buf, '\r')
		if i < 0 {
			if seen+len(buf) > MaxInlineLen {
				return nil, tooBig
			}
			if len(buf) < r.br.Size() && seen == 0 && len(buf) <= maxCountLine {
				// Wait for more bytes without consuming these.
				if _, err := r.br.Peek(len(buf) + 1); err != nil {
					return nil, noEOF(err)
				}
				continue
			}
			if seen < maxCountLine {
				copy(head[seen:], buf)
			}
			seen += len(buf)
			_, _ = r.br.Discard(len(buf))
			continue
		}
		if seen+i > MaxInlineLen {
			return nil, tooBig
		}
		// The '\n' must follow; wait for it.
		if i+1 >= len(buf) {
			if _, err := r.br.Peek(i + 2); err != nil {
				if errors.Is(err, bufio.ErrBufferFull) {
					// '\r' is the last byte of a full buffer: consume the
					// line so far and look again.
					if seen < maxCountLine {
						copy(head[seen:], buf[:i])
					}
					seen += i
					_, _ = r.br.Discard(i)
					continue
				}
				return nil, noEOF(err)
			}
			buf, _ = r.br.Peek(r.br.Buffered())
		}
		if buf[i+1] != '\n' {
			return nil, ErrExpectedCRLF
		}
		if seen == 0 {
			line := buf[:i]
			_, _ = r.br.Discard(i + 2)
			if len(line) == 0 {
				// Only reachable for a bulk line ("\r\n" where "$n"
				// belongs): Redis reports the '\r' it found.
				return []byte{'\r'}, nil
			}
			return line, nil
		}
		if seen < maxCountLine {
			copy(head[seen:], buf[:min(i, maxCountLine-seen)])
		}
		seen += i
		_, _ = r.br.Discard(i + 2)
		// Longer than any valid count: return the kept head, which
		// carries the first byte for the '$' check and fails ParseInt.
		return append(r.line[:0], head[:min(seen, maxCountLine)]...), nil
	}
}

// readBulk appends the next size bytes to the arena, as they arrive, and
// checks the CRLF after them.
func (r *Reader) readBulk(size int) error {
	start := len(r.arena)
	for need := size; need > 0; {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				return noEOF(err)
			}
		}
		p, _ := r.br.Peek(min(need, r.br.Buffered()))
		r.arena = append(r.arena, p...)
		_, _ = r.br.Discard(len(p))
		need -= len(p)
	}
	if err := r.readBulkEnd(); err != nil {
		return err
	}
	r.offs = append(r.offs, start, len(r.arena))
	return nil
}

// readBulkEnd consumes the "\r\n" that must follow a bulk's bytes.
func (r *Reader) readBulkEnd() error {
	crlf, err := r.br.Peek(2)
	if err != nil {
		return noEOF(err)
	}
	if crlf[0] != '\r' || crlf[1] != '\n' {
		return ErrExpectedCRLF
	}
	_, _ = r.br.Discard(2)
	return nil
}

// skipBulk consumes a bulk of size bytes and its CRLF without keeping
// them, and stands an empty argument in its place.
func (r *Reader) skipBulk(size int) error {
	if _, err := r.br.Discard(size); err != nil {
		return noEOF(err)
	}
	if err := r.readBulkEnd(); err != nil {
		return err
	}
	r.tooLarge = true
	r.offs = append(r.offs, len(r.arena), len(r.arena))
	return nil
}

// readInline reads one line ending in "\n" (an optional '\r' before it is
// dropped) and splits it into arguments with Redis's sdssplitargs rules.
func (r *Reader) readInline() error {
	line, err := r.readInlineLine()
	if err != nil {
		return err
	}
	if bytes.IndexByte(line, 0) >= 0 {
		return ErrInlineNUL
	}
	return r.splitArgs(line)
}

func (r *Reader) readInlineLine() ([]byte, error) {
	scanned := 0
	for {
		buf, _ := r.br.Peek(r.br.Buffered())
		if i := bytes.IndexByte(buf[scanned:], '\n'); i >= 0 {
			end := scanned + i
			if end > MaxInlineLen {
				return nil, ErrTooBigInline
			}
			_, _ = r.br.Discard(end + 1)
			return trimCR(buf[:end]), nil
		}
		scanned = len(buf)
		if scanned > MaxInlineLen {
			return nil, ErrTooBigInline
		}
		if scanned >= r.br.Size() {
			return r.readLongInline()
		}
		if _, err := r.br.Peek(scanned + 1); err != nil {
			return nil, noEOF(err)
		}
	}
}

// readLongInline gathers an inline line longer than br's buffer into
// r.line. It takes whatever has arrived instead of waiting for a full
// buffer, so a line is refused as soon as MaxInlineLen bytes are here.
func (r *Reader) readLongInline() ([]byte, error) {
	r.line = r.line[:0]
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				return nil, noEOF(err)
			}
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			r.line = append(r.line, buf[:i]...)
			_, _ = r.br.Discard(i + 1)
			if len(r.line) > MaxInlineLen {
				return nil, ErrTooBigInline
			}
			return trimCR(r.line), nil
		}
		r.line = append(r.line, buf...)
		_, _ = r.br.Discard(len(buf))
		if len(r.line) > MaxInlineLen {
			return nil, ErrTooBigInline
		}
	}
}

func trimCR(line []byte) []byte {
	if len(line) > 0 && line[len(line)-1] == '\r' {
		return line[:len(line)-1]
	}
	return line
}

// noEOF turns io.EOF inside a request into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Wait blocks until at least one byte of the next request is available (or
// the underlying reader fails) and returns it without consuming it, so the
// server can tell "idle between requests" from "inside one" and give each
// its own deadline.
func (r *Reader) Wait() (byte, error) {
	b, err := r.br.Peek(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// Fill reads more input into the buffer without parsing or consuming
// any: a server holding a client's requests back (a blocked command)
// keeps reading, so that it sees the client close and keeps what it
// sends for later. It reports full when the buffer has no room left,
// without reading. A read error, a timeout included, leaves the bytes
// read so far buffered.
func (r *Reader) Fill() (full bool, err error) {
	n := r.br.Buffered()
	if n >= r.br.Size() {
		return true, nil
	}
	if _, err = r.br.Peek(n + 1); errors.Is(err, bufio.ErrBufferFull) {
		return true, nil
	}
	return false, err
}
