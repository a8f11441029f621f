package memcache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadRetrieval(t *testing.T) {
	many := make([]string, 600)
	for i := range many {
		many[i] = fmt.Sprintf("key%04d", i)
	}
	huge := make([]string, 3000) // a line of ~33 KB: beyond the 16 KiB buffer
	for i := range huge {
		huge[i] = fmt.Sprintf("k%09d", i)
	}
	runReadCases(t, []readCase{
		{"get", "get a\r\n", []result{{Cmd: CmdGet, Keys: ss("a")}, eof}},
		{"get bare LF", "get a\n", []result{{Cmd: CmdGet, Keys: ss("a")}, eof}},
		{"get many", "get a b  c\r\n", []result{{Cmd: CmdGet, Keys: ss("a", "b", "c")}, eof}},
		{"get duplicate", "get k  k\r\n", []result{{Cmd: CmdGet, Keys: ss("k", "k")}, eof}},
		{"get padded", "   get   a   \r\n", []result{{Cmd: CmdGet, Keys: ss("a")}, eof}},
		{"gets", "gets a b\r\n", []result{{Cmd: CmdGets, Keys: ss("a", "b")}, eof}},
		{"mget", "mget a b\r\n", []result{{Cmd: CmdMget, Keys: ss("a", "b")}, eof}},
		{"bget", "bget a\r\n", []result{{Cmd: CmdGet, Keys: ss("a")}, eof}},
		{"gat", "gat 10 a b\r\n", []result{{Cmd: CmdGat, Exptime: 10, Keys: ss("a", "b")}, eof}},
		{"gat negative", "gat -1 a\r\n", []result{{Cmd: CmdGat, Exptime: -1, Keys: ss("a")}, eof}},
		{"gats", "gats 0 a\r\n", []result{{Cmd: CmdGats, Keys: ss("a")}, eof}},
		{"gat no keys", "gat 10\r\n", []result{{Cmd: CmdGat, Exptime: 10}, eof}},
		{"get no key", "get\r\n", []result{fail(CmdGet, ErrUnknown), eof}},
		{"get space no key", "get \r\n", []result{fail(CmdGet, ErrUnknown), eof}},
		{"gets no key", "gets\r\n", []result{fail(CmdGets, ErrUnknown), eof}},
		{"gat no exptime", "gat\r\n", []result{fail(CmdGat, ErrUnknown), eof}},
		{"gat bad exptime", "gat abc a\r\n", []result{fail(CmdGat, ErrBadExptime), eof}},
		{"gat huge exptime", "gat 99999999999999999999 a\r\n", []result{fail(CmdGat, ErrBadExptime), eof}},
		{"get 250-byte key", "get " + key250 + "\r\n", []result{{Cmd: CmdGet, Keys: ss(key250)}, eof}},
		{"get 251-byte key", "get " + key251 + "\r\n", []result{fail(CmdGet, ErrBadFormat), eof}},
		{"get long key among others", "get a " + key251 + " b\r\nget c\r\n", []result{fail(CmdGet, ErrBadFormat), {Cmd: CmdGet, Keys: ss("c")}, eof}},
		{"get control char", "get a\x01b\r\n", []result{fail(CmdGet, ErrBadFormat), eof}},
		{"get DEL", "get a\x7f\r\n", []result{fail(CmdGet, ErrBadFormat), eof}},
		{"get tab in key", "get a\tb\r\n", []result{fail(CmdGet, ErrBadFormat), eof}},
		{"get stray CR", "get a\r\r\n", []result{fail(CmdGet, ErrBadFormat), eof}},
		{"get tab separator", "get\ta\r\n", []result{fail(CmdNone, ErrUnknown), eof}},
		{"upper case", "GET a\r\n", []result{fail(CmdNone, ErrUnknown), eof}},
		{"get high bytes", "get \xc3\xa9t\xc3\xa9\r\n", []result{{Cmd: CmdGet, Keys: ss("\xc3\xa9t\xc3\xa9")}, eof}},
		{"get noreply is a key", "get a noreply\r\n", []result{{Cmd: CmdGet, Keys: ss("a", "noreply")}, eof}},
		{"get HTTP is a key", "get / HTTP/1.1\r\n", []result{{Cmd: CmdGet, Keys: ss("/", "HTTP/1.1")}, eof}},
		{"multiget 4 KB", "get " + strings.Join(many, " ") + "\r\n", []result{{Cmd: CmdGet, Keys: many}, eof}},
		{"multiget 33 KB", "gets " + strings.Join(huge, " ") + "\r\nget x\r\n", []result{{Cmd: CmdGets, Keys: huge}, {Cmd: CmdGet, Keys: ss("x")}, eof}},
		{"gat 33 KB", "gat 5 " + strings.Join(huge, " ") + "\r\n", []result{{Cmd: CmdGat, Exptime: 5, Keys: huge}, eof}},
	})
}

