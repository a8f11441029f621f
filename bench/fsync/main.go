//go:build linux

// Command fsync measures what a write-ahead log's commit costs on this
// disk, for the ways of making a commit durable that issue 13 weighed
// (docs/durability.md, "Where always still loses"): each commit appends
// -rec bytes with one write(2), then makes them durable, -n times, with
// -par writers at once (overlapping fsyncs when above 1). It prints
// commits per second and the latency of the durability step.
//
//	append      write(2) at the end of the file, fdatasync (what the engine does)
//	falloc      the file fallocate(2)d to its final size first (unwritten extents), fdatasync
//	fallockeep  the same with FALLOC_FL_KEEP_SIZE (the size still grows with each append)
//	zero        the file filled with zeros and fdatasynced first, then overwritten, fdatasync
//	dsync       the file opened O_DSYNC: the write(2) itself returns once durable
//	sfr         sync_file_range(SYNC_FILE_RANGE_WRITE) right after the write(2), then fdatasync
//	nosync      the write(2) alone: what every acknowledged write costs without fsync
//	            (the engine's SyncNone floor; run it with -rec 160 -n 1000000)
//
// Usage: go run . -dir /var/lib/minikv -mode append -n 3000 -par 1
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"
)

func main() {
	mode := flag.String("mode", "append", "append, falloc, fallockeep, zero, dsync or sfr")
	n := flag.Int("n", 2000, "commits")
	rec := flag.Int("rec", 2600, "bytes per commit (20 SETs of 100 B values)")
	par := flag.Int("par", 1, "writers committing at once")
	dir := flag.String("dir", os.TempDir(), "directory on the disk to measure")
	flag.Parse()
	name := filepath.Join(*dir, fmt.Sprintf("fsync-bench-%d.log", os.Getpid()))
	flags := os.O_RDWR | os.O_CREATE | os.O_TRUNC
	if *mode == "dsync" {
		flags |= syscall.O_DSYNC
	}
	f, err := os.OpenFile(name, flags, 0o644)
	if err != nil {
		fail(err)
	}
	defer os.Remove(name)
	fd := int(f.Fd())
	size := int64(*n**rec + 1<<20)
	switch *mode {
	case "zero":
		z := make([]byte, 1<<20)
		for off := int64(0); off < size; off += int64(len(z)) {
			if _, err := f.WriteAt(z, off); err != nil {
				fail(err)
			}
		}
	case "falloc":
		err = syscall.Fallocate(fd, 0, 0, size)
	case "fallockeep":
		err = syscall.Fallocate(fd, 1 /* FALLOC_FL_KEEP_SIZE */, 0, size)
	case "append", "dsync", "sfr", "nosync":
	default:
		fail(fmt.Errorf("unknown mode %q", *mode))
	}
	if err == nil {
		err = syscall.Fdatasync(fd)
	}
	if err != nil {
		fail(err)
	}
	buf := make([]byte, *rec)
	for i := range buf {
		buf[i] = byte(i)
	}
	var mu sync.Mutex
	var off int64
	lat := make([]time.Duration, 0, *n)
	per := *n / *par
	start := time.Now()
	var wg sync.WaitGroup
	for range *par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				mu.Lock() // one writer at a time, as a commit queue's leader
				o := off
				off += int64(len(buf))
				_, err := f.WriteAt(buf, o)
				mu.Unlock()
				if err != nil {
					fail(err)
				}
				t := time.Now()
				switch *mode {
				case "dsync", "nosync":
				case "sfr":
					err = syscall.SyncFileRange(fd, o, int64(len(buf)), 2 /* SYNC_FILE_RANGE_WRITE */)
					if err == nil {
						err = syscall.Fdatasync(fd)
					}
				default:
					err = syscall.Fdatasync(fd)
				}
				if err != nil {
					fail(err)
				}
				d := time.Since(t)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))].Round(time.Microsecond) }
	if *mode == "nosync" {
		fmt.Printf("%-10s par=%d: %.0f ns per write(2) of %d bytes\n", *mode, *par, float64(el.Nanoseconds())/float64(len(lat)), *rec)
		return
	}
	fmt.Printf("%-10s par=%d: %6.0f commits/s, durability step p50 %v p90 %v p99 %v\n",
		*mode, *par, float64(len(lat))/el.Seconds(), q(0.5), q(0.9), q(0.99))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fsync:", err)
	os.Exit(1)
}
