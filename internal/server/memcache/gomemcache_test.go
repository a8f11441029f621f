package memcache

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestGomemcache drives a running MiniKV with bradfitz/gomemcache, the Go
// client most Go shops use, through every call it has.
func TestGomemcache(t *testing.T) {
	ts := startServer(t, server.Config{}, store.Config{})
	mc := memcache.New(ts.addr)
	mc.Timeout = 10 * time.Second

	if err := mc.Ping(); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	item := &memcache.Item{Key: "k1", Value: []byte("v1"), Flags: 42}
	if err := mc.Set(item); err != nil {
		t.Fatalf("Set: %v", err)
	}
	got, err := mc.Get("k1")
	if err != nil || string(got.Value) != "v1" || got.Flags != 42 {
		t.Fatalf("Get(k1) = %+v, %v; want v1 flags 42", got, err)
	}
	if _, err := mc.Get("missing"); !errors.Is(err, memcache.ErrCacheMiss) {
		t.Errorf("Get(missing) err = %v, want ErrCacheMiss", err)
	}

	if err := mc.Add(&memcache.Item{Key: "k1", Value: []byte("x")}); !errors.Is(err, memcache.ErrNotStored) {
		t.Errorf("Add(existing) = %v, want ErrNotStored", err)
	}
	if err := mc.Add(&memcache.Item{Key: "k2", Value: []byte("two")}); err != nil {
		t.Errorf("Add(new) = %v", err)
	}
	if err := mc.Replace(&memcache.Item{Key: "nokey", Value: []byte("x")}); !errors.Is(err, memcache.ErrNotStored) {
		t.Errorf("Replace(missing) = %v, want ErrNotStored", err)
	}
	if err := mc.Replace(&memcache.Item{Key: "k2", Value: []byte("TWO")}); err != nil {
		t.Errorf("Replace = %v", err)
	}
	if err := mc.Append(&memcache.Item{Key: "k2", Value: []byte("++")}); err != nil {
		t.Errorf("Append = %v", err)
	}
	if err := mc.Prepend(&memcache.Item{Key: "k2", Value: []byte("--")}); err != nil {
		t.Errorf("Prepend = %v", err)
	}
	if got, _ := mc.Get("k2"); got == nil || string(got.Value) != "--TWO++" {
		t.Errorf("after append/prepend Get(k2) = %+v, want --TWO++", got)
	}

	// GetMulti uses gets: values, flags and CAS tokens for hits only.
	m, err := mc.GetMulti([]string{"k1", "k2", "missing"})
	if err != nil || len(m) != 2 || string(m["k1"].Value) != "v1" || string(m["k2"].Value) != "--TWO++" {
		t.Fatalf("GetMulti = %v, %v", m, err)
	}

	// CompareAndSwap: succeeds with a fresh token, fails with a stale one.
	it, _ := mc.Get("k1")
	stale := *it
	it.Value = []byte("v1-cas")
	if err := mc.CompareAndSwap(it); err != nil {
		t.Fatalf("CompareAndSwap(fresh) = %v", err)
	}
	stale.Value = []byte("lost")
	if err := mc.CompareAndSwap(&stale); !errors.Is(err, memcache.ErrCASConflict) {
		t.Errorf("CompareAndSwap(stale) = %v, want ErrCASConflict", err)
	}
	if got, _ := mc.Get("k1"); string(got.Value) != "v1-cas" {
		t.Errorf("after cas Get(k1) = %q", got.Value)
	}
	_ = mc.Delete("k1")
	if err := mc.CompareAndSwap(it); !errors.Is(err, memcache.ErrNotStored) && !errors.Is(err, memcache.ErrCacheMiss) {
		t.Errorf("CompareAndSwap(deleted) = %v, want a miss", err)
	}

	if err := mc.Set(&memcache.Item{Key: "n", Value: []byte("10")}); err != nil {
		t.Fatal(err)
	}
	if v, err := mc.Increment("n", 5); err != nil || v != 15 {
		t.Errorf("Increment = %d, %v; want 15", v, err)
	}
	if v, err := mc.Decrement("n", 100); err != nil || v != 0 {
		t.Errorf("Decrement = %d, %v; want 0 (floored)", v, err)
	}
	if _, err := mc.Increment("nokey", 1); !errors.Is(err, memcache.ErrCacheMiss) {
		t.Errorf("Increment(missing) = %v, want ErrCacheMiss", err)
	}
	if _, err := mc.Increment("k2", 1); err == nil || !strings.Contains(err.Error(), "non-numeric") {
		t.Errorf("Increment(non-numeric) = %v, want a non-numeric error", err)
	}

	if err := mc.Touch("n", 100); err != nil {
		t.Errorf("Touch = %v", err)
	}
	if err := mc.Touch("nokey", 100); !errors.Is(err, memcache.ErrCacheMiss) {
		t.Errorf("Touch(missing) = %v, want ErrCacheMiss", err)
	}
	if got, err := mc.GetAndTouch("n", 100); err != nil || string(got.Value) != "0" {
		t.Errorf("GetAndTouch = %+v, %v", got, err)
	}
	if err := mc.Delete("n"); err != nil {
		t.Errorf("Delete = %v", err)
	}
	if err := mc.Delete("n"); !errors.Is(err, memcache.ErrCacheMiss) {
		t.Errorf("Delete(missing) = %v, want ErrCacheMiss", err)
	}

	// Expired on arrival (negative exptime) is a miss straight away.
	if err := mc.Set(&memcache.Item{Key: "gone", Value: []byte("x"), Expiration: -1}); err != nil {
		t.Fatal(err)
	}
	if _, err := mc.Get("gone"); !errors.Is(err, memcache.ErrCacheMiss) {
		t.Errorf("Get(expired) = %v, want ErrCacheMiss", err)
	}

	// The largest value memcached accepts with -I 1m stores; 1 MiB does not.
	big := bytes.Repeat([]byte("b"), 1047552)
	if err := mc.Set(&memcache.Item{Key: "big", Value: big}); err != nil {
		t.Errorf("Set(1,047,552 bytes) = %v", err)
	}
	if err := mc.Set(&memcache.Item{Key: "big", Value: bytes.Repeat([]byte("c"), 1<<20)}); err == nil {
		t.Error("Set(1 MiB) succeeded, want a server error")
	}
	if got, err := mc.Get("big"); err != nil || !bytes.Equal(got.Value, big) {
		t.Errorf("Get(big) after rejected overwrite lost the old value: %v", err)
	}

	if err := mc.FlushAll(); err != nil {
		t.Errorf("FlushAll = %v", err)
	}
	if _, err := mc.Get("k2"); !errors.Is(err, memcache.ErrCacheMiss) {
		t.Errorf("Get after FlushAll = %v, want ErrCacheMiss", err)
	}
	if err := mc.DeleteAll(); err != nil {
		t.Errorf("DeleteAll = %v", err)
	}
}

// TestGomemcacheConcurrent runs many goroutines through one client pool and
// checks each goroutine reads back exactly what it wrote.
func TestGomemcacheConcurrent(t *testing.T) {
	ts := startServer(t, server.Config{}, store.Config{})
	mc := memcache.New(ts.addr)
	mc.Timeout = 10 * time.Second // -race on two shared cores is slow
	mc.MaxIdleConns = 16
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 32 {
		wg.Go(func() {
			for i := range 200 {
				key := fmt.Sprintf("g%d-k%d", g, i%20)
				val := fmt.Appendf(nil, "value-%d-%d", g, i)
				if err := mc.Set(&memcache.Item{Key: key, Value: val}); err != nil {
					errs <- err
					return
				}
				got, err := mc.Get(key)
				if err != nil || !bytes.Equal(got.Value, val) {
					errs <- fmt.Errorf("Get(%s) = %v, %v; want %s", key, got, err, val)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
