package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// modelItem and model are a plain reference implementation of the store's
// semantics without memory pressure.
type modelItem struct {
	value    string
	flags    uint32
	deadline int64
	cas      uint64
	stored   int64
}

type model struct {
	items   map[string]modelItem
	cas     uint64
	flushAt int64
	maxItem int64
}

func (m *model) poll(now int64) {
	if m.flushAt == 0 || now < m.flushAt {
		return
	}
	for k, it := range m.items {
		if it.stored <= m.flushAt {
			delete(m.items, k)
		}
	}
	if now > m.flushAt {
		m.flushAt = 0
	}
}

func (m *model) live(key string, now int64) (modelItem, bool) {
	it, ok := m.items[key]
	if ok && it.deadline != 0 && it.deadline <= now {
		delete(m.items, key)
		return modelItem{}, false
	}
	return it, ok
}

func (m *model) tooLarge(key, value string) bool {
	return int64(len(key)+len(value))+ItemOverhead > m.maxItem
}

func (m *model) store(mode Mode, key, value string, flags uint32, deadline int64, cas uint64, now int64) (uint64, error) {
	if m.tooLarge(key, value) {
		return 0, ErrTooLarge
	}
	old, ok := m.live(key, now)
	switch {
	case mode == ModeAdd && ok:
		return 0, ErrNotStored
	case (mode == ModeReplace || mode == ModeAppend || mode == ModePrepend) && !ok:
		return 0, ErrNotStored
	case mode == ModeCAS && !ok:
		return 0, ErrNotFound
	case mode == ModeCAS && old.cas != cas:
		return 0, ErrExists
	}
	switch mode {
	case ModeAppend:
		value, flags, deadline = old.value+value, old.flags, old.deadline
	case ModePrepend:
		value, flags, deadline = value+old.value, old.flags, old.deadline
	}
	if m.tooLarge(key, value) {
		return 0, ErrTooLarge
	}
	m.cas++
	if deadline != 0 && deadline <= now {
		delete(m.items, key)
	} else {
		m.items[key] = modelItem{value, flags, deadline, m.cas, now}
	}
	return m.cas, nil
}

func (m *model) incr(key string, delta uint64, decr bool, now int64) (uint64, uint64, error) {
	it, ok := m.live(key, now)
	if !ok {
		return 0, 0, ErrNotFound
	}
	// strtoull's rules: leading space and '+', digits, then end or space.
	const space = " \t\n\v\f\r"
	digits := strings.TrimPrefix(strings.TrimLeft(it.value, space), "+")
	if i := strings.IndexAny(digits, space); i >= 0 {
		digits = digits[:i]
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, 0, ErrNotNumeric
	}
	switch {
	case !decr:
		n += delta
	case delta > n:
		n = 0
	default:
		n -= delta
	}
	m.cas++
	it.value, it.cas, it.stored = strconv.FormatUint(n, 10), m.cas, now
	m.items[key] = it
	return n, m.cas, nil
}

