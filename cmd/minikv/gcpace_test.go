package main

import "testing"

// TestGCPercent: the collector is paced to let the heap grow by 16 MiB,
// as Go's default (100) for a small heap and never below 5.
func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100}, {1 << 20, 100}, {16 << 20, 100}, {32 << 20, 50}, {160 << 20, 10},
		{320 << 20, 5}, {4 << 30, 5},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}
