package memcache

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// metaResult is a comparable snapshot of one Read of a meta command.
type metaResult struct {
	Cmd    Command
	Key    string // decoded key
	Raw    string // key as sent
	Flags  string // flag characters in request order
	Opaque string
	Bytes  int
	Value  string
	B64, Q bool
	TTL    int64
	Vivify int64
	Rc     int64
	C, E   uint64
	F      uint32
	D, J   uint64
	Mode   byte
	Err    error
}

func (m metaResult) String() string { return fmt.Sprintf("%+v", m.snapshotView()) }

func (m metaResult) snapshotView() any {
	type view metaResult // no String method: avoids recursion
	return view(m)
}

func toMetaResult(req *Request, err error) metaResult {
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return metaResult{Cmd: req.Command, Err: err}
	}
	m := &req.Meta
	return metaResult{
		Cmd: req.Command, Key: string(req.Key()), Raw: string(m.RawKey), Flags: string(m.Flags()),
		Opaque: string(m.Opaque), Bytes: req.Bytes, Value: string(req.Value),
		B64: m.Base64, Q: m.Quiet, TTL: m.TTL, Vivify: m.Vivify, Rc: m.Recache,
		C: m.CompareCAS, E: m.NewCAS, F: m.ClientFlags, D: m.Delta, J: m.Initial, Mode: m.Mode, Err: err,
	}
}

func readAllMeta(t *testing.T, rd io.Reader, size int) []metaResult {
	t.Helper()
	r := NewReader(rd, size, testMaxValue)
	var req Request
	var out []metaResult
	for range 1000 {
		err := r.Read(&req)
		out = append(out, toMetaResult(&req, err))
		if err != nil {
			if _, closeConn := ErrorReply(err); closeConn {
				return out
			}
		}
	}
	t.Fatal("no end of stream")
	return nil
}

var metaEOF = metaResult{Err: io.EOF}

func metaFail(cmd Command, err error) metaResult { return metaResult{Cmd: cmd, Err: err} }

