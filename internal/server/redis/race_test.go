//go:build race

package redis

// raceEnabled: the race detector makes sync.Pool drop what is put in it
// now and then, so allocation counts that rely on a pool are checked
// only without it (as in internal/store).
const raceEnabled = true
