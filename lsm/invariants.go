package lsm

import (
	"bytes"
	"fmt"
)

// The engine's deep check of a version. Built with -tags invariants, every
// version logAndApply installs is checked before it is published, and a
// broken invariant panics (invariants_on.go); without the tag the hook is
// an empty function that the compiler removes (invariants_off.go).

// verify checks the shape of v: every table's key range is ordered; L0 is
// newest first; each level below L0 is a sorted run of tables whose
// user-key ranges do not meet; no table is in two places; every table
// number is below nextFile (0: not checked); every table is referenced and
// not yet marked obsolete.
func (v *version) verify(nextFile uint64) error {
	seen := make(map[uint64]int)
	for level, files := range v.levels {
		for i, f := range files {
			if len(f.smallest) < trailerLen || len(f.largest) < trailerLen {
				return fmt.Errorf("L%d %s: bounds shorter than a trailer", level, tableName(f.num))
			}
			if compareInternal(f.smallest, f.largest) > 0 {
				return fmt.Errorf("L%d %s: smallest key %q sorts after largest %q", level, tableName(f.num), f.smallestUser(), f.largestUser())
			}
			if l, dup := seen[f.num]; dup {
				return fmt.Errorf("%s is in L%d and L%d", tableName(f.num), l, level)
			}
			seen[f.num] = level
			if nextFile != 0 && f.num >= nextFile {
				return fmt.Errorf("L%d %s: number not below nextFile %d", level, tableName(f.num), nextFile)
			}
			if f.refs.Load() < 1 {
				return fmt.Errorf("L%d %s: %d references", level, tableName(f.num), f.refs.Load())
			}
			if f.obsolete.Load() {
				return fmt.Errorf("L%d %s: in a version but marked obsolete", level, tableName(f.num))
			}
			if i == 0 {
				continue
			}
			p := files[i-1]
			if level == 0 && p.num <= f.num {
				return fmt.Errorf("L0: %s before %s, want newest first", tableName(p.num), tableName(f.num))
			}
			if level > 0 && bytes.Compare(p.largestUser(), f.smallestUser()) >= 0 {
				return fmt.Errorf("L%d: tables %s and %s overlap or are out of order", level, tableName(p.num), tableName(f.num))
			}
		}
	}
	return nil
}
