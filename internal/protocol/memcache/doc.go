// Package memcache is the codec of the memcached text protocol: bytes in,
// typed Request out; typed reply in, bytes out. It does no networking and
// knows nothing of the store. The server owns the connection, wraps it in a
// Reader and a Writer, and maps each Request onto the store.
//
// # Wire format
//
// A request is one command line, and for the storage commands a data block
// whose length comes from the line (never from scanning for CRLF):
//
//	command line                                               data block
//	+-----+---+-----+---+-------+---+---------+---+-------+----+  +-----------------+----+
//	| set | _ | key | _ | flags | _ | exptime | _ | bytes | \r\n  | <bytes> octets  | \r\n
//	+-----+---+-----+---+-------+---+---------+---+-------+----+  +-----------------+----+
//	  name   1..250    uint32      int64        0..2^31-3           opaque          must be CRLF
//	        bytes > 0x20, != 0x7f              [ _ <cas> ] [ _ noreply ]
//
//	_  = one or more spaces (0x20 only; a TAB is part of a token)
//	\r = optional on a command line (memcached accepts a bare LF there),
//	     mandatory after a data block
//
// Command lines are at most MaxLineLen (2048) bytes, except for the retrieval
// commands (get, gets, gat, gats, mget), whose key lists may run to
// MaxRetrievalLineLen. Replies are lines ending in CRLF, and for hits a
// VALUE line followed by the data block:
//
//	VALUE <key> <flags> <bytes>[ <cas>]\r\n
//	<data>\r\n
//	...
//	END\r\n
//
// # Rejected values: why the data block is swallowed
//
// When a storage command declares a length above the limit (maxValueLen in
// NewReader), Read returns ErrTooLarge only after it has skipped the
// <bytes>+2 octets of the data block, in small chunks and without buffering
// them whole. The client has already sent (or is sending) the block; if the
// server answered and then parsed that block as the next command line, an
// arbitrary value would be executed as a command and every later reply would
// be off by one. Skipping it keeps the stream in step, exactly as memcached
// does (conn_swallow). A data block that does not end in CRLF is consumed the
// same way (<bytes>+2 octets) and reported as ErrBadChunk.
//
// A command line that does not parse (bad key, bad number, wrong token count)
// is different: its declared length cannot be trusted, so nothing after the
// line is consumed and the data block, if any, is read as the next command
// line. memcached does the same, so clients see the same two replies
// (CLIENT_ERROR bad command line format, then ERROR).
//
// # Why classic noreply hides errors
//
// memcached's out_string skips every output of a command whose last token is
// "noreply", errors included (only meta commands always report errors).
// Clients that send noreply never read a reply for that command, so any line
// the server wrote would be taken as the reply to a later command and the
// connection would desynchronise. Read therefore sets Request.Command and
// Request.Noreply as soon as the token count is known to be valid, also when
// the line then fails to parse, and the server must check Noreply before
// writing the line returned by ErrorReply. As in memcached, a line with the
// wrong number of tokens gets ERROR even if it ends in noreply.
//
// # Differences from memcached 1.6.18
//
//   - Keys containing control characters (bytes <= 0x20 or 0x7f) are rejected
//     with CLIENT_ERROR bad command line format; memcached stores them.
//   - Flags >= 2^32 are rejected; memcached silently truncates them.
//   - <bytes> above 2^31-3 is a bad command line; memcached truncates it.
//   - exptime and the flush_all delay are parsed as int64; memcached uses int32.
//   - Any command line longer than MaxLineLen closes the connection, also when
//     its newline has arrived (memcached closes only while waiting for one).
//   - A key longer than 250 bytes in a multi-key get gets CLIENT_ERROR without
//     memcached 1.6.18's bug of dropping earlier pipelined replies.
//   - Administrative commands (slabs, lru, watch, ...) are not parsed here:
//     they read as unknown commands.
//   - Meta commands (meta.go): E (explicit CAS) on mg/ms/md/ma, x on md, and
//     returning s on ms are newer than 1.6.18 and follow the current
//     protocol.txt; an F token >= 2^32 is refused (1.6.18 truncates it).
//
// # Meta commands
//
//	mg <key> <flag>*                   -> VA <size> <flag>*\r\n<data>\r\n | HD <flag>* | EN
//	ms <key> <datalen> <flag>*\r\n<data>\r\n -> HD | NS | EX | NF  <flag>*
//	md <key> <flag>*                   -> HD | NF | EX  <flag>*
//	ma <key> <flag>*                   -> HD | VA <size>\r\n<number>\r\n | NF | NS | EX
//	mn                                 -> MN
//	me <key> [b]                       -> ME <key> <k>=<v>* | EN
//
// A flag is one character and an optional token (T30, O1). Read validates
// every flag and token and keeps the flags in request order in
// Request.Meta, so the server answers return flags in that order. An ms
// line is copied into the Reader before its data block is read, so its
// tokens stay valid; once its <datalen> has parsed, any later error still
// swallows the data block, as memcached does.
package memcache
