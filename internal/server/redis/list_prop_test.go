package redis

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// listWorkload runs every list write on a big list (past the listpack
// limits) and small ones, in two databases: pushes and pops (with
// counts, blocking ones, from scripts and MULTI), LSET, LREM, LTRIM at
// either end and in the middle, LINSERT, LMOVE and its kin.
func listWorkload(c interface{ Do(...string) string }, rnd *rand.Rand, n int) {
	for i := 0; i < n; i += 100 {
		args := []string{"RPUSH", "q"}
		for j := i; j < i+100 && j < n; j++ {
			args = append(args, "job"+strconv.Itoa(j))
		}
		c.Do(args...)
	}
	c.Do("RPUSH", "small", "a", "b", "c")
	for i := range 4 * n / 10 {
		v := "v" + strconv.Itoa(i)
		switch rnd.IntN(20) {
		case 0:
			c.Do("LPUSH", "q", v, v+"b")
		case 1:
			c.Do("RPUSH", "q", v)
		case 2:
			c.Do("LPOP", "q")
		case 3:
			c.Do("RPOP", "q", strconv.Itoa(rnd.IntN(3)+1))
		case 4:
			c.Do("LSET", "q", strconv.Itoa(rnd.IntN(50)), v)
		case 5:
			c.Do("LSET", "q", strconv.Itoa(-1-rnd.IntN(50)), v)
		case 6:
			c.Do("LREM", "q", strconv.Itoa(rnd.IntN(5)-2), "job"+strconv.Itoa(rnd.IntN(n)))
		case 7:
			c.Do("LTRIM", "q", strconv.Itoa(rnd.IntN(3)), strconv.Itoa(-1-rnd.IntN(3)))
		case 8:
			c.Do("LINSERT", "q", "BEFORE", "job"+strconv.Itoa(rnd.IntN(n)), v)
		case 9:
			c.Do("LMOVE", "q", "q2", "RIGHT", "LEFT")
		case 10:
			c.Do("RPOPLPUSH", "q2", "q")
		case 11:
			c.Do("BLPOP", "q", "0.1")
		case 12:
			c.Do("BLMOVE", "q", "q", "LEFT", "RIGHT", "0.1") // a rotation
		case 13:
			c.Do("LMPOP", "2", "nope", "q", "RIGHT", "COUNT", "2")
		case 14:
			c.Do("EVAL", "redis.call('RPUSH', KEYS[1], ARGV[1]); return redis.call('LPOP', KEYS[1])", "1", "q", v)
		case 15:
			c.Do("MULTI")
			c.Do("LPUSH", "q", v)
			c.Do("RPOP", "small")
			c.Do("RPUSH", "small", v)
			c.Do("EXEC")
		case 16:
			c.Do("SELECT", "2")
			c.Do("LPUSH", "q", v)
			c.Do("RPOP", "q")
			c.Do("RPUSH", "q", v)
			c.Do("SELECT", "0")
		case 17:
			c.Do("LPUSHX", "small", v)
			c.Do("RPUSHX", "nope", v)
		case 18:
			c.Do("LTRIM", "small", "0", "5")
		case 19:
			c.Do("LREM", "small", "0", "a")
		}
	}
}

var listKeys = []string{"q", "q2", "small", "nope"}

