package redis

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/minikv/minikv/internal/durable"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/servertest"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

// startDurableLoops is startDurableOnMem with loops event loops.
func startDurableLoops(t *testing.T, loops int) (respAddr string, l *durable.Log) {
	t.Helper()
	l, err := durable.Open("/data", lsm.Options{FS: vfs.NewMem(), Sync: lsm.SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	st, err := store.Open(store.Config{MaxItemSize: 1 << 20}, l)
	if err != nil {
		t.Fatal(err)
	}
	s := servertest.StartOn(t, server.Config{EventLoops: loops}, st)
	return s.Listen(t, New(s.Server)), l
}

// committed reports whether the engine under l (not its queue) holds key
// (the Log's keys are the store's with the prefix 'k').
func committed(t *testing.T, l *durable.Log, key string) bool {
	t.Helper()
	_, err := l.DB().Get([]byte("k" + key))
	if err != nil && !errors.Is(err, lsm.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// TestDurableBusyScript: in durable mode, while a script that has written
// runs past busy-reply-threshold, other clients get -BUSY and
// -UNKILLABLE while it runs, as in cache mode; their replies once waited
// for the script's end, since every reply waited for every queued change.
func TestDurableBusyScript(t *testing.T) {
	for _, loops := range []int{0, 1} {
		t.Run(fmt.Sprint("event loops ", loops), func(t *testing.T) {
			addr, _ := startDurableLoops(t, loops)
			a, b := dialRESP(t, addr), dialRESP(t, addr)
			b.Expect(multibulk("CONFIG", "SET", "busy-reply-threshold", "20"), "+OK\r\n")
			b.Expect(multibulk("SET", "before", "1"), "+OK\r\n")
			// It writes, then runs for 3 s of the clock.
			a.Send(multibulk("EVAL", "redis.call('set', KEYS[1], 'x') "+spinFor(3000)+"return 'done'", "1", "w"))
			ended := make(chan string, 1)
			go func() { ended <- a.Reply() }()
			for {
				got := b.Do("PING")
				if got == "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n" {
					break
				}
				if got != "+PONG\r\n" {
					t.Fatalf("PING while the script runs = %q", got)
				}
				select {
				case r := <-ended:
					t.Fatalf("the script ended (%q) before any reply said BUSY", r)
				default:
				}
			}
			if got := b.Do("SCRIPT", "KILL"); !strings.HasPrefix(got, "-UNKILLABLE ") {
				t.Errorf("SCRIPT KILL of a script that wrote = %q", got)
			}
			select {
			case r := <-ended:
				t.Fatalf("the script ended (%q) before the other client's replies", r)
			default:
			}
			if r := <-ended; r != "$4\r\ndone\r\n" {
				t.Errorf("the script's reply = %q", r)
			}
			b.Expect(multibulk("GET", "w"), "$1\r\nx\r\n")
		})
	}
}

// TestDurableExclusiveBigReply: in durable mode, an EXEC and pipelined
// scripts that write and then reply more than the connection's write
// buffer holds get their replies; the reply that overflowed the buffer
// once waited for the end of the section it was written from: the
// server stopped for good. No such reply leaves before the changes it
// follows are durable.
func TestDurableExclusiveBigReply(t *testing.T) {
	for _, loops := range []int{0, 1} {
		t.Run(fmt.Sprint("event loops ", loops), func(t *testing.T) {
			addr, l := startDurableLoops(t, loops)
			c, other := dialRESP(t, addr), dialRESP(t, addr)
			big := strings.Repeat("v", 3*server.WriteBufSize)
			bulk := fmt.Sprintf("$%d\r\n%s\r\n", len(big), big)
			c.Expect(multibulk("SET", "big", big), "+OK\r\n")
			c.Expect(multibulk("MULTI")+multibulk("SET", "a", "1")+multibulk("GET", "big")+multibulk("GET", "big")+multibulk("EXEC"),
				"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "*3\r\n+OK\r\n"+bulk+bulk)
			script := multibulk("EVAL", "redis.call('incr', 'n') return redis.call('get', 'big')", "0")
			c.Expect(script+script+script, bulk, bulk, bulk)
			other.Expect(multibulk("GET", "n"), "$1\r\n3\r\n")

			// A script that writes and overflows the buffer, pipelined with
			// one that runs for a second: the first's reply must not leave
			// while the second holds the store, before its write is durable.
			spin := multibulk("EVAL", spinFor(1000)+"return 1", "0")
			c.Send(multibulk("EVAL", "redis.call('set', KEYS[1], 'x') return redis.call('get', 'big')", "1", "w") + spin)
			if got := c.Reply(); got != bulk {
				t.Fatalf("the first script's reply = %.40q", got)
			}
			if !committed(t, l, "w") {
				t.Error("the reply of a script that wrote w left before w was durable")
			}
			c.Expect("", ":1\r\n")

			// The same inside EXEC: the reply's first bytes leave only once
			// the transaction's write is durable.
			c.Expect(multibulk("MULTI")+multibulk("SET", "w2", "x")+multibulk("GET", "big")+spin, "+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "+QUEUED\r\n")
			c.Send(multibulk("EXEC"))
			if _, err := c.R.Peek(1); err != nil {
				t.Fatal(err)
			}
			if !committed(t, l, "w2") {
				t.Error("EXEC's reply began before the transaction's write was durable")
			}
			if got := c.Reply(); got != "*3\r\n+OK\r\n"+bulk+":1\r\n" {
				t.Errorf("EXEC = %.60q", got)
			}
		})
	}
}
