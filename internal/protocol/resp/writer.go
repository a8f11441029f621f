package resp

import (
	"bufio"
	"io"
	"strconv"

	"github.com/minikv/minikv/internal/dtoa"
)

// Writer encodes replies into a buffered writer, in RESP2 until SetRESP3
// switches it. Methods do not return errors: the first write error sticks
// in the buffer and Flush reports it.
type Writer struct {
	bw      *bufio.Writer
	resp3   bool
	onError func(msg string) // called with every error reply (SetErrorHook)
	hdr     [24]byte         // scratch for "<type><number>\r\n" headers
	num     [32]byte         // scratch for numbers sent as bulk strings
}

// NewWriter returns a Writer with an output buffer of size bytes.
func NewWriter(w io.Writer, size int) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, size)}
}

// SetErrorHook has f called with the message of every error reply
// written from now on (a server counts them by error code, as Redis's
// errorstats). Reset keeps it.
func (w *Writer) SetErrorHook(f func(msg string)) { w.onError = f }

// Reset discards unflushed output, returns to RESP2 and writes to wr.
func (w *Writer) Reset(wr io.Writer) {
	w.bw.Reset(wr)
	w.resp3 = false
}

// SetRESP3 selects RESP3 (true, after HELLO 3) or RESP2 replies.
func (w *Writer) SetRESP3(on bool) { w.resp3 = on }

// RESP3 reports whether replies are RESP3.
func (w *Writer) RESP3() bool { return w.resp3 }

// Buffered is the number of bytes written and not yet flushed.
func (w *Writer) Buffered() int { return w.bw.Buffered() }

// Flush writes the buffered replies and returns the first write error.
func (w *Writer) Flush() error { return w.bw.Flush() }

// header writes "<t><n>\r\n".
func (w *Writer) header(t byte, n int64) {
	b := append(w.hdr[:0], t)
	b = strconv.AppendInt(b, n, 10)
	b = append(b, '\r', '\n')
	_, _ = w.bw.Write(b)
}

// Simple writes a simple string: "+<s>\r\n". s must not hold CR or LF.
func (w *Writer) Simple(s string) {
	_ = w.bw.WriteByte('+')
	_, _ = w.bw.WriteString(s)
	_, _ = w.bw.WriteString("\r\n")
}

// OK writes "+OK\r\n".
func (w *Writer) OK() { _, _ = w.bw.WriteString("+OK\r\n") }

// Error writes an error reply, "-<msg>\r\n", where msg starts with the
// error code ("ERR syntax error"). CR and LF in msg become spaces, as
// Redis's addReplyErrorLength does, so a quoted argument cannot break the
// framing.
func (w *Writer) Error(msg string) {
	if w.onError != nil {
		w.onError(msg)
	}
	_ = w.bw.WriteByte('-')
	start := 0
	for i := 0; i < len(msg); i++ {
		if msg[i] == '\r' || msg[i] == '\n' {
			_, _ = w.bw.WriteString(msg[start:i])
			_ = w.bw.WriteByte(' ')
			start = i + 1
		}
	}
	_, _ = w.bw.WriteString(msg[start:])
	_, _ = w.bw.WriteString("\r\n")
}

// Raw writes b, one or more complete replies encoded already (a
// script's reply), as they are. The error hook is not called: the caller
// counts any error it holds.
func (w *Writer) Raw(b []byte) { _, _ = w.bw.Write(b) }

// Int writes an integer reply: ":<n>\r\n".
func (w *Writer) Int(n int64) { w.header(':', n) }

// Bulk writes a bulk string: "$<len>\r\n<b>\r\n".
func (w *Writer) Bulk(b []byte) {
	w.header('$', int64(len(b)))
	_, _ = w.bw.Write(b)
	_, _ = w.bw.WriteString("\r\n")
}

// BulkString writes s as a bulk string.
func (w *Writer) BulkString(s string) {
	w.header('$', int64(len(s)))
	_, _ = w.bw.WriteString(s)
	_, _ = w.bw.WriteString("\r\n")
}

