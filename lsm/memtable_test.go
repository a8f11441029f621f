package lsm

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
)

// TestMemTableConcurrentGet inserts into one memtable while readers look up
// keys at the published sequence number, the way the commit leader and Get
// share the mutable memtable. Every lookup must return exactly the newest
// version at or below that sequence number: never a newer, unpublished one,
// and never a miss for a key that has a published version. The index
// starts at its smallest, so it is replaced several times under the
// readers. Readers also take sorted views as the memtable grows: a view
// must be in order and hold every published entry.
func TestMemTableConcurrentGet(t *testing.T) {
	const keys = 2048
	rounds := 12
	if raceEnabled {
		rounds = 6
	}
	m := newMemTable(16<<20, 1)
	m.index.Store(newMemIndex(memMinSlots))
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
				if r.IntN(64) == 0 {
					// A fresh view: ordered, holding sequence numbers 1 to seq.
					it = memIter{m: m}
					var prev []byte
					visible := uint64(0)
					for ok := it.first(); ok; ok = it.next() {
						if prev != nil && compareInternal(prev, it.key()) >= 0 {
							errc <- fmt.Errorf("view out of order: %q then %q", prev, it.key())
							return
						}
						prev = it.key()
						if seqOf(trailer(prev)) <= seq {
							visible++
						}
					}
					if visible != seq {
						errc <- fmt.Errorf("view holds %d entries at or below seq %d", visible, seq)
						return
					}
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

// TestMemTableModel checks a memtable against a model: keys that are
// prefixes of each other, share long prefixes or are empty, versions
// inserted out of sequence order, an index that grows, and sorted views
// taken between inserts (each merges the new entries into the last one).
// get at any sequence number returns the newest version at or below it;
// forward and backward iteration and both seeks agree with the model's
// order.
func TestMemTableModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var keys [][]byte
	for _, k := range []string{"", "a", "ab", "ab\x00", "ab\x00\x00", "b", "\xff"} {
		keys = append(keys, []byte(k))
	}
	for i := 0; i < 300; i++ {
		keys = append(keys, fmt.Appendf(nil, "user:%012d", rng.IntN(100000)))
		keys = append(keys, fmt.Appendf(nil, "user:000000%d", rng.IntN(1000)))
	}
	m := newMemTable(1<<20, 1)
	m.index.Store(newMemIndex(memMinSlots))
	type version struct {
		key []byte
		seq uint64
		v   string
	}
	var model []version
	// Sequence numbers 1..n, each used once, in an order that is mostly
	// increasing with local swaps.
	const n = 4000
	seqs := make([]uint64, n)
	for i := range seqs {
		seqs[i] = uint64(i + 1)
	}
	for i := 0; i+1 < n; i++ {
		if rng.IntN(8) == 0 {
			j := min(n-1, i+1+rng.IntN(5))
			seqs[i], seqs[j] = seqs[j], seqs[i]
		}
	}
	internal := func(v version) []byte { return appendInternalKey(nil, v.key, v.seq, kindSet) }
	check := func() {
		want := slices.Clone(model)
		slices.SortFunc(want, func(a, b version) int { return compareInternal(internal(a), internal(b)) })
		it := memIter{m: m}
		i := 0
		for ok := it.first(); ok; ok = it.next() {
			if i >= len(want) || !bytes.Equal(it.key(), internal(want[i])) || string(it.value()) != want[i].v {
				t.Fatalf("entry %d: %q = %q, want %+v", i, it.key(), it.value(), want[min(i, len(want)-1)])
			}
			i++
		}
		if i != len(want) {
			t.Fatalf("iterated %d entries, want %d", i, len(want))
		}
		for ok := it.last(); ok; ok = it.prev() {
			i--
			if !bytes.Equal(it.key(), internal(want[i])) {
				t.Fatalf("backward entry %d: %q, want %q", i, it.key(), internal(want[i]))
			}
		}
		if i != 0 {
			t.Fatalf("backward iteration stopped at %d", i)
		}
		// Every version at its own sequence number, and the newest of
		// each key at any later one.
		newest := map[string]version{}
		for _, v := range model {
			kd, got, ok := m.get(v.key, v.seq)
			if !ok || kd != kindSet || string(got) != v.v {
				t.Fatalf("get(%q, %d) = %q, %v; want %q", v.key, v.seq, got, ok, v.v)
			}
			if o, ok := newest[string(v.key)]; !ok || v.seq > o.seq {
				newest[string(v.key)] = v
			}
		}
		for _, v := range newest {
			if _, got, _ := m.get(v.key, maxSeq); string(got) != v.v {
				t.Fatalf("get(%q) = %q, want %q", v.key, got, v.v)
			}
		}
		for q := 0; q < 50; q++ {
			target := appendInternalKey(nil, keys[rng.IntN(len(keys))], uint64(rng.IntN(n+2)), kindSet)
			ge := sort.Search(len(want), func(i int) bool { return compareInternal(internal(want[i]), target) >= 0 })
			if ok := it.seekGE(target); ok != (ge < len(want)) || ok && !bytes.Equal(it.key(), internal(want[ge])) {
				t.Fatalf("seekGE(%q) = %v at %d", target, ok, ge)
			}
			if ok := it.seekLT(target); ok != (ge > 0) || ok && !bytes.Equal(it.key(), internal(want[ge-1])) {
				t.Fatalf("seekLT(%q) = %v at %d", target, ok, ge-1)
			}
			key := keys[rng.IntN(len(keys))]
			at := uint64(rng.IntN(n + 2))
			var best *version
			for i := range model {
				if bytes.Equal(model[i].key, key) && model[i].seq <= at && (best == nil || model[i].seq > best.seq) {
					best = &model[i]
				}
			}
			kd, v, ok := m.get(key, at)
			if ok != (best != nil) || ok && (kd != kindSet || string(v) != best.v) {
				t.Fatalf("get(%q, %d) = %q, %v; want %+v", key, at, v, ok, best)
			}
		}
	}
	for i, seq := range seqs {
		v := version{key: keys[rng.IntN(len(keys))], seq: seq, v: fmt.Sprint("v", seq)}
		if err := m.add(v.key, v.seq, kindSet, []byte(v.v)); err != nil {
			t.Fatal(err)
		}
		model = append(model, v)
		if i%700 == 0 || i == n-1 {
			check()
		}
	}
	if len(m.index.Load().slots) == memMinSlots {
		t.Fatal("the index never grew")
	}
}

// TestMemTableSortRange checks the flush's sort against a comparison sort
// for key sets that share a prefix of each length, differ only past their
// first 8 bytes after it, are prefixes of each other, or hold many
// versions of one key: the radix passes and the ties after them.
func TestMemTableSortRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gens := map[string]func() []byte{
		"numbered":    func() []byte { return fmt.Appendf(nil, "key:%012d", rng.IntN(100000)) },
		"long shared": func() []byte { return fmt.Appendf(nil, "tenant/0042/objects/%08x/%d", rng.Uint32()>>20, rng.IntN(9)) },
		"binary": func() []byte {
			b := make([]byte, rng.IntN(12))
			for i := range b {
				b[i] = byte(rng.IntN(4)) * 85
			}
			return b
		},
		"one key":  func() []byte { return []byte("same") },
		"prefixes": func() []byte { return []byte("abcdefghijklmnopqrstuvwxyz"[:rng.IntN(27)]) },
	}
	for name, gen := range gens {
		m := newMemTable(1<<20, 1)
		for seq := uint64(1); ; seq++ {
			if m.add(gen(), seq, kindSet, nil) != nil {
				break
			}
		}
		got := m.sortRange(memAlign, m.filled.Load())
		want := slices.Clone(got)
		slices.SortFunc(want, func(a, b uint32) int { return compareInternal(m.nodeKey(a), m.nodeKey(b)) })
		if int64(len(got)) != m.count.Load() {
			t.Fatalf("%s: sorted %d of %d entries", name, len(got), m.count.Load())
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: entry %d is %q, want %q", name, i, m.nodeKey(got[i]), m.nodeKey(want[i]))
			}
		}
	}
}

