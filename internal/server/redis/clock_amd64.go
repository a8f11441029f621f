package redis

const haveTSC = true

// rdtsc reads the CPU's time-stamp counter.
func rdtsc() int64