func TestReadStorage(t *testing.T) {
	v500 := strings.Repeat("v", 500)
	runReadCases(t, []readCase{
		{"set", "set a 0 0 1\r\nx\r\n", []result{{Cmd: CmdSet, Keys: ss("a"), Bytes: 1, Value: "x"}, eof}},
		{"set fields", "set a 5 100 3 noreply\r\nabc\r\n", []result{{Cmd: CmdSet, Keys: ss("a"), Flags: 5, Exptime: 100, Bytes: 3, Value: "abc", Noreply: true}, eof}},
		{"set max flags", "set a 4294967295 -1 0\r\n\r\n", []result{{Cmd: CmdSet, Keys: ss("a"), Flags: 4294967295, Exptime: -1}, eof}},
		{"set CRLF inside", "set a 0 0 4\r\na\r\nb\r\n", []result{{Cmd: CmdSet, Keys: ss("a"), Bytes: 4, Value: "a\r\nb"}, eof}},
		{"set binary data", "set a 0 0 2\r\n\x80\x00\r\n", []result{{Cmd: CmdSet, Keys: ss("a"), Bytes: 2, Value: "\x80\x00"}, eof}},
		{"set bare LF line", "set a 0 0 1\nx\r\n", []result{{Cmd: CmdSet, Keys: ss("a"), Bytes: 1, Value: "x"}, eof}},
		{"set spaced", "set   sp   0   0   1\r\nx\r\n", []result{{Cmd: CmdSet, Keys: ss("sp"), Bytes: 1, Value: "x"}, eof}},
		{"set 500-byte value", "set a 0 0 500\r\n" + v500 + "\r\n", []result{{Cmd: CmdSet, Keys: ss("a"), Bytes: 500, Value: v500}, eof}},
		{"set 250-byte key", "set " + key250 + " 0 0 1\r\nx\r\n", []result{{Cmd: CmdSet, Keys: ss(key250), Bytes: 1, Value: "x"}, eof}},
		{"set extra token ignored", "set k 0 0 1 foo\r\nx\r\n", []result{{Cmd: CmdSet, Keys: ss("k"), Bytes: 1, Value: "x"}, eof}},
		{"add", "add a 1 2 1\r\nx\r\n", []result{{Cmd: CmdAdd, Keys: ss("a"), Flags: 1, Exptime: 2, Bytes: 1, Value: "x"}, eof}},
		{"replace", "replace a 0 0 1\r\nx\r\n", []result{{Cmd: CmdReplace, Keys: ss("a"), Bytes: 1, Value: "x"}, eof}},
		{"append", "append a 0 0 1 noreply\r\nx\r\n", []result{{Cmd: CmdAppend, Keys: ss("a"), Bytes: 1, Value: "x", Noreply: true}, eof}},
		{"prepend", "prepend a 0 0 1\r\nx\r\n", []result{{Cmd: CmdPrepend, Keys: ss("a"), Bytes: 1, Value: "x"}, eof}},
		{"cas", "cas a 0 0 1 99\r\nx\r\n", []result{{Cmd: CmdCAS, Keys: ss("a"), Bytes: 1, CAS: 99, Value: "x"}, eof}},
		{"cas noreply", "cas a 0 0 1 18446744073709551615 noreply\r\nx\r\n", []result{{Cmd: CmdCAS, Keys: ss("a"), Bytes: 1, CAS: 18446744073709551615, Value: "x", Noreply: true}, eof}},

		// Bad command lines: the data block is not swallowed, so it is read
		// as a command line (memcached answers ERROR to it).
		{"set too few tokens", "set k 0 0\r\n", []result{fail(CmdSet, ErrUnknown), eof}},
		{"set too many tokens", "set k 0 0 1 noreply x\r\nx\r\n", []result{fail(CmdSet, ErrUnknown), fail(CmdNone, ErrUnknown), eof}},
		{"set flags 2^32", "set a 4294967296 0 1\r\nx\r\n", []result{fail(CmdSet, ErrBadFormat), fail(CmdNone, ErrUnknown), eof}},
		{"set negative flags", "set a -1 0 1\r\nx\r\n", []result{fail(CmdSet, ErrBadFormat), fail(CmdNone, ErrUnknown), eof}},
		{"set bad exptime", "set a 0 abc 1\r\nx\r\n", []result{fail(CmdSet, ErrBadFormat), fail(CmdNone, ErrUnknown), eof}},
		{"set negative bytes", "set a 0 0 -1\r\n", []result{fail(CmdSet, ErrBadFormat), eof}},
		{"set bytes abc", "set a 0 0 abc\r\n", []result{fail(CmdSet, ErrBadFormat), eof}},
		{"set bytes 2^64", "set a 0 0 99999999999999999999\r\n", []result{fail(CmdSet, ErrBadFormat), eof}},
		{"set bytes INT_MAX-1", "set a 0 0 2147483646\r\n", []result{fail(CmdSet, ErrBadFormat), eof}},
		{"set bytes 2^31", "set a 0 0 2147483648\r\n", []result{fail(CmdSet, ErrBadFormat), eof}},
		{"set bytes 2^32", "set a 0 0 4294967296\r\nx\r\n", []result{fail(CmdSet, ErrBadFormat), fail(CmdNone, ErrUnknown), eof}},
		{"set noreply as bytes", "set k 0 0 noreply\r\nx\r\n", []result{failNoreply(CmdSet, ErrBadFormat), fail(CmdNone, ErrUnknown), eof}},
		{"set bad number noreply", "set k 0 0 x noreply\r\nx\r\n", []result{failNoreply(CmdSet, ErrBadFormat), fail(CmdNone, ErrUnknown), eof}},
		{"set 251-byte key", "set " + key251 + " 0 0 1\r\nx\r\n", []result{fail(CmdSet, ErrBadFormat), fail(CmdNone, ErrUnknown), eof}},
		{"set control key", "set a\x01 0 0 1\r\nx\r\n", []result{fail(CmdSet, ErrBadFormat), fail(CmdNone, ErrUnknown), eof}},
		{"cas no unique", "cas a 0 0 1\r\nx\r\n", []result{fail(CmdCAS, ErrUnknown), fail(CmdNone, ErrUnknown), eof}},
		{"cas bad unique", "cas a 0 0 1 abc\r\nx\r\n", []result{fail(CmdCAS, ErrBadFormat), fail(CmdNone, ErrUnknown), eof}},
		{"cas unique 2^64", "cas a 0 0 1 18446744073709551616\r\n", []result{fail(CmdCAS, ErrBadFormat), eof}},

		// Data blocks: exactly bytes+2 octets are consumed whatever they hold.
		{"bad chunk long", "set a 0 0 3\r\nabcdef\r\n", []result{fail(CmdSet, ErrBadChunk), fail(CmdNone, ErrUnknown), eof}},
		{"bad chunk no CRLF", "set a 0 0 3\r\nabcXY", []result{fail(CmdSet, ErrBadChunk), eof}},
		{"bad chunk bare LF", "set a 0 0 1\nx\nget a\n", []result{fail(CmdSet, ErrBadChunk), fail(CmdNone, ErrUnknown), eof}},
		{"bad chunk then set", "set a 0 0 1\r\nxy\r\nset b 0 0 1\r\nz\r\n", []result{fail(CmdSet, ErrBadChunk), fail(CmdNone, ErrUnknown), {Cmd: CmdSet, Keys: ss("b"), Bytes: 1, Value: "z"}, eof}},
		{"short data", "set a 0 0 5\r\nab", []result{fail(CmdSet, io.ErrUnexpectedEOF)}},
		{"no data", "set a 0 0 5\r\n", []result{fail(CmdSet, io.ErrUnexpectedEOF)}},
		{"big short data", "set a 0 0 500\r\nab", []result{fail(CmdSet, io.ErrUnexpectedEOF)}},

		// Too large: swallowed, and the next request parses.
		{"too large", "set a 0 0 1000\r\n" + strings.Repeat("x", 1000) + "\r\nget a\r\n", []result{
			{Cmd: CmdSet, Keys: ss("a"), Bytes: 1000, Err: ErrTooLarge}, {Cmd: CmdGet, Keys: ss("a")}, eof,
		}},
		{"largest allowed", "set a 0 0 999\r\n" + strings.Repeat("x", 999) + "\r\n", []result{
			{Cmd: CmdSet, Keys: ss("a"), Bytes: 999, Value: strings.Repeat("x", 999)}, eof,
		}},
		{"limit counts key", "set ab 0 0 999\r\n" + strings.Repeat("x", 999) + "\r\n", []result{
			{Cmd: CmdSet, Keys: ss("ab"), Bytes: 999, Err: ErrTooLarge}, eof,
		}},
		{"too large noreply cas", "cas a 3 4 5000 7 noreply\r\n" + strings.Repeat("x", 5000) + "\r\nversion\r\n", []result{
			{Cmd: CmdCAS, Keys: ss("a"), Flags: 3, Exptime: 4, Bytes: 5000, CAS: 7, Noreply: true, Err: ErrTooLarge}, {Cmd: CmdVersion}, eof,
		}},
		{"too large bad tail", "set a 0 0 1000\r\n" + strings.Repeat("x", 1000) + "XYget a\r\n", []result{
			{Cmd: CmdSet, Keys: ss("a"), Bytes: 1000, Err: ErrTooLarge}, {Cmd: CmdGet, Keys: ss("a")}, eof,
		}},
		{"too large short", "set a 0 0 2000\r\nabc", []result{fail(CmdSet, io.ErrUnexpectedEOF)}},
	})
}

