package redis

import (
	"os"
	"runtime"
	"time"
)

// opsClock is the clock command durations are measured on (conn.call
// reads it about once per command). On amd64 Linux, where the kernel keeps
// time by the CPU's constant time-stamp counter, it reads that counter
// directly: one RDTSC instruction costs less than half of Go's monotonic
// clock (a vDSO call on the system stack). Elsewhere it reads the
// monotonic clock. Readings only make sense as differences, which ns
// turns into nanoseconds.
type opsClock struct {
	epoch     time.Time // the monotonic clock's zero
	tsc       bool      // readings are time-stamp counter ticks
	nsPerTick float64   // the counter's period, measured at start
}

func (c *opsClock) init() {
	c.epoch = time.Now()
	if !haveTSC || runtime.GOOS != "linux" {
		return
	}
	// The kernel's choice says the counter is constant and synchronised
	// across CPUs (it checks, and falls back to another clock if not).
	if b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource"); err != nil || string(b) != "tsc\n" {
		return
	}
	t0, m0 := rdtsc(), time.Now()
	time.Sleep(time.Millisecond)
	t1, m1 := rdtsc(), time.Now()
	if p := float64(m1.Sub(m0)) / float64(t1-t0); t1 > t0 && p > 0.01 && p < 100 {
		c.tsc, c.nsPerTick = true, p
	}
}

// now is a reading of the clock.
func (c *opsClock) now() int64 {
	if c.tsc {
		return rdtsc()
	}
	return int64(time.Since(c.epoch)) // the monotonic clock only
}

// ns is the difference d of two readings in nanoseconds.
func (c *opsClock) ns(d int64) int64 {
	if c.tsc {
		return int64(float64(d) * c.nsPerTick)
	}
	return d
}