// randomOp applies one random operation to s (and to m when m is not nil,
// comparing the results). About one in 20*flushOneIn operations is a
// flush; none when flushOneIn is 0. It returns a description for failure
// messages.
func randomOp(t *testing.T, r *rand.Rand, s *Store, m *model, keys []string, flushOneIn int) string {
	t.Helper()
	key := keys[r.IntN(len(keys))]
	values := []string{"", "0", "7", "99", "18446744073709551615", "abc", "hello world", "x"}
	value := values[r.IntN(len(values))]
	if r.IntN(4) == 0 {
		value = string(make([]byte, r.IntN(40)))
	}
	var deadline int64
	switch now := time.Now(); r.IntN(6) {
	case 0:
		deadline = Deadline(1+r.Int64N(3), now)
	case 1:
		deadline = now.Add(time.Duration(r.IntN(3000)) * time.Millisecond).UnixMilli()
	case 2:
		deadline = Deadline(-1, now)
	}
	flags := r.Uint32()
	now := time.Now().UnixMilli()
	if m != nil {
		m.poll(now)
	}
	switch op := r.IntN(20); {
	case op < 5:
		it, ok := s.Get([]byte(key))
		desc := fmt.Sprintf("Get(%q) = %q/%d/cas%d/dl%d %v", key, it.Value, it.Flags, it.CAS, it.Deadline, ok)
		if m != nil {
			want, wantOK := m.live(key, now)
			if ok != wantOK || ok && (string(it.Value) != want.value || it.Flags != want.flags || it.CAS != want.cas || it.Deadline != want.deadline) {
				t.Fatalf("%s, want %+v %v", desc, want, wantOK)
			}
		}
		return desc
	case op < 6:
		it, ok := s.GetAndTouch([]byte(key), deadline)
		desc := fmt.Sprintf("GetAndTouch(%q, %d) = %q %v", key, deadline, it.Value, ok)
		if m != nil {
			want, wantOK := m.live(key, now)
			if ok != wantOK || ok && (string(it.Value) != want.value || it.CAS != want.cas || it.Deadline != deadline) {
				t.Fatalf("%s, want %+v %v", desc, want, wantOK)
			}
			if ok {
				want.deadline = deadline
				m.items[key] = want
			}
		}
		return desc
	case op < 7:
		ok := s.Touch([]byte(key), deadline)
		desc := fmt.Sprintf("Touch(%q, %d) = %v", key, deadline, ok)
		if m != nil {
			want, wantOK := m.live(key, now)
			if ok != wantOK {
				t.Fatalf("%s, want %v", desc, wantOK)
			}
			if ok {
				want.deadline = deadline
				m.items[key] = want
			}
		}
		return desc
	case op < 14:
		mode := Mode(r.IntN(int(ModeCAS) + 1))
		var cas uint64
		if m != nil {
			cas = m.items[key].cas
		} else if it, ok := peek(s, key); ok {
			cas = it.CAS
		}
		if r.IntN(3) == 0 {
			cas = r.Uint64N(100)
		}
		got, err := s.Store(mode, []byte(key), []byte(value), flags, deadline, cas)
		desc := fmt.Sprintf("Store(%v, %q, %q, %d, dl %d, cas %d) = %d, %v", mode, key, value, flags, deadline, cas, got, err)
		if m != nil {
			want, wantErr := m.store(mode, key, value, flags, deadline, cas, now)
			if got != want || !errors.Is(err, wantErr) {
				t.Fatalf("%s, want %d, %v", desc, want, wantErr)
			}
		} else if err != nil && !errors.Is(err, ErrNoMemory) && !errors.Is(err, ErrNotStored) &&
			!errors.Is(err, ErrExists) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%s: unexpected error", desc)
		}
		return desc
	case op < 16:
		delta, decr := r.Uint64N(1000), r.IntN(2) == 0
		if r.IntN(10) == 0 {
			delta = 1<<64 - 1
		}
		got, cas, err := s.Incr([]byte(key), delta, decr)
		desc := fmt.Sprintf("Incr(%q, %d, %v) = %d, %d, %v", key, delta, decr, got, cas, err)
		if m != nil {
			want, wantCAS, wantErr := m.incr(key, delta, decr, now)
			if got != want || cas != wantCAS || !errors.Is(err, wantErr) {
				t.Fatalf("%s, want %d, %d, %v", desc, want, wantCAS, wantErr)
			}
		}
		return desc
	case op < 18:
		err := s.Delete([]byte(key))
		desc := fmt.Sprintf("Delete(%q) = %v", key, err)
		if m != nil {
			_, ok := m.live(key, now)
			if (err == nil) != ok {
				t.Fatalf("%s, want found %v", desc, ok)
			}
			delete(m.items, key)
		}
		return desc
	case op < 19 && flushOneIn > 0 && r.IntN(flushOneIn) == 0:
		at := now
		if r.IntN(2) == 0 {
			at += int64(r.IntN(3000)) // ms
		}
		s.FlushAll(at)
		if m != nil {
			m.flushAt = 0
			if at > now {
				m.flushAt = at
			} else {
				clear(m.items)
			}
		}
		return fmt.Sprintf("FlushAll(now+%v)", time.Duration(at-now))
	default:
		d := time.Duration(r.IntN(1500)) * time.Millisecond
		time.Sleep(d)
		return fmt.Sprintf("Sleep(%v)", d)
	}
}

