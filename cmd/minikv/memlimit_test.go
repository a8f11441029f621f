package main

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHeapLimit(t *testing.T) {
	for _, tc := range []struct{ lim, mapped, want int64 }{
		{128 << 20, 0, 128 << 20},
		{128 << 20, 40 << 20, 88 << 20},
		{128 << 20, 200 << 20, 32 << 20}, // the floor: a quarter
	} {
		if got := heapLimit(tc.lim, tc.mapped); got != tc.want {
			t.Errorf("heapLimit(%d, %d) = %d, want %d", tc.lim, tc.mapped, got, tc.want)
		}
	}
}

// TestSoftMemoryLimitFollowsOffHeap: a big hash's table, mapped outside
// the Go heap, lowers the heap's soft limit by its size while it lives,
// and DEL gives it back; the process's own limit is restored at the end.
func TestSoftMemoryLimitFollowsOffHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	soft := softMemoryLimit(64<<20, false)
	port, respPort := freePort(t), freePort(t)
	stop := startRun(t, []string{"-p", strconv.Itoa(port), "--resp-port", strconv.Itoa(respPort), "-m", "64"}, nil)
	addr := "127.0.0.1:" + strconv.Itoa(respPort)
	waitDial(t, addr)
	c := dialLines(t, addr)
	for i := 0; i < 300_000; i += 1000 {
		var b strings.Builder
		fmt.Fprintf(&b, "*2002\r\n$4\r\nHSET\r\n$1\r\nh\r\n")
		for j := i; j < i+1000; j++ {
			f := "field:" + strconv.Itoa(j)
			fmt.Fprintf(&b, "$%d\r\n%s\r\n$%d\r\n%s\r\n", len(f), f, len(f), f)
		}
		if got := c.do(b.String(), 1)[0]; got != ":1000" {
			t.Fatalf("HSET = %s", got)
		}
	}
	waitLimit := func(ok func(int64) bool, what string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(debug.SetMemoryLimit(-1)); {
			if time.Now().After(deadline) {
				t.Fatalf("Go memory limit = %d (soft limit %d): want %s", debug.SetMemoryLimit(-1), soft, what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitLimit(func(l int64) bool { return l <= soft-8<<20 }, "at least 8 MiB lower with a 300k-field hash")
	if got := c.do("*2\r\n$3\r\nDEL\r\n$1\r\nh\r\n", 1)[0]; got != ":1" {
		t.Fatalf("DEL = %s", got)
	}
	waitLimit(func(l int64) bool { return l == soft }, "the whole soft limit again after DEL")
	stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("Go memory limit after the server stopped = %d, want the earlier %d", got, before)
	}
}
