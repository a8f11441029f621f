// Command seedbench runs the benchmark of the embeddable Go LSM store that
// MiniKV's engine grew out of, against package lsm, and prints its table,
// so a reader of that store's write-up can put the two side by side:
//
//	go run ./lsm/examples/seedbench              # the seed's sizes: 1,000,000 puts, 250,000 gets
//	go run ./lsm/examples/seedbench -n 100000 -reads 25000
//
// The workload is the seed's: N puts of "key_%d" with a 128-byte value (all
// zeros, as the seed's make([]byte, 128)), in order; the database closed;
// R gets of uniformly random written keys before any compaction; a full
// compaction; R gets again. As in the seed, closing the database is not
// timed; here Open (which replays nothing after a clean Close) is not
// either, and every Get must find its key. Options are lsm's defaults,
// the seed's 4 MiB memtable among them. bench/lsm runs the same workload
// against Pebble, goleveldb and Badger (docs/benchmarks.md).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/minikv/minikv/lsm"
)

func main() {
	var c config
	flag.IntVar(&c.n, "n", 1_000_000, "keys written")
	flag.IntVar(&c.reads, "reads", 250_000, "gets per read phase")
	flag.StringVar(&c.dir, "dir", "", "parent `directory` of the database, which is removed at the end (default: the system's temp dir)")
	syncAlways := flag.Bool("sync", false, "fsync every put (lsm.SyncAlways); the seed never fsyncs")
	verbose := flag.Bool("v", false, "also print the close and reopen times and the engine's metrics")
	flag.Parse()
	if c.n < 1 || c.reads < 0 {
		log.Fatal("seedbench: -n must be at least 1 and -reads at least 0")
	}
	if *syncAlways {
		c.opts.Sync = lsm.SyncAlways
	}
	if *verbose {
		c.verbose = os.Stderr
	}
	if err := run(os.Stdout, c); err != nil {
		log.Fatal(err)
	}
}

type config struct {
	n, reads int
	dir      string
	opts     lsm.Options
	verbose  io.Writer // nil: the seed's four lines only
}

// run runs the four timed phases and prints one line per phase.
func run(w io.Writer, c config) error {
	dir, err := os.MkdirTemp(c.dir, "seedbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := lsm.Open(dir, c.opts)
	if err != nil {
		return err
	}
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	line := func(label string, d time.Duration) {
		fmt.Fprintf(w, "%-40s%v\n", label+":", d)
	}

	value := make([]byte, 128)
	var key []byte
	t := time.Now()
	for i := range c.n {
		key = strconv.AppendInt(append(key[:0], "key_"...), int64(i), 10)
		if err := db.Put(key, value); err != nil {
			return err
		}
	}
	line(fmt.Sprintf("writing %s entries", commas(c.n)), time.Since(t))

	t = time.Now()
	if err := db.Close(); err != nil {
		db = nil
		return err
	}
	closed := time.Since(t)
	t = time.Now()
	if db, err = lsm.Open(dir, c.opts); err != nil {
		return err
	}
	if c.verbose != nil {
		fmt.Fprintf(c.verbose, "close %v, reopen %v (not timed by the seed)\n", closed, time.Since(t))
	}

	rng := rand.New(rand.NewPCG(1, 2))
	reads := func() error {
		for range c.reads {
			key = strconv.AppendInt(append(key[:0], "key_"...), int64(rng.IntN(c.n)), 10)
			if _, err := db.Get(key); err != nil {
				return fmt.Errorf("Get(%s): %w", key, err)
			}
		}
		return nil
	}
	t = time.Now()
	if err := reads(); err != nil {
		return err
	}
	line(fmt.Sprintf("reading %s entries (uncompacted)", commas(c.reads)), time.Since(t))

	t = time.Now()
	if err := db.Compact(); err != nil {
		return err
	}
	line("compacting", time.Since(t))

	t = time.Now()
	if err := reads(); err != nil {
		return err
	}
	line(fmt.Sprintf("reading %s entries", commas(c.reads)), time.Since(t))
	if c.verbose != nil {
		fmt.Fprint(c.verbose, db.Metrics())
	}
	err = db.Close()
	db = nil
	return err
}

// commas formats n with thousands separators, as the seed's labels do.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
