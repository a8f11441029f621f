package memcache

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"testing"
	"testing/iotest"
)

// Limits of the fuzzed Readers, small so that short inputs reach every
// limit path. Short inputs matter: Go's coverage counters are 8 bits wide
// and wrap, so in a parser that loops per byte, nearly every long input
// looks new, and the minimizer (quadratic in the input length) then spends
// its whole 60 s budget on each one while no fuzzing happens.
const (
	fuzzMaxLine          = 64
	fuzzMaxRetrievalLine = 512
	fuzzMaxInput         = 1024 // longer inputs are ignored
)

// fuzzMaxValue is small so that fuzzed inputs reach the too-large path.
func fuzzMaxValue(keyLen int) int { return 300 - keyLen }

// fuzzRead runs data through one reader configuration, checking the
// invariants every Read must keep, and returns the results.
func fuzzRead(t *testing.T, rd io.Reader, size, dataLen int) []result {
	r := getFuzzReader(rd, size)
	var req Request
	var out []result
	for reads := 0; ; reads++ {
		if reads > dataLen+1 {
			t.Fatalf("Read made no progress: %d reads from %d bytes", reads, dataLen)
		}
		err := r.Read(&req)
		res := toResult(&req, err)
		if req.Command.IsMeta() {
			res.Meta = toMetaResult(&req, err).String()
		}
		out = append(out, res)
		for _, k := range req.Keys {
			if len(k) > MaxKeyLen {
				t.Fatalf("key of %d bytes (err %v)", len(k), err)
			}
			if err == nil && !req.Meta.Base64 && !validKey(k) {
				t.Fatalf("invalid key %q accepted", k)
			}
			if err == nil && req.Meta.Base64 && (len(k) == 0 || !validKey(req.Meta.RawKey)) {
				t.Fatalf("base64 key %q (sent as %q) accepted", k, req.Meta.RawKey)
			}
		}
		if err == nil && req.Command.IsMeta() && req.Meta.Has('O') && len(req.Meta.Opaque) >= maxOpaqueLen {
			t.Fatalf("opaque of %d bytes accepted", len(req.Meta.Opaque))
		}
		stores := req.Command.IsStorage() || req.Command == CmdMetaSet
		if err == nil && stores {
			if len(req.Value) != req.Bytes {
				t.Fatalf("value of %d bytes, Bytes = %d", len(req.Value), req.Bytes)
			}
			if req.Bytes > fuzzMaxValue(len(req.Key())) {
				t.Fatalf("value of %d bytes accepted over the limit", req.Bytes)
			}
		}
		if err == nil && !stores && req.Value != nil {
			t.Fatalf("%v request with a value", req.Command)
		}
		if err != nil && req.Value != nil {
			t.Fatalf("error %v with a value", err)
		}
		// Memory is bounded by what was sent and by the value limit,
		// never by a number the client declared.
		if cap(r.val) > fuzzMaxValue(0)+2 {
			t.Fatalf("value spill buffer of %d bytes", cap(r.val))
		}
		if cap(r.long) > 2*dataLen+1024 {
			t.Fatalf("line spill buffer of %d bytes from %d input bytes", cap(r.long), dataLen)
		}
		if err != nil {
			if _, closeConn := ErrorReply(err); closeConn {
				return out
			}
		}
	}
}

// fuzzReaders caches one Reader per buffer size: allocating a 16 KiB buffer
// per exec would halve the fuzzing rate. Fuzz functions run one at a time
// in a worker. Spill buffers are cleared on every reuse so that each exec
// takes the same code paths whatever ran before it; a sync.Pool (emptied by
// GC at random) made coverage flaky and the fuzzer spent its time
// minimizing inputs whose new coverage it could not reproduce.
var fuzzReaders = map[int]*Reader{}

func getFuzzReader(rd io.Reader, size int) *Reader {
	r := fuzzReaders[size]
	if r == nil {
		r = NewReader(rd, size, fuzzMaxValue)
		fuzzReaders[size] = r
	}
	r.Reset(rd)
	r.long, r.val = nil, nil
	r.maxLine, r.maxRetrievalLine = fuzzMaxLine, fuzzMaxRetrievalLine
	return r
}

