package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// TestRandomOpsUnderPressureReadWhatWasWritten runs random writes, reads,
// deletes, touches, appends, incrs and meta operations on a store whose
// memory limit holds a few dozen of its keys, so the eviction walk,
// compaction, big records in their own segments, the sweeper and lazy
// expiry all run all the time. Eviction may make any key miss, but a key
// that is found must hold exactly the last value written to it, with its
// flags; and the accounting and segment bookkeeping must hold after every
// operation (checkInvariants).
func TestRandomOpsUnderPressureReadWhatWasWritten(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limit  int64
		shards int
	}{
		{"tiny", 4 << 10, 16},
		{"small", 32 << 10, 16},
		{"one shard's worth", 256 << 10, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := New(Config{MemoryLimit: tc.limit, MaxItemSize: 200 << 10, Shards: tc.shards, SweepInterval: 50 * time.Millisecond})
				defer s.Close()
				r := rand.New(rand.NewPCG(uint64(tc.limit), 3))
				type want struct {
					value string
					flags uint32
				}
				last := make(map[string]want) // the last successful write of each key
				var held []Item               // values handed out earlier; must never change
				var heldWant []string
				var hits, evicted int
				for i := range 20_000 {
					key := "key" + strconv.Itoa(r.IntN(300))
					var deadline int64
					if r.IntN(5) == 0 {
						deadline = time.Now().Add(time.Duration(r.IntN(2000)) * time.Millisecond).UnixMilli()
					}
					switch op := r.IntN(20); {
					case op < 8:
						it, ok := s.Get([]byte(key))
						w, known := last[key]
						if ok {
							hits++
							if !known || string(it.Value) != w.value || it.Flags != w.flags {
								t.Fatalf("op %d: Get(%q) = %q/%d, last written %q/%d (known %v)", i, key, it.Value, it.Flags, w.value, w.flags, known)
							}
							if r.IntN(50) == 0 {
								held, heldWant = append(held, it), append(heldWant, w.value)
							}
						} else if known {
							evicted++
						}
					case op < 13:
						n := r.IntN(300)
						if r.IntN(200) == 0 {
							n = bigRecord + r.IntN(10_000) // a segment of its own
						}
						v := fmt.Sprintf("%s-%d-", key, i) + string(bytes.Repeat([]byte{'x'}, n))
						flags := uint32(r.IntN(3))
						_, err := s.Store(ModeSet, []byte(key), []byte(v), flags, deadline, 0)
						switch {
						case err == nil && deadline != 0 && deadline <= time.Now().UnixMilli():
							delete(last, key)
						case err == nil:
							last[key] = want{v, flags}
						case errors.Is(err, ErrNoMemory):
							// the old value, if any, is kept
						default:
							t.Fatalf("op %d: Store(%q, %d bytes) = %v", i, key, len(v), err)
						}
					case op < 14:
						if _, err := s.Store(ModeAppend, []byte(key), []byte("+a"), 0, 0, 0); err == nil {
							w := last[key]
							last[key] = want{w.value + "+a", w.flags}
						}
					case op < 15:
						if err := s.Delete([]byte(key)); err == nil {
							delete(last, key)
						}
					case op < 16:
						s.Touch([]byte(key), deadline)
						if deadline != 0 && deadline <= time.Now().UnixMilli() {
							delete(last, key)
						}
					case op < 17:
						n, _, err := s.Incr([]byte(key), 1, false)
						if err == nil {
							w := last[key]
							last[key] = want{strconv.FormatUint(n, 10), w.flags}
						}
					case op < 18:
						mi, ok := s.MetaGet([]byte(key), GetOptions{Touch: r.IntN(2) == 0, Deadline: deadline})
						if w, known := last[key]; ok && (!known || string(mi.Value) != w.value) {
							t.Fatalf("op %d: MetaGet(%q) = %q, last written %q", i, key, mi.Value, w.value)
						}
						if ok && r.IntN(2) == 0 && deadline != 0 && deadline <= time.Now().UnixMilli() {
							delete(last, key)
						}
					case op < 19:
						if err := s.MetaDelete([]byte(key), DeleteOptions{Invalidate: true}); err == nil {
							if _, ok := last[key]; !ok {
								t.Fatalf("op %d: MetaDelete(%q) found a key never written", i, key)
							}
						}
					default:
						time.Sleep(time.Duration(r.IntN(200)) * time.Millisecond)
						synctest.Wait()
					}
					// Keys whose deadline has passed are gone for good.
					for k := range last {
						if it, ok := peek(s, k); ok && it.Deadline != 0 && it.Deadline <= time.Now().UnixMilli() {
							delete(last, k)
						}
					}
					if i%50 == 0 {
						checkInvariants(t, s)
					}
				}
				checkInvariants(t, s)
				for j, it := range held {
					if string(it.Value) != heldWant[j] {
						t.Fatalf("a value handed out earlier changed: %q, was %q", it.Value, heldWant[j])
					}
				}
				st := s.Stats()
				t.Logf("hits %d, misses of written keys %d, %+v", hits, evicted, st)
				if st.Evictions == 0 || hits < 300 || st.Reclaimed == 0 {
					t.Errorf("the run exercised too little: hits %d, %+v", hits, st)
				}
			})
		})
	}
}
