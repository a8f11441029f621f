package main

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/dgraph-io/badger/v4"
	"github.com/minikv/minikv/lsm"
	"github.com/syndtr/goleveldb/leveldb"
	leveldbopt "github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// engine is what the workload needs from a key-value store. get copies
// nothing: check compares the value before the engine may reuse it.
type engine interface {
	open(dir string) error
	put(k, v []byte) error
	get(k []byte, check func([]byte) bool) (found bool, err error)
	compact() error
	close() error
}

func newEngine(name string) (engine, error) {
	switch name {
	case "minikv":
		return &minikvEngine{}, nil
	case "minikv-mmap":
		return &minikvEngine{opts: lsm.Options{MappedWAL: true}}, nil
	case "minikv-write":
		return &minikvEngine{opts: lsm.Options{WriteWAL: true}}, nil
	case "minikv-sync":
		return &minikvEngine{opts: lsm.Options{Sync: lsm.SyncAlways}}, nil
	case "minikv-sync-pipe":
		return &minikvEngine{opts: lsm.Options{Sync: lsm.SyncAlways, PipelinedSync: true}}, nil
	case "minikv-mmap-sync":
		return &minikvEngine{opts: lsm.Options{Sync: lsm.SyncAlways, MappedWAL: true}}, nil
	case "pebble":
		return &pebbleEngine{}, nil
	case "pebble-bloom":
		return &pebbleEngine{bloom: true}, nil
	case "pebble-sync":
		return &pebbleEngine{sync: true}, nil
	case "goleveldb":
		return &leveldbEngine{}, nil
	case "badger":
		return &badgerEngine{}, nil
	}
	return nil, fmt.Errorf("unknown engine %q", name)
}

// MiniKV's engine with its defaults: SyncNone with a mapped log (every Put
// reaches the page cache by memcpy into a shared mapping before it
// returns), 4 MiB memtables, 10 bits/key filters, 8 MiB block cache.
// minikv-mmap sets MappedWAL explicitly (the same as the default);
// minikv-write keeps the write(2) log (WriteWAL), one system call per
// commit. minikv-sync
// fsyncs before each ack (SyncAlways); minikv-sync-pipe also overlaps a
// group's fsync with the next group's (PipelinedSync).
type minikvEngine struct {
	db   *lsm.DB
	opts lsm.Options
}

func (e *minikvEngine) open(dir string) (err error) {
	e.db, err = lsm.Open(dir, e.opts)
	return err
}
func (e *minikvEngine) put(k, v []byte) error { return e.db.Put(k, v) }
func (e *minikvEngine) get(k []byte, check func([]byte) bool) (bool, error) {
	v, err := e.db.Get(k)
	if errors.Is(err, lsm.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !check(v) {
		return true, fmt.Errorf("wrong value for %s", k)
	}
	return true, nil
}
func (e *minikvEngine) compact() error { return e.db.Compact() }
func (e *minikvEngine) close() error {
	if testMetrics {
		log.Printf("minikv metrics:\n%v", e.db.Metrics())
	}
	return e.db.Close()
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)           {}
func (quietLogger) Errorf(string, ...any)          {}
func (quietLogger) Fatalf(format string, a ...any) { log.Fatalf(format, a...) }

// Pebble with its defaults; writes with pebble.NoSync (the same
// no-fsync-per-write contract as the others, although Pebble buffers the
// log in the process rather than calling write(2) per commit), or with
// pebble.Sync (pebble-sync, against minikv-sync: fsync before the ack, with
// group commit across concurrent writers).
type pebbleEngine struct {
	db    *pebble.DB
	bloom bool
	sync  bool
}

func (e *pebbleEngine) open(dir string) (err error) {
	o := &pebble.Options{Logger: quietLogger{}}
	if e.bloom {
		for i := range o.Levels {
			o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		}
	}
	e.db, err = pebble.Open(dir, o)
	return err
}
func (e *pebbleEngine) put(k, v []byte) error {
	if e.sync {
		return e.db.Set(k, v, pebble.Sync)
	}
	return e.db.Set(k, v, pebble.NoSync)
}
func (e *pebbleEngine) get(k []byte, check func([]byte) bool) (bool, error) {
	v, closer, err := e.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ok := check(v)
	closer.Close()
	if !ok {
		return true, fmt.Errorf("wrong value for %s", k)
	}
	return true, nil
}
func (e *pebbleEngine) compact() error {
	return e.db.Compact(context.Background(), []byte{0}, []byte{0xff, 0xff}, true)
}
func (e *pebbleEngine) close() error {
	if testMetrics {
		log.Printf("pebble metrics:\n%v", e.db.Metrics())
	}
	return e.db.Close()
}

// goleveldb with its defaults (Put writes the journal to the OS per call).
type leveldbEngine struct{ db *leveldb.DB }

func (e *leveldbEngine) open(dir string) (err error) {
	e.db, err = leveldb.OpenFile(dir, &leveldbopt.Options{})
	return err
}
func (e *leveldbEngine) put(k, v []byte) error { return e.db.Put(k, v, nil) }
func (e *leveldbEngine) get(k []byte, check func([]byte) bool) (bool, error) {
	v, err := e.db.Get(k, nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !check(v) {
		return true, fmt.Errorf("wrong value for %s", k)
	}
	return true, nil
}
func (e *leveldbEngine) compact() error { return e.db.CompactRange(util.Range{}) }
func (e *leveldbEngine) close() error   { return e.db.Close() }

// Badger with its defaults, one transaction per Put.
type badgerEngine struct{ db *badger.DB }

func (e *badgerEngine) open(dir string) (err error) {
	e.db, err = badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	return err
}
func (e *badgerEngine) put(k, v []byte) error {
	return e.db.Update(func(txn *badger.Txn) error { return txn.Set(k, v) })
}
func (e *badgerEngine) get(k []byte, check func([]byte) bool) (found bool, err error) {
	err = e.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k)
		if err != nil {
			return err
		}
		found = true
		return item.Value(func(v []byte) error {
			if !check(v) {
				return fmt.Errorf("wrong value for %s", k)
			}
			return nil
		})
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	return found, err
}
func (e *badgerEngine) compact() error { return e.db.Flatten(2) }
func (e *badgerEngine) close() error   { return e.db.Close() }
