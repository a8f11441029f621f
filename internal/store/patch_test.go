package store

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// patchCheck follows a collection as durable mode would write it, with
// every record a base (patchMinBase 1): after each change, the run of
// nodes its base still holds must be byte for byte in the last record
// written whole, and a patch of that record must rebuild the record a
// whole write would make; now and then (and whenever a patch is not due)
// it writes a new base instead.
type patchCheck struct {
	base      []byte // the last record written whole
	patches   int    // patches checked
	fromFront int    // of them, with changed nodes before the run
}

var patchHdr = make([]byte, diskHeader)

func (c *patchCheck) check(t *testing.T, o patchable, key []byte, r *rand.Rand, what string) {
	t.Helper()
	if pb := *o.baseOf(); pb != nil {
		var run []byte
		for j := pb.lo; j < pb.hi; j++ {
			run = o.appendNode(run, j)
		}
		if pb.keep != len(run) || !bytes.Equal(c.base[pb.off:pb.off+pb.keep], run) {
			t.Fatalf("%s: the base's unchanged nodes [%d:%d] (%d bytes) are not the collection's (%d bytes)", what, pb.lo, pb.hi, pb.keep, len(run))
		}
	}
	whole := o.appendFlat(slices.Clone(patchHdr))
	if b, h, ok := appendPatch(o, slices.Clone(patchHdr), key, 0); ok && r.IntN(8) > 0 {
		pb := *o.baseOf()
		got := append(append(slices.Clone(b[:h]), c.base[pb.off:pb.off+pb.keep]...), b[h:]...)
		if !bytes.Equal(got, whole) {
			t.Fatalf("%s: the patch rebuilds %d bytes, not the record's %d", what, len(got), len(whole))
		}
		c.patches++
		if pb.lo > 0 {
			c.fromFront++
		}
		return
	}
	b, off, keep := appendWhole(o, slices.Clone(patchHdr))
	if !bytes.Equal(b, whole) {
		t.Fatalf("%s: appendWhole differs from appendFlat", what)
	}
	c.base = b
	setBase(o, key, b, 0, off, keep)
}

// everyRecordABase makes every record a base for the test's duration.
func everyRecordABase(t *testing.T) {
	m := patchMinBase
	patchMinBase = 1
	t.Cleanup(func() { patchMinBase = m })
}
