package store

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// lpStrings returns the elements of lp in string form, walking forward.
func lpStrings(lp []byte) []string {
	var out []string
	for p := lpFirst(lp); p >= 0; p = lpNext(lp, p) {
		out = append(out, string(lpGet(lp, p).appendTo(nil)))
	}
	return out
}

// lpStringsBackward walks from the end.
func lpStringsBackward(lp []byte) []string {
	var out []string
	for p := lpLast(lp); p >= 0; p = lpPrev(lp, p) {
		out = append([]string{string(lpGet(lp, p).appendTo(nil))}, out...)
	}
	return out
}

var lpSamples = []string{
	"", "0", "1", "127", "128", "-1", "-0", "01", "+1", " 1", "4095", "4096", "-4096", "-4097",
	"32767", "32768", "-32768", "-32769", "8388607", "8388608", "-8388608", "-8388609",
	"2147483647", "2147483648", "-2147483648", "-2147483649",
	"9223372036854775807", "-9223372036854775808", "9223372036854775808", "-9223372036854775809",
	"abc", strings.Repeat("x", 63), strings.Repeat("y", 64), strings.Repeat("z", 4095),
	strings.Repeat("w", 4096), strings.Repeat("v", 20000),
}

func TestListpackRoundTrip(t *testing.T) {
	lp := lpNew()
	for _, s := range lpSamples {
		lp = lpAppend(lp, []byte(s))
	}
	if err := lpValidate(lp); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if got := lpStrings(lp); !equalStrings(got, lpSamples) {
		t.Fatalf("forward walk:\n got %.200q\nwant %.200q", got, lpSamples)
	}
	if got := lpStringsBackward(lp); !equalStrings(got, lpSamples) {
		t.Fatalf("backward walk:\n got %.200q\nwant %.200q", got, lpSamples)
	}
	if n := lpCount(lp); n != len(lpSamples) {
		t.Fatalf("count %d, want %d", n, len(lpSamples))
	}
	// Integers only where Redis's string2ll says so.
	for p, i := lpFirst(lp), 0; p >= 0; p, i = lpNext(lp, p), i+1 {
		_, isInt := lpStringToInt64([]byte(lpSamples[i]))
		if e := lpGet(lp, p); e.isInt() != isInt || !e.equal([]byte(lpSamples[i])) {
			t.Errorf("%q: isInt %v (want %v), equal %v", lpSamples[i], e.isInt(), isInt, e.equal([]byte(lpSamples[i])))
		}
	}
}

func TestListpackEdits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lp := lpNew()
	var model []string
	for i := range 3000 {
		s := lpSamples[rng.IntN(len(lpSamples)-1)] // not the 20000-byte one: keep it quick
		if rng.IntN(3) == 0 {
			s = strconv.Itoa(rng.IntN(1<<20) - 1<<19)
		}
		pos := 0
		if len(model) > 0 {
			pos = rng.IntN(len(model) + 1)
		}
		p := lpFirst(lp)
		for range pos {
			p = lpNext(lp, p)
		}
		if p < 0 {
			p = len(lp) - 1
		}
		switch op := rng.IntN(4); {
		case op < 2 || len(model) == 0 || pos == len(model):
			lp = lpInsert(lp, p, []byte(s))
			model = append(model[:pos], append([]string{s}, model[pos:]...)...)
		case op == 2:
			lp = lpDelete(lp, p)
			model = append(model[:pos], model[pos+1:]...)
		default:
			lp = lpReplace(lp, p, []byte(s))
			model[pos] = s
		}
		if i%100 == 0 || i == 2999 {
			if err := lpValidate(lp); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if got := lpStrings(lp); !equalStrings(got, model) {
				t.Fatalf("step %d: forward walk differs from the model", i)
			}
			if got := lpStringsBackward(lp); !equalStrings(got, model) {
				t.Fatalf("step %d: backward walk differs from the model", i)
			}
		}
	}
}

func TestListpackCountOverflow(t *testing.T) {
	lp := lpNew()
	for i := range 66000 {
		lp = lpAppend(lp, []byte{byte('a' + i%26)})
	}
	if n := lpCount(lp); n != 66000 {
		t.Fatalf("count %d", n)
	}
	if err := lpValidate(lp); err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		lp = lpDelete(lp, lpFirst(lp))
	}
	if n := lpCount(lp); n != 65000 {
		t.Fatalf("count after deletes %d", n)
	}
}