// TestReadMeta runs each meta request through every reader kind and buffer
// size: a request split at any byte must parse the same.
func TestReadMeta(t *testing.T) {
	long := strings.Repeat("v", 900)
	cases := []struct {
		name string
		in   string
		want []metaResult
	}{
		{"mg", "mg foo v c f k O12 t s\r\n", []metaResult{
			{Cmd: CmdMetaGet, Key: "foo", Raw: "foo", Flags: "vcfkOts", Opaque: "12", D: 1}, metaEOF}},
		{"mg no flags", "mg foo\r\n", []metaResult{{Cmd: CmdMetaGet, Key: "foo", Raw: "foo", D: 1}, metaEOF}},
		{"mg tokens", "mg foo T30 N-1 R5 E77 q u h l P Lpath\r\n", []metaResult{
			{Cmd: CmdMetaGet, Key: "foo", Raw: "foo", Flags: "TNREquhlPL", Q: true, TTL: 30, Vivify: -1, Rc: 5, E: 77, D: 1}, metaEOF}},
		{"mg base64", "mg Zm9v b k v\r\n", []metaResult{
			{Cmd: CmdMetaGet, Key: "foo", Raw: "Zm9v", Flags: "bkv", B64: true, D: 1}, metaEOF}},
		{"mg base64 binary", "mg AAEC/w== b\r\n", []metaResult{
			{Cmd: CmdMetaGet, Key: "\x00\x01\x02\xff", Raw: "AAEC/w==", Flags: "b", B64: true, D: 1}, metaEOF}},
		{"mg bad base64", "mg Zm9 b\r\n", []metaResult{metaFail(CmdMetaGet, ErrMetaKeyDecode), metaEOF}},
		{"mg no key", "mg\r\n", []metaResult{metaFail(CmdMetaGet, ErrUnknown), metaEOF}},
		{"mg long key", "mg " + key251 + " v\r\n", []metaResult{metaFail(CmdMetaGet, ErrBadFormat), metaEOF}},
		{"mg invalid flag", "mg foo v !\r\n", []metaResult{metaFail(CmdMetaGet, ErrMetaInvalidFlag), metaEOF}},
		{"mg x is md's", "mg foo x\r\n", []metaResult{metaFail(CmdMetaGet, ErrMetaInvalidFlag), metaEOF}},
		{"mg S invalid", "mg foo S\r\n", []metaResult{metaFail(CmdMetaGet, ErrMetaInvalidFlag), metaEOF}},
		{"mg duplicate", "mg foo v k v\r\n", []metaResult{metaFail(CmdMetaGet, ErrMetaDuplicateFlag), metaEOF}},
		{"mg bad T", "mg foo Tx\r\n", []metaResult{metaFail(CmdMetaGet, ErrMetaBadToken), metaEOF}},
		{"mg empty N", "mg foo N\r\n", []metaResult{metaFail(CmdMetaGet, ErrMetaBadToken), metaEOF}},
		{"mg T over int32", "mg foo T2147483648\r\n", []metaResult{metaFail(CmdMetaGet, ErrMetaBadToken), metaEOF}},
		{"mg opaque 31", "mg foo O" + strings.Repeat("o", 31) + "\r\n", []metaResult{
			{Cmd: CmdMetaGet, Key: "foo", Raw: "foo", Flags: "O", Opaque: strings.Repeat("o", 31), D: 1}, metaEOF}},
		{"mg opaque 32", "mg foo O" + strings.Repeat("o", 32) + "\r\n", []metaResult{metaFail(CmdMetaGet, ErrMetaOpaqueTooLong), metaEOF}},
		{"mg M length", "mg foo Mxx\r\n", []metaResult{metaFail(CmdMetaGet, ErrMetaModeLength), metaEOF}},
		{"mg then get", "mg a v\r\nget a\r\n", []metaResult{
			{Cmd: CmdMetaGet, Key: "a", Raw: "a", Flags: "v", D: 1}, {Cmd: CmdGet, Key: "a"}, metaEOF}},

		{"ms", "ms foo 2 T90 F1 c k O9 MA I C5 E6 N7 s q\r\nhi\r\n", []metaResult{
			{Cmd: CmdMetaSet, Key: "foo", Raw: "foo", Flags: "TFckOMICENsq", Opaque: "9", Bytes: 2, Value: "hi",
				Q: true, TTL: 90, F: 1, C: 5, E: 6, Vivify: 7, D: 1, Mode: 'A'}, metaEOF}},
		{"ms empty", "ms foo 0\r\n\r\n", []metaResult{{Cmd: CmdMetaSet, Key: "foo", Raw: "foo", D: 1}, metaEOF}},
		{"ms base64", "ms Zm9v 3 b\r\nbar\r\n", []metaResult{
			{Cmd: CmdMetaSet, Key: "foo", Raw: "Zm9v", Flags: "b", B64: true, Bytes: 3, Value: "bar", D: 1}, metaEOF}},
		{"ms spill", "ms k 900 O1\r\n" + long + "\r\n", []metaResult{
			{Cmd: CmdMetaSet, Key: "k", Raw: "k", Flags: "O", Opaque: "1", Bytes: 900, Value: long, D: 1}, metaEOF}},
		{"ms no length", "ms foo\r\nmn\r\n", []metaResult{metaFail(CmdMetaSet, ErrBadFormat), {Cmd: CmdMetaNoop}, metaEOF}},
		{"ms bad length", "ms foo x\r\nhi\r\n", []metaResult{metaFail(CmdMetaSet, ErrBadFormat), metaFail(CmdNone, ErrUnknown), metaEOF}},
		{"ms negative length", "ms foo -1\r\nhi\r\n", []metaResult{metaFail(CmdMetaSet, ErrBadFormat), metaFail(CmdNone, ErrUnknown), metaEOF}},
		{"ms long key not swallowed", "ms " + key251 + " 2\r\nhi\r\n", []metaResult{metaFail(CmdMetaSet, ErrBadFormat), metaFail(CmdNone, ErrUnknown), metaEOF}},
		{"ms bad flag swallows", "ms foo 2 !\r\nhi\r\nmn\r\n", []metaResult{metaFail(CmdMetaSet, ErrMetaInvalidFlag), {Cmd: CmdMetaNoop}, metaEOF}},
		{"ms duplicate swallows", "ms foo 2 T1 T2\r\nhi\r\nmn\r\n", []metaResult{metaFail(CmdMetaSet, ErrMetaDuplicateFlag), {Cmd: CmdMetaNoop}, metaEOF}},
		{"ms bad mode", "ms foo 2 MX\r\nhi\r\nmn\r\n", []metaResult{metaFail(CmdMetaSet, ErrMetaSetMode), {Cmd: CmdMetaNoop}, metaEOF}},
		{"ms lower-case mode", "ms foo 2 Me\r\nhi\r\n", []metaResult{metaFail(CmdMetaSet, ErrMetaSetMode), metaEOF}},
		{"ms mode length", "ms foo 2 Mxx\r\nhi\r\n", []metaResult{metaFail(CmdMetaSet, ErrMetaModeLength), metaEOF}},
		{"ms bad F", "ms foo 2 Fx\r\nhi\r\n", []metaResult{metaFail(CmdMetaSet, ErrBadFormat), metaEOF}},
		{"ms F 2^32", "ms foo 2 F4294967296\r\nhi\r\n", []metaResult{metaFail(CmdMetaSet, ErrBadFormat), metaEOF}},
		{"ms bad C", "ms foo 2 Cx\r\nhi\r\n", []metaResult{metaFail(CmdMetaSet, ErrMetaBadToken), metaEOF}},
		{"ms bad base64 swallows", "ms b!d 2 b\r\nhi\r\n", []metaResult{metaFail(CmdMetaSet, ErrMetaKeyDecode), metaEOF}},
		{"ms opaque too long", "ms foo 2 O" + strings.Repeat("o", 32) + "\r\nhi\r\n", []metaResult{metaFail(CmdMetaSet, ErrMetaOpaqueTooLong), metaEOF}},
		{"ms too large", "ms foo 1000\r\n" + strings.Repeat("x", 1000) + "\r\nmn\r\n", []metaResult{
			{Cmd: CmdMetaSet, Key: "foo", Raw: "foo", Bytes: 1000, D: 1, Err: ErrTooLarge}, {Cmd: CmdMetaNoop}, metaEOF}},
		{"ms bad chunk", "ms foo 2\r\nabcd\r\n", []metaResult{metaFail(CmdMetaSet, ErrBadChunk), metaFail(CmdNone, ErrUnknown), metaEOF}},
		{"ms short", "ms foo 5\r\nab", []metaResult{metaFail(CmdMetaSet, io.ErrUnexpectedEOF)}},
		{"ms error short", "ms foo 5 !\r\nab", []metaResult{metaFail(CmdMetaSet, io.ErrUnexpectedEOF)}},

		{"md", "md foo q C5 I T30 k O1 x E9\r\n", []metaResult{
			{Cmd: CmdMetaDelete, Key: "foo", Raw: "foo", Flags: "qCITkOxE", Opaque: "1", Q: true, C: 5, TTL: 30, E: 9, D: 1}, metaEOF}},
		{"md invalid flag", "md foo !\r\n", []metaResult{metaFail(CmdMetaDelete, ErrMetaFlag), metaEOF}},
		{"md duplicate", "md foo q q\r\n", []metaResult{metaFail(CmdMetaDelete, ErrMetaFlag), metaEOF}},
		{"md bad C", "md foo Cx\r\n", []metaResult{metaFail(CmdMetaDelete, ErrMetaFlag), metaEOF}},
		{"md bad base64", "md x1 b\r\n", []metaResult{metaFail(CmdMetaDelete, ErrMetaFlag), metaEOF}},
		{"md opaque too long", "md foo O" + strings.Repeat("o", 32) + "\r\n", []metaResult{metaFail(CmdMetaDelete, ErrMetaOpaqueTooLong), metaEOF}},

		{"ma", "ma foo N0 J10 D5 MD T60 q t c v k O2 C3 E4\r\n", []metaResult{
			{Cmd: CmdMetaArithmetic, Key: "foo", Raw: "foo", Flags: "NJDMTqtcvkOCE", Opaque: "2", Q: true,
				J: 10, D: 5, Mode: 'D', TTL: 60, C: 3, E: 4}, metaEOF}},
		{"ma modes", "ma a M+\r\nma a M-\r\nma a MI\r\n", []metaResult{
			{Cmd: CmdMetaArithmetic, Key: "a", Raw: "a", Flags: "M", D: 1, Mode: '+'},
			{Cmd: CmdMetaArithmetic, Key: "a", Raw: "a", Flags: "M", D: 1, Mode: '-'},
			{Cmd: CmdMetaArithmetic, Key: "a", Raw: "a", Flags: "M", D: 1, Mode: 'I'}, metaEOF}},
		{"ma bad mode", "ma a Mi\r\n", []metaResult{metaFail(CmdMetaArithmetic, ErrMetaArithMode), metaEOF}},
		{"ma bad D", "ma a D18446744073709551616\r\n", []metaResult{metaFail(CmdMetaArithmetic, ErrMetaFlag), metaEOF}},
		{"ma x", "ma a x\r\n", []metaResult{metaFail(CmdMetaArithmetic, ErrMetaFlag), metaEOF}},

		{"mn", "mn\r\nmn foo bar\r\n", []metaResult{{Cmd: CmdMetaNoop}, {Cmd: CmdMetaNoop}, metaEOF}},
		{"me", "me foo\r\nme Zm9v b\r\nme foo x\r\n", []metaResult{
			{Cmd: CmdMetaDebug, Key: "foo", Raw: "foo", D: 1},
			{Cmd: CmdMetaDebug, Key: "foo", Raw: "Zm9v", B64: true, D: 1},
			{Cmd: CmdMetaDebug, Key: "foo", Raw: "foo", D: 1}, metaEOF}},
		{"me no key", "me\r\n", []metaResult{metaFail(CmdMetaDebug, ErrBadFormat), metaEOF}},
		{"unknown m command", "mz foo\r\n", []metaResult{metaFail(CmdNone, ErrUnknown), metaEOF}},
		{"upper case", "MG foo\r\n", []metaResult{metaFail(CmdNone, ErrUnknown), metaEOF}},
	}
	for _, tc := range cases {
		for _, rk := range readerKinds {
			for _, size := range bufSizes {
				got := readAllMeta(t, rk.wrap(strings.NewReader(tc.in)), size)
				if !equalMeta(got, tc.want) {
					t.Errorf("%s: Read(%q) via %s/%d =\n  %v\nwant\n  %v", tc.name, abbrev(tc.in), rk.name, size, got, tc.want)
				}
			}
		}
	}
}

