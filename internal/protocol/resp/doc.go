// Package resp is MiniKV's codec for the Redis serialization protocol:
// a Reader that turns a client's byte stream into argument vectors and a
// Writer that encodes replies in RESP2 or RESP3. It knows nothing about
// commands or the store, and uses only the standard library.
//
// # Requests
//
// A request is either a multibulk array of bulk strings or an inline line,
// chosen per request by its first byte, as Redis's processInputBuffer does:
//
//	*<n>\r\n                     multibulk: n elements, each
//	$<len>\r\n<len bytes>\r\n    a bulk string
//
//	SET "a key" 'v'\r\n          inline: one line ending in \n or \r\n,
//	                             split by Redis's sdssplitargs rules
//
// Limits and errors follow Redis 7 (networking.c): a count line or an
// inline line longer than 64 KiB without its terminator is an error; a
// multibulk count that is not a number or is above the cap is
// "invalid multibulk length"; a bulk length that is negative, not a number
// or above the configured maximum is "invalid bulk length"; an element
// that does not start with '$' is "expected '$', got 'x'"; unbalanced
// quotes in an inline request are an error. Every such error is a
// ProtocolError, after which the stream is out of step and the connection
// must be closed. A multibulk count of zero or less and an empty inline
// line are requests with no arguments, which the server skips.
//
// No memory is ever sized by a number the client declares: argument bytes
// are copied into a reused arena that grows with the bytes actually
// received, and the argument vector grows as elements arrive (its initial
// capacity is capped at 1024, as Redis caps its argv preallocation).
//
// # Replies
//
//	+OK\r\n  -ERR msg\r\n  :42\r\n  $3\r\nfoo\r\n  *2\r\n...   RESP2 and RESP3
//	$-1\r\n (RESP2 null)   _\r\n (RESP3 null)
//	%2\r\n<k><v><k><v>   RESP3 map; a flat array of 2n elements in RESP2
//	,3.14\r\n            RESP3 double; a bulk string in RESP2
//	=7\r\ntxt:abc\r\n    RESP3 verbatim string; a bulk string in RESP2
//
// The Writer buffers everything and reports the first write error on
// Flush, so a handler writes a whole reply and checks once.
package resp
