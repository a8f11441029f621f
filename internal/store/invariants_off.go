//go:build !invariants

package store

// invariantsOn tells whether the store checks itself as it runs; build
// with -tags invariants to turn the checks on (invariants_on.go).
const invariantsOn = false

// defaultOffHeapMin is where big collections' slices leave the heap
// (bigmem.go).
const defaultOffHeapMin = offHeapMin

// assertShardLocked is the hook of the deep check; without the invariants
// tag it is empty, and inlined away at every call site.
func (s *Store) assertShardLocked(*shard, string) {}
