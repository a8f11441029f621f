package lsm

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/minikv/minikv/lsm/vfs"
)

// TestMetricsCountWorkInProgress holds a flush, then a compaction, at the
// creation of its table: while it waits Metrics shows it running
// (Flushing, Compacting), and once it is done, counted (Flushes,
// Compactions) and no longer running.
func TestMetricsCountWorkInProgress(t *testing.T) {
	fs := vfs.NewMem()
	db, err := Open("/db", Options{FS: fs, DisableAutoCompaction: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var hold atomic.Bool
	held, release := make(chan struct{}), make(chan struct{})
	fs.SetInjector(func(op vfs.Op, name string) error {
		if op == vfs.OpCreate && strings.HasSuffix(name, ".sst") && hold.CompareAndSwap(true, false) {
			held <- struct{}{}
			<-release
		}
		return nil
	})

	for i, step := range []struct {
		name string
		run  func() error
		busy func(Metrics) (running int, done int64)
	}{
		{"flush", db.Flush, func(m Metrics) (int, int64) { return m.Flushing, m.Flushes }},
		{"compaction", db.Compact, func(m Metrics) (int, int64) { return m.Compacting, m.Compactions }},
	} {
		// Each step needs a table more: the compaction merges two.
		if err := db.Put([]byte{'k', byte(i)}, []byte("v")); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if err := db.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		hold.Store(true)
		done := make(chan error)
		go func() { done <- step.run() }()
		<-held
		if running, n := step.busy(db.Metrics()); running != 1 || n != 0 {
			t.Errorf("during the %s: running %d, done %d; want 1, 0", step.name, running, n)
		}
		release <- struct{}{}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if running, n := step.busy(db.Metrics()); running != 0 || n != 1 {
			t.Errorf("after the %s: running %d, done %d; want 0, 1", step.name, running, n)
		}
	}
}
