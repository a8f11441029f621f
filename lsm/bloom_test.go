package lsm

import (
	"fmt"
	"strconv"
	"testing"
)

func buildBloom(n, bitsPerKey int) bloomFilter {
	hashes := make([]uint64, n)
	var kb []byte
	for i := range hashes {
		kb = strconv.AppendInt(append(kb[:0], "key_"...), int64(i), 10)
		hashes[i] = hash64(kb)
	}
	f, ok := decodeBloom(appendBloom(nil, hashes, bitsPerKey))
	if !ok {
		panic("bloom: cannot decode what was built")
	}
	return f
}

// TestBloomFalsePositiveRate checks the acceptance bound: at most 1% false
// positives at 10 bits per key, and no false negatives.
func TestBloomFalsePositiveRate(t *testing.T) {
	n := 200_000
	if *soak {
		n = 5_000_000
	}
	for _, tc := range []struct {
		bitsPerKey int
		maxFP      float64
	}{{10, 0.010}, {16, 0.001}, {6, 0.07}} {
		f := buildBloom(n, tc.bitsPerKey)
		var kb []byte
		for i := 0; i < n; i++ {
			kb = strconv.AppendInt(append(kb[:0], "key_"...), int64(i), 10)
			if !f.mayContain(hash64(kb)) {
				t.Fatalf("bits/key %d: false negative for %s", tc.bitsPerKey, kb)
			}
		}
		fp := 0
		for i := 0; i < n; i++ {
			kb = strconv.AppendInt(append(kb[:0], "absent_"...), int64(i), 10)
			if f.mayContain(hash64(kb)) {
				fp++
			}
		}
		rate := float64(fp) / float64(n)
		t.Logf("bits/key %d, probes %d: false-positive rate %.3f%% over %d absent keys", tc.bitsPerKey, f.k, 100*rate, n)
		if rate > tc.maxFP {
			t.Errorf("bits/key %d: false-positive rate %.3f%%, want <= %.3f%%", tc.bitsPerKey, 100*rate, 100*tc.maxFP)
		}
	}
}

// BenchmarkBloomProbe measures one filter check including hashing the key,
// over a 1M-key filter (1.2 MiB, bigger than L2), for present and absent keys.
func BenchmarkBloomProbe(b *testing.B) {
	const n = 1 << 20
	f := buildBloom(n, 10)
	for _, prefix := range []string{"key_", "absent_"} {
		keys := make([][]byte, 1<<16)
		for i := range keys {
			// Pseudo-random order, so probes do not walk the filter in line order.
			keys[i] = fmt.Appendf(nil, "%s%d", prefix, (i*2654435761)%n)
		}
		b.Run(prefix[:len(prefix)-1], func(b *testing.B) {
			b.ReportAllocs()
			hits, i := 0, 0
			for b.Loop() {
				if f.mayContain(hash64(keys[i&(len(keys)-1)])) {
					hits++
				}
				i++
			}
			b.ReportMetric(float64(hits)/float64(i), "hit-rate")
		})
	}
}
