package script

import "math"

// rand48 is Redis's redisLrand48 (rand.c): the 48-bit linear
// congruential generator of POSIX lrand48, so math.random gives a script
// the same sequence as Redis does for the same seed.
type rand48 struct{ x uint64 }

const lrand48Max = math.MaxInt32 // REDIS_LRAND48_MAX

func (r *rand48) seed(s int32) { r.x = uint64(uint32(s))<<16 | 0x330e }

// next returns the next 31-bit value.
func (r *rand48) next() uint64 {
	r.x = (0x5deece66d*r.x + 0xb) & (1<<48 - 1)
	return r.x >> 17
}

func floor(f float64) float64 { return math.Floor(f) }
