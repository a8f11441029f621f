package resp

import "bytes"

// Framing is what Frame found at the start of a buffer.
type Framing uint8

const (
	// FrameComplete: a complete, well-formed multibulk request.
	FrameComplete Framing = iota
	// FrameNeedMore: the start of a well-formed multibulk request whose
	// remaining bytes have not arrived yet.
	FrameNeedMore
	// FrameOther: anything else (an inline command, a malformed or empty
	// request, a count line that cannot be valid). Read deals with it,
	// reading from the stream as it needs.
	FrameOther
)

// maxFrameCountLine bounds a "*<n>" or "$<n>" line Frame waits for; a
// valid one is much shorter.
const maxFrameCountLine = 32

// Frame reports whether buf starts with a request Read can parse without
// reading more (FrameComplete, with its length), with the start of one
// (FrameNeedMore), or with something Frame does not vouch for
// (FrameOther). An event loop serves a connection's requests only while
// Frame says they are complete, so Read never has to wait for bytes; it
// leaves every other case to a reader that may block. Frame accepts only
// what Read accepts the same way; it checks no limit that depends on the
// connection (auth, the bulk kept), which Read applies to complete
// requests without reading further. A bulk over MaxBulkLen is FrameOther;
// a Reader's Ready uses its own limit (SetMaxBulkLen) instead.
func Frame(buf []byte) (int, Framing) { return frame(buf, MaxBulkLen) }

// frame is Frame with maxLen as the longest bulk: a longer one is
// FrameOther at once, so Read answers it without waiting for its bytes.
func frame(buf []byte, maxLen int64) (int, Framing) {
	if len(buf) == 0 {
		return 0, FrameNeedMore
	}
	if buf[0] != '*' {
		return 0, FrameOther
	}
	count, i, st := frameCount(buf, 0)
	if st != FrameComplete {
		return 0, st
	}
	if count < 1 || count > DefaultMaxArgs {
		return 0, FrameOther
	}
	for range count {
		if i == len(buf) {
			return 0, FrameNeedMore
		}
		if buf[i] != '$' {
			return 0, FrameOther
		}
		var size int64
		size, i, st = frameCount(buf, i)
		if st != FrameComplete {
			return 0, st
		}
		if size < 0 || size > maxLen {
			return 0, FrameOther
		}
		if int64(len(buf)-i) < size+2 {
			return 0, FrameNeedMore
		}
		end := i + int(size)
		if buf[end] != '\r' || buf[end+1] != '\n' {
			return 0, FrameOther
		}
		i = end + 2
	}
	return i, FrameComplete
}

// frameCount parses the count line at buf[at:] ("*<n>\r\n" or
// "$<n>\r\n", its kind already checked) and returns the number and the
// index after the line.
func frameCount(buf []byte, at int) (int64, int, Framing) {
	rest := buf[at:]
	cr := bytes.IndexByte(rest[:min(len(rest), maxFrameCountLine)], '\r')
	if cr < 0 {
		if len(rest) >= maxFrameCountLine {
			return 0, 0, FrameOther
		}
		return 0, 0, FrameNeedMore
	}
	if cr+1 == len(rest) {
		return 0, 0, FrameNeedMore
	}
	if rest[cr+1] != '\n' {
		return 0, 0, FrameOther
	}
	n, ok := ParseInt(rest[1:cr])
	if !ok {
		return 0, 0, FrameOther
	}
	return n, at + cr + 2, FrameComplete
}