// TestListsReplicateCommands: a MiniKV primary in memory mode streams a
// list's change as the command that makes it (LPUSH, RPOP, LSET, LREM,
// LTRIM, LMOVE as RPOP and LPUSH ...), not the whole list: seven changes
// of a 3 000-element list add under 1 000 bytes to the replication stream; a redis-server replica
// and a MiniKV replica end with the primary's lists after every kind of
// list write.
func TestListsReplicateCommands(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	host, port, _ := net.SplitHostPort(rs.respAddr)
	c := dialRESP(t, rs.respAddr)
	c.Do("RPUSH", "q", "before", "the", "replicas") // carried by the full syncs
	redisReplica, mkReplica := twoReplicas(t, host, port)
	listWorkload(c, rand.New(rand.NewPCG(6, 60)), 3000)

	off := func() int64 {
		n, _ := strconv.ParseInt(infoField(t, rs.respAddr, "replication", "master_repl_offset"), 10, 64)
		return n
	}
	before := off()
	for _, cmd := range [][]string{{"LPUSH", "q", "one"}, {"RPUSH", "q", "two"}, {"LPOP", "q"}, {"RPOP", "q"},
		{"LSET", "q", "10", "x"}, {"LTRIM", "q", "1", "-1"}, {"LMOVE", "q", "q2", "RIGHT", "LEFT"}} {
		c.Do(cmd...)
	}
	if grew := off() - before; grew > 1000 {
		t.Errorf("seven changes of a 3 000-element list grew the replication stream by %d bytes", grew)
	}
	want := fmt.Sprint(off())
	for _, r := range []string{redisReplica, mkReplica} {
		waitFor(t, "the replica "+r+" to catch up", func() bool {
			return infoField(t, r, "replication", "slave_repl_offset") == want
		})
		rc := dialRESP(t, r)
		for _, db := range []string{"0", "2"} {
			c.Do("SELECT", db)
			rc.Do("SELECT", db)
			for _, k := range listKeys {
				if w, g := collState(c, k), collState(rc, k); g != w {
					t.Errorf("db %s key %s: replica %s\n%.2000q\nprimary\n%.2000q", db, k, r, g, w)
				}
			}
		}
		c.Do("SELECT", "0")
	}
}

// TestListFullSyncUnderWrites: replicas that resync fully while lists
// are pushed, popped, moved and trimmed on every connection end with the
// primary's lists. A list's commands change the state again when applied
// twice, so this holds only because the snapshot is the store at exactly
// the offset +FULLRESYNC names (replication.Source.Mark).
func TestListFullSyncUnderWrites(t *testing.T) {
	// Writes go on for 100 ms between a full resync's start and its
	// snapshot: a stream marked before the snapshot would apply them
	// twice.
	testHookBeforeSync = func() { time.Sleep(100 * time.Millisecond) }
	t.Cleanup(func() { testHookBeforeSync = nil })
	rs := startRESP(t, server.Config{}, store.Config{})
	host, port, _ := net.SplitHostPort(rs.respAddr)
	var n atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	const writers = 3
	for w := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			c := dialRESP(t, rs.respAddr)
			rnd := rand.New(rand.NewPCG(7, uint64(w)))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n.Add(1)
				v := fmt.Sprintf("w%d-%d", w, i)
				switch rnd.IntN(8) {
				case 0, 1, 2:
					c.Do("LPUSH", "q", v)
				case 3:
					c.Do("RPOP", "q")
				case 4:
					c.Do("LMOVE", "q", "done", "RIGHT", "LEFT")
				case 5:
					c.Do("LTRIM", "done", "0", "499")
				case 6:
					c.Do("MULTI")
					c.Do("RPUSH", "q", v)
					c.Do("LPOP", "done")
					c.Do("EXEC")
				case 7:
					c.Do("LREM", "q", "1", fmt.Sprintf("w%d-%d", w, rnd.IntN(i+1)))
				}
			}
		}()
	}
	waitFor(t, "the writers to begin", func() bool { return n.Load() > 3000 })
	redisReplica, mkReplica := twoReplicas(t, host, port)
	at := n.Load()
	waitFor(t, "3 000 more writes", func() bool { return n.Load() > at+3000 })
	close(stop)
	for range writers {
		<-done
	}
	c := dialRESP(t, rs.respAddr)
	// One full resync each: a replica that applied some writes twice
	// would fail on a command of its stream and resync again and again
	// until the writes stop, ending equal.
	if got := infoField(t, rs.respAddr, "stats", "sync_full"); got != "2" {
		t.Errorf("sync_full = %s, want 2", got)
	}
	want := infoField(t, rs.respAddr, "replication", "master_repl_offset")
	for _, r := range []string{redisReplica, mkReplica} {
		waitFor(t, "the replica "+r+" to catch up", func() bool {
			return infoField(t, r, "replication", "slave_repl_offset") == want
		})
		rc := dialRESP(t, r)
		for _, k := range []string{"q", "done"} {
			if w, g := collState(c, k), collState(rc, k); g != w {
				t.Errorf("key %s: replica %s\n%.2000q\nprimary\n%.2000q", k, r, g, w)
			}
		}
	}
}
