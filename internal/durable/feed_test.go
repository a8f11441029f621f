package durable

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
)

// logFeed takes a store's Feed into a Log, as a replica takes the
// stream: a store opened over the Log afterwards must hold what the
// feeding store held.
type logFeed struct {
	*Log
	mu     sync.Mutex
	fences []uint64
}

func (f *logFeed) Flush(fence uint64) {
	f.mu.Lock()
	f.fences = append(f.fences, fence)
	f.mu.Unlock()
}

// storeFeed applies a store's Feed to another store with PutRecord, as a
// replica applies its primary's changes.
type storeFeed struct {
	to    *store.Store
	fence uint64
}

func (f *storeFeed) Write(key, rec []byte, deadline int64) {
	_ = f.to.Tx([][]byte{key}, func(tx *store.Tx) error {
		if rec == nil {
			tx.Delete(key)
			return nil
		}
		return tx.PutRecord(key, rec, deadline)
	})
}
func (f *storeFeed) Flush(fence uint64) { f.to.FlushAll(0) }
func (f *storeFeed) Hold()              {}
func (f *storeFeed) Release()           {}

// feeds sends one Feed's calls to several.
type feeds []store.Feed

func (fs feeds) Write(key, rec []byte, deadline int64) {
	for _, f := range fs {
		f.Write(key, rec, deadline)
	}
}
func (fs feeds) Flush(fence uint64) {
	for _, f := range fs {
		f.Flush(fence)
	}
}
func (fs feeds) Hold() {
	for _, f := range fs {
		f.Hold()
	}
}
func (fs feeds) Release() {
	for _, f := range fs {
		f.Release()
	}
}

// TestFeedReplaysToTheSameState runs four writers over 300 shared keys on
// a cache-mode store whose memory is small enough to evict (strings with
// flags and deadlines, appends, increments, deletes, hashes, RENAME and
// COPY in a Tx, several writes in an Exclusive section), with its Feed
// going into a Log and, through Tx.PutRecord, into a second store; then
// opens a store over that Log and requires every key to be the same in all
// three: the feed gives every change of a key in the order it was made,
// evictions and expiries included.
func TestFeedReplaysToTheSameState(t *testing.T) {
	l, err := Open(t.TempDir(), lsm.Options{Sync: lsm.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	feed := &logFeed{Log: l}
	p := store.New(store.Config{MemoryLimit: 48 << 10, SweepInterval: 5 * time.Millisecond})
	defer p.Close()
	applied := store.New(store.Config{MemoryLimit: store.NoMemoryLimit, SweepInterval: -1})
	defer applied.Close()
	p.SetFeed(feeds{feed, &storeFeed{to: applied}})

	const keys = 300
	key := func(r *rand.Rand) []byte { return fmt.Appendf(nil, "k%d", r.IntN(keys)) }
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			var h store.Hash
			for i := range 3000 {
				k := key(r)
				v := fmt.Appendf(nil, "w%d-%d-%0*d", w, i, r.IntN(400), 0)
				switch op := r.IntN(10); op {
				case 0, 1:
					var deadline int64
					if r.IntN(4) == 0 {
						deadline = time.Now().UnixMilli() + int64(r.IntN(30))
					}
					_, _ = p.Store(store.ModeSet, k, v, uint32(r.IntN(3)), deadline, 0)
				case 2:
					_, _ = p.Store(store.ModeAppend, k, []byte("+a"), 0, 0, 0)
				case 3:
					_, _, _ = p.Incr(k, 1, false)
				case 4:
					_ = p.Delete(k)
				case 5, 6:
					_ = p.UpdateHash(k, &h, func() error {
						h.Set(fmt.Appendf(nil, "f%d", r.IntN(20)), v)
						if r.IntN(3) == 0 {
							h.Delete(fmt.Appendf(nil, "f%d", r.IntN(20)))
						}
						return nil
					})
				case 7:
					k2 := key(r)
					if string(k2) == string(k) {
						k2 = append(k2, 'x') // the two keys differ, as RENAME's caller makes sure
					}
					_ = p.Tx([][]byte{k, k2}, func(tx *store.Tx) error {
						if r.IntN(2) == 0 {
							tx.Rename(k, k2, false)
						} else {
							tx.Copy(k, k2, true)
						}
						return nil
					})
				case 8:
					_ = p.Exclusive(func(v *store.Store) error {
						for range 3 {
							_, _ = v.Store(store.ModeSet, key(r), fmt.Appendf(nil, "x%d-%d", w, i), 0, 0, 0)
						}
						return nil
					})
				case 9:
					_, _ = p.Store(store.ModeAdd, k, v, 0, 0, 0)
				}
			}
		}()
	}
	wg.Wait()
	// More than the memory limit of fresh keys: evictions for sure.
	for i := range 200 {
		if _, err := p.Store(store.ModeSet, fmt.Appendf(nil, "e%d", i), make([]byte, 1000), 0, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond) // every deadline passes; the sweeper reclaims what it finds
	p.SetFeed(nil)
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	r, err := store.Open(store.Config{MemoryLimit: 64 << 20, SweepInterval: -1}, l)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if st := p.Stats(); st.Evictions == 0 {
		t.Errorf("no eviction in the feeding store (%+v): the test missed what it is for", st)
	}
	for _, r := range []*store.Store{r, applied} {
		compareStores(t, p, r, keys)
	}
}

// compareStores requires every key of the test to be the same in p and r.
func compareStores(t *testing.T, p, r *store.Store, keys int) {
	t.Helper()
	var hp, hr store.Hash
	for i := range keys + 200 {
		k := fmt.Appendf(nil, "k%d", i)
		if i >= keys {
			k = fmt.Appendf(nil, "e%d", i-keys)
		}
		pi, pok := p.Peek(k)
		ri, rok := r.Peek(k)
		if pok != rok || pok && (pi.Kind != ri.Kind || pi.Kind == store.KindString && string(pi.Value) != string(ri.Value) || pi.Flags != ri.Flags || pi.Deadline != ri.Deadline) {
			t.Errorf("%s: feeding store %v %q flags %d deadline %d; replayed %v %q flags %d deadline %d",
				k, pok, pi.Value, pi.Flags, pi.Deadline, rok, ri.Value, ri.Flags, ri.Deadline)
			continue
		}
		fields := func(s *store.Store, h *store.Hash) (map[string]string, bool) {
			m := map[string]string{}
			err := s.ViewHash(k, h, func() error {
				h.Each(func(f, v []byte) bool { m[string(f)] = string(v); return true })
				return nil
			})
			return m, err == nil && h.Exists()
		}
		pm, pok := fields(p, &hp)
		rm, rok := fields(r, &hr)
		if pok != rok || !maps.Equal(pm, rm) {
			t.Errorf("%s: feeding store's hash %v %d fields, replayed %v %d fields", k, pok, len(pm), rok, len(rm))
		}
	}
}
