package offheap

import (
	"runtime/debug"
	"sync"
	"testing"
	"unsafe"
)

func need(t *testing.T) {
	t.Helper()
	if !supported {
		t.Skip("no off-heap mappings on this system")
	}
}

func TestAllocIsZeroedPageRoundedAndCounted(t *testing.T) {
	need(t)
	a := New(0)
	b := a.Alloc(100_000, 0)
	if b == nil {
		t.Fatal("Alloc(100000) declined")
	}
	if len(b) != 100_000 || cap(b) != roundPage(100_000) || cap(b)%PageSize != 0 {
		t.Fatalf("len, cap = %d, %d; want 100000, %d", len(b), cap(b), roundPage(100_000))
	}
	for i, c := range b[:cap(b)] {
		if c != 0 {
			t.Fatalf("byte %d = %d, want 0", i, c)
		}
	}
	b[0], b[len(b)-1] = 1, 2
	if got := a.Mapped(); got != int64(cap(b)) {
		t.Errorf("Mapped() = %d, want %d", got, cap(b))
	}
	if !a.Owns(b) || a.Regions() != 1 {
		t.Errorf("Owns = %v, Regions = %d; want true, 1", a.Owns(b), a.Regions())
	}
	if !a.Free(b) {
		t.Fatal("Free of an Alloc'd slice reported false")
	}
	if a.Mapped() != 0 || a.Regions() != 0 {
		t.Errorf("after Free: Mapped, Regions = %d, %d; want 0, 0", a.Mapped(), a.Regions())
	}
}

func TestGrowInPlaceKeepsAddressAndBytes(t *testing.T) {
	need(t)
	a := New(0)
	b := a.Alloc(PageSize, 64*PageSize)
	if b == nil {
		t.Fatal("Alloc declined")
	}
	for i := range b {
		b[i] = byte(i)
	}
	p := &b[0]
	g, ok := a.Grow(b, 10*PageSize+1)
	if !ok {
		t.Fatal("Grow within the reservation failed")
	}
	if &g[0] != p || len(g) != PageSize || cap(g) != 11*PageSize {
		t.Fatalf("Grow moved or sized wrong: same address %v, len %d, cap %d", &g[0] == p, len(g), cap(g))
	}
	for i := range b {
		if g[i] != byte(i) {
			t.Fatalf("byte %d = %d after Grow, want %d", i, g[i], byte(i))
		}
	}
	for _, c := range g[len(g):cap(g)] {
		if c != 0 {
			t.Fatal("grown bytes are not zero")
		}
	}
	g[:cap(g)][cap(g)-1] = 7 // writable
	if got := a.Mapped(); got != int64(11*PageSize) {
		t.Errorf("Mapped() = %d, want %d", got, 11*PageSize)
	}
	if _, ok := a.Grow(g, 65*PageSize); ok {
		t.Error("Grow past the reservation succeeded")
	}
	if _, ok := a.Grow(make([]byte, 10), 100); ok {
		t.Error("Grow of a heap slice succeeded")
	}
	if !a.Free(g) || a.Mapped() != 0 {
		t.Errorf("Free: Mapped() = %d after it, want 0", a.Mapped())
	}
}

func TestFreeOfHeapSliceIsNoOp(t *testing.T) {
	a := New(0)
	if a.Free(make([]byte, 1<<20)) || a.Free(nil) {
		t.Error("Free of a heap or nil slice reported true")
	}
	if a.Owns(make([]byte, 10)) {
		t.Error("Owns a heap slice")
	}
}

func TestAllocDeclinesAtMaxRegions(t *testing.T) {
	need(t)
	a := New(2)
	x, y := a.Alloc(PageSize, 0), a.Alloc(PageSize, 0)
	if x == nil || y == nil {
		t.Fatal("first two Allocs declined")
	}
	if z := a.Alloc(PageSize, 0); z != nil {
		t.Fatal("third Alloc with maxRegions 2 was mapped")
	}
	if a.Declined() != 1 {
		t.Errorf("Declined() = %d, want 1", a.Declined())
	}
	a.Free(x)
	if z := a.Alloc(PageSize, 0); z == nil {
		t.Fatal("Alloc after a Free declined")
	} else {
		a.Free(z)
	}
	a.Free(y)
}

func TestUint64sView(t *testing.T) {
	need(t)
	a := New(0)
	b := a.Alloc(8*1000, 0)
	u := Uint64s(b)
	if len(u) != 1000 || cap(u) != cap(b)/8 {
		t.Fatalf("len, cap = %d, %d", len(u), cap(u))
	}
	if uintptr(unsafe.Pointer(&u[0]))%8 != 0 {
		t.Fatal("not 8-aligned")
	}
	u[999] = 1<<64 - 1
	back := Bytes(u)
	if &back[0] != &b[0] || len(back) != len(b) || cap(back) != cap(b) {
		t.Fatal("Bytes(Uint64s(b)) is not b")
	}
	if !a.Free(back) {
		t.Fatal("Free through the []uint64 view failed")
	}
	if Uint64s(nil) != nil || Bytes(nil) != nil {
		t.Error("views of nil are not nil")
	}
}

func TestReleaseFreesEverything(t *testing.T) {
	need(t)
	a := New(0)
	for range 10 {
		a.Alloc(3*PageSize, 8*PageSize)
	}
	a.Release()
	if a.Mapped() != 0 || a.Regions() != 0 {
		t.Errorf("after Release: Mapped, Regions = %d, %d", a.Mapped(), a.Regions())
	}
}

func TestConcurrentAllocFree(t *testing.T) {
	need(t)
	a := New(0)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				b := a.Alloc(PageSize*(1+i%5), PageSize*8)
				if b == nil {
					t.Error("Alloc declined")
					return
				}
				b[0] = byte(w)
				if i%3 == 0 {
					var ok bool
					if b, ok = a.Grow(b, PageSize*7); !ok {
						t.Error("Grow failed")
					}
				}
				if !a.Free(b) {
					t.Error("Free failed")
				}
			}
		})
	}
	wg.Wait()
	if a.Mapped() != 0 || a.Regions() != 0 {
		t.Errorf("Mapped, Regions = %d, %d; want 0, 0", a.Mapped(), a.Regions())
	}
}

// TestUseAfterFreeFaults: in the invariants build a freed region stays
// reserved and inaccessible, so reading it faults (a panic here, with
// SetPanicOnFault) instead of reading another region's bytes.
func TestUseAfterFreeFaults(t *testing.T) {
	need(t)
	if !poison {
		t.Skip("freed regions are poisoned only with -tags invariants")
	}
	a := New(0)
	b := a.Alloc(PageSize, 0)
	b[0] = 1
	a.Free(b)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	faulted := func() (f bool) {
		defer func() { f = recover() != nil }()
		sink = b[0]
		return false
	}()
	if !faulted {
		t.Fatal("reading a freed region did not fault")
	}
}

var sink byte

func TestDoubleFreePanicsUnderInvariants(t *testing.T) {
	need(t)
	if !poison {
		t.Skip("checked only with -tags invariants")
	}
	a := New(0)
	b := a.Alloc(2*PageSize, 0)
	a.Free(b)
	for name, s := range map[string][]byte{"twice": b, "inside": b[PageSize:]} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Free %s did not panic", name)
				}
			}()
			a.Free(s)
		}()
	}
	c := a.Alloc(2*PageSize, 0)
	defer a.Free(c)
	defer func() {
		if recover() == nil {
			t.Error("Free of a live region's inside did not panic")
		}
	}()
	a.Free(c[PageSize:])
}
