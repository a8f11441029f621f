package store

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCompactionKeepsValues overwrites and deletes keys of mixed sizes until
// every shard has compacted many times, and checks that each key still holds
// its last value, that the accounting and the segment bookkeeping agree
// (checkInvariants), and that dead bytes stay bounded.
// It runs twice: with room to spare (compaction waits for half of a shard's
// segment bytes to be dead) and with every shard's roomy set to 0 (a
// quarter, as when segments fill the shard's share of the limit).
func TestCompactionKeepsValues(t *testing.T) {
	for _, roomy := range []bool{true, false} {
		t.Run(fmt.Sprintf("roomy=%v", roomy), func(t *testing.T) {
			s := newTestStore(t, Config{MemoryLimit: 1 << 30, Shards: 16})
			if !roomy {
				for i := range s.shards {
					s.shards[i].roomy = 0
				}
			}
			compactionKeepsValues(t, s, roomy)
		})
	}
}

func compactionKeepsValues(t *testing.T, s *Store, roomy bool) {
	r := rand.New(rand.NewPCG(1, 2))
	want := make(map[string][]byte)
	for i := range 200_000 {
		k := fmt.Sprintf("k%05d", r.IntN(5000))
		if r.IntN(10) == 0 {
			err := s.Delete([]byte(k))
			if _, ok := want[k]; ok != (err == nil) {
				t.Fatalf("Delete(%q) = %v, present %v", k, err, ok)
			}
			delete(want, k)
			continue
		}
		v := bytes.Repeat([]byte{byte(i)}, r.IntN(300))
		if r.IntN(1000) == 0 {
			v = bytes.Repeat([]byte{byte(i)}, bigRecord+r.IntN(1000)) // its own segment
		}
		mustStore(t, s, ModeSet, k, string(v), 0, 0)
		want[k] = v
	}
	checkInvariants(t, s)
	for k, v := range want {
		got, ok := s.Get([]byte(k))
		if !ok || !bytes.Equal(got.Value, v) {
			t.Fatalf("Get(%q) = %d bytes, %v; want %d bytes", k, len(got.Value), ok, len(v))
		}
	}
	for i := range s.shards {
		sh := &s.shards[i]
		allowed := sh.segBytes / 4
		if roomy {
			allowed = sh.segBytes / 2
		}
		if sh.dead > allowed+maxSegment {
			t.Errorf("shard %d: %d of %d segment bytes dead", i, sh.dead, sh.segBytes)
		}
	}
}

// TestCompactionTightensNearLimit: overwriting with room to spare leaves up
// to half of the segment bytes dead (less copying per byte reclaimed); once
// a lower memory limit leaves the segments more than half of each shard's
// share, writes compact them back to a quarter dead, the bound that holds
// resident memory to 4/3 of the live bytes.
func TestCompactionTightensNearLimit(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 30, Shards: 16})
	value := strings.Repeat("v", 200)
	r := rand.New(rand.NewPCG(3, 4))
	overwrite := func() {
		for i := range 80_000 {
			mustStore(t, s, ModeSet, fmt.Sprintf("k%04d", r.IntN(4000)), fmt.Sprint(i, value), 0, 0)
		}
	}
	deadShare := func() (dead, seg int64) {
		for i := range s.shards {
			dead += s.shards[i].dead
			seg += s.shards[i].segBytes
		}
		return dead, seg
	}
	overwrite()
	dead, seg := deadShare()
	if dead*4 <= seg+16*maxSegment || dead*2 > seg+16*maxSegment {
		t.Fatalf("with room: %d of %d segment bytes dead; want between a quarter and a half", dead, seg)
	}
	// A limit that leaves the shards' segments above their roomy bound (a
	// twentieth of the limit each, against about a tenth of the items'
	// bytes in segments) but the items within it (nothing is evicted).
	s.SetMemoryLimit(s.Stats().Bytes * 6 / 5)
	minRatio := math.MaxFloat64
	for i := range s.shards {
		sh := &s.shards[i]
		minRatio = min(minRatio, float64(sh.segBytes)/float64(sh.roomy))
	}
	t.Logf("with room: %d of %d segment bytes dead; after the lower limit the least full shard's segments are %.1fx its roomy bound", dead, seg, minRatio)
	for i := range s.shards {
		if sh := &s.shards[i]; sh.segBytes < sh.roomy {
			t.Fatalf("shard %d: %d segment bytes, roomy %d: the limit is not tight enough for the test", i, sh.segBytes, sh.roomy)
		}
	}
	overwrite()
	if st := s.Stats(); st.Evictions != 0 {
		t.Fatalf("%d evictions; the test wants none", st.Evictions)
	}
	checkInvariants(t, s)
	if dead, seg := deadShare(); dead*4 > seg+16*maxSegment {
		t.Fatalf("near the limit: %d of %d segment bytes dead; want at most a quarter", dead, seg)
	}
}

// TestValueOutlivesCompaction guards the promise that a value handed out by
// Get is never modified: compaction copies records and drops segments, it
// never writes over them.
func TestValueOutlivesCompaction(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 30, Shards: 16})
	keys := sameShardKeys(s, "v", 2000)
	for _, k := range keys {
		mustStore(t, s, ModeSet, k, k+"-first", 0, 0)
	}
	held, _ := s.Get([]byte(keys[0]))
	for round := range 50 {
		for _, k := range keys[1:] {
			mustStore(t, s, ModeSet, k, fmt.Sprintf("%s-%d-%0100d", k, round, 0), 0, 0)
		}
	}
	if string(held.Value) != keys[0]+"-first" {
		t.Fatalf("held value = %q, want %q", held.Value, keys[0]+"-first")
	}
	if got, _ := s.Get([]byte(keys[0])); string(got.Value) != keys[0]+"-first" {
		t.Fatalf("Get after compaction = %q", got.Value)
	}
	checkInvariants(t, s)
}

// TestIndexRemoveKeepsRuns fills one shard's index so probe runs wrap and
// overlap, deletes in random order and checks that every remaining key is
// still found.
func TestIndexRemoveKeepsRuns(t *testing.T) {
	s := newTestStore(t, Config{MemoryLimit: 1 << 30})
	keys := sameShardKeys(s, "r", 3000)
	for _, k := range keys {
		mustStore(t, s, ModeSet, k, "x", 0, 0)
	}
	r := rand.New(rand.NewPCG(3, 4))
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	for i, k := range keys {
		if err := s.Delete([]byte(k)); err != nil {
			t.Fatalf("Delete(%q) = %v", k, err)
		}
		if i%97 == 0 {
			for _, k2 := range keys[i+1:] {
				if _, ok := peek(s, k2); !ok {
					t.Fatalf("after deleting %d keys, %q is lost", i+1, k2)
				}
			}
			checkInvariants(t, s)
		}
	}
}