func equalMeta(got, want []metaResult) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Err != w.Err {
			return false
		}
		if g.Cmd != CmdMetaGet && g.Cmd != CmdMetaSet && g.Cmd != CmdMetaDelete &&
			g.Cmd != CmdMetaArithmetic && g.Cmd != CmdMetaDebug {
			// Not a meta command: compare the command only.
			if g.Cmd != w.Cmd {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			return false
		}
	}
	return true
}

// TestMetaErrorReplies pins the wire line of every meta error.
func TestMetaErrorReplies(t *testing.T) {
	for _, tc := range []struct {
		err  error
		line string
	}{
		{ErrMetaInvalidFlag, "CLIENT_ERROR invalid flag"},
		{ErrMetaDuplicateFlag, "CLIENT_ERROR duplicate flag"},
		{ErrMetaBadToken, "CLIENT_ERROR bad token in command line format"},
		{ErrMetaOpaqueTooLong, "CLIENT_ERROR opaque token too long"},
		{ErrMetaKeyDecode, "CLIENT_ERROR error decoding key"},
		{ErrMetaModeLength, "CLIENT_ERROR incorrect length for M token"},
		{ErrMetaSetMode, "CLIENT_ERROR invalid mode for ms M token"},
		{ErrMetaArithMode, "CLIENT_ERROR invalid mode for ma M token"},
		{ErrMetaFlag, "CLIENT_ERROR invalid or duplicate flag"},
	} {
		line, closeConn := ErrorReply(tc.err)
		if line != tc.line || closeConn {
			t.Errorf("ErrorReply(%v) = %q, %v; want %q, false", tc.err, line, closeConn, tc.line)
		}
	}
}

