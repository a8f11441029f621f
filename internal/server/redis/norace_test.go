//go:build !race

package redis

const raceEnabled = false