// FuzzReader feeds arbitrary bytes to the Reader. It must never panic,
// never return a key over 250 bytes or a value whose length is not Bytes,
// never grow its buffers beyond the input, and must parse the same whatever
// the read sizes and buffer size.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"get a\r\n", "gets a b c\r\n", "gat 10 a\r\n", "gat 10\r\n", "get\r\n",
		"set a 0 0 1\r\nx\r\n", "set a 0 0 3\r\nabcdef\r\n", "set a 0 0 1\nx\nget a\n",
		"set a 0 0 400\r\n", "cas a 1 2 1 3 noreply\r\nx\r\n", "set k 0 0 noreply\r\nx\r\n",
		"delete a 0 noreply\r\n", "delete a 5\r\n", "incr a 1\r\ndecr a -1\r\n", "touch a x\r\n",
		"flush_all 10 noreply\r\n", "stats items\r\nversion\r\nquit\r\n", "verbosity noreply\r\n",
		"auth tok\r\n", "GET / HTTP/1.1\r\n", "\x80\x01\x00\x00", "get a\r\n\x00\x01\r\nget a\r\n",
		"\r\n", "   \r\n", "get a\r", "set a 4294967296 0 1\r\nx\r\n",
		"mg a v c f k O1 t s q\r\n", "mg YQ== b k v\r\n", "mg a v v\r\n", "mg a N30 R5 T-1 E9 h l u\r\n",
		"ms a 2 T0 F5 c MA I C1\r\nhi\r\n", "ms a 2 !\r\nhi\r\nmn\r\n", "ms a 400\r\n", "ms a x\r\nhi\r\n",
		"md a q C1 I T30 x\r\n", "ma a N0 J10 D5 MD v t c\r\n", "ma a Mi\r\n", "mn\r\nme a\r\nme\r\n",
		"mg a Mxx O0123456789012345678901234567890123\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > fuzzMaxInput {
			return
		}
		want := fuzzRead(t, bytes.NewReader(data), 16<<10, len(data))
		for _, alt := range []struct {
			name string
			rd   io.Reader
			size int
		}{
			{"onebyte/16", iotest.OneByteReader(bytes.NewReader(data)), 16},
			{"half/64", iotest.HalfReader(bytes.NewReader(data)), 64},
		} {
			got := fuzzRead(t, alt.rd, alt.size, len(data))
			if !equalResults(got, want) {
				t.Fatalf("Read(%q) via %s =\n  %v\nwant (plain/16384)\n  %v", data, alt.name, got, want)
			}
		}
	})
}

// roundTripCmds are the commands FuzzParseRoundTrip encodes.
var roundTripCmds = []Command{
	CmdGet, CmdGets, CmdGat, CmdGats, CmdMget, CmdSet, CmdAdd, CmdReplace, CmdAppend,
	CmdPrepend, CmdCAS, CmdDelete, CmdIncr, CmdDecr, CmdTouch, CmdFlushAll, CmdVerbosity,
	CmdAuth, CmdStats,
	CmdMetaGet, CmdMetaSet, CmdMetaDelete, CmdMetaArithmetic,
}

// FuzzParseRoundTrip encodes a request from typed fields, parses it back and
// checks every field, then checks that the stream is still in step. For
// stored values it also checks the Writer's VALUE encoding.
func FuzzParseRoundTrip(f *testing.F) {
	f.Add(uint8(0), []byte("a"), uint32(0), int64(0), []byte("x"), uint64(0), false)
	f.Add(uint8(5), []byte("user:1"), uint32(4294967295), int64(-1), []byte("a\r\nb"), uint64(0), true)
	f.Add(uint8(10), []byte("k"), uint32(1), int64(2592001), []byte{}, uint64(18446744073709551615), false)
	f.Add(uint8(5), []byte("big"), uint32(0), int64(0), bytes.Repeat([]byte("v"), 400), uint64(0), false)
	f.Add(uint8(11), []byte("noreply"), uint32(0), int64(0), []byte(nil), uint64(0), true)
	f.Add(uint8(12), []byte("n"), uint32(0), int64(0), []byte(nil), uint64(1), false)
	f.Add(uint8(14), []byte("t"), uint32(0), int64(-9223372036854775808), []byte(nil), uint64(0), true)
	f.Add(uint8(15), []byte("x"), uint32(0), int64(10), []byte(nil), uint64(0), true)
	f.Add(uint8(2), bytes.Repeat([]byte("k"), 251), uint32(0), int64(10), []byte(nil), uint64(0), false)
	f.Add(uint8(6), []byte("a\x01"), uint32(0), int64(0), []byte("x"), uint64(0), false)
	f.Add(uint8(17), []byte("s3cret"), uint32(0), int64(0), []byte(nil), uint64(0), false)
	f.Add(uint8(19), []byte("mk"), uint32(0), int64(30), []byte(nil), uint64(7), false)
	f.Add(uint8(20), []byte("\x00\xff bin"), uint32(5), int64(-1), []byte("hi\r\n"), uint64(1), true)
	f.Add(uint8(21), []byte("md"), uint32(0), int64(2147483648), []byte(nil), uint64(0), false)
	f.Add(uint8(22), []byte("cnt"), uint32(10), int64(0), []byte(nil), uint64(18446744073709551615), true)
	f.Add(uint8(20), []byte("big"), uint32(0), int64(0), bytes.Repeat([]byte("v"), 400), uint64(0), false)
	f.Fuzz(func(t *testing.T, cmdIdx uint8, key []byte, flags uint32, exptime int64, val []byte, cas uint64, noreply bool) {
		if len(key)+len(val) > fuzzMaxInput {
			return // see fuzzMaxInput
		}
		if len(key) == 0 || bytes.ContainsAny(key, " \n") {
			t.Skip("such a key changes the token count; FuzzReader covers it")
		}
		cmd := roundTripCmds[int(cmdIdx)%len(roundTripCmds)]
		if cmd.IsMeta() {
			roundTripMeta(t, cmd, key, flags, exptime, val, cas, noreply)
			return
		}
		in, want := encodeRequest(cmd, key, flags, exptime, val, cas, noreply)
		in = append(in, "version\r\n"...)
		r := NewReader(iotest.HalfReader(bytes.NewReader(in)), 64, fuzzMaxValue)
		var req Request
		err := r.Read(&req)
		got := toResult(&req, err)
		if !equalResults([]result{got}, []result{want}) {
			t.Fatalf("Read(%q) = %v, want %v", in, got, want)
		}
		if errors.Is(err, ErrBadFormat) && cmd.IsStorage() {
			return // the data block is read as a command line: not in step by design
		}
		if err := r.Read(&req); err != nil || req.Command != CmdVersion {
			t.Fatalf("Read(%q): request after %v = %v %v, want version", in, want.Err, req.Command, err)
		}
		if err == nil && cmd.IsStorage() {
			var out bytes.Buffer
			w := NewWriter(&out, 32)
			w.Value(key, flags, val, cas, true)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			wantOut := fmt.Sprintf("VALUE %s %d %d %d\r\n%s\r\n", key, flags, len(val), cas, val)
			if out.String() != wantOut {
				t.Fatalf("Value(%q, %d, %q, %d) wrote %q, want %q", key, flags, val, cas, out.String(), wantOut)
			}
		}
	})
}

