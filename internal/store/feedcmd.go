package store

import (
	"math"
	"strconv"
)

// record appends the command name key args (the key as its database
// names it) to the call's commands for the Feed, when a Feed takes the
// call's changes: a hash's, set's or sorted set's change as the Redis
// command that makes it, one that a replica may apply again over a later
// state without changing it (HSET, HDEL, SADD, SREM, ZADD with the
// member's score, ZREM). A call whose changes were all recorded reaches
// the Feed as its commands (Feed.Commands) instead of the collection's
// whole state; any other change (unrecorded) sends the whole state.
func (c *coll) record(name string, args ...[]byte) {
	if !c.feeding {
		return
	}
	_, key := SplitDBKey(c.key)
	b := append(c.props, '*')
	b = strconv.AppendInt(b, int64(2+len(args)), 10)
	b = appendBulk(append(b, '\r', '\n'), name)
	b = appendBulk(b, key)
	for _, a := range args {
		b = appendBulk(b, a)
	}
	c.props = b
	c.propN++
}

// exact reports whether the call may record commands that change a
// state again when applied twice (a list's LPUSH, RPOP ...): a Feed
// takes them and the store is in memory, where a full resync's snapshot
// is one instant at the stream's mark, so no command is applied twice
// (replication.Source.Mark). A durable store's snapshot walks the disk
// while the replica's stream begins before it: its lists go whole.
func (c *coll) exact() bool { return c.feeding && c.s.disk == nil }

// sideCmd is left's command name or right's.
func sideCmd(left bool, l, r string) string {
	if left {
		return l
	}
	return r
}

// appendBulk appends s as a RESP bulk string.
func appendBulk[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// formatScore appends score as ZADD reads it back to the same double:
// 17 significant digits, inf and -inf.
func formatScore(b []byte, score float64) []byte {
	switch {
	case math.IsInf(score, 1):
		return append(b, "inf"...)
	case math.IsInf(score, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, score, 'g', 17, 64)
}
