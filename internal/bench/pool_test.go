package bench

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nullPool starts n null servers and returns them as a pool.
func nullPool(t *testing.T, n int, mode string) *Pool {
	t.Helper()
	var servers []PoolServer
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ServeNull(ctx, ln, 8) }()
		t.Cleanup(func() { cancel(); <-done })
		port := ln.Addr().(*net.TCPAddr).Port
		servers = append(servers, PoolServer{Host: "127.0.0.1", Port: port, Weight: 1})
	}
	p, err := NewPool(mode, servers)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPoolSendsEachKeyToItsServer writes a fixed set of keys through a
// pooled session and checks each server was asked for exactly the keys the
// ring gives it, and that the per-server counts add up to the aggregate.
func TestPoolSendsEachKeyToItsServer(t *testing.T) {
	for _, mode := range HashModes {
		t.Run(mode, func(t *testing.T) {
			pool := nullPool(t, 3, mode)
			w := &Workload{Keys: 3000, ValueSize: 8, Ratio: Ratio{Set: 1, Get: 1}}
			if err := w.Init(); err != nil {
				t.Fatal(err)
			}
			tgt := Target{Name: "pool", Proto: Memcache{}, Pool: pool}
			s, err := Connect(context.Background(), tgt, w, 4, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := s.Run(context.Background(), Phase{Label: "fill", Pipeline: 16, Keys: SplitKeys(0, w.Keys, 4), Op: OpSet})
			if r.Errors != 0 || r.Ops != int64(w.Keys) {
				t.Fatalf("fill: %d ops, %d errors (%s)", r.Ops, r.Errors, r.FirstErr)
			}
			want := make([]int64, 3)
			for k := range w.Keys {
				want[pool.Ring.Pick(w.AppendKey(nil, k))]++
			}
			if len(r.Servers) != 3 {
				t.Fatalf("servers: %+v", r.Servers)
			}
			for g, so := range r.Servers {
				if so.Keys != want[g] || so.Ops != want[g] || so.Errors != 0 {
					t.Errorf("server %d (%s): %+v, want %d keys", g, so.Addr, so, want[g])
				}
				if so.Keys < int64(w.Keys)/10 {
					t.Errorf("server %d got %d of %d keys: not spread", g, so.Keys, w.Keys)
				}
			}
		})
	}
}

// TestPoolMultiGetSplits checks a multi-key get is split per server and
// merged back: every key hits (the null server has them all), each request
// counts once, and the servers were asked for every key between them.
func TestPoolMultiGetSplits(t *testing.T) {
	pool := nullPool(t, 3, HashKetama)
	w := &Workload{Keys: 1000, ValueSize: 8, Ratio: Ratio{Set: 0, Get: 1}, MultiGet: 7}
	if err := w.Init(); err != nil {
		t.Fatal(err)
	}
	// The null server speaks only the memcached protocol; RESP pools run
	// against MiniKV in cmd/minikv-bench's tests.
	for _, proto := range []Proto{Memcache{}} {
		s, err := Connect(context.Background(), Target{Name: "pool", Proto: proto, Pool: pool}, w, 3, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r := s.Run(context.Background(), Phase{Label: "mixed", Pipeline: 4, Requests: 900})
		s.Close()
		if r.Ops != 900 || r.Errors != 0 || r.Hits != 900*7 || r.Misses != 0 {
			t.Fatalf("%s: ops %d errors %d (%s) hits %d misses %d", proto.Name(), r.Ops, r.Errors, r.FirstErr, r.Hits, r.Misses)
		}
		var keys, ops int64
		for _, so := range r.Servers {
			keys += so.Keys
			ops += so.Ops
		}
		if keys != 900*7 {
			t.Errorf("servers were asked for %d keys, want %d", keys, 900*7)
		}
		// Seven keys over three servers: most gets touch more than one.
		if ops <= 900 || ops > 900*3 {
			t.Errorf("%d per-server gets for 900 requests", ops)
		}
		m := Median([]*Result{r, r})
		if len(m.Servers) != 3 || m.Servers[0].Keys != r.Servers[0].Keys {
			t.Errorf("median lost the per-server counts: %+v", m.Servers)
		}
		sum := Merge(r, r)
		if len(sum.Servers) != 3 || sum.Servers[1].Ops != 2*r.Servers[1].Ops {
			t.Errorf("merge: %+v", sum.Servers)
		}
	}
}

// TestPoolServerDown: a pool with a server that refuses connections fails
// to connect, naming it.
func TestPoolServerDown(t *testing.T) {
	pool := nullPool(t, 2, HashModula)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pool.Servers = append(pool.Servers, PoolServer{Host: "127.0.0.1", Port: dead, Weight: 1})
	pool.Ring, _ = NewRing(HashModula, pool.Servers)
	w := &Workload{Keys: 10}
	if err := w.Init(); err != nil {
		t.Fatal(err)
	}
	_, err = Connect(context.Background(), Target{Name: "pool", Proto: Memcache{}, Pool: pool}, w, 1, time.Second)
	if err == nil {
		t.Fatal("connected to a pool with a dead server")
	}
	if want := "127.0.0.1:" + strconv.Itoa(dead); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %s", err, want)
	}
}
