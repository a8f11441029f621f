package lsm

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
)

// TestMemTableConcurrentGet inserts into one memtable while readers look up
// keys at the published sequence number, the way the commit leader and Get
// share the mutable memtable. Every lookup must return exactly the newest
// version at or below that sequence number: never a newer, unpublished one,
// and never a miss for a key that has a published version. Before seekUser
// kept the node its level-0 walk had compared, a node linked between that
// compare and a reload of the predecessor's pointer could be returned
// instead, and Get fell through to older data.
func TestMemTableConcurrentGet(t *testing.T) {
	const keys = 2048
	rounds := 12
	if raceEnabled {
		rounds = 6
	}
	m := newMemTable(16<<20, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	// order[s] is the key written at sequence number s (s from 1).
	order := []int{-1}
	seqsOf := make([][]uint64, keys)
	for r := 0; r < rounds; r++ {
		for _, k := range rng.Perm(keys) {
			seqsOf[k] = append(seqsOf[k], uint64(len(order)))
			order = append(order, k)
		}
	}
	key := func(k int) []byte { return fmt.Appendf(nil, "key%05d", k*7) }
	var published atomic.Uint64
	var stop atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 3))
			var it memIter
			it.m = m
			for !stop.Load() {
				seq := published.Load()
				k := r.IntN(keys)
				ss := seqsOf[k]
				i := sort.Search(len(ss), func(i int) bool { return ss[i] > seq })
				kd, v, ok := m.get(key(k), seq)
				switch {
				case i == 0 && ok:
					errc <- fmt.Errorf("get(%s, %d) found %q; nothing published yet", key(k), seq, v)
					return
				case i > 0 && !ok:
					errc <- fmt.Errorf("get(%s, %d) missed; version at seq %d is published", key(k), seq, ss[i-1])
					return
				case i > 0 && (kd != kindSet || string(v) != fmt.Sprint(ss[i-1])):
					errc <- fmt.Errorf("get(%s, %d) = %q, want %d", key(k), seq, v, ss[i-1])
					return
				}
				// An iterator seek must never land below its target.
				target := appendInternalKey(nil, key(k), maxSeq, kindMax)
				if it.seekGE(target) && compareInternal(it.key(), target) < 0 {
					errc <- fmt.Errorf("seekGE(%s) landed on %q below it", key(k), it.key())
					return
				}
			}
		}()
	}
	for s := 1; s < len(order); s++ {
		if err := m.add(key(order[s]), uint64(s), kindSet, fmt.Append(nil, s)); err != nil {
			t.Fatal(err)
		}
		published.Store(uint64(s))
	}
	stop.Store(true)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}
