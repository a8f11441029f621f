//go:build invariants

package offheap

// poison: freed regions are made inaccessible and quarantined, and a Free
// of an address that is not a live region's base is checked (offheap.go).
const poison = true