func TestReadKeyed(t *testing.T) {
	runReadCases(t, []readCase{
		{"delete", "delete a\r\n", []result{{Cmd: CmdDelete, Keys: ss("a")}, eof}},
		{"delete 0", "delete a 0\r\n", []result{{Cmd: CmdDelete, Keys: ss("a")}, eof}},
		{"delete noreply", "delete a noreply\r\n", []result{{Cmd: CmdDelete, Keys: ss("a"), Noreply: true}, eof}},
		{"delete 0 noreply", "delete a 0 noreply\r\n", []result{{Cmd: CmdDelete, Keys: ss("a"), Noreply: true}, eof}},
		{"delete key noreply", "delete noreply\r\n", []result{{Cmd: CmdDelete, Keys: ss("noreply")}, eof}},
		{"delete hold time", "delete a 5\r\n", []result{fail(CmdDelete, ErrDeleteUsage), eof}},
		{"delete hold time noreply", "delete a 5 noreply\r\n", []result{failNoreply(CmdDelete, ErrDeleteUsage), eof}},
		{"delete noreply 0", "delete a noreply 0\r\n", []result{fail(CmdDelete, ErrDeleteUsage), eof}},
		{"delete too many", "delete a b c d e\r\n", []result{fail(CmdDelete, ErrUnknown), eof}},
		{"delete no key", "delete\r\n", []result{fail(CmdDelete, ErrUnknown), eof}},
		{"delete 251-byte key", "delete " + key251 + "\r\n", []result{fail(CmdDelete, ErrBadFormat), eof}},
		{"delete bad key noreply", "delete " + key251 + " noreply\r\n", []result{failNoreply(CmdDelete, ErrBadFormat), eof}},

		{"incr", "incr a 5\r\n", []result{{Cmd: CmdIncr, Keys: ss("a"), Delta: 5}, eof}},
		{"decr max noreply", "decr a 18446744073709551615 noreply\r\n", []result{{Cmd: CmdDecr, Keys: ss("a"), Delta: 18446744073709551615, Noreply: true}, eof}},
		{"incr extra ignored", "incr a 1 foo\r\n", []result{{Cmd: CmdIncr, Keys: ss("a"), Delta: 1}, eof}},
		{"incr negative", "incr a -1\r\n", []result{fail(CmdIncr, ErrBadDelta), eof}},
		{"incr 2^64", "incr a 18446744073709551616\r\n", []result{fail(CmdIncr, ErrBadDelta), eof}},
		{"incr abc noreply", "incr a abc noreply\r\n", []result{failNoreply(CmdIncr, ErrBadDelta), eof}},
		{"incr noreply as delta", "incr a noreply\r\n", []result{failNoreply(CmdIncr, ErrBadDelta), eof}},
		{"incr no args", "incr\r\n", []result{fail(CmdIncr, ErrUnknown), eof}},
		{"incr no delta", "incr a\r\n", []result{fail(CmdIncr, ErrUnknown), eof}},
		{"decr too many", "decr a 1 2 3\r\n", []result{fail(CmdDecr, ErrUnknown), eof}},
		{"incr 251-byte key", "incr " + key251 + " x\r\n", []result{fail(CmdIncr, ErrBadFormat), eof}},

		{"touch", "touch a 10\r\n", []result{{Cmd: CmdTouch, Keys: ss("a"), Exptime: 10}, eof}},
		{"touch negative noreply", "touch a -1 noreply\r\n", []result{{Cmd: CmdTouch, Keys: ss("a"), Exptime: -1, Noreply: true}, eof}},
		{"touch no exptime", "touch a\r\n", []result{fail(CmdTouch, ErrUnknown), eof}},
		{"touch bad exptime", "touch a abc\r\n", []result{fail(CmdTouch, ErrBadExptime), eof}},
		{"touch 251-byte key", "touch " + key251 + " abc\r\n", []result{fail(CmdTouch, ErrBadFormat), eof}},
	})
}