// TestMetaWriter checks the reply builders byte for byte.
func TestMetaWriter(t *testing.T) {
	var sb strings.Builder
	w := NewWriter(&sb, 64)
	w.MetaValue(2)
	w.MetaUint('c', 12)
	w.MetaInt('t', -1)
	w.MetaToken('k', []byte("foo"))
	w.MetaBase64('k', []byte{0, 1, 2, 0xff})
	w.MetaFlag('b')
	w.MetaEnd()
	w.MetaData([]byte("hi"))
	w.MetaCode("EN")
	w.MetaEnd()
	_ = w.Flush()
	if got, want := sb.String(), "VA 2 c12 t-1 kfoo kAAEC/w== b\r\nhi\r\nEN\r\n"; got != want {
		t.Errorf("meta reply = %q, want %q", got, want)
	}
}

// TestMetaZeroAllocs: parsing meta commands allocates nothing once warm,
// base64 keys and ms data blocks included, and neither do the reply builders.
func TestMetaZeroAllocs(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{"mg", "mg user:1000 v f c t k O123 s q\r\n"},
		{"mg base64", "mg dXNlcjoxMDAw b v k\r\n"},
		{"mg vivify", "mg user:1000 N30 R10 T60 v\r\n"},
		{"ms", "ms user:1000 32 T60 F7 c q\r\n" + strings.Repeat("v", 32) + "\r\n"},
		{"ms spill", "ms user:1000 32768 MS\r\n" + strings.Repeat("v", 32768) + "\r\n"},
		{"md", "md user:1000 q C77 I T30\r\n"},
		{"ma", "ma counter N0 J5 D2 MD v t c\r\n"},
		{"mn", "mn\r\n"},
		{"me", "me user:1000\r\n"},
		{"pipeline", "mg a v q\r\nms b 1 q\r\nx\r\nmd c q\r\nma d q\r\nmn\r\n"},
		{"ms error", "ms a 1 !\r\nx\r\n"},
		{"mg error", "mg a v v\r\n"},
	} {
		r := NewReader(&loopReader{data: []byte(tt.in)}, 16<<10, func(int) int { return 1 << 20 })
		var req Request
		for range 100 {
			_ = r.Read(&req)
		}
		allocs := testing.AllocsPerRun(1000, func() { _ = r.Read(&req) })
		if allocs != 0 {
			t.Errorf("%s: Read(%q) allocates %.1f times per request, want 0", tt.name, abbrev(tt.in), allocs)
		}
	}
	w := NewWriter(io.Discard, 16<<10)
	key := []byte("user:1000")
	allocs := testing.AllocsPerRun(1000, func() {
		w.MetaValue(32)
		w.MetaUint('c', 1<<40)
		w.MetaInt('t', -1)
		w.MetaToken('k', key)
		w.MetaBase64('k', key)
		w.MetaFlag('W')
		w.MetaEnd()
		w.MetaData(key)
	})
	if allocs != 0 {
		t.Errorf("meta reply builders allocate %.1f times, want 0", allocs)
	}
}