// TestRandomOpsMatchModel runs random operations, with TTLs, flushes and
// the sweeper on the fake clock, against the reference model, and checks
// the accounting after every one.
func TestRandomOpsMatchModel(t *testing.T) {
	var hits int
	var total Stats
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := New(Config{MaxItemSize: 160, SweepInterval: time.Second})
				defer s.Close()
				m := &model{items: map[string]modelItem{}, maxItem: 160}
				r := rand.New(rand.NewPCG(seed, 1))
				keys := []string{"a", "b", "c", "d", "e", "f"}
				for range 5000 {
					if desc := randomOp(t, r, s, m, keys, 4); strings.HasPrefix(desc, "Get(") && strings.HasSuffix(desc, "true") {
						hits++
					}
					synctest.Wait() // let a sweeper tick that woke with us finish
					checkInvariants(t, s)
				}
				st := s.Stats()
				total.TotalItems += st.TotalItems
				total.Reclaimed += st.Reclaimed
				total.GetExpired += st.GetExpired
				total.GetFlushed += st.GetFlushed
			})
		})
	}
	// Guard against a vacuous run: every path must have been taken.
	t.Logf("get hits %d, %+v", hits, total)
	if hits < 500 || total.TotalItems < 1000 || total.Reclaimed < 100 || total.GetExpired == 0 || total.GetFlushed == 0 {
		t.Errorf("the random runs exercised too little: get hits %d, %+v", hits, total)
	}
}

// TestRandomOpsAccountingUnderPressure: with a memory limit far below the
// data, with and without eviction, the accounting stays exact after every
// operation.
func TestRandomOpsAccountingUnderPressure(t *testing.T) {
	for _, noEvict := range []bool{false, true} {
		t.Run(fmt.Sprint("noEvict=", noEvict), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// 20 items of a 38-byte key and value: far below the data.
				s := New(Config{MemoryLimit: 20 * (ItemOverhead + 38), MaxItemSize: 200, NoEvict: noEvict, SweepInterval: 100 * time.Millisecond})
				defer s.Close()
				r := rand.New(rand.NewPCG(7, 7))
				var keys []string
				for i := range 100 {
					keys = append(keys, fmt.Sprint("key", i))
				}
				for range 5000 {
					randomOp(t, r, s, nil, keys, 0)
					synctest.Wait() // let a sweeper tick that woke with us finish
					checkInvariants(t, s)
				}
				if st := s.Stats(); noEvict && st.Evictions != 0 || !noEvict && st.Evictions == 0 {
					t.Errorf("Evictions = %d with NoEvict %v; %+v", st.Evictions, noEvict, st)
				}
			})
		})
	}
}

// TestConcurrentMixedOps hammers a small, full store from many goroutines
// (run it with -race) and checks the accounting at the end.
func TestConcurrentMixedOps(t *testing.T) {
	s := New(Config{MemoryLimit: 50 * 150, MaxItemSize: 300, SweepInterval: time.Millisecond})
	defer s.Close()
	var keys []string
	for i := range 200 {
		keys = append(keys, fmt.Sprint("key", i))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 99))
			for range 3000 {
				key := []byte(keys[r.IntN(len(keys))])
				switch op := r.IntN(10); {
				case op < 4:
					if it, ok := s.Get(key); ok && len(it.Value) > s.MaxValueLen(len(key)) {
						t.Errorf("Get(%q) returned %d bytes, more than can be stored", key, len(it.Value))
					}
				case op < 7:
					deadline := time.Now().Add(time.Duration(r.IntN(5)) * time.Millisecond).UnixMilli()
					if r.IntN(2) == 0 {
						deadline = 0
					}
					s.Store(Mode(r.IntN(int(ModeCAS)+1)), key, make([]byte, r.IntN(100)), 0, deadline, 0)
				case op < 8:
					s.Incr(key, 1, r.IntN(2) == 0)
				case op < 9:
					s.Delete(key)
				default:
					if r.IntN(50) == 0 {
						s.FlushAll(time.Now().Add(time.Duration(r.IntN(3)) * time.Millisecond).UnixMilli())
					}
					s.Touch(key, 0)
					s.Stats()
				}
			}
		})
	}
	wg.Wait()
	s.Close()
	checkInvariants(t, s)
	if st := s.Stats(); st.TotalItems == 0 {
		t.Errorf("Stats() = %+v after the run, want stores counted", st)
	}
}