func TestReadOther(t *testing.T) {
	runReadCases(t, []readCase{
		{"flush_all", "flush_all\r\n", []result{{Cmd: CmdFlushAll}, eof}},
		{"flush_all delay", "flush_all 10\r\n", []result{{Cmd: CmdFlushAll, Exptime: 10, HasExp: true}, eof}},
		{"flush_all zero", "flush_all 0\r\n", []result{{Cmd: CmdFlushAll, HasExp: true}, eof}},
		{"flush_all negative", "flush_all -1\r\n", []result{{Cmd: CmdFlushAll, Exptime: -1, HasExp: true}, eof}},
		{"flush_all noreply", "flush_all noreply\r\n", []result{{Cmd: CmdFlushAll, Noreply: true}, eof}},
		{"flush_all delay noreply", "flush_all 10 noreply\r\n", []result{{Cmd: CmdFlushAll, Exptime: 10, HasExp: true, Noreply: true}, eof}},
		{"flush_all delay extra", "flush_all 10 foo\r\n", []result{{Cmd: CmdFlushAll, Exptime: 10, HasExp: true}, eof}},
		{"flush_all bad", "flush_all abc\r\n", []result{fail(CmdFlushAll, ErrBadExptime), eof}},
		{"flush_all bad noreply", "flush_all noreply noreply\r\n", []result{failNoreply(CmdFlushAll, ErrBadExptime), eof}},
		{"flush_all too many", "flush_all 1 2 3\r\n", []result{fail(CmdFlushAll, ErrUnknown), eof}},

		{"stats", "stats\r\n", []result{{Cmd: CmdStats}, eof}},
		{"stats items", "stats items\r\n", []result{{Cmd: CmdStats, Args: ss("items")}, eof}},
		{"stats detail", "stats detail dump\r\n", []result{{Cmd: CmdStats, Args: ss("detail", "dump")}, eof}},
		{"stats noreply", "stats noreply\r\n", []result{{Cmd: CmdStats, Args: ss("noreply")}, eof}},
		{"version", "version\r\n", []result{{Cmd: CmdVersion}, eof}},
		{"version extra", "version foo bar\r\n", []result{{Cmd: CmdVersion}, eof}},
		{"quit", "quit\r\n", []result{{Cmd: CmdQuit}, eof}},
		{"quit extra", "quit now\r\n", []result{{Cmd: CmdQuit}, eof}},
		{"verbosity", "verbosity 1\r\n", []result{{Cmd: CmdVerbosity, Args: ss("1")}, eof}},
		{"verbosity noreply", "verbosity 1 noreply\r\n", []result{{Cmd: CmdVerbosity, Args: ss("1"), Noreply: true}, eof}},
		{"verbosity no level", "verbosity\r\n", []result{fail(CmdVerbosity, ErrUnknown), eof}},
		{"verbosity invalid", "verbosity invalid\r\n", []result{fail(CmdVerbosity, ErrBadFormat), eof}},
		{"verbosity only noreply", "verbosity noreply\r\n", []result{failNoreply(CmdVerbosity, ErrBadFormat), eof}},
		{"verbosity too many", "verbosity 1 2 3\r\n", []result{fail(CmdVerbosity, ErrUnknown), eof}},
		{"auth", "auth s3cret\r\n", []result{{Cmd: CmdAuth, Args: ss("s3cret")}, eof}},
		{"auth no token", "auth\r\n", []result{fail(CmdAuth, ErrUnknown), eof}},
		{"auth two tokens", "auth a b\r\n", []result{fail(CmdAuth, ErrUnknown), eof}},

		{"unknown", "bogus\r\n", []result{fail(CmdNone, ErrUnknown), eof}},
		{"unknown meta", "mz a v\r\n", []result{fail(CmdNone, ErrUnknown), eof}},
		{"empty line", "\r\n", []result{fail(CmdNone, ErrUnknown), eof}},
		{"empty LF line", "\n", []result{fail(CmdNone, ErrUnknown), eof}},
		{"spaces line", "   \r\n", []result{fail(CmdNone, ErrUnknown), eof}},
		{"lone CR line", "\r\r\n", []result{fail(CmdNone, ErrUnknown), eof}},
		{"garbage keeps step", "get a\r\n\x00\x01\x02\r\nget a\r\n", []result{{Cmd: CmdGet, Keys: ss("a")}, fail(CmdNone, ErrUnknown), {Cmd: CmdGet, Keys: ss("a")}, eof}},
		{"http get", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", []result{fail(CmdNone, ErrHTTP)}},
		{"http post", "POST /x HTTP/1.0\r\n", []result{fail(CmdNone, ErrHTTP)}},
		{"http alone", "HTTP/1.1\r\n", []result{fail(CmdNone, ErrHTTP)}},
		{"binary", "\x80\x01\x00\x01\x00\x00\x00\x00", []result{{Err: ErrBinary}}},
		{"binary after command", "get a\r\n\x80\x0a", []result{{Cmd: CmdGet, Keys: ss("a")}, {Err: ErrBinary}}},
		{"partial line", "get a", []result{{Err: io.ErrUnexpectedEOF}}},
		{"partial line CR", "get a\r", []result{{Err: io.ErrUnexpectedEOF}}},
		{"clean end", "", []result{eof}},
	})
}

func TestReadLineLimits(t *testing.T) {
	x2048 := strings.Repeat("x", 2048)
	x2049 := strings.Repeat("x", 2049)
	setLong := "set " + strings.Repeat("a", 3000) + " 0 0 1\r\nx\r\n"
	runReadCases(t, []readCase{
		{"2048-byte line", x2048 + "\r\n", []result{fail(CmdNone, ErrUnknown), eof}},
		{"2048-byte line LF", x2048 + "\n", []result{fail(CmdNone, ErrUnknown), eof}},
		{"2049-byte line", x2049 + "\r\n", []result{{Err: ErrLineTooLong}}},
		{"2049-byte line LF", x2049 + "\n", []result{{Err: ErrLineTooLong}}},
		{"2049 bytes no newline", x2049, []result{{Err: ErrLineTooLong}}},
		{"2048 bytes and CR, no newline", x2048 + "\r", []result{{Err: io.ErrUnexpectedEOF}}},
		{"3000-byte set line", setLong, []result{{Err: ErrLineTooLong}}},
		{"3000 bytes no newline", strings.Repeat("\x16\x03\x01", 1000), []result{{Err: ErrLineTooLong}}},
		{"long stats line", "stats " + x2049 + "\r\n", []result{{Err: ErrLineTooLong}}},
		{"long get name only", "get" + x2049 + "\r\n", []result{{Err: ErrLineTooLong}}},
		{"long leading spaces", strings.Repeat(" ", 2100) + "get a\r\n", []result{{Err: ErrLineTooLong}}},
	})
}

// TestReadRetrievalLineCap checks the 2 MiB cap on retrieval lines. It runs
// only through readers that deliver large chunks, to stay fast.
func TestReadRetrievalLineCap(t *testing.T) {
	key := strings.Repeat("k", 200)
	var b strings.Builder
	b.WriteString("get")
	nkeys := 0
	for b.Len() < MaxRetrievalLineLen-len(key) {
		b.WriteString(" " + key)
		nkeys++
	}
	atCap := b.String()
	atCap += strings.Repeat(" ", MaxRetrievalLineLen-len(atCap)) // exactly MaxRetrievalLineLen
	for _, size := range bufSizes {
		got := readAll(t, strings.NewReader(atCap+"\r\nget z\r\n"), size)
		if len(got) != 3 || got[0].Err != nil || len(got[0].Keys) != nkeys || got[1].Keys[0] != "z" || got[2].Err != io.EOF {
			t.Errorf("size %d: line of MaxRetrievalLineLen: got %d results, first %v", size, len(got), got[0].Err)
		}
		got = readAll(t, strings.NewReader(atCap+" \r\n"), size)
		if len(got) != 1 || got[0].Err != ErrLineTooLong {
			t.Errorf("size %d: line of MaxRetrievalLineLen+1 = %v, want ErrLineTooLong", size, got)
		}
		got = readAll(t, strings.NewReader(atCap+" k k k k k"), size) // no newline
		if len(got) != 1 || got[0].Err != ErrLineTooLong {
			t.Errorf("size %d: unterminated line over cap = %v, want ErrLineTooLong", size, got)
		}
	}
}

// TestReadTooLongWithoutNewline guards the early cut-off: a line past the
// limit must fail as soon as its bytes are here, not when the buffer fills.
func TestReadTooLongWithoutNewline(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	go func() {
		_, _ = pw.Write([]byte(strings.Repeat("y", 3000))) // no newline, then stall
	}()
	r := NewReader(pr, 16<<10, testMaxValue)
	var req Request
	if err := r.Read(&req); err != ErrLineTooLong {
		t.Fatalf("Read(3000 bytes, no newline, stream open) = %v, want ErrLineTooLong", err)
	}
}

func TestReadPipelined(t *testing.T) {
	in := "set a 0 0 1\r\nx\r\nset b 5 0 2 noreply\r\nyy\r\nget a b\r\ndelete a\r\n" +
		"incr n 3\r\ntouch b 9\r\nbogus\r\ngets b\r\nset big 0 0 900\r\n" + strings.Repeat("z", 900) + "\r\nquit\r\n"
	runReadCases(t, []readCase{{"pipeline", in, []result{
		{Cmd: CmdSet, Keys: ss("a"), Bytes: 1, Value: "x"},
		{Cmd: CmdSet, Keys: ss("b"), Flags: 5, Bytes: 2, Value: "yy", Noreply: true},
		{Cmd: CmdGet, Keys: ss("a", "b")},
		{Cmd: CmdDelete, Keys: ss("a")},
		{Cmd: CmdIncr, Keys: ss("n"), Delta: 3},
		{Cmd: CmdTouch, Keys: ss("b"), Exptime: 9},
		fail(CmdNone, ErrUnknown),
		{Cmd: CmdGets, Keys: ss("b")},
		{Cmd: CmdSet, Keys: ss("big"), Bytes: 900, Value: strings.Repeat("z", 900)},
		{Cmd: CmdQuit},
		eof,
	}}})
}

func TestReadLargeValues(t *testing.T) {
	max := func(int) int { return 1 << 20 }
	for _, n := range []int{16<<10 - 2, 16 << 10, 20000, retainLimit + 1, 1 << 20} {
		val := bytes.Repeat([]byte{'v'}, n)
		in := fmt.Sprintf("set k 0 0 %d\r\n%s\r\nset k2 0 0 %d\r\n%s\r\n", n, val, n, val)
		r := NewReader(iotest.HalfReader(strings.NewReader(in)), 16<<10, max)
		var req Request
		for i := range 2 {
			if err := r.Read(&req); err != nil || !bytes.Equal(req.Value, val) {
				t.Fatalf("value of %d bytes, read %d: err %v, len %d", n, i, err, len(req.Value))
			}
		}
		if err := r.Read(&req); err != io.EOF {
			t.Fatalf("value of %d bytes: final Read = %v, want io.EOF", n, err)
		}
		if cap(r.val) > retainLimit {
			t.Errorf("value of %d bytes: spill buffer of %d bytes retained after the next Read", n, cap(r.val))
		}
	}
}

// TestReadTooLargeSwallowsWithoutBuffering guards the swallow path: a
// declared 100 MB value is skipped through the read buffer, never held.
func TestReadTooLargeSwallowsWithoutBuffering(t *testing.T) {
	const n = 100 << 20
	in := io.MultiReader(
		strings.NewReader(fmt.Sprintf("set a 1 2 %d\r\n", n)),
		io.LimitReader(zeros{}, n),
		strings.NewReader("\r\nget a\r\n"),
	)
	r := NewReader(in, 16<<10, nil)
	var req Request
	if err := r.Read(&req); err != ErrTooLarge {
		t.Fatalf("Read(set of %d bytes) = %v, want ErrTooLarge", n, err)
	}
	if string(req.Key()) != "a" || req.Bytes != n || req.Flags != 1 || req.Exptime != 2 || req.Value != nil {
		t.Errorf("after ErrTooLarge: key %q bytes %d flags %d exptime %d value %d bytes", req.Key(), req.Bytes, req.Flags, req.Exptime, len(req.Value))
	}
	if cap(r.val) != 0 || cap(r.long) != 0 {
		t.Errorf("spill buffers grew to %d/%d bytes while swallowing", cap(r.val), cap(r.long))
	}
	if err := r.Read(&req); err != nil || req.Command != CmdGet || string(req.Key()) != "a" {
		t.Fatalf("Read after swallow = %v %v %q, want get a", err, req.Command, req.Key())
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestReadReusesRequest(t *testing.T) {
	r := NewReader(strings.NewReader("get a b c\r\ntouch k 5\r\nstats x\r\n"), 16<<10, nil)
	var req Request
	if err := r.Read(&req); err != nil || len(req.Keys) != 3 {
		t.Fatalf("Read(get a b c) = %v, %d keys", err, len(req.Keys))
	}
	if err := r.Read(&req); err != nil || len(req.Keys) != 1 || string(req.Key()) != "k" || req.Exptime != 5 {
		t.Fatalf("Read(touch k 5) = %v, keys %q, exptime %d", err, strs(req.Keys), req.Exptime)
	}
	if err := r.Read(&req); err != nil || len(req.Keys) != 0 || req.Key() != nil || req.Exptime != 0 || len(req.Args) != 1 {
		t.Fatalf("Read(stats x) = %v, keys %q, exptime %d, args %q", err, strs(req.Keys), req.Exptime, strs(req.Args))
	}
}

func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader("get a\r\nget b\r\n"), 64, nil)
	var req Request
	if err := r.Read(&req); err != nil || r.Buffered() != len("get b\r\n") {
		t.Fatalf("Read = %v, Buffered = %d", err, r.Buffered())
	}
	r.Reset(strings.NewReader("get c\r\n"))
	if r.Buffered() != 0 {
		t.Errorf("Buffered after Reset = %d, want 0", r.Buffered())
	}
	if err := r.Read(&req); err != nil || string(req.Key()) != "c" {
		t.Fatalf("Read after Reset = %v %q, want get c", err, req.Key())
	}
}

func TestErrorReply(t *testing.T) {
	tests := []struct {
		err   error
		line  string
		close bool
	}{
		{ErrUnknown, "ERROR", false},
		{ErrBadFormat, "CLIENT_ERROR bad command line format", false},
		{ErrBadChunk, "CLIENT_ERROR bad data chunk", false},
		{ErrTooLarge, "SERVER_ERROR object too large for cache", false},
		{ErrBadExptime, "CLIENT_ERROR invalid exptime argument", false},
		{ErrBadDelta, "CLIENT_ERROR invalid numeric delta argument", false},
		{ErrDeleteUsage, "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]", false},
		{fmt.Errorf("wrapped: %w", ErrBadFormat), "CLIENT_ERROR bad command line format", false},
		{ErrLineTooLong, "", true},
		{ErrHTTP, "", true},
		{ErrBinary, "", true},
		{io.EOF, "", true},
		{io.ErrUnexpectedEOF, "", true},
		{errors.New("read: connection reset"), "", true},
	}
	for _, tt := range tests {
		line, closeConn := ErrorReply(tt.err)
		if line != tt.line || closeConn != tt.close {
			t.Errorf("ErrorReply(%v) = %q, %v, want %q, %v", tt.err, line, closeConn, tt.line, tt.close)
		}
	}
}

func TestCommandString(t *testing.T) {
	for c := CmdNone; c <= CmdAuth; c++ {
		name := c.String()
		if c == CmdNone {
			if name != "" {
				t.Errorf("CmdNone.String() = %q, want empty", name)
			}
			continue
		}
		if got := lookupCommand([]byte(name)); got != c {
			t.Errorf("lookupCommand(%q) = %v, want %v", name, got, c)
		}
	}
	if s := Command(200).String(); s != "" {
		t.Errorf("Command(200).String() = %q, want empty", s)
	}
}

func TestParseNumbers(t *testing.T) {
	uints := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"007", 7, true}, {"18446744073709551615", 18446744073709551615, true},
		{"18446744073709551616", 0, false}, {"99999999999999999999", 0, false},
		{"", 0, false}, {"-1", 0, false}, {"+1", 1, true}, {"++1", 0, false}, {"+", 0, false},
		{"1a", 0, false}, {" 1", 0, false}, {"1\r", 1, true}, {"1\t\r", 1, true}, {"\r", 0, false},
	}
	for _, tt := range uints {
		got, ok := parseUint([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseUint(%q) = %d, %v, want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	ints := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"-1", -1, true}, {"2592000", 2592000, true},
		{"9223372036854775807", 9223372036854775807, true}, {"9223372036854775808", 0, false},
		{"-9223372036854775808", -9223372036854775808, true}, {"-9223372036854775809", 0, false},
		{"-", 0, false}, {"", 0, false}, {"--1", 0, false}, {"1-", 0, false},
		{"+100", 100, true}, {"-+1", 0, false}, {"+-1", 0, false}, {"-1\r", -1, true},
	}
	for _, tt := range ints {
		got, ok := parseInt([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseInt(%q) = %d, %v, want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
