package rdb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/minikv/minikv/internal/durable"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
)

// TestLFUFreqThroughRDB: under allkeys-lfu an RDB carries each key's LFU
// counter (RDB_OPCODE_FREQ) both ways. redis-server, with lfu-log-factor
// 0 (one step per use) and lfu-decay-time 0 (no decay), saves keys read
// different numbers of times; a MiniKV store in LFU mode loads the
// counters, reads some keys more, and saves; a redis-server started on
// MiniKV's file answers OBJECT FREQ with MiniKV's counters.
func TestLFUFreqThroughRDB(t *testing.T) {
	ctx := context.Background()
	lfuArgs := []string{"--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lfu", "--lfu-log-factor", "0", "--lfu-decay-time", "0"}
	dirA := t.TempDir()
	ra := startRedis(t, dirA, "a.rdb", lfuArgs...)
	reads := map[string]int{"lf:s": 10, "lf:l": 20, "lf:h": 0, "lf:z": 300}
	for k, n := range reads {
		var err error
		switch k {
		case "lf:s":
			err = ra.c.Set(ctx, k, "v", 0).Err()
		case "lf:l":
			err = ra.c.RPush(ctx, k, "a", "b").Err()
		case "lf:h":
			err = ra.c.HSet(ctx, k, "f", "v").Err()
		case "lf:z":
			err = ra.c.Do(ctx, "ZADD", k, "1", "m").Err()
		}
		if err != nil {
			t.Fatalf("writing %s: %v", k, err)
		}
		for range n {
			if err := ra.c.Do(ctx, "TOUCH", k).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := map[string]int{"lf:s": 15, "lf:l": 25, "lf:h": 5, "lf:z": 255}
	for k, w := range want {
		if got, err := ra.c.Do(ctx, "OBJECT", "FREQ", k).Int(); err != nil || got != w {
			t.Fatalf("redis-server: OBJECT FREQ %s = %d, %v; want %d", k, got, err, w)
		}
	}
	if err := ra.c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	st := store.New(store.Config{MemoryLimit: 64 << 20})
	defer st.Close()
	st.SetLFU(true)
	st.SetLFUParams(0, 0)
	if _, err := LoadFile(filepath.Join(dirA, "a.rdb"), st, LoadOptions{}); err != nil {
		t.Fatalf("loading redis-server's file: %v", err)
	}
	for k, w := range want {
		if oi, ok := st.Object([]byte(k)); !ok || int(oi.Freq) != w {
			t.Errorf("MiniKV after loading: Freq of %s = %d (found %v), want %d", k, oi.Freq, ok, w)
		}
	}
	for range 7 {
		st.Get([]byte("lf:s"))
	}
	want["lf:s"] = 22

	dirB := t.TempDir()
	if _, err := SaveFile(filepath.Join(dirB, "b.rdb"), st, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := startRedis(t, dirB, "b.rdb", lfuArgs...)
	for k, w := range want {
		if got, err := rb.c.Do(ctx, "OBJECT", "FREQ", k).Int(); err != nil || got != w {
			t.Errorf("redis-server on MiniKV's file: OBJECT FREQ %s = %d, %v; want %d", k, got, err, w)
		}
	}
}

// TestLFUFreqDurableSave: in durable mode, where Save walks the disk key
// by key, the file still carries each key's LFU counter.
func TestLFUFreqDurableSave(t *testing.T) {
	dir := t.TempDir()
	l, err := durable.Open(filepath.Join(dir, "data"), lsm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(store.Config{MemoryLimit: 64 << 20}, l)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.SetLFU(true)
	st.SetLFUParams(0, 0)
	if _, err := st.Store(store.ModeSet, []byte("k"), []byte("v"), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	for range 9 {
		st.Get([]byte("k"))
	}
	path := filepath.Join(dir, "d.rdb")
	if _, err := SaveFile(path, st, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	mem := store.New(store.Config{MemoryLimit: 64 << 20})
	defer mem.Close()
	mem.SetLFU(true)
	mem.SetLFUParams(0, 0)
	if _, err := LoadFile(path, mem, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if oi, ok := mem.Object([]byte("k")); !ok || oi.Freq != 14 {
		t.Fatalf("loaded from the durable store's file: Freq %d (found %v), want 14", oi.Freq, ok)
	}
}
