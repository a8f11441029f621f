//go:build !invariants

package offheap

// poison is off: Free unmaps at once. Build with -tags invariants to make
// a use after free fault (poison_on.go).
const poison = false