// BulkInt writes the decimal form of n as a bulk string.
func (w *Writer) BulkInt(n int64) {
	w.Bulk(strconv.AppendInt(w.num[:0], n, 10))
}

// Null writes the null reply: "$-1\r\n" in RESP2, "_\r\n" in RESP3.
func (w *Writer) Null() {
	if w.resp3 {
		_, _ = w.bw.WriteString("_\r\n")
		return
	}
	_, _ = w.bw.WriteString("$-1\r\n")
}

// NullArray writes the null array: "*-1\r\n" in RESP2, "_\r\n" in RESP3.
func (w *Writer) NullArray() {
	if w.resp3 {
		_, _ = w.bw.WriteString("_\r\n")
		return
	}
	_, _ = w.bw.WriteString("*-1\r\n")
}

// Array writes the header of an array of n elements, which follow.
func (w *Writer) Array(n int) { w.header('*', int64(n)) }

// Map writes the header of a map of n key/value pairs, which follow as 2n
// elements: "%<n>" in RESP3, a flat "*<2n>" array in RESP2.
func (w *Writer) Map(n int) {
	if w.resp3 {
		w.header('%', int64(n))
		return
	}
	w.header('*', 2*int64(n))
}

// Set writes the header of a set of n elements: "~<n>" in RESP3, an
// array in RESP2.
func (w *Writer) Set(n int) {
	if w.resp3 {
		w.header('~', int64(n))
		return
	}
	w.header('*', int64(n))
}

// Double writes a floating-point reply: ",<f>\r\n" in RESP3, a bulk string
// in RESP2, formatted as Redis 7.2's addReplyDouble does (d2string:
// dtoa.AppendDouble72, the shortest form, with inf, -inf and nan spelled out).
func (w *Writer) Double(f float64) {
	b := dtoa.AppendDouble72(w.num[:0], f)
	if w.resp3 {
		_ = w.bw.WriteByte(',')
		_, _ = w.bw.Write(b)
		_, _ = w.bw.WriteString("\r\n")
		return
	}
	w.Bulk(b)
}

// Bool writes a boolean: "#t"/"#f" in RESP3, ":1"/":0" in RESP2.
func (w *Writer) Bool(v bool) {
	switch {
	case w.resp3 && v:
		_, _ = w.bw.WriteString("#t\r\n")
	case w.resp3:
		_, _ = w.bw.WriteString("#f\r\n")
	case v:
		_, _ = w.bw.WriteString(":1\r\n")
	default:
		_, _ = w.bw.WriteString(":0\r\n")
	}
}

// Verbatim writes text as a RESP3 verbatim string of the given
// three-letter format ("txt"), "=<len>\r\n<fmt>:<text>\r\n", or as a bulk
// string in RESP2 (Redis's INFO and CLIENT LIST replies).
func (w *Writer) Verbatim(format string, text []byte) {
	if !w.resp3 {
		w.Bulk(text)
		return
	}
	w.header('=', int64(len(format)+1+len(text)))
	_, _ = w.bw.WriteString(format)
	_ = w.bw.WriteByte(':')
	_, _ = w.bw.Write(text)
	_, _ = w.bw.WriteString("\r\n")
}

// Push writes the header of a push message of n elements, which follow:
// ">n" in RESP3, an array "*n" in RESP2, where pub/sub messages and
// (UN)SUBSCRIBE confirmations are plain arrays.
func (w *Writer) Push(n int) {
	if w.resp3 {
		w.header('>', int64(n))
		return
	}
	w.header('*', int64(n))
}

// AppendPush appends the header of a push message of n elements to b, as
// Push writes it: for a reply encoded once and queued to many connections
// (a published message), outside any Writer.
func AppendPush(b []byte, resp3 bool, n int) []byte {
	if resp3 {
		b = append(b, '>')
	} else {
		b = append(b, '*')
	}
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// AppendBulk appends v to b as a bulk string, as Bulk writes it.
func AppendBulk(b, v []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(v)), 10)
	b = append(b, '\r', '\n')
	b = append(b, v...)
	return append(b, '\r', '\n')
}
