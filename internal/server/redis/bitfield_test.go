package redis

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/minikv/minikv/internal/protocol/resp"
)

// bigRange is the range of a bitfield type.
func bigRange(sign bool, bits int) (lo, hi *big.Int) {
	one := big.NewInt(1)
	if sign {
		hi = new(big.Int).Lsh(one, uint(bits-1))
		lo = new(big.Int).Neg(hi)
		return lo, hi.Sub(hi, one)
	}
	hi = new(big.Int).Lsh(one, uint(bits))
	return big.NewInt(0), hi.Sub(hi, one)
}

// modelOverflow is the overflow rule in exact arithmetic: the sum, and
// for WRAP the sum reduced into the type's range, for SAT clamped.
func modelOverflow(sign bool, bits int, value, incr *big.Int, ow int) (bool, *big.Int) {
	lo, hi := bigRange(sign, bits)
	sum := new(big.Int).Add(value, incr)
	if sum.Cmp(lo) >= 0 && sum.Cmp(hi) <= 0 {
		return false, sum
	}
	switch ow {
	case bfSat:
		if sum.Cmp(hi) > 0 {
			return true, hi
		}
		return true, lo
	default:
		span := new(big.Int).Lsh(big.NewInt(1), uint(bits))
		w := new(big.Int).Sub(sum, lo)
		w.Mod(w, span)
		return true, w.Add(w, lo)
	}
}

// TestBitfieldOverflowModel checks the signed and unsigned overflow
// rules against exact arithmetic for in-range values.
func TestBitfieldOverflowModel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	edge := []int64{0, 1, -1, 2, -2, 127, -128, 255, 1 << 31, -(1 << 31), 1<<62 + 5, -(1 << 62), 9223372036854775807, -9223372036854775808}
	pick := func() int64 {
		if r.IntN(2) == 0 {
			return edge[r.IntN(len(edge))]
		}
		return int64(r.Uint64()) >> uint(r.IntN(64))
	}
	for range 200000 {
		sign := r.IntN(2) == 0
		bits := 1 + r.IntN(63)
		if sign {
			bits = 1 + r.IntN(64)
		}
		ow := []int{bfWrap, bfSat}[r.IntN(2)]
		incr := pick()
		lo, hi := bigRange(sign, bits)
		// an in-range starting value
		span := new(big.Int).Sub(hi, lo)
		span.Add(span, big.NewInt(1))
		val := new(big.Int).SetUint64(r.Uint64())
		val.Mod(val, span)
		val.Add(val, lo)
		wantOver, want := modelOverflow(sign, bits, val, big.NewInt(incr), ow)
		if sign {
			over, got := signedOverflow(val.Int64(), incr, bits, ow)
			if !over {
				got = val.Int64() + incr
			}
			if over != wantOver || got != want.Int64() {
				t.Fatalf("i%d %v %s+%d: got %v %d, want %v %s", bits, ow, val, incr, over, got, wantOver, want)
			}
		} else {
			over, got := unsignedOverflow(val.Uint64(), incr, bits, ow)
			if !over {
				got = val.Uint64() + uint64(incr)
			}
			if over != wantOver || got != want.Uint64() {
				t.Fatalf("u%d %v %s+%d: got %v %d, want %v %s", bits, ow, val, incr, over, got, wantOver, want)
			}
		}
	}
}

// TestBitsRoundTrip writes and reads fields of every width at every
// alignment against a bit-per-byte model.
func TestBitsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 32)
	model := make([]byte, 256)
	for range 50000 {
		bits := 1 + r.IntN(64)
		off := int64(r.IntN(256 - bits + 1))
		x := r.Uint64()
		if r.IntN(3) == 0 {
			setBits(buf, off, bits, x)
			for j := 0; j < bits; j++ {
				model[off+int64(j)] = byte(x>>uint(bits-1-j)) & 1
			}
		}
		var want uint64
		for j := 0; j < bits; j++ {
			want = want<<1 | uint64(model[off+int64(j)])
		}
		if got := getBits(buf, off, bits); got != want {
			t.Fatalf("get %d bits at %d: %#x, want %#x", bits, off, got, want)
		}
	}
	if signExtend(0b101, 3) != -3 || signExtend(0b011, 3) != 3 || signExtend(1<<63, 64) != -1<<63 {
		t.Fatal("signExtend")
	}
	// Bits past the end of the value read as zero.
	if got := getBits([]byte{0xff}, 4, 8); got != 0xf0 {
		t.Fatalf("past the end: %#x", got)
	}
}

func TestCountBitsFindBit(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		v := make([]byte, 1+r.IntN(6))
		for i := range v {
			v[i] = byte(r.IntN(256))
		}
		bit := func(i int64) byte { return v[i>>3] >> (7 - uint(i&7)) & 1 }
		n := int64(len(v)) * 8
		first, last := int64(r.IntN(int(n))), int64(r.IntN(int(n)))
		var ones int64
		found := [2]int64{-1, -1}
		for i := first; i <= last; i++ {
			ones += int64(bit(i))
			if found[bit(i)] < 0 {
				found[bit(i)] = i
			}
		}
		if got := countBits(v, first, last); got != ones {
			t.Fatalf("countBits(%x, %d, %d) = %d, want %d", v, first, last, got, ones)
		}
		for b := range 2 {
			if got := findBit(v, first, last, byte(b)); got != found[b] {
				t.Fatalf("findBit(%x, %d, %d, %d) = %d, want %d", v, first, last, b, got, found[b])
			}
		}
	}
}

// FuzzBitfieldArgs parses arbitrary BITFIELD arguments: never a panic,
// and parsed operations run on a buffer grown as the command grows it
// (when it fits maxLen, the item size: the command refuses larger ones).
func FuzzBitfieldArgs(f *testing.F) {
	f.Add("GET u8 0 SET i64 #3 -1 OVERFLOW SAT INCRBY u63 100 5", int64(1024))
	f.Add("OVERFLOW FAIL INCRBY i1 0 1 GET i8\x00x #9", int64(8))
	f.Add("SET u8 #2305843009213693953 1", int64(1<<20))
	f.Add("incrby i64 4294967288 -9223372036854775808", int64(1<<30))
	f.Fuzz(func(t *testing.T, args string, maxLen int64) {
		var argv [][]byte
		for _, a := range splitFuzzArgs(args) {
			argv = append(argv, []byte(a))
		}
		maxLen = min(max(maxLen, 0), 1<<16)
		ops, write, highest, errMsg := parseBitfield(argv, resp.MaxBulkLen, nil)
		if errMsg != "" {
			return
		}
		var v []byte
		if write {
			if highest>>3 >= maxLen {
				return // errTooLarge
			}
			v = make([]byte, highest>>3+1)
		}
		for _, op := range ops {
			if op.opcode != 'g' && (op.offset+int64(op.bits)-1)>>3 >= int64(len(v)) {
				t.Fatalf("write beyond the grown value: %+v", op)
			}
		}
		res, writes, changes := runBitfield(v, ops, nil)
		if len(res) != len(ops) || writes > len(ops) || changes > writes {
			t.Fatalf("%d replies, %d writes, %d changes for %d operations", len(res), writes, changes, len(ops))
		}
	})
}

// splitFuzzArgs splits on spaces, keeping every other byte.
func splitFuzzArgs(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}
