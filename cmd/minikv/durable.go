package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/minikv/minikv/internal/durable"
	"github.com/minikv/minikv/internal/store"
	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

// engineOptionsKey is the context key under which a test hands run a
// func(*lsm.Options) that adjusts the engine's options before the data
// directory opens: the kill test's server takes small memtables from it,
// so flushes and compactions run within a cycle, and a filesystem that
// stops in the middle of one for the test to kill it there. No flag
// offers this: small memtables only make a server slower.
type engineOptionsKey struct{}

// engineMemTable is the engine's memtable size for an item memory limit of
// m bytes (-m at start): a 64th of it, from the engine's default of 4 MiB
// to 16 MiB. A larger memtable absorbs more overwrites of the same keys and
// flushes and compacts less per write (docs/durability.md, "Memtables sized
// by -m"); past 16 MiB its index no longer fits the CPU's caches. Up to
// three memtables are in memory at once (one taking writes, two flushing).
func engineMemTable(m int64) int {
	return int(min(max(m/64, lsm.DefaultMemTableSize), 16<<20))
}

// openDurable opens the data directory, replays its log and returns the
// store over it, with the function that closes the disk side after the
// store is closed. The ports open only after this returns: a client never
// sees a store that is still recovering.
func openDurable(ctx context.Context, cfg *config, scfg store.Config, log *slog.Logger) (*store.Store, func() error, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("data directory: %w", err)
	}
	// One change must fit one engine batch: items up to 1 GiB, not the
	// record's 4 GiB (proto-max-bulk-len above that is refused as too large).
	scfg.MaxItemSize = min(scfg.MaxItemSize, durable.MaxItemSize)
	scfg.Logger = log // disk failures and recoveries, one line each
	mode := map[string]lsm.SyncMode{"always": lsm.SyncAlways, "everysec": lsm.SyncEverySecond, "no": lsm.SyncNone}[cfg.Fsync]
	log.Info("opening the data directory", "dir", cfg.DataDir, "fsync", cfg.Fsync)
	start := time.Now()
	// On a disk that takes no writes (full, read-only) the server still
	// starts, serving what recovery read and refusing writes until the
	// disk takes them (docs/durability.md, "When the disk fails").
	o := lsm.Options{Sync: mode, MemTableSize: engineMemTable(cfg.MemoryLimit.bytes), OpenFailedOnWriteError: true}
	if o.MemTableSize > lsm.DefaultMemTableSize {
		// Larger L0 files: let twice as many gather before they are
		// merged into L1, which each merge rewrites.
		o.L0CompactionTrigger, o.L0StopWrites = 8, 24
	}
	if mode != lsm.SyncNone {
		// Overwriting a recycled or preallocated log makes each fsync
		// cheaper (no journal commit for a growing file):
		// docs/durability.md, "Recycled logs".
		o.RecycleWAL = 2
	} else {
		// The server's log stays on write(2) in fsync no, as measured in
		// docs/durability.md; the engine alone defaults to a mapped log.
		o.WriteWAL = true
	}
	if adjust, ok := ctx.Value(engineOptionsKey{}).(func(*lsm.Options)); ok {
		adjust(&o)
	}
	l, err := durable.Open(cfg.DataDir, o)
	if err != nil {
		if errors.Is(err, vfs.ErrLocked) {
			return nil, nil, fmt.Errorf("data directory %s is in use by another process (its LOCK file is held): %w", cfg.DataDir, err)
		}
		return nil, nil, fmt.Errorf("data directory %s: %w", cfg.DataDir, err)
	}
	st, err := store.Open(scfg, l)
	if err != nil {
		_ = l.Close()
		return nil, nil, fmt.Errorf("data directory %s: %w", cfg.DataDir, err)
	}
	m := l.DB().Metrics()
	tables, bytes := 0, int64(0)
	for _, lv := range m.Levels {
		tables += lv.Files
		bytes += lv.Bytes
	}
	log.Info("data directory recovered", "dir", cfg.DataDir, "took", time.Since(start).Round(time.Millisecond).String(),
		"tables", tables, "table_bytes", bytes, "replayed_log_bytes", m.MemTableBytes, "disk_limit", scfg.DiskLimit)
	return st, func() error {
		st.Close()
		return l.Close()
	}, nil
}