// TestResetClearsEveryField guards Reset's field-by-field clearing: every
// field but Meta is zeroed after any command, and Meta after a meta command.
func TestResetClearsEveryField(t *testing.T) {
	for _, cmd := range []Command{CmdSet, CmdMetaSet} {
		var r Request
		v := reflect.ValueOf(&r).Elem()
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem() // unexported too
			switch f.Kind() {
			case reflect.Bool:
				f.SetBool(true)
			case reflect.Int, reflect.Int64:
				f.SetInt(7)
			case reflect.Uint8, reflect.Uint32, reflect.Uint64:
				f.SetUint(7)
			case reflect.Slice:
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			case reflect.Struct:
				r.Meta.NFlags, r.Meta.Quiet = 1, true
			default:
				t.Fatalf("field %s of kind %v: teach this test to set it", v.Type().Field(i).Name, f.Kind())
			}
		}
		r.Command = cmd
		r.Reset()
		for i := 0; i < v.NumField(); i++ {
			name := v.Type().Field(i).Name
			f := v.Field(i)
			switch {
			case name == "Meta" && !cmd.IsMeta():
			case f.Kind() == reflect.Slice:
				if f.Len() != 0 {
					t.Errorf("after %v: Reset left %s with length %d", cmd, name, f.Len())
				}
			case !f.IsZero():
				t.Errorf("after %v: Reset left %s = %v", cmd, name, f)
			}
		}
	}
}
