//go:build !invariants

package lsm

// invariantsOn tells whether the engine checks itself as it runs; build
// with -tags invariants to turn the checks on (invariants_on.go).
const invariantsOn = false

// assertVersion is the hook of the deep check; without the invariants tag
// it is empty, and inlined away at its call site.
func assertVersion(*version, uint64) {}
