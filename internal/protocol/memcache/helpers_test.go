package memcache

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// testMaxValue is the value limit of the test Readers: 1000 bytes minus the
// key, like a store whose item size counts the key.
func testMaxValue(keyLen int) int { return 1000 - keyLen }

// result is a comparable snapshot of one Read: slices copied to strings.
// For errors other than ErrTooLarge only Cmd, Noreply and Err are kept,
// since the contract leaves the other fields unspecified.
type result struct {
	Cmd     Command
	Keys    []string
	Flags   uint32
	Exptime int64
	HasExp  bool
	Bytes   int
	CAS     uint64
	Delta   uint64
	Value   string
	Noreply bool
	Args    []string
	Meta    string // FuzzReader: the meta fields, when the command is a meta command
	Err     error
}

func (r result) String() string {
	s := fmt.Sprintf("{%v", r.Cmd)
	if r.Err != nil {
		s += fmt.Sprintf(" err=%v", r.Err)
	}
	if len(r.Keys) > 0 {
		ks := make([]string, len(r.Keys))
		for i, k := range r.Keys {
			ks[i] = abbrev(k)
		}
		s += fmt.Sprintf(" keys=%q", ks)
	}
	if r.Flags != 0 || r.Exptime != 0 || r.HasExp || r.Bytes != 0 || r.CAS != 0 || r.Delta != 0 {
		s += fmt.Sprintf(" flags=%d exp=%d hasexp=%v bytes=%d cas=%d delta=%d", r.Flags, r.Exptime, r.HasExp, r.Bytes, r.CAS, r.Delta)
	}
	if r.Value != "" {
		s += fmt.Sprintf(" value=%q", abbrev(r.Value))
	}
	if r.Noreply {
		s += " noreply"
	}
	if len(r.Args) > 0 {
		s += fmt.Sprintf(" args=%q", r.Args)
	}
	if r.Meta != "" {
		s += " meta=" + r.Meta
	}
	return s + "}"
}

func abbrev(s string) string {
	if len(s) > 40 {
		return fmt.Sprintf("%s...(%d bytes)", s[:20], len(s))
	}
	return s
}

func strs(bs [][]byte) []string {
	if len(bs) == 0 {
		return nil
	}
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

func toResult(req *Request, err error) result {
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return result{Cmd: req.Command, Noreply: req.Noreply, Err: err}
	}
	return result{
		Cmd: req.Command, Keys: strs(req.Keys), Flags: req.Flags, Exptime: req.Exptime,
		HasExp: req.HasExptime, Bytes: req.Bytes, CAS: req.CAS, Delta: req.Delta,
		Value: string(req.Value), Noreply: req.Noreply, Args: strs(req.Args), Err: err,
	}
}

// readAll reads requests until io.EOF or an error that closes the
// connection, and returns one result per Read, the last one included.
func readAll(t testing.TB, rd io.Reader, size int) []result {
	t.Helper()
	r := NewReader(rd, size, testMaxValue)
	var req Request
	var out []result
	for range 100000 {
		err := r.Read(&req)
		out = append(out, toResult(&req, err))
		if err != nil {
			if _, closeConn := ErrorReply(err); closeConn {
				return out
			}
		}
	}
	t.Fatalf("no end of stream after 100000 reads")
	return nil
}

func equalResults(got, want []result) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Err != w.Err {
			return false
		}
		g.Err, w.Err = nil, nil
		if !reflect.DeepEqual(g, w) {
			return false
		}
	}
	return true
}

// readerKinds split the input differently; the results must not change.
var readerKinds = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"plain", func(r io.Reader) io.Reader { return r }},
	{"onebyte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"dataerr", iotest.DataErrReader},
}

// bufSizes cover a read buffer smaller than most lines and values (so the
// spill paths run), a middling one, and the server's 16 KiB.
var bufSizes = []int{16, 64, 16 << 10}

type readCase struct {
	name string
	in   string
	want []result
}

// runReadCases runs every case through every reader kind and buffer size.
func runReadCases(t *testing.T, cases []readCase) {
	t.Helper()
	for _, tc := range cases {
		for _, rk := range readerKinds {
			for _, size := range bufSizes {
				got := readAll(t, rk.wrap(strings.NewReader(tc.in)), size)
				if !equalResults(got, tc.want) {
					t.Errorf("%s: Read(%q) via %s/%d =\n  %v\nwant\n  %v", tc.name, abbrev(tc.in), rk.name, size, got, tc.want)
				}
			}
		}
	}
}

// Shorthands for expected results.
func ss(s ...string) []string { return s }

var eof = result{Err: io.EOF}

func fail(cmd Command, err error) result { return result{Cmd: cmd, Err: err} }
func failNoreply(cmd Command, err error) result {
	return result{Cmd: cmd, Err: err, Noreply: true}
}

var (
	key250 = strings.Repeat("k", 250)
	key251 = strings.Repeat("k", 251)
)
