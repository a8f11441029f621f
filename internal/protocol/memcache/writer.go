package memcache

import (
	"bufio"
	"io"
	"strconv"
)

// Writer encodes replies into a buffered writer. Methods do not return
// errors: the first write error sticks in the buffer and Flush reports it,
// so a handler can write a whole reply and check once.
type Writer struct {
	bw *bufio.Writer
	// num is scratch space for the numeric part of a reply line, so
	// formatting numbers never allocates. The longest user is Value:
	// " <u32> <int> <u64>\r\n" is at most 1+10+1+19+1+20+2 = 54 bytes.
	num [64]byte
	// b64 is scratch for a base64-encoded key in a meta reply: a space,
	// the flag and at most EncodedLen(MaxKeyLen) = 336 bytes.
	b64 [344]byte
}

// NewWriter returns a Writer with an output buffer of size bytes.
func NewWriter(w io.Writer, size int) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, size)}
}

// Reset discards unflushed output and makes the Writer write to w, keeping
// its buffer, so Writers can be pooled across connections.
func (w *Writer) Reset(wr io.Writer) { w.bw.Reset(wr) }

// Value writes "VALUE <key> <flags> <bytes>[ <cas>]\r\n<value>\r\n".
func (w *Writer) Value(key []byte, flags uint32, value []byte, cas uint64, withCAS bool) {
	_, _ = w.bw.WriteString("VALUE ")
	_, _ = w.bw.Write(key)
	b := append(w.num[:0], ' ')
	b = strconv.AppendUint(b, uint64(flags), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(value)), 10)
	if withCAS {
		b = append(b, ' ')
		b = strconv.AppendUint(b, cas, 10)
	}
	b = append(b, '\r', '\n')
	_, _ = w.bw.Write(b)
	_, _ = w.bw.Write(value)
	_, _ = w.bw.WriteString("\r\n")
}

// Line writes s followed by CRLF.
func (w *Writer) Line(s string) {
	_, _ = w.bw.WriteString(s)
	_, _ = w.bw.WriteString("\r\n")
}

// Uint writes a decimal number followed by CRLF (incr/decr reply).
func (w *Writer) Uint(v uint64) {
	b := strconv.AppendUint(w.num[:0], v, 10)
	b = append(b, '\r', '\n')
	_, _ = w.bw.Write(b)
}

// Stat writes "STAT <name> <value>\r\n".
func (w *Writer) Stat(name, value string) {
	w.statName(name)
	_, _ = w.bw.WriteString(value)
	_, _ = w.bw.WriteString("\r\n")
}

// StatUint writes "STAT <name> <v>\r\n".
func (w *Writer) StatUint(name string, v uint64) {
	w.statName(name)
	b := strconv.AppendUint(w.num[:0], v, 10)
	b = append(b, '\r', '\n')
	_, _ = w.bw.Write(b)
}

// StatInt writes "STAT <name> <v>\r\n".
func (w *Writer) StatInt(name string, v int64) {
	w.statName(name)
	b := strconv.AppendInt(w.num[:0], v, 10)
	b = append(b, '\r', '\n')
	_, _ = w.bw.Write(b)
}

// statName writes "STAT <name> ".
func (w *Writer) statName(name string) {
	_, _ = w.bw.WriteString("STAT ")
	_, _ = w.bw.WriteString(name)
	_ = w.bw.WriteByte(' ')
}

// Write writes p verbatim, for replies this package has no method for.
// It implements io.Writer; the error is the sticky buffer error.
func (w *Writer) Write(p []byte) (int, error) { return w.bw.Write(p) }

// Flush writes buffered replies to the underlying writer.
func (w *Writer) Flush() error { return w.bw.Flush() }

// Buffered is the number of reply bytes waiting for Flush.
func (w *Writer) Buffered() int { return w.bw.Buffered() }
