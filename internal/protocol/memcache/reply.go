package memcache

import "errors"

// Fixed reply lines of the memcached text protocol, without their CRLF.
// Pass them to Writer.Line.
const (
	Stored        = "STORED"     // set family: stored
	NotStored     = "NOT_STORED" // add on a live key; replace/append/prepend on a missing key
	Exists        = "EXISTS"     // cas: modified since it was read
	NotFound      = "NOT_FOUND"  // cas/delete/incr/decr/touch on a missing key
	Deleted       = "DELETED"    // delete: removed
	Touched       = "TOUCHED"    // touch: deadline updated
	End           = "END"        // end of a retrieval or stats reply
	OK            = "OK"         // flush_all, verbosity
	Error         = "ERROR"      // unknown command or wrong number of tokens
	ResetStats    = "RESET"      // stats reset
	Authenticated = "AUTHENTICATED"

	ClientErrorBadFormat         = "CLIENT_ERROR bad command line format"
	ClientErrorBadChunk          = "CLIENT_ERROR bad data chunk"
	ClientErrorBadExptime        = "CLIENT_ERROR invalid exptime argument"
	ClientErrorBadDelta          = "CLIENT_ERROR invalid numeric delta argument"
	ClientErrorNonNumeric        = "CLIENT_ERROR cannot increment or decrement non-numeric value"
	ClientErrorDeleteUsage       = "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]" // two spaces, as memcached
	ClientErrorAuthFailed        = "CLIENT_ERROR auth failed"
	ClientErrorAuthRequired      = "CLIENT_ERROR auth required"
	ClientErrorAuthNotConfigured = "CLIENT_ERROR auth not configured"
	ServerErrorTooLarge          = "SERVER_ERROR object too large for cache"
	ServerErrorOutOfMemory       = "SERVER_ERROR out of memory storing object"
	// ServerErrorDiskPrefix, then the system error, answers a write while
	// a durable server's disk is failed (its writes are refused, reads
	// served): MiniKV's, as memcached has no disk.
	ServerErrorDiskPrefix = "SERVER_ERROR writes refused: errors writing to the data directory: "
	// ServerErrorWrongType answers a read or change of a key that holds a
	// Redis collection (a hash, list, set or sorted set), in Redis's words.
	ServerErrorWrongType = "SERVER_ERROR WRONGTYPE Operation against a key holding the wrong kind of value"
)

// Errors returned by Reader.Read. Those with a reply are answered and the
// stream stays in step; ErrLineTooLong, ErrHTTP and ErrBinary close the
// connection without a reply, as does any I/O error.
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
// Errors other than the package's sentinels (I/O errors, io.EOF) close the
// connection without a reply.
//
// The caller must not write the line when the request has Noreply set:
// classic noreply suppresses errors too.
func ErrorReply(err error) (line string, close bool) {
	switch {
	case errors.Is(err, ErrUnknown):
		return Error, false
	case errors.Is(err, ErrBadFormat):
		return ClientErrorBadFormat, false
	case errors.Is(err, ErrBadChunk):
		return ClientErrorBadChunk, false
	case errors.Is(err, ErrTooLarge):
		return ServerErrorTooLarge, false
	case errors.Is(err, ErrBadExptime):
		return ClientErrorBadExptime, false
	case errors.Is(err, ErrBadDelta):
		return ClientErrorBadDelta, false
	case errors.Is(err, ErrDeleteUsage):
		return ClientErrorDeleteUsage, false
	}
	if line := metaErrorLine(err); line != "" {
		return line, false
	}
	return "", true
}
