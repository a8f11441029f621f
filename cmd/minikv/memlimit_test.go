package main

import (
	"fmt"
	"math"
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
		{128 << 20, 200 << 20, 32 << 20},         // the floor: a quarter
		{math.MaxInt64, 40 << 20, math.MaxInt64}, // no limit stays none
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

// TestSoftMemoryLimitLiftedWithoutLimit: the Go heap's soft limit is off
// (math.MaxInt64) while MiniKV runs without a memory limit, from
// --memory-limit 0 or from CONFIG SET maxmemory 0, and follows a limit
// set again.
func TestSoftMemoryLimitLiftedWithoutLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	port, respPort := freePort(t), freePort(t)
	stop := startRun(t, []string{"-p", strconv.Itoa(port), "--resp-port", strconv.Itoa(respPort), "--memory-limit", "0"}, nil)
	addr := "127.0.0.1:" + strconv.Itoa(respPort)
	waitDial(t, addr)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("Go memory limit with --memory-limit 0 = %d, want math.MaxInt64", got)
	}
	c := dialLines(t, addr)
	if got := c.do("*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$9\r\nmaxmemory\r\n", 5); got[4] != "0" {
		t.Errorf("CONFIG GET maxmemory = %q, want 0", got)
	}
	waitLimit := func(want int64) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); debug.SetMemoryLimit(-1) != want; {
			if time.Now().After(deadline) {
				t.Fatalf("Go memory limit = %d, want %d", debug.SetMemoryLimit(-1), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got := c.do("*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$9\r\nmaxmemory\r\n$4\r\n64mb\r\n", 1); got[0] != "+OK" {
		t.Fatalf("CONFIG SET maxmemory 64mb: %q", got)
	}
	waitLimit(softMemoryLimit(64<<20, false))
	if got := c.do("*4\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n", 1); got[0] != "+OK" {
		t.Fatalf("CONFIG SET maxmemory 0: %q", got)
	}
	waitLimit(math.MaxInt64)
	stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("Go memory limit after the server stopped = %d, want the earlier %d", got, before)
	}
}
