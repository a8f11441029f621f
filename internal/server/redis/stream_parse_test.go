package redis

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/protocol/resp"
)

// TestParseUint64 checks Redis's string2ull rule on the inputs a stream
// ID's parts can be: canonical integers, then strtoull's base 10 whole
// (leading spaces, a +, leading zeros, no overflow), against strconv.
func TestParseUint64(t *testing.T) {
	ref := func(b []byte) (uint64, bool) {
		if n, ok := resp.ParseInt(b); ok {
			return uint64(n), n >= 0
		}
		s := strings.TrimLeft(string(b), " \t\n\v\f\r")
		s = strings.TrimPrefix(s, "+")
		if s == "" || strings.ContainsAny(s, "+-_") {
			return 0, false
		}
		v, err := strconv.ParseUint(s, 10, 64)
		return v, err == nil
	}
	in := []string{"", "0", "00", "000000123456", "-0", "-1", "+", "+5", " 7", "\t+09", "5 ", "1_0",
		"18446744073709551615", "018446744073709551615", "18446744073709551616", "99999999999999999999",
		"9223372036854775807", "9223372036854775808", "0x10", "12a"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := make([]byte, 1+r.IntN(22))
		for i := range b {
			b[i] = "0123456789 +-x"[r.IntN(14)]
			if r.IntN(3) > 0 {
				b[i] = "0123456789"[r.IntN(10)]
			}
		}
		in = append(in, string(b))
	}
	for _, s := range in {
		gv, gok := parseUint64([]byte(s))
		wv, wok := ref([]byte(s))
		if gv != wv && gok || gok != wok {
			t.Fatalf("parseUint64(%q) = %d, %v; want %d, %v", s, gv, gok, wv, wok)
		}
	}
}
