package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll parses every request in in, returning the argument vectors (as
// strings, empty requests included as "[]") and the error that ended it.
func readAll(rd io.Reader, size, maxBulk int) ([]string, error) {
	r := NewReader(rd, size, maxBulk)
	var got []string
	for {
		argv, err := r.Read()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return got, err
		}
		got = append(got, fmt.Sprintf("%q", argv))
	}
}

func q(args ...string) string {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return fmt.Sprintf("%q", b)
}

var empty = q()

var readerTests = []struct {
	name string
	in   string
	want []string
	err  error
}{
	{"multibulk", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", []string{q("GET", "k")}, nil},
	{"binary bulk", "*2\r\n$4\r\nECHO\r\n$4\r\na\r\n\x00\r\n", []string{q("ECHO", "a\r\n\x00")}, nil},
	{"empty bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", []string{q("ECHO", "")}, nil},
	{"pipeline", "*1\r\n$4\r\nPING\r\nPING\r\n*1\r\n$4\r\nPING\r\n", []string{q("PING"), q("PING"), q("PING")}, nil},
	{"zero and negative counts skipped", "*0\r\n*-1\r\n*-10\r\nPING\r\n", []string{empty, empty, empty, q("PING")}, nil},
	{"inline", "SET a b\r\n", []string{q("SET", "a", "b")}, nil},
	{"inline bare LF", "PING\n", []string{q("PING")}, nil},
	{"inline empty lines", "\r\n\nPING\r\n", []string{empty, empty, q("PING")}, nil},
	{"inline spaces", "  SET\t a   b  \r\n", []string{q("SET", "a", "b")}, nil},
	{"inline vt ff between args", "a\v\fb\r\n", []string{q("a\v\fb")}, nil},
	{"inline double quotes", `SET "a b" "c\"d\n\x41\x4g"` + "\r\n", []string{q("SET", "a b", "c\"d\nAx4g")}, nil},
	{"inline single quotes", `SET 'a b' 'it\'s \n'` + "\r\n", []string{q("SET", "a b", `it's \n`)}, nil},
	{"inline quote mid-arg", `a"b c"` + "\r\n", []string{q("ab c")}, nil},
	{"inline empty quoted", `ECHO ""` + "\r\n", []string{q("ECHO", "")}, nil},
	{"inline escapes", `ECHO "\t\r\b\a\q\\"` + "\r\n", []string{q("ECHO", "\t\r\b\aq\\")}, nil},
	{"unbalanced double", "SET a \"b\r\n", nil, ErrUnbalancedQuotes},
	{"unbalanced single", "SET a 'b\r\n", nil, ErrUnbalancedQuotes},
	{"closing quote then char", "SET \"a\"b c\r\n", nil, ErrUnbalancedQuotes},
	{"inline NUL", "\x00PING\r\n", nil, ErrInlineNUL},
	{"bad count", "*abc\r\n", nil, ErrInvalidMultibulkLength},
	{"count above int32", "*2147483648\r\n", nil, ErrInvalidMultibulkLength},
	{"count above cap", "*1048577\r\n", nil, ErrInvalidMultibulkLength},
	{"count leading zero", "*01\r\n", nil, ErrInvalidMultibulkLength},
	{"count plus", "*+1\r\n", nil, ErrInvalidMultibulkLength},
	{"count empty", "*\r\n", nil, ErrInvalidMultibulkLength},
	{"not dollar", "*1\r\n:1\r\n", nil, ProtocolError("Protocol error: expected '$', got ':'")},
	{"empty bulk line", "*1\r\n\r\n", nil, ProtocolError("Protocol error: expected '$', got ' '")},
	{"negative bulk", "*1\r\n$-1\r\n", nil, ErrInvalidBulkLength},
	{"bad bulk", "*1\r\n$abc\r\n", nil, ErrInvalidBulkLength},
	{"bulk above proto-max-bulk-len", "*1\r\n$536870913\r\n", nil, ErrInvalidBulkLength},
	{"bulk above max dropped", "*2\r\n$3\r\nSET\r\n$1025\r\n" + strings.Repeat("v", 1025) + "\r\n*1\r\n$4\r\nPING\r\n", []string{q("SET", ""), q("PING")}, nil},
	{"dropped bulk without CRLF", "*1\r\n$1025\r\n" + strings.Repeat("v", 1025) + "XY", nil, ErrExpectedCRLF},
	{"dropped bulk truncated", "*1\r\n$1025\r\n" + strings.Repeat("v", 100), nil, io.ErrUnexpectedEOF},
	{"bulk huge", "*1\r\n$99999999999999999999999\r\n", nil, ErrInvalidBulkLength},
	{"bulk without CRLF", "*1\r\n$1\r\nkXY", nil, ErrExpectedCRLF},
	{"count CR without LF", "*1\rX", nil, ErrExpectedCRLF},
	{"truncated bulk", "*1\r\n$4\r\nPI", nil, io.ErrUnexpectedEOF},
	{"truncated count", "*1", nil, io.ErrUnexpectedEOF},
	{"truncated inline", "PING", nil, io.ErrUnexpectedEOF},
	{"truncated elements", "*2\r\n$4\r\nPING\r\n", nil, io.ErrUnexpectedEOF},
	{"long count line", "*" + strings.Repeat("1", 100) + "\r\n", nil, ErrInvalidMultibulkLength},
	{"long bulk line bad first byte", "*1\r\n" + strings.Repeat("x", 20000) + "\r\n", nil, ProtocolError("Protocol error: expected '$', got 'x'")},
	{"too big mbulk count", "*" + strings.Repeat("1", MaxInlineLen+1), nil, ErrTooBigMultibulkCount},
	{"too big bulk count", "*1\r\n$" + strings.Repeat("1", MaxInlineLen+1), nil, ErrTooBigBulkCount},
	{"too big inline", strings.Repeat("a", MaxInlineLen+1), nil, ErrTooBigInline},
	{"too big inline with LF", strings.Repeat("a", MaxInlineLen+1) + "\n", nil, ErrTooBigInline},
	{"long inline ok", "ECHO " + strings.Repeat("a", 30000) + "\r\n", []string{q("ECHO", strings.Repeat("a", 30000))}, nil},
	{"bulk at max", "*1\r\n$1024\r\n" + strings.Repeat("v", 1024) + "\r\n", []string{q(strings.Repeat("v", 1024))}, nil},
}

// TestReader runs every case whole, one byte at a time and in halves, so a
// request split at any byte parses the same.
func TestReader(t *testing.T) {
	wrappers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"OneByteReader", iotest.OneByteReader},
		{"HalfReader", iotest.HalfReader},
		{"DataErrReader", iotest.DataErrReader},
	}
	for _, tt := range readerTests {
		for _, wr := range wrappers {
			got, err := readAll(wr.wrap(strings.NewReader(tt.in)), 4096, 1024)
			if !errors.Is(err, tt.err) {
				t.Errorf("%s/%s: Read(%.60q) error = %v, want %v", tt.name, wr.name, tt.in, err, tt.err)
				continue
			}
			if tt.err == nil && fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s/%s: Read(%.60q) = %v, want %v", tt.name, wr.name, tt.in, got, tt.want)
			}
		}
	}
}

