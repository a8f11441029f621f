//go:build race

package lsm

// raceEnabled shortens the model test under the race detector, which slows
// it about tenfold.
const raceEnabled = true
