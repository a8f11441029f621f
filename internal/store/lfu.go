package store

import "math/rand/v2"

// LFU mode: Redis's allkeys-lfu access state.
//
// In LFU mode (SetLFU) a record's 32-bit access-time field holds Redis's
// LFU word instead of the last access in seconds, as Redis reuses its
// objects' 24-bit lru field:
//
//	bits 8-31  ldt: the time of the last decrement or use, in Unix minutes
//	           modulo 2^24 (Redis keeps 16 bits, wrapping after 45 days;
//	           24 bits wrap after 31 years)
//	bits 0-7   counter: a logarithmic access count, LFU_INIT_VAL (5) for
//	           a new item, raised by a use with probability
//	           1/((counter-5)*lfu-log-factor+1), saturating at 255
//
// Reading the counter decays it first by one per lfu-decay-time minutes
// since ldt (Redis's LFUDecrAndReturn); a use stores the decayed counter,
// possibly raised, with ldt set to now (updateLFU). Switching the mode at
// run time leaves the items' words as they were, read the other way until
// each is next used or written, as in Redis.
//
// The eviction walk in LFU mode (evict.go) evicts a record whose decayed
// counter is at or below lfuInitVal and gives one above it a second chance,
// halving its distance to lfuInitVal.

// lfuInitVal is the counter of a new item (Redis's LFU_INIT_VAL).
const lfuInitVal = 5

// lfuMinutesMask keeps ldt's 24 bits.
const lfuMinutesMask = 1<<24 - 1

// SetLFU turns LFU mode on or off (Redis's maxmemory-policy allkeys-lfu
// against allkeys-lru and noeviction). Items keep their access words; see
// above.
func (s *Store) SetLFU(on bool) { s.lfu.Store(on) }

// LFU reports whether the store is in LFU mode.
func (s *Store) LFU() bool { return s.lfu.Load() }

// SetLFUParams sets lfu-log-factor and lfu-decay-time (minutes). Negative
// values are taken as 0.
func (s *Store) SetLFUParams(logFactor, decayTime int64) {
	s.lfuLogFactor.Store(max(logFactor, 0))
	s.lfuDecayTime.Store(max(decayTime, 0) + 1)
}

// lfuDecay is lfu-decay-time, 1 when never set.
func (s *Store) lfuDecay() int64 {
	if d := s.lfuDecayTime.Load(); d > 0 {
		return d - 1
	}
	return 1
}

// lfuFactor is lfu-log-factor, 10 when never set.
func (s *Store) lfuFactor() int64 {
	if s.lfuDecayTime.Load() == 0 {
		return 10
	}
	return s.lfuLogFactor.Load()
}

// lfuMinutes is the time in Unix minutes, modulo 2^24.
func lfuMinutes(sec uint32) uint32 { return sec / 60 & lfuMinutesMask }

// lfuWord packs ldt and a counter.
func lfuWord(min uint32, counter uint8) uint32 { return min<<8 | uint32(counter) }

// lfuDecayed is word's counter decayed to sec (Redis's LFUDecrAndReturn).
func (s *Store) lfuDecayed(word, sec uint32) uint8 {
	counter := uint32(word & 0xff)
	d := s.lfuDecay()
	if d == 0 {
		return uint8(counter)
	}
	elapsed := (lfuMinutes(sec) - word>>8) & lfuMinutesMask
	periods := int64(elapsed) / d
	if periods >= int64(counter) {
		return 0
	}
	return uint8(counter - uint32(periods))
}

// lfuIncr raises a counter by one with Redis's probability (LFULogIncr).
func (s *Store) lfuIncr(counter uint8) uint8 {
	if counter == 255 {
		return 255
	}
	base := float64(counter) - lfuInitVal
	if base < 0 {
		base = 0
	}
	p := 1 / (base*float64(s.lfuFactor()) + 1)
	if rand.Float64() < p {
		counter++
	}
	return counter
}

// stamp is the access word a record written or used now gets: the time
// in seconds, or in LFU mode the LFU word of a new item (used == nil) or
// of one more use of used (its word decayed and raised).
func (s *Store) stamp(used *entry, clk *clock) uint32 {
	sec := s.nowSec(clk)
	if !s.lfu.Load() {
		return sec
	}
	return s.lfuStamp(used, sec)
}

func (s *Store) lfuStamp(used *entry, sec uint32) uint32 {
	if used == nil {
		return lfuWord(lfuMinutes(sec), lfuInitVal)
	}
	return lfuWord(lfuMinutes(sec), s.lfuIncr(s.lfuDecayed(used.atime, sec)))
}

// idleOf is the seconds since e's last use: from the access time, or in
// LFU mode from ldt, in whole minutes.
func (s *Store) idleOf(e *entry, clk *clock) int64 {
	sec := s.nowSec(clk)
	if s.lfu.Load() {
		return int64((lfuMinutes(sec)-e.atime>>8)&lfuMinutesMask) * 60
	}
	return max(int64(sec)-int64(e.atime), 0)
}

// freqOf is what Object reports as Freq: the decayed LFU counter in LFU
// mode, else the eviction walk's access count (0-3).
func (s *Store) freqOf(e *entry, clk *clock) uint8 {
	if s.lfu.Load() {
		return s.lfuDecayed(e.atime, s.nowSec(clk))
	}
	return e.freq()
}

// lfuAged is the counter the eviction walk leaves a record it spares:
// the distance above lfuInitVal halved.
func lfuAged(counter uint8) uint8 {
	return lfuInitVal + (counter-lfuInitVal)/2
}
