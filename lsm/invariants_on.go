//go:build invariants

package lsm

import "fmt"

// invariantsOn tells whether the engine checks itself as it runs: this
// build was made with -tags invariants.
const invariantsOn = true

// assertVersion panics if v, a version about to be installed, breaks an
// invariant (version.verify). It costs a walk over the tables' metadata.
func assertVersion(v *version, nextFile uint64) {
	if err := v.verify(nextFile); err != nil {
		panic(fmt.Sprintf("lsm: invariant broken in a new version: %v", err))
	}
}
