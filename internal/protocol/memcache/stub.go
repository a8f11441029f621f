package memcache

// TEMPORARY STUBS: the codec implementation replaces this whole file.
// The exported names and signatures below are the contract the server uses.

import (
	"errors"
	"io"
)

// Command identifies a parsed request.
type Command uint8

// Commands of the memcached text protocol.
const (
	CmdNone Command = iota
	CmdGet
	CmdGets
	CmdGat
	CmdGats
	CmdMget // seed alias of a multi-key get
	CmdSet
	CmdAdd
	CmdReplace
	CmdAppend
	CmdPrepend
	CmdCAS
	CmdDelete
	CmdIncr
	CmdDecr
	CmdTouch
	CmdFlushAll
	CmdStats
	CmdVersion
	CmdVerbosity
	CmdQuit
	CmdAuth
)

// Request is one parsed command. Byte slices alias the Reader's buffers and
// stay valid only until the next call to Read.
type Request struct {
	Command    Command
	Keys       [][]byte // retrieval: the keys in order; other keyed commands: Keys[0]
	Flags      uint32
	Exptime    int64 // set family, touch, gat/gats, flush_all delay
	HasExptime bool  // flush_all: a delay was given
	Bytes      int   // storage: declared data length
	CAS        uint64
	Delta      uint64
	Value      []byte   // storage: the data block without its CRLF
	Noreply    bool     // classic noreply: suppress every reply to this command
	Args       [][]byte // stats arguments, verbosity level, auth token
}

// Key is the first key of the request (nil when there is none).
func (r *Request) Key() []byte {
	if len(r.Keys) == 0 {
		return nil
	}
	return r.Keys[0]
}

// Errors returned by Reader.Read. Those with a reply are answered and the
// stream stays in step; ErrClose* errors close the connection.
var (
	ErrUnknown     = errors.New("memcache: unknown command")          // ERROR
	ErrBadFormat   = errors.New("memcache: bad command line format")  // CLIENT_ERROR bad command line format
	ErrBadChunk    = errors.New("memcache: bad data chunk")           // CLIENT_ERROR bad data chunk
	ErrTooLarge    = errors.New("memcache: object too large")         // SERVER_ERROR object too large for cache (data swallowed)
	ErrBadExptime  = errors.New("memcache: invalid exptime argument") // CLIENT_ERROR invalid exptime argument
	ErrBadDelta    = errors.New("memcache: invalid numeric delta")    // CLIENT_ERROR invalid numeric delta argument
	ErrDeleteUsage = errors.New("memcache: delete usage")             // CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]
	ErrLineTooLong = errors.New("memcache: line too long")            // close, no reply
	ErrHTTP        = errors.New("memcache: http request")             // close, no reply
	ErrBinary      = errors.New("memcache: binary protocol")          // close, no reply
)

// ErrorReply returns the wire line (without CRLF) for a Read error and
// whether the connection must close after it. An empty line means no reply.
func ErrorReply(err error) (line string, close bool) { return "", true }

// Reader parses requests from a byte stream.
type Reader struct{}

// NewReader returns a Reader with a read buffer of size bytes.
// maxValueLen reports the largest acceptable data block for a key length;
// larger declared lengths are rejected with ErrTooLarge and swallowed.
func NewReader(r io.Reader, size int, maxValueLen func(keyLen int) int) *Reader { return &Reader{} }

// Read parses the next request into req.
func (r *Reader) Read(req *Request) error { return io.EOF }

// Buffered is the number of bytes already read and not yet parsed.
func (r *Reader) Buffered() int { return 0 }

// Writer encodes replies.
type Writer struct{}

// NewWriter returns a Writer with an output buffer of size bytes.
func NewWriter(w io.Writer, size int) *Writer { return &Writer{} }

// Value writes "VALUE <key> <flags> <bytes>[ <cas>]\r\n<value>\r\n".
func (w *Writer) Value(key []byte, flags uint32, value []byte, cas uint64, withCAS bool) {}

// Line writes s followed by CRLF.
func (w *Writer) Line(s string) {}

// Uint writes a decimal number followed by CRLF (incr/decr reply).
func (w *Writer) Uint(v uint64) {}

// Stat writes "STAT <name> <value>\r\n".
func (w *Writer) Stat(name, value string) {}

// StatUint writes "STAT <name> <v>\r\n".
func (w *Writer) StatUint(name string, v uint64) {}

// StatInt writes "STAT <name> <v>\r\n".
func (w *Writer) StatInt(name string, v int64) {}

// Flush writes buffered replies to the underlying writer.
func (w *Writer) Flush() error { return nil }

// Buffered is the number of reply bytes waiting for Flush.
func (w *Writer) Buffered() int { return 0 }