// BenchmarkMemTableFill fills a 4 MiB memtable with 100-byte values of
// keys drawn from 100,000 (redis-benchmark's -r 100000 SET) and puts it in
// key order, as the flush does: ns/op is per entry, insert and sort.
func BenchmarkMemTableFill(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "\x01key:%012d", rng.IntN(100000))
	}
	value := make([]byte, 100)
	b.ResetTimer()
	seq := uint64(1)
	for done := 0; done < b.N; {
		m := newMemTable(4<<20, 1)
		for ; done < b.N; done++ {
			if m.add(keys[seq%uint64(len(keys))], seq, kindSet, value) != nil {
				break
			}
			seq++
		}
		it := memIter{m: m}
		for ok := it.first(); ok; ok = it.next() {
		}
	}
}

// BenchmarkInsertBatch inserts batches of 8 and 64 SETs of 100-byte values
// over 100,000 keys into 16 MiB memtables, as a durable server's loop
// commits a pass at P=1 and P=16 (redis-benchmark -r 100000): ns/op is per
// entry.
func BenchmarkInsertBatch(b *testing.B) {
	for _, size := range []int{8, 64} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			value := make([]byte, 100)
			batches := make([][]byte, 4096)
			seq := uint64(1)
			for i := range batches {
				var bt Batch
				for range size {
					bt.Put(fmt.Appendf(nil, "key:%012d", rng.IntN(100000)), value)
				}
				bt.setSeq(seq)
				seq += uint64(size)
				batches[i] = bt.data
			}
			m := newMemTable(16<<20, 1)
			b.ResetTimer()
			for i := 0; i < b.N; i += size {
				data := batches[(i/size)%len(batches)]
				if m.size()+len(data)*2 > len(m.arena) {
					b.StopTimer()
					m = newMemTable(16<<20, 1)
					b.StartTimer()
				}
				if err := insertBatch(m, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMemTableFlushEntries checks what a flush writes, taken from the
// keys' chains, against the rule applied to the whole sorted view: of
// each user key, the newest version of each snapshot stripe. Keys repeat
// (about four versions each), sequence numbers come out of order, and the
// batches go in through insertBatch, as commits do.
func TestMemTableFlushEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 20 {
		m := newMemTable(1<<18, 1)
		m.index.Store(newMemIndex(memMinSlots))
		nkeys := 1 + rng.IntN(500)
		seq := uint64(1)
		for {
			var b Batch
			n := 1 + rng.IntN(40)
			for range n {
				key := fmt.Appendf(nil, "k%04d", rng.IntN(nkeys))
				if rng.IntN(5) == 0 {
					b.Delete(key)
				} else {
					b.Put(key, fmt.Appendf(nil, "v%d", rng.IntN(1000)))
				}
			}
			// A batch that lands before the one committed ahead of it,
			// as the pipeline's groups may.
			s := seq
			if rng.IntN(4) == 0 && seq > 100 {
				s = seq - 50
			} else {
				seq += uint64(n) + 50
			}
			b.setSeq(s)
			if m.size()+2*len(b.data)+1024 > len(m.arena) {
				break // full
			}
			if err := insertBatch(m, b.data); err != nil {
				t.Fatal(err)
			}
		}
		var snaps []uint64
		for range rng.IntN(4) {
			snaps = append(snaps, 1+rng.Uint64N(seq))
		}
		slices.Sort(snaps)
		snaps = slices.Compact(snaps)
		var want []uint32
		var last []byte
		lastStripe := 0
		for _, off := range m.sorted() {
			k := m.nodeKey(off)
			s := stripe(snaps, seqOf(trailer(k)))
			if last != nil && bytes.Equal(userKey(k), last) && s == lastStripe {
				continue
			}
			last, lastStripe = userKey(k), s
			want = append(want, off)
		}
		got := m.flushEntries(snaps)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d, snapshots %v: flush writes %d entries, want %d", round, snaps, len(got), len(want))
		}
	}
}

// BenchmarkMemTableFlushOrder puts a full 16 MiB memtable of 100-byte SETs
// over 100,000 keys (about 1.6 versions a key) in the order a flush writes
// it, with no snapshot open: "heads" sorts the keys' newest versions, as
// the flush does; "view" sorts every entry and skips the older versions,
// as it did before. ns/op is per entry written.
func BenchmarkMemTableFlushOrder(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	m := newMemTable(16<<20, 1)
	value := make([]byte, 100)
	for seq := uint64(1); ; seq++ {
		if m.add(fmt.Appendf(nil, "key:%012d", rng.IntN(100000)), seq, kindSet, value) != nil {
			break
		}
	}
	n := len(m.flushEntries(nil))
	b.Run("heads", func(b *testing.B) {
		for i := 0; i < b.N; i += n {
			m.flushEntries(nil)
		}
	})
	b.Run("view", func(b *testing.B) {
		for i := 0; i < b.N; i += n {
			m.view.Store(nil)
			var last []byte
			for _, off := range m.sorted() {
				k := m.nodeKey(off)
				if last != nil && bytes.Equal(userKey(k), last) {
					continue
				}
				last = userKey(k)
			}
		}
	})
}
