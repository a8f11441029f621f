package store

import (
	"strconv"
	"testing"
)

// TestZSetChargeMatchesHeap: what sorted sets are charged (Stats().Bytes)
// is what they cost on the Go heap, small (a listpack in the record) or
// big (table and chunks), within the bounds TestCollectionChargeMatchesHeap
// sets for hashes.
func TestZSetChargeMatchesHeap(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sets, items int
	}{
		{"small 100000x10", 100000, 10},
		{"big 100x5000", 100, 5000},
		{"one of 500000", 1, 500000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var z ZSet
			key := make([]byte, 0, 16)
			member := make([]byte, 0, 16)
			checkChargeAgainstHeap(t, tc.sets*tc.items, "member", func(s *Store) {
				for i := range tc.sets {
					key = strconv.AppendInt(append(key[:0], 'z'), int64(100_000_000+i), 10)
					if err := s.UpdateZSet(key, &z, func() error {
						for j := range tc.items {
							member = strconv.AppendInt(append(member[:0], "member:"...), int64(j), 10)
							z.Set(member, float64((j*7919)%100003)/7)
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				}
			})
		})
	}
}
