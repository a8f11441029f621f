package store_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/minikv/minikv/internal/store"
)

func Example() {
	s := store.New(store.Config{MemoryLimit: 64 << 20})
	defer s.Close()

	// set greeting 42 0 5 / hello
	cas, _ := s.Store(store.ModeSet, []byte("greeting"), []byte("hello"), 42, 0, 0)
	it, ok := s.Get([]byte("greeting"))
	fmt.Printf("get: %s flags=%d found=%v same-cas=%v\n", it.Value, it.Flags, ok, it.CAS == cas)

	// add fails on a live key; cas fails with a stale token.
	_, err := s.Store(store.ModeAdd, []byte("greeting"), []byte("hi"), 0, 0, 0)
	fmt.Println("add:", errors.Is(err, store.ErrNotStored))
	_, err = s.Store(store.ModeCAS, []byte("greeting"), []byte("bye"), 0, 0, cas+1)
	fmt.Println("cas with a stale token:", errors.Is(err, store.ErrExists))

	// append keeps the flags.
	s.Store(store.ModeAppend, []byte("greeting"), []byte(", world"), 0, 0, 0)
	it, _ = s.Get([]byte("greeting"))
	fmt.Printf("after append: %s flags=%d\n", it.Value, it.Flags)

	// incr on a decimal value; decr stops at zero.
	s.Store(store.ModeSet, []byte("hits"), []byte("41"), 0, 0, 0)
	n, _, _ := s.Incr([]byte("hits"), 1, false)
	fmt.Println("incr:", n)
	n, _, _ = s.Incr([]byte("hits"), 100, true)
	fmt.Println("decr:", n)

	// exptime -1: stored, and already gone.
	s.Store(store.ModeSet, []byte("gone"), []byte("x"), 0, store.Deadline(-1, time.Now()), 0)
	_, ok = s.Get([]byte("gone"))
	fmt.Println("expired found:", ok)

	fmt.Println("delete:", s.Delete([]byte("greeting")))
	st := s.Stats()
	fmt.Printf("items=%d bytes=%d\n", st.Items, st.Bytes)
	// Output:
	// get: hello flags=42 found=true same-cas=true
	// add: true
	// cas with a stale token: true
	// after append: hello, world flags=42
	// incr: 42
	// decr: 0
	// expired found: false
	// delete: <nil>
	// items=1 bytes=39
}
