package hll

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// registers decodes every register of a valid, uncorrupt value.
func registers(t testing.TB, b []byte) *[Registers]uint8 {
	t.Helper()
	var r [Registers]uint8
	if !Merge(&r, b) {
		t.Fatalf("corrupt value %x", b)
	}
	return &r
}

func TestMurmur64A(t *testing.T) {
	// MurmurHash64A's reference values (seed 0) and Redis's seed.
	if got := murmur64A(nil, 0); got != 0 {
		t.Errorf("empty, seed 0: %#x", got)
	}
	a, b := murmur64A([]byte("hello"), seed), murmur64A([]byte("hellp"), seed)
	if a == b {
		t.Errorf("no difference between two keys")
	}
}

// TestSparseDenseAgree adds the same elements to a sparse value (through
// its promotion) and to a dense one: the registers and the counts agree
// at every step, and the sparse value stays within SparseMaxBytes.
func TestSparseDenseAgree(t *testing.T) {
	sp := Prepare(AppendNew(nil))
	de, ok := ToDense(nil, sp)
	de = Prepare(de)
	if !ok || len(de) != DenseSize || !Valid(sp) || !Valid(de) {
		t.Fatalf("new values: ok %v len %d", ok, len(de))
	}
	for i := range 20000 {
		e := []byte("e" + strconv.Itoa(i))
		var r1, r2 int
		sp, r1 = Add(sp, e, SparseMaxBytes)
		de, r2 = Add(de, e, SparseMaxBytes)
		if r1 != r2 || r1 < 0 {
			t.Fatalf("element %d: sparse %d dense %d", i, r1, r2)
		}
		if sp[4] == Sparse && len(sp) > SparseMaxBytes {
			t.Fatalf("sparse value of %d bytes", len(sp))
		}
		if i%997 == 0 || i < 50 {
			if *registers(t, sp) != *registers(t, de) {
				t.Fatalf("element %d: registers differ", i)
			}
			c1, ok1 := Count(sp)
			c2, ok2 := Count(de)
			if c1 != c2 || !ok1 || !ok2 {
				t.Fatalf("element %d: counts %d %d", i, c1, c2)
			}
		}
	}
	if sp[4] != Dense {
		t.Fatalf("20000 elements still sparse")
	}
	c, _ := Count(de)
	if c < 19000 || c > 21000 {
		t.Fatalf("count %d for 20000", c)
	}
}

// TestDenseRegisters sets and reads random registers against a byte per
// register.
func TestDenseRegisters(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	regs := make([]byte, DenseSize-HeaderSize)
	var model [Registers]uint8
	for range 100000 {
		i, v := r.IntN(Registers), uint8(r.IntN(64))
		denseSet(regs, i, v)
		model[i] = v
		if j := r.IntN(Registers); denseGet(regs, j) != model[j] {
			t.Fatalf("register %d: %d, want %d", j, denseGet(regs, j), model[j])
		}
	}
}

func TestEstimateEdges(t *testing.T) {
	var max [Registers]uint8
	if c := CountRegisters(&max); c != 0 {
		t.Errorf("empty: %d", c)
	}
	for i := range max {
		max[i] = 63
	}
	if c := CountRegisters(&max); c != 1<<63 {
		t.Errorf("all 63: %d, want 1<<63 as Redis", c)
	}
}

// FuzzDecode feeds arbitrary bytes after a HYLL header to every
// operation: none may panic, and whatever Add and Set leave behind is
// still a value the others accept without panicking.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{Sparse, 0x7f, 0xff}, []byte("a"))
	f.Add([]byte{Sparse, 0x40}, []byte("b"))
	f.Add([]byte{Sparse, 0xff, 0x7f, 0xff}, []byte("c"))
	f.Add([]byte{Sparse}, []byte(""))
	f.Add([]byte{Dense}, []byte("x"))
	f.Add(append([]byte{Sparse}, bytes.Repeat([]byte{0x3f}, 256)...), []byte("zz"))
	f.Fuzz(func(t *testing.T, body, ele []byte) {
		b := []byte("HYLL")
		if len(body) > 0 {
			b = append(b, body[0], 0, 0, 0, 0, 0, 0, 0x80)
			b = append(b, 0, 0, 0, 0)
			b = append(b, body[1:]...)
		}
		if len(b) > 4 && b[4] == Dense && len(b) < DenseSize {
			b = append(b, make([]byte, DenseSize-len(b))...)
		}
		if !Valid(b) {
			return
		}
		var max [Registers]uint8
		okMerge := Merge(&max, b)
		_, okCount := Count(b)
		// Merge stops at a VAL run past the last register (Redis 7.2), so
		// it accepts more than Count, never less.
		if okCount && !okMerge && b[4] == Sparse {
			t.Fatalf("Count accepts what Merge refuses: %x", b)
		}
		_, _ = ToDense(nil, b)
		c := Prepare(bytes.Clone(b))
		c, r := Add(c, ele, SparseMaxBytes)
		if r >= 0 && !Valid(c) {
			t.Fatalf("Add left an invalid value")
		}
		if Valid(c) {
			_, _ = Count(c)
			_ = Merge(&max, c)
			for i := 0; i < Registers; i += 1111 {
				c, _ = Set(c, i, uint8(i%40+1), SparseMaxBytes)
			}
		}
		_ = CountRegisters(&max)
	})
}

// TestMergeOverrun: a sparse value whose opcodes run past the last
// register merges as Redis 7.2's hllMerge merges it: a VAL run that would
// pass the end stops the walk, and the value is corrupt unless the
// registers walked were exactly all of them (checked against
// redis-server 7.2.4 by TestHLLCorruptSameAsRedis).
func TestMergeOverrun(t *testing.T) {
	hdr := []byte{'H', 'Y', 'L', 'L', Sparse, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}
	for _, c := range []struct {
		body []byte
		ok   bool
		reg0 uint8
	}{
		{[]byte{0x7f, 0xff}, true, 0},
		{[]byte{0x7f, 0xff, 0x80}, true, 0},                         // VAL after the last register: ignored
		{[]byte{0x88, 0x7f, 0xfe, 0x8c, 0x80, 0x00, 0x00}, true, 3}, // and everything after it
		{[]byte{0x7f, 0xff, 0x00}, false, 0},                        // a ZERO run past the end
		{[]byte{0x7f, 0xfe, 0x83}, false, 0},                        // a VAL run across the end
		{[]byte{0x7f, 0xfe}, false, 0},                              // short
	} {
		var max [Registers]uint8
		ok := Merge(&max, append(bytes.Clone(hdr), c.body...))
		if ok != c.ok || ok && max[0] != c.reg0 {
			t.Errorf("Merge(% x) = %v, register 0 = %d; want %v, %d", c.body, ok, max[0], c.ok, c.reg0)
		}
	}
}