// encodeRequest builds the wire form of a request and the result Read
// should give for it.
func encodeRequest(cmd Command, key []byte, flags uint32, exptime int64, val []byte, cas uint64, noreply bool) ([]byte, result) {
	valid := validKey(key)
	k := string(key)
	exp := strconv.FormatInt(exptime, 10)
	nr := ""
	if noreply {
		nr = " noreply"
	}
	bad := func(err error) result { return result{Cmd: cmd, Noreply: noreply && err != ErrUnknown, Err: err} }
	switch cmd {
	case CmdGet, CmdGets, CmdMget:
		in := fmt.Sprintf("%s %s %s\r\n", cmd, k, k)
		if !valid {
			return []byte(in), result{Cmd: cmd, Err: ErrBadFormat}
		}
		return []byte(in), result{Cmd: cmd, Keys: ss(k, k)}
	case CmdGat, CmdGats:
		in := fmt.Sprintf("%s %s %s\r\n", cmd, exp, k)
		if !valid {
			return []byte(in), result{Cmd: cmd, Err: ErrBadFormat}
		}
		return []byte(in), result{Cmd: cmd, Exptime: exptime, Keys: ss(k)}
	case CmdSet, CmdAdd, CmdReplace, CmdAppend, CmdPrepend, CmdCAS:
		line := fmt.Sprintf("%s %s %d %s %d", cmd, k, flags, exp, len(val))
		want := result{Cmd: cmd, Keys: ss(k), Flags: flags, Exptime: exptime, Bytes: len(val), Value: string(val), Noreply: noreply}
		if cmd == CmdCAS {
			line += " " + strconv.FormatUint(cas, 10)
			want.CAS = cas
		}
		in := []byte(line + nr + "\r\n" + string(val) + "\r\n")
		switch {
		case !valid:
			return in, bad(ErrBadFormat)
		case len(val) > fuzzMaxValue(len(key)):
			want.Value, want.Err = "", ErrTooLarge
		}
		return in, want
	case CmdDelete:
		in := []byte(fmt.Sprintf("delete %s%s\r\n", k, nr))
		if !valid {
			return in, bad(ErrBadFormat)
		}
		return in, result{Cmd: cmd, Keys: ss(k), Noreply: noreply}
	case CmdIncr, CmdDecr:
		in := []byte(fmt.Sprintf("%s %s %d%s\r\n", cmd, k, cas, nr))
		if !valid {
			return in, bad(ErrBadFormat)
		}
		return in, result{Cmd: cmd, Keys: ss(k), Delta: cas, Noreply: noreply}
	case CmdTouch:
		in := []byte(fmt.Sprintf("touch %s %s%s\r\n", k, exp, nr))
		if !valid {
			return in, bad(ErrBadFormat)
		}
		return in, result{Cmd: cmd, Keys: ss(k), Exptime: exptime, Noreply: noreply}
	case CmdFlushAll:
		return []byte(fmt.Sprintf("flush_all %s%s\r\n", exp, nr)), result{Cmd: cmd, Exptime: exptime, HasExp: true, Noreply: noreply}
	case CmdVerbosity:
		return []byte(fmt.Sprintf("verbosity %d%s\r\n", flags, nr)), result{Cmd: cmd, Args: ss(strconv.FormatUint(uint64(flags), 10)), Noreply: noreply}
	case CmdAuth:
		// The token is not checked: even "\r" survives, as only one CR
		// before the LF is stripped.
		return []byte(fmt.Sprintf("auth %s\r\n", key)), result{Cmd: cmd, Args: ss(string(key))}
	case CmdStats:
		return []byte(fmt.Sprintf("stats %s\r\n", k)), result{Cmd: cmd, Args: ss(k)}
	}
	panic("unreachable")
}

