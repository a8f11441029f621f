package lib_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The random differential tests generate inputs from a fixed seed, mostly
// well-formed with some damage, and compare what gopher-lua and redis-server
// make of them, as the table tests do. A failure names the case by its index,
// and the same seed gives the same cases on every run.

const randomCases = 400

// randomSeed is the first seed of the generators: MINIKV_LIB_SEED=n explores
// other cases (and reproduces a failure found with them).
func randomSeed() uint64 {
	if s := os.Getenv("MINIKV_LIB_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err == nil {
			return n
		}
	}
	return 38
}

// luaQuote writes b as a Lua string literal, escaping every byte that is not
// printable ASCII.
func luaQuote(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c >= 32 && c < 127:
			sb.WriteByte(c)
		default:
			fmt.Fprintf(&sb, "\\%03d", c)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

func TestCmsgpackRandomAgainstRedis(t *testing.T) {
	rng := rand.New(rand.NewPCG(randomSeed(), 1))
	var cases []luaCase
	for i := range randomCases {
		var b []byte
		for range 1 + rng.IntN(4) {
			b = appendRandomMsgpack(rng, b, 0)
		}
		b = damage(rng, b)
		in := luaQuote(b)
		var code string
		switch rng.IntN(3) {
		case 0:
			code = "return cmsgpack.unpack(" + in + ")"
		case 1:
			code = fmt.Sprintf("return cmsgpack.unpack_one(%s, %d)", in, rng.IntN(len(b)+2)-1)
		default:
			code = fmt.Sprintf("return cmsgpack.unpack_limit(%s, %d, %d)", in, rng.IntN(4), rng.IntN(len(b)+1))
		}
		cases = append(cases, luaCase{fmt.Sprint("unpack", i), code})
		// Packing back what was unpacked covers the encoder with the
		// decoder's variety of values; only arrays and one-key maps are
		// compared byte for byte, so the result is checked by unpacking it.
		cases = append(cases, luaCase{fmt.Sprint("repack", i),
			"local t = pack(pcall(cmsgpack.unpack, " + in + ")) if not t[1] then return t[2] end " +
				"local s = cmsgpack.pack(unpack(t, 2, t.n)) return #s, cmsgpack.unpack(s)"})
	}
	for i := range randomCases / 4 {
		cases = append(cases, luaCase{fmt.Sprint("pack", i), "return cmsgpack.pack(" + randomLuaValue(rng, 0, false) + ")"})
	}
	checkCases(t, cases)
}

// appendRandomMsgpack appends one msgpack value of a random type.
func appendRandomMsgpack(rng *rand.Rand, b []byte, depth int) []byte {
	switch k := rng.IntN(16); {
	case k < 3:
		return append(b, byte(rng.IntN(256))) // any first byte, valid or not
	case k < 6:
		types := []byte{0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3, 0xca, 0xcb}
		sizes := []int{1, 2, 4, 8, 1, 2, 4, 8, 4, 8}
		j := rng.IntN(len(types))
		b = append(b, types[j])
		for range sizes[j] {
			b = append(b, byte(rng.IntN(256)))
		}
		return b
	case k < 9:
		n := rng.IntN(40)
		switch rng.IntN(4) {
		case 0:
			b = append(b, 0xa0|byte(n&31))
			n &= 31
		case 1:
			b = append(b, 0xd9, byte(n))
		case 2:
			b = append(b, 0xda, 0, byte(n))
		default:
			b = append(b, 0xdb, 0, 0, 0, byte(n))
		}
		for range n {
			b = append(b, byte('a'+rng.IntN(26)))
		}
		return b
	case k < 12 && depth < 4:
		n := rng.IntN(5)
		switch rng.IntN(3) {
		case 0:
			b = append(b, 0x90|byte(n))
		case 1:
			b = append(b, 0xdc, 0, byte(n))
		default:
			b = append(b, 0xdd, 0, 0, 0, byte(n))
		}
		for range n {
			b = appendRandomMsgpack(rng, b, depth+1)
		}
		return b
	case k < 15 && depth < 4:
		n := rng.IntN(4)
		switch rng.IntN(3) {
		case 0:
			b = append(b, 0x80|byte(n))
		case 1:
			b = append(b, 0xde, 0, byte(n))
		default:
			b = append(b, 0xdf, 0, 0, 0, byte(n))
		}
		for range 2 * n {
			b = appendRandomMsgpack(rng, b, depth+1)
		}
		return b
	}
	return append(b, []byte{0xc0, 0xc2, 0xc3}[rng.IntN(3)])
}

// damage sometimes truncates the input or changes a byte of it.
func damage(rng *rand.Rand, b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	switch rng.IntN(6) {
	case 0:
		return b[:rng.IntN(len(b))]
	case 1:
		b[rng.IntN(len(b))] = byte(rng.IntN(256))
	}
	return b
}

// randomNumber is a Lua expression for a number chosen to reach the
// boundaries of the integer encodings and of "%.14g".
func randomNumber(rng *rand.Rand) string {
	switch rng.IntN(8) {
	case 0:
		return fmt.Sprint(rng.IntN(300) - 150)
	case 1:
		return fmt.Sprintf("2^%d", rng.IntN(70))
	case 2:
		return fmt.Sprintf("-2^%d", rng.IntN(70))
	case 3:
		return fmt.Sprintf("(2^%d - %d)", rng.IntN(66), rng.IntN(3))
	case 4:
		return fmt.Sprintf("%.17g", rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
	case 5:
		return fmt.Sprintf("%.17g", float64(float32(rng.NormFloat64()*1000)))
	case 6:
		return fmt.Sprintf("%de%d", rng.IntN(100000), rng.IntN(40)-20)
	}
	// No -0.0: Lua 5.1 keeps one constant for 0 and -0.0 in a function, so
	// a chunk with both reads one as the other, which gopher-lua does not.
	return []string{"0", "-1e-300", "0.5", "1/3", "1e15", "1e14", "99999999999999", "123456789012345", "3.4e38", "1e-300"}[rng.IntN(10)]
}

// randomLuaValue is a Lua expression for a value whose encodings do not
// depend on table traversal order: arrays (possibly with holes) and tables
// of one key. jsonSafe leaves out what cjson refuses.
func randomLuaValue(rng *rand.Rand, depth int, jsonSafe bool) string {
	switch k := rng.IntN(10); {
	case k < 3:
		return randomNumber(rng)
	case k < 5:
		n := rng.IntN(40)
		s := make([]byte, n)
		for i := range s {
			if rng.IntN(4) == 0 {
				s[i] = byte(rng.IntN(256))
			} else {
				s[i] = byte(' ' + rng.IntN(95))
			}
		}
		return luaQuote(s)
	case k < 7 && depth < 5:
		n := rng.IntN(6)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = randomLuaValue(rng, depth+1, jsonSafe)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case k < 8 && depth < 5:
		var key string
		switch rng.IntN(3) {
		case 0:
			key = luaQuote([]byte(fmt.Sprint("k", rng.IntN(10))))
		case 1:
			key = randomNumber(rng)
		default:
			key = fmt.Sprint(rng.IntN(30) + 1)
		}
		return "{[" + key + "] = " + randomLuaValue(rng, depth+1, jsonSafe) + "}"
	case k < 9:
		return []string{"true", "false", "cjson.null"}[rng.IntN(3)]
	}
	if jsonSafe {
		return "nil"
	}
	return []string{"nil", "tostring", "1/0", "-1/0"}[rng.IntN(4)]
}

func TestCJSONRandomAgainstRedis(t *testing.T) {
	rng := rand.New(rand.NewPCG(randomSeed(), 2))
	var cases []luaCase
	for i := range randomCases {
		v := randomLuaValue(rng, 0, rng.IntN(2) == 0)
		cases = append(cases, luaCase{fmt.Sprint("encode", i), "return cjson.encode(" + v + ")"})
		cases = append(cases, luaCase{fmt.Sprint("roundtrip", i),
			"local ok, s = pcall(cjson.encode, " + v + ") if not ok then return s end return cjson.decode(s)"})
	}
	for i := range randomCases {
		b := damage(rng, []byte(randomJSON(rng, 0)))
		cases = append(cases, luaCase{fmt.Sprint("decode", i), "return cjson.decode(" + luaQuote(b) + ")"})
	}
	checkCases(t, cases)
}

// randomJSON is JSON text, with the liberties lua-cjson's parser takes.
func randomJSON(rng *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", " ", "\n\t", "\r "}[rng.IntN(5)] }
	switch k := rng.IntN(12); {
	case k < 2:
		return []string{"true", "false", "null", "nul", "tru", "NaN", "-Infinity", "inf", "nan(1)", "+1"}[rng.IntN(10)]
	case k < 5:
		nums := []string{"0", "-0", "1", "-1.5", "1e10", "1E-5", "0x1f", "-0X10", "007", "1.", ".5", "2e", "1e+400",
			"123456789012345678", "0.1", "3.14159265358979", "-", "0x", "1e-400", "0x1p-3"}
		return nums[rng.IntN(len(nums))]
	case k < 8:
		var sb strings.Builder
		sb.WriteByte('"')
		for range rng.IntN(10) {
			switch rng.IntN(8) {
			case 0:
				sb.WriteString([]string{`\n`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\t`, `\x`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\udc00`, `\u12`, `\u0000`}[rng.IntN(15)])
			case 1:
				sb.WriteByte(byte(rng.IntN(256)))
			default:
				sb.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		sb.WriteByte('"')
		return sb.String()
	case k < 10 && depth < 6:
		parts := make([]string, rng.IntN(4))
		for i := range parts {
			parts[i] = ws() + randomJSON(rng, depth+1) + ws()
		}
		return "[" + strings.Join(parts, ",") + "]"
	case depth < 6:
		parts := make([]string, rng.IntN(3))
		for i := range parts {
			parts[i] = ws() + fmt.Sprintf(`"k%d"`, i) + ws() + ":" + ws() + randomJSON(rng, depth+1)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return "1"
}

func TestBitRandomAgainstRedis(t *testing.T) {
	rng := rand.New(rand.NewPCG(randomSeed(), 3))
	fns := []string{"tobit", "bnot", "band", "bor", "bxor", "lshift", "rshift", "arshift", "rol", "ror", "bswap", "tohex"}
	var cases []luaCase
	for i := range randomCases {
		parts := make([]string, 8)
		for j := range parts {
			fn := fns[rng.IntN(len(fns))]
			x, n := randomNumber(rng), randomNumber(rng)
			if fn == "tohex" {
				// A count that wraps to -2^31 crashes redis-server 7.2.4
				// (CVE-2024-31449, doc.go): small counts only.
				n = fmt.Sprint(rng.IntN(40) - 20)
			}
			parts[j] = fmt.Sprintf("bit.%s(%s, %s)", fn, x, n)
		}
		cases = append(cases, luaCase{fmt.Sprint("bit", i), "return " + strings.Join(parts, ", ")})
	}
	checkCases(t, cases)
}

func TestStructRandomAgainstRedis(t *testing.T) {
	rng := rand.New(rand.NewPCG(randomSeed(), 4))
	var cases []luaCase
	for i := range randomCases {
		var format strings.Builder
		var args []string
		for range 1 + rng.IntN(6) {
			opt := "bBhHlLTiIfdxcs<> !"[rng.IntN(18)]
			format.WriteByte(opt)
			if strings.IndexByte("iIc!", opt) >= 0 && rng.IntN(2) == 0 {
				fmt.Fprint(&format, rng.IntN(17))
			}
			switch {
			case strings.IndexByte("cs", opt) >= 0:
				args = append(args, luaQuote([]byte(strings.Repeat("z", rng.IntN(12)))))
			case strings.IndexByte("<> !x", opt) < 0:
				args = append(args, randomNumber(rng))
			}
		}
		f := luaQuote([]byte(format.String()))
		cases = append(cases, luaCase{fmt.Sprint("pack", i),
			fmt.Sprintf("local s = struct.pack(%s) return s, struct.unpack(%s, s)", strings.Join(append([]string{f}, args...), ", "), f)})
		data := make([]byte, rng.IntN(40))
		for j := range data {
			data[j] = byte(rng.IntN(256))
		}
		cases = append(cases, luaCase{fmt.Sprint("unpack", i),
			fmt.Sprintf("return struct.size(%s), struct.unpack(%s, %s, %d)", f, f, luaQuote(data), rng.IntN(6)-1)})
	}
	checkCases(t, cases)
}
