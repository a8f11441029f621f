package memcache

import (
	"encoding/base64"
	"strconv"
)

// Meta replies: a two-letter code, then return flags, each a space, the
// flag character and its token, in the order the request asked for them:
//
//	HD c12 kfoo O1\r\n
//	VA 2 f5 t-1\r\n
//	hi\r\n
//
// A reply is built with MetaCode or MetaValue, any number of Meta* flag
// calls, and MetaEnd; MetaValue's data block follows with MetaData.

// MetaCode starts a reply line with a return code (HD, EN, NF, NS, EX, MN).
func (w *Writer) MetaCode(code string) { _, _ = w.bw.WriteString(code) }

// MetaValue starts a "VA <size>" reply line.
func (w *Writer) MetaValue(size int) {
	b := append(w.num[:0], "VA "...)
	b = strconv.AppendInt(b, int64(size), 10)
	_, _ = w.bw.Write(b)
}

// MetaFlag writes " <flag>" (W, X, Z, b).
func (w *Writer) MetaFlag(flag byte) {
	_, _ = w.bw.Write(append(w.num[:0], ' ', flag))
}

// MetaUint writes " <flag><v>".
func (w *Writer) MetaUint(flag byte, v uint64) {
	b := append(w.num[:0], ' ', flag)
	_, _ = w.bw.Write(strconv.AppendUint(b, v, 10))
}

// MetaInt writes " <flag><v>".
func (w *Writer) MetaInt(flag byte, v int64) {
	b := append(w.num[:0], ' ', flag)
	_, _ = w.bw.Write(strconv.AppendInt(b, v, 10))
}

// MetaToken writes " <flag><token>" (O opaque, k key).
func (w *Writer) MetaToken(flag byte, token []byte) {
	_, _ = w.bw.Write(append(w.num[:0], ' ', flag))
	_, _ = w.bw.Write(token)
}

// MetaBase64 writes " <flag><base64 of b>" (k for a binary key). b must be
// at most MaxKeyLen bytes.
func (w *Writer) MetaBase64(flag byte, b []byte) {
	buf := append(w.b64[:0], ' ', flag)
	n := base64.StdEncoding.EncodedLen(len(b))
	buf = buf[:2+n]
	base64.StdEncoding.Encode(buf[2:], b)
	_, _ = w.bw.Write(buf)
}

// MetaEnd ends a reply line.
func (w *Writer) MetaEnd() { _, _ = w.bw.WriteString("\r\n") }

// MetaData writes a VA reply's data block and its CRLF.
func (w *Writer) MetaData(value []byte) {
	_, _ = w.bw.Write(value)
	_, _ = w.bw.WriteString("\r\n")
}