func TestReaderUnauthenticated(t *testing.T) {
	tests := []struct {
		in  string
		err error
	}{
		{"*11\r\n", ErrUnauthMultibulk},
		{"*1\r\n$16385\r\n", ErrUnauthBulk},
		{"*10\r\n", io.ErrUnexpectedEOF},
		{"*1\r\n$16384\r\n" + strings.Repeat("a", 16384) + "\r\n", nil},
	}
	for _, tt := range tests {
		r := NewReader(strings.NewReader(tt.in), 4096, 1<<20)
		r.SetUnauthenticated(true)
		_, err := r.Read()
		if !errors.Is(err, tt.err) {
			t.Errorf("unauthenticated Read(%.40q) error = %v, want %v", tt.in, err, tt.err)
		}
	}
}

// TestReaderDeclaredCountAllocatesNothing guards against sizing memory by a
// declared count: "*1000000" with no elements after it must not allocate
// a million-entry vector.
func TestReaderDeclaredCountAllocatesNothing(t *testing.T) {
	r := NewReader(strings.NewReader("*1000000\r\n"), 4096, 1<<20)
	_, err := r.Read()
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("Read = %v, want ErrUnexpectedEOF", err)
	}
	if c := cap(r.offs); c > 2*argvPrealloc {
		t.Errorf("cap(offs) = %d after a bare count, want <= %d", c, 2*argvPrealloc)
	}
	r = NewReader(strings.NewReader("*1\r\n$1000000\r\nabc"), 4096, 1<<20)
	_, _ = r.Read()
	if c := cap(r.arena); c > 4096 {
		t.Errorf("cap(arena) = %d after 3 bytes of a 1 MB bulk, want <= 4096", c)
	}
}

