package redis

import (
	"math"
	"math/rand/v2"

	"github.com/minikv/minikv/internal/protocol/resp"
)

// Random picks with repetition (SRANDMEMBER, HRANDFIELD and ZRANDMEMBER
// with a negative count) can ask for far more elements than the
// collection holds: "SRANDMEMBER k -2147483647" on a one-member set is a
// 2^31-element reply. Written inside the key's read view, on an event
// loop, such a reply is built whole in memory (the loop keeps what the
// socket does not take) while the loop serves no other connection;
// Redis itself builds it in its output buffer until it runs out of
// memory. MiniKV copies the collection (no more elements than the reply
// has) under the view and writes the picks after it, from the
// connection's own goroutine (bigRandReply sends the command there), so
// the reply leaves as fast as the client reads it, in bounded memory,
// and nothing else waits on it.

// bigRandPicks is the number of picks above which a reply with
// repetition is written that way.
const bigRandPicks = 4096

// maxHeldPicks bounds the picks with repetition of a command inside
// EXEC or a script, whose replies are kept in memory until the end
// (EXEC's until the transaction is over, a script's for Lua): beyond
// it the command is refused rather than let one client exhaust the
// server's memory, as the same command does to Redis.
const maxHeldPicks = 1 << 20

// refuseHeldPicks answers the refusal of a count below -maxHeldPicks
// inside EXEC or a script, and reports it.
func (rc *conn) refuseHeldPicks(count int64) bool {
	inScript := rc.script != nil && rc.w == rc.script.w
	if count >= -maxHeldPicks || !rc.inExec() && !inScript {
		return false
	}
	rc.w.Error("ERR count is out of range: at most 1048576 random picks with repetition inside MULTI or a script")
	return true
}

// bigRandReply reports whether argv is such a command with a count
// below -bigRandPicks: dispatch runs it on the connection's goroutine.
func bigRandReply(cmd *respCommand, argv [][]byte) bool {
	if !cmd.randPicks || len(argv) < 3 {
		return false
	}
	n, ok := resp.ParseInt(argv[2])
	return ok && n < -bigRandPicks
}

// isRandPicks reports whether name is a command bigRandReply looks at
// (table.go sets respCommand.randPicks from it once).
func isRandPicks(name string) bool {
	return name == "srandmember" || name == "hrandfield" || name == "zrandmember"
}

// randPicks is the number of picks a negative count asks for (at most
// 2^31-1, as MiniKV caps it) and whether they are written from a copy
// (n elements in the collection).
func randPicks(count int64, n int) (k int, copied bool) {
	k = int(min(-count, math.MaxInt32))
	return k, k > bigRandPicks && k > n
}

// writeRandPicks writes k picks with repetition of n copied elements,
// each written by one(i), flushing as it goes; it stops when a write
// fails (the client went away, the server shuts down) and the
// connection then closes.
func (rc *conn) writeRandPicks(k, n int, one func(i int)) {
	for j := range k {
		one(rand.IntN(n))
		if j%1024 == 1023 {
			if err := rc.w.Flush(); err != nil {
				rc.quit = true
				return
			}
		}
	}
}
