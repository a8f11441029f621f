package memcache

import "bytes"

// Framing is what Frame found at the start of the read buffer.
type Framing uint8

const (
	// FrameComplete: a complete request; Read parses it from the buffer
	// without reading more.
	FrameComplete Framing = iota
	// FrameNeedMore: the start of a request whose remaining bytes have
	// not arrived yet, and that fits the buffer once they have.
	FrameNeedMore
	// FrameOther: anything Frame does not vouch for (a line or a data
	// block larger than the buffer, the binary protocol, a value over
	// the size limit that Read swallows as it arrives). Read deals with
	// it, reading from the stream as it needs.
	FrameOther
)

// Frame reports whether the buffered bytes start with a request Read can
// parse without reading from the stream: an event loop serves a
// connection's requests only while Frame says they are complete, and
// leaves every other case to a reader that may block. scratch is parsed
// into (storage commands only, to learn their data length) and must not
// be the Request Read fills.
func (r *Reader) Frame(scratch *Request) Framing {
	buf := r.Pending()
	if len(buf) == 0 {
		return FrameNeedMore
	}
	if buf[0] == binaryMagic {
		return FrameOther
	}
	nl := bytes.IndexByte(buf[:min(len(buf), r.maxLine+2)], '\n')
	if nl < 0 {
		if partialLen(buf) > r.maxLine {
			return FrameOther // a long line: Read checks it as it grows
		}
		return FrameNeedMore
	}
	line := trimEOL(buf[:nl+1])
	if len(line) > r.maxLine {
		return FrameOther
	}
	if !mayHaveData(line) {
		return FrameComplete // the line is the whole request
	}
	scratch.Reset()
	err := r.parse(line, scratch)
	if err != nil && !scratch.hasData {
		return FrameComplete // refused from its line alone
	}
	if !scratch.Command.IsStorage() && !scratch.hasData {
		return FrameComplete
	}
	if err == nil && scratch.Bytes > r.maxValueLen(len(scratch.Keys[0])) {
		return FrameOther // swallowed as it arrives
	}
	total := nl + 1 + scratch.Bytes + 2
	if total > r.br.Size() {
		return FrameOther
	}
	if len(buf) < total {
		return FrameNeedMore
	}
	return FrameComplete
}

// mayHaveData reports whether a command line may be followed by a data
// block: its command is a classic storage command or a meta set. Every
// other line is a whole request.
func mayHaveData(line []byte) bool {
	t := tokenizer{line: line}
	c := lookupCommand(t.next())
	return c.IsStorage() || c == CmdMetaSet
}

// Fill reads more input into the buffer without parsing or consuming
// any, unless the buffer is full (then it reports full without reading).
// An event loop calls it when the socket is readable.
func (r *Reader) Fill() (full bool, err error) {
	n := r.br.Buffered()
	if n >= r.br.Size() {
		return true, nil
	}
	_, err = r.br.Peek(n + 1)
	return false, err
}
