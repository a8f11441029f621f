//go:build race

package store

// raceEnabled: the race detector makes sync.Pool drop what is put in it
// now and then, so allocation counts that rely on a pool (the S2
// compressor's tables) are not checked under it.
const raceEnabled = true