// roundTripMeta encodes a meta request from typed fields (the key in base64
// when b64 is set, so any bytes can be a key), parses it back, and checks
// the fields and that the stream is still in step.
func roundTripMeta(t *testing.T, cmd Command, key []byte, flags uint32, exptime int64, val []byte, cas uint64, b64 bool) {
	k := string(key)
	if b64 {
		if len(key) > 187 {
			key = key[:187] // the longest key whose base64 fits in 250 bytes
		}
		k = base64.StdEncoding.EncodeToString(key)
	}
	ttl := strconv.FormatInt(exptime, 10)
	opaque := strconv.FormatUint(cas, 10)
	var line string
	want := metaResult{Cmd: cmd, Key: string(key), Raw: k, Opaque: opaque, D: 1, B64: b64}
	switch cmd {
	case CmdMetaGet:
		line = fmt.Sprintf("mg %s v k T%s O%s", k, ttl, opaque)
		want.Flags, want.TTL = "vkTO", exptime
	case CmdMetaSet:
		line = fmt.Sprintf("ms %s %d F%d T%s C%d O%s MP", k, len(val), flags, ttl, cas, opaque)
		want.Flags, want.F, want.TTL, want.C, want.Mode = "FTCOM", flags, exptime, cas, 'P'
		want.Bytes, want.Value = len(val), string(val)
	case CmdMetaDelete:
		line = fmt.Sprintf("md %s C%d I T%s O%s q", k, cas, ttl, opaque)
		want.Flags, want.C, want.TTL, want.Q = "CITOq", cas, exptime, true
	case CmdMetaArithmetic:
		line = fmt.Sprintf("ma %s D%d J%d N%s O%s M- v", k, cas, flags, ttl, opaque)
		want.Flags, want.D, want.J, want.Vivify, want.Mode = "DJNOMv", cas, uint64(flags), exptime, '-'
	}
	if b64 {
		line += " b"
		want.Flags += "b"
	}
	in := []byte(line + "\r\n")
	if cmd == CmdMetaSet {
		in = append(append(in, val...), "\r\n"...)
	}
	in = append(in, "mn\r\n"...)
	keyOK := validKey([]byte(k)) && (!b64 || len(key) > 0)
	switch {
	case len(in) > MaxLineLen+len(val)+10:
		return
	case !keyOK && (!b64 || !validKey([]byte(k))):
		want = metaFail(cmd, ErrBadFormat)
	case !keyOK:
		want = metaFail(cmd, ErrMetaKeyDecode)
	case exptime < math.MinInt32 || exptime > math.MaxInt32:
		want = metaFail(cmd, ErrMetaBadToken)
	case len(opaque) >= maxOpaqueLen:
		want = metaFail(cmd, ErrMetaOpaqueTooLong)
	case cmd == CmdMetaSet && len(val) > fuzzMaxValue(len(key)):
		want.Value, want.Err = "", ErrTooLarge
	}
	if (cmd == CmdMetaDelete || cmd == CmdMetaArithmetic) && want.Err != nil && want.Err != ErrMetaOpaqueTooLong {
		if want.Err == ErrMetaKeyDecode || want.Err == ErrMetaBadToken {
			want = metaFail(cmd, ErrMetaFlag)
		}
	}
	r := NewReader(iotest.HalfReader(bytes.NewReader(in)), 64, fuzzMaxValue)
	var req Request
	err := r.Read(&req)
	got := toMetaResult(&req, err)
	if !equalMeta([]metaResult{got}, []metaResult{want}) {
		t.Fatalf("Read(%q) =\n  %v\nwant\n  %v", in, got, want)
	}
	if errors.Is(err, ErrBadFormat) && cmd == CmdMetaSet {
		return // the data block is read as a command line, as in memcached
	}
	if err := r.Read(&req); err != nil || req.Command != CmdMetaNoop {
		t.Fatalf("Read(%q): request after %v = %v %v, want mn", in, want.Err, req.Command, err)
	}
}