// TestReaderArgsValidUntilNextRead checks that arguments of a request that
// spans several buffer fills stay intact (they live in the arena, not in
// the bufio buffer that slides under them).
func TestReaderArgsValidUntilNextRead(t *testing.T) {
	var in bytes.Buffer
	in.WriteString("*3\r\n$3\r\nSET\r\n")
	fmt.Fprintf(&in, "$%d\r\n%s\r\n", 5000, strings.Repeat("k", 5000))
	fmt.Fprintf(&in, "$%d\r\n%s\r\n", 9000, strings.Repeat("v", 9000))
	r := NewReader(iotest.HalfReader(&in), 16, 1<<20)
	argv, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(argv) != 3 || string(argv[0]) != "SET" || string(argv[1]) != strings.Repeat("k", 5000) || string(argv[2]) != strings.Repeat("v", 9000) {
		t.Fatalf("argv lengths %d, first %q", len(argv), argv[0])
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true}, {"123", 123, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false}, {"", 0, false}, {"-", 0, false},
		{"-0", 0, false}, {"00", 0, false}, {"01", 0, false}, {"+1", 0, false},
		{" 1", 0, false}, {"1 ", 0, false}, {"1a", 0, false}, {"0x10", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseInt([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseInt(%q) = %d, %v, want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// loopReader serves data over and over, like a client that never stops.
type loopReader struct {
	data []byte
	off  int
}

func (l *loopReader) Read(p []byte) (int, error) {
	n := copy(p, l.data[l.off:])
	l.off = (l.off + n) % len(l.data)
	return n, nil
}

// TestReadZeroAllocs proves the hot path allocates nothing once warm.
func TestReadZeroAllocs(t *testing.T) {
	tests := []struct{ name, in string }{
		{"get", "*2\r\n$3\r\nGET\r\n$9\r\nuser:1000\r\n"},
		{"set", "*3\r\n$3\r\nSET\r\n$9\r\nuser:1000\r\n$32\r\n" + strings.Repeat("v", 32) + "\r\n"},
		{"set 32 KB", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$32768\r\n" + strings.Repeat("v", 32768) + "\r\n"},
		{"mset", "*5\r\n$4\r\nMSET\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
		{"inline", "PING\r\n"},
		{"inline quoted", "SET \"a b\" 'c'\r\n"},
	}
	for _, tt := range tests {
		r := NewReader(&loopReader{data: []byte(tt.in)}, 16<<10, 1<<20)
		for range 100 {
			if _, err := r.Read(); err != nil {
				t.Fatalf("%s: Read = %v", tt.name, err)
			}
		}
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := r.Read(); err != nil {
				t.Fatalf("%s: Read = %v", tt.name, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocs per Read, want 0", tt.name, allocs)
		}
	}
}

func BenchmarkReadGet(b *testing.B) {
	r := NewReader(&loopReader{data: []byte("*2\r\n$3\r\nGET\r\n$9\r\nuser:1000\r\n")}, 16<<10, 1<<20)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Read(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReaderDropsBulkOverMax checks that a bulk longer than maxBulk (but
// within MaxBulkLen) is consumed without being kept: the request parses
// with the argument empty, TooLarge reports it for that request only, the
// next request reads in step, and the arena never grows past maxBulk.
func TestReaderDropsBulkOverMax(t *testing.T) {
	const maxBulk = 1024
	big := strings.Repeat("v", 200*maxBulk)
	in := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + strconv.Itoa(len(big)) + "\r\n" + big + "\r\n" +
		"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"
	for _, wrap := range []func(io.Reader) io.Reader{
		func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader,
	} {
		r := NewReader(wrap(strings.NewReader(in)), 4096, maxBulk)
		argv, err := r.Read()
		if err != nil || len(argv) != 3 || string(argv[0]) != "SET" || string(argv[1]) != "k" || len(argv[2]) != 0 || !r.TooLarge() {
			t.Fatalf("first Read = %q, %v, TooLarge %v; want [SET k \"\"], nil, true", argv, err, r.TooLarge())
		}
		if cap(r.arena) > maxBulk {
			t.Errorf("arena grew to %d bytes for a dropped %d-byte bulk", cap(r.arena), len(big))
		}
		argv, err = r.Read()
		if err != nil || len(argv) != 2 || string(argv[0]) != "GET" || r.TooLarge() {
			t.Fatalf("second Read = %q, %v, TooLarge %v; want [GET k], nil, false", argv, err, r.TooLarge())
		}
	}
}
