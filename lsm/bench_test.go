package lsm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// benchKeys is the number of keys of the read benchmarks' databases.
const benchKeys = 100_000

func benchKey(i int) []byte { return fmt.Appendf(nil, "key%012d", i) }

// openBenchDB opens a database in a temporary directory holding benchKeys
// keys with 64-byte values. tables: every key in the last level (one sorted
// run); otherwise, the keys are spread over a sorted run, four overlapping
// L0 tables and the memtable, so iterators merge six sources.
func openBenchDB(b *testing.B, tables bool) *DB {
	b.Helper()
	db, err := Open(b.TempDir(), Options{DisableAutoCompaction: true, BlockCacheSize: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	val := make([]byte, 64)
	put := func(i int) {
		if err := db.Put(benchKey(i), val); err != nil {
			b.Fatal(err)
		}
	}
	if tables {
		for i := range benchKeys {
			put(i)
		}
		if err := db.Compact(); err != nil {
			b.Fatal(err)
		}
		return db
	}
	for i := 0; i < benchKeys; i += 2 {
		put(i)
	}
	if err := db.Compact(); err != nil {
		b.Fatal(err)
	}
	for part := range 5 {
		for i := 1 + 2*part; i < benchKeys; i += 10 {
			put(i)
		}
		if part < 4 {
			if err := db.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	return db
}

func benchGet(b *testing.B, tables bool) {
	db := openBenchDB(b, tables)
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = benchKey(rng.IntN(benchKeys))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := db.Get(keys[i&4095]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkGetTables(b *testing.B) { benchGet(b, true) }
func BenchmarkGetMixed(b *testing.B)  { benchGet(b, false) }

// benchIterNext measures one Next of a full forward scan.
func benchIterNext(b *testing.B, tables bool) {
	db := openBenchDB(b, tables)
	it, err := db.NewIter(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
	it.First()
	b.ReportAllocs()
	for b.Loop() {
		if !it.Next() {
			it.First()
		}
	}
}

func BenchmarkIterNextTables(b *testing.B) { benchIterNext(b, true) }
func BenchmarkIterNextMixed(b *testing.B)  { benchIterNext(b, false) }

// benchIterSeek measures a SeekGE to a random key followed by 10 Nexts.
func benchIterSeek(b *testing.B, tables bool) {
	db := openBenchDB(b, tables)
	it, err := db.NewIter(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = benchKey(rng.IntN(benchKeys))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		it.SeekGE(keys[i&4095])
		for n := 0; n < 10 && it.Next(); n++ {
		}
		i++
	}
}

func BenchmarkIterSeekGETables(b *testing.B) { benchIterSeek(b, true) }
func BenchmarkIterSeekGEMixed(b *testing.B)  { benchIterSeek(b, false) }

// BenchmarkPut is the seed workload's write phase, one writer: Put of
// "key_%d" with 128-byte values, every Put after its write(2) (SyncNone),
// on the OS's filesystem; background flushes and compactions included.
func BenchmarkPut(b *testing.B) { benchPut(b, 1) }

// BenchmarkPut16 is the same with 16 writers sharing the commit queue.
func BenchmarkPut16(b *testing.B) { benchPut(b, 16) }

func benchPut(b *testing.B, writers int) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	val := make([]byte, 128)
	b.ReportAllocs()
	if writers == 1 {
		var k []byte
		i := 0
		for b.Loop() {
			k = fmt.Appendf(k[:0], "key_%d", i)
			if err := db.Put(k, val); err != nil {
				b.Fatal(err)
			}
			i++
		}
		return
	}
	var next atomic.Int64
	b.SetParallelism((writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		var k []byte
		for pb.Next() {
			k = fmt.Appendf(k[:0], "key_%d", next.Add(1))
			if err := db.Put(k, val); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPutSync is BenchmarkPut in SyncAlways (an fdatasync per commit
// group), with logs created and appended to ("append") or recycled and
// preallocated (Options.RecycleWAL, "recycled"), one writer or 16, with
// 256 KiB memtables so that logs rotate every ~1500 Puts. It reports the
// average fdatasync ("us/fsync").
func BenchmarkPutSync(b *testing.B) {
	for _, recycle := range []int{0, 2} {
		name := map[int]string{0: "append", 2: "recycled"}[recycle]
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", name, writers), func(b *testing.B) {
				db, err := Open(b.TempDir(), Options{Sync: SyncAlways, RecycleWAL: recycle, MemTableSize: 256 << 10})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				for recycle > 0 && db.Metrics().LogsPreallocated == 0 {
					time.Sleep(time.Millisecond)
				}
				val := make([]byte, 128)
				m0 := db.Metrics()
				var next atomic.Int64
				b.SetParallelism((writers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					var k []byte
					for pb.Next() {
						k = fmt.Appendf(k[:0], "key_%d", next.Add(1))
						if err := db.Put(k, val); err != nil {
							b.Fatal(err)
						}
					}
				})
				b.StopTimer()
				m := db.Metrics()
				if n := m.LogSyncs - m0.LogSyncs; n > 0 {
					b.ReportMetric(float64((m.LogSyncTime-m0.LogSyncTime).Microseconds())/float64(n), "us/fsync")
					b.ReportMetric(float64(b.N)/float64(n), "puts/fsync")
				}
			})
		}
	}
}