func TestListpackStringToInt64(t *testing.T) {
	for _, tc := range []struct {
		s  string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"-0", 0, false}, {"00", 0, false}, {"-", 0, false}, {"", 0, false},
		{"9223372036854775807", math.MaxInt64, true}, {"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false}, {"18446744073709551616", 0, false}, {"1a", 0, false},
	} {
		v, ok := lpStringToInt64([]byte(tc.s))
		if ok != tc.ok || ok && v != tc.v {
			t.Errorf("lpStringToInt64(%q) = %d, %v; want %d, %v", tc.s, v, ok, tc.v, tc.ok)
		}
	}
}

func FuzzListpackValidate(f *testing.F) {
	lp := lpNew()
	for _, s := range lpSamples[:20] {
		lp = lpAppend(lp, []byte(s))
	}
	f.Add(lp)
	f.Add(lpNew())
	f.Add([]byte{7, 0, 0, 0, 0, 0, 0xFF})
	f.Fuzz(func(t *testing.T, b []byte) {
		if lpValidate(b) != nil {
			return
		}
		// A valid listpack walks the same both ways and re-encodes to the
		// same elements.
		fwd, back := lpStrings(b), lpStringsBackward(b)
		if !equalStrings(fwd, back) {
			t.Fatalf("walks differ: %q vs %q", fwd, back)
		}
		if lpCount(b) != len(fwd) {
			t.Fatalf("count %d, walked %d", lpCount(b), len(fwd))
		}
		again := lpNew()
		for _, s := range fwd {
			again = lpAppend(again, []byte(s))
		}
		if !equalStrings(lpStrings(again), fwd) {
			t.Fatal("re-encoding changed the elements")
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestListpackMatchesRedis builds small hashes in a real redis-server,
// DUMPs them and compares the listpack inside with ours, byte for byte.
func TestListpackMatchesRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("MINIKV_REQUIRE_PEERS") != "" {
			t.Fatal("redis-server not found and MINIKV_REQUIRE_PEERS is set")
		}
		t.Skip("redis-server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--rdbcompression", "no", "--hash-max-listpack-value", "8000",
		"--hash-max-listpack-entries", "1000", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var nc net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if nc, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	do := func(args ...string) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		if _, err := nc.Write(b.Bytes()); err != nil {
			t.Fatal(err)
		}
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line[0] != '$' {
			return []byte(line)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		body := make([]byte, n+2)
		if _, err := io.ReadFull(br, body); err != nil {
			t.Fatal(err)
		}
		return body[:n]
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for h := range 40 {
		key := fmt.Sprintf("h%d", h)
		args := []string{"HSET", key}
		want := lpNew()
		seen := map[string]bool{}
		for range 1 + rng.IntN(30) {
			field := lpSamples[rng.IntN(len(lpSamples)-2)] + strconv.Itoa(rng.IntN(3))
			if rng.IntN(2) == 0 {
				field = strconv.Itoa(rng.IntN(1 << 30))
			}
			if seen[field] {
				continue
			}
			seen[field] = true
			value := lpSamples[rng.IntN(len(lpSamples)-1)]
			args = append(args, field, value)
			want = lpAppend(want, []byte(field))
			want = lpAppend(want, []byte(value))
		}
		do(args...)
		dump := do("DUMP", key)
		if len(dump) < 1+10 || dump[0] != 16 { // RDB_TYPE_HASH_LISTPACK
			t.Fatalf("%s: DUMP type %d (want 16, a listpack hash): %q", key, dump[0], dump)
		}
		got, ok := rdbRawString(dump[1 : len(dump)-10])
		if !ok {
			t.Fatalf("%s: cannot read the DUMP's string: %q", key, dump)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: our listpack differs from Redis's\n ours %x\nredis %x", key, want, got)
		}
		if err := lpValidate(got); err != nil {
			t.Fatalf("%s: Redis's listpack fails our validation: %v", key, err)
		}
	}
}

// rdbRawString reads an uncompressed RDB string (rdbSaveRawString) that
// fills b exactly.
func rdbRawString(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false
	}
	var n, hdr int
	switch b[0] >> 6 {
	case 0:
		n, hdr = int(b[0]&0x3F), 1
	case 1:
		n, hdr = int(b[0]&0x3F)<<8|int(b[1]), 2
	case 2:
		if b[0] != 0x80 || len(b) < 5 {
			return nil, false
		}
		n, hdr = int(b[1])<<24|int(b[2])<<16|int(b[3])<<8|int(b[4]), 5
	default:
		return nil, false
	}
	if hdr+n != len(b) {
		return nil, false
	}
	return b[hdr:], true
}
