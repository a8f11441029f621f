package lsm_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

// tempDB opens a database in a fresh temporary directory; the returned
// function closes it and removes the directory.
func tempDB(o lsm.Options) (*lsm.DB, func()) {
	dir, err := os.MkdirTemp("", "lsm-example-")
	if err != nil {
		log.Fatal(err)
	}
	db, err := lsm.Open(dir, o)
	if err != nil {
		log.Fatal(err)
	}
	return db, func() { db.Close(); os.RemoveAll(dir) }
}

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "lsm-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// SyncAlways: every acknowledged write survives a power loss.
	db, err := lsm.Open(dir, lsm.Options{Sync: lsm.SyncAlways})
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Put([]byte("greeting"), []byte("hello")); err != nil {
		log.Fatal(err)
	}
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}

	// Reopening replays the log: the write is there.
	db, err = lsm.Open(dir, lsm.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	v, err := db.Get([]byte("greeting"))
	fmt.Printf("%s %v\n", v, err)

	// A second Open of the same directory is refused while the first holds it.
	_, err = lsm.Open(dir, lsm.Options{})
	fmt.Println(err != nil)
	// Output:
	// hello <nil>
	// true
}

func ExampleDB_Get() {
	db, done := tempDB(lsm.Options{})
	defer done()
	_ = db.Put([]byte("k"), []byte("v1"))
	_ = db.Put([]byte("k"), []byte("v2")) // overwrites
	v, err := db.Get([]byte("k"))
	fmt.Printf("%s %v\n", v, err)
	_ = db.Delete([]byte("k"))
	_, err = db.Get([]byte("k"))
	fmt.Println(errors.Is(err, lsm.ErrNotFound))
	// Output:
	// v2 <nil>
	// true
}

func ExampleDB_PutExpiring() {
	db, done := tempDB(lsm.Options{})
	defer done()
	_ = db.PutExpiring([]byte("session"), []byte("alive"), time.Now().Add(time.Hour))
	_ = db.PutExpiring([]byte("token"), []byte("stale"), time.Now().Add(-time.Second))
	v, expiry, err := db.GetEntry([]byte("session"))
	fmt.Printf("%s %v %v\n", v, expiry.After(time.Now()), err)
	_, err = db.Get([]byte("token")) // expired: gone, and dropped at compaction
	fmt.Println(errors.Is(err, lsm.ErrNotFound))
	// Output:
	// alive true <nil>
	// true
}

func ExampleDB_Apply() {
	db, done := tempDB(lsm.Options{})
	defer done()
	_ = db.Put([]byte("from"), []byte("100"))

	// A batch commits atomically: readers see all of it or none of it.
	b := lsm.NewBatch()
	b.Put([]byte("to"), []byte("100"))
	b.Delete([]byte("from"))
	if err := db.Apply(b); err != nil {
		log.Fatal(err)
	}
	_, err := db.Get([]byte("from"))
	v, _ := db.Get([]byte("to"))
	fmt.Println(errors.Is(err, lsm.ErrNotFound), string(v), b.Len())
	// Output:
	// true 100 2
}

func ExampleDB_Enqueue() {
	db, done := tempDB(lsm.Options{Sync: lsm.SyncAlways})
	defer done()

	// A log of changes that several goroutines commit: each takes what is
	// queued under the log's lock and enqueues it there, so commits keep
	// the order of the changes, and waits for it without the lock, so the
	// next one can be taken meanwhile.
	var mu sync.Mutex
	next := 0
	commit := func() error {
		mu.Lock()
		next++
		b := lsm.NewBatch()
		b.Put([]byte("counter"), []byte(strconv.Itoa(next)))
		c := db.Enqueue(b)
		mu.Unlock()
		return c.Wait()
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := commit(); err != nil {
				log.Fatal(err)
			}
		}()
	}
	wg.Wait()
	v, _ := db.Get([]byte("counter"))
	fmt.Println(string(v)) // the last value queued, whatever order the goroutines ran in
	// Output:
	// 4
}

func ExampleDB_NewIter() {
	db, done := tempDB(lsm.Options{})
	defer done()
	for _, k := range []string{"apple", "banana", "cherry", "date"} {
		_ = db.Put([]byte(k), []byte("fruit"))
	}
	// Keys in [LowerBound, UpperBound), ascending, as of NewIter.
	it, err := db.NewIter(&lsm.IterOptions{LowerBound: []byte("b"), UpperBound: []byte("d")})
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Println(string(it.Key()))
	}
	if it.SeekGE([]byte("c")) {
		fmt.Println("seek:", string(it.Key()))
	}
	// Output:
	// banana
	// cherry
	// seek: cherry
}

func ExampleIterator_Prev() {
	db, done := tempDB(lsm.Options{})
	defer done()
	for _, k := range []string{"apple", "banana", "cherry", "date"} {
		_ = db.Put([]byte(k), []byte("fruit"))
	}
	it, err := db.NewIter(&lsm.IterOptions{UpperBound: []byte("d")})
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	// Descending: Last is the last key below the upper bound.
	for ok := it.Last(); ok; ok = it.Prev() {
		fmt.Println(string(it.Key()))
	}
	// SeekLT finds the last key before "c"; the direction may change at
	// any point.
	it.SeekLT([]byte("c"))
	fmt.Print("seek: ", string(it.Key()))
	it.Next()
	fmt.Print(", next: ", string(it.Key()))
	it.Prev()
	fmt.Println(", prev:", string(it.Key()))
	// Output:
	// cherry
	// banana
	// apple
	// seek: banana, next: cherry, prev: banana
}

func ExampleDB_NewSnapshot() {
	db, done := tempDB(lsm.Options{})
	defer done()
	_ = db.Put([]byte("balance:alice"), []byte("100"))
	_ = db.Put([]byte("balance:bob"), []byte("50"))

	// The snapshot reads the DB as it is now, whatever happens after.
	snap := db.NewSnapshot()
	defer snap.Close()

	b := lsm.NewBatch() // a transfer
	b.Put([]byte("balance:alice"), []byte("70"))
	b.Put([]byte("balance:bob"), []byte("80"))
	_ = db.Apply(b)
	_ = db.Compact() // compactions keep what a live snapshot reads

	v, _ := snap.Get([]byte("balance:alice"))
	fmt.Println("snapshot:", string(v))
	v, _ = db.Get([]byte("balance:alice"))
	fmt.Println("now:", string(v))

	it, err := snap.NewIter(&lsm.IterOptions{LowerBound: []byte("balance:")})
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%s=%s\n", it.Key(), it.Value())
	}
	// Output:
	// snapshot: 100
	// now: 70
	// balance:alice=100
	// balance:bob=50
}

func ExampleDB_DeleteRange() {
	db, done := tempDB(lsm.Options{})
	defer done()
	for i := range 5 {
		_ = db.Put(fmt.Appendf(nil, "user:%d", i), []byte("x"))
	}
	// Deletes user:1, user:2, user:3 in one atomic commit.
	if err := db.DeleteRange([]byte("user:1"), []byte("user:4")); err != nil {
		log.Fatal(err)
	}
	it, _ := db.NewIter(nil)
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Println(string(it.Key()))
	}
	// Output:
	// user:0
	// user:4
}

func ExampleDB_Compact() {
	db, done := tempDB(lsm.Options{})
	defer done()
	for i := range 1000 {
		_ = db.Put(fmt.Appendf(nil, "k%04d", i), []byte("v"))
	}
	// Flush writes the memtable to a table; Compact merges every table
	// into the bottom level, dropping overwritten, deleted and expired
	// entries.
	if err := db.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := db.Compact(); err != nil {
		log.Fatal(err)
	}
	m := db.Metrics()
	fmt.Println(m.Flushes >= 1, m.Levels[0].Files)
	// Output:
	// true 0
}

// A disk error fails the DB: writes return it (Err too) while reads go on,
// until Resume, retried by the caller, brings it back. Here a MemFS whose
// log writes fail stands in for a full disk.
func ExampleDB_Resume() {
	fs := vfs.NewMem()
	db, err := lsm.Open("/db", lsm.Options{FS: fs, Sync: lsm.SyncAlways})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Put([]byte("k"), []byte("before")); err != nil {
		log.Fatal(err)
	}

	full := func(op vfs.Op, name string) error {
		if op == vfs.OpWrite && strings.HasSuffix(name, ".log") {
			return vfs.ErrInjected // think ENOSPC
		}
		return nil
	}
	fs.SetInjector(full)
	err = db.Put([]byte("k"), []byte("lost"))
	fmt.Println("put:", errors.Is(err, vfs.ErrInjected), "failed:", db.Err() != nil)
	v, _ := db.Get([]byte("k"))
	fmt.Printf("read while failed: %s\n", v)

	fs.SetInjector(nil) // space freed
	for db.Resume() != nil {
		time.Sleep(time.Second)
	}
	fmt.Println("failed after Resume:", db.Err() != nil)
	if err := db.Put([]byte("k"), []byte("after")); err != nil {
		log.Fatal(err)
	}
	v, _ = db.Get([]byte("k"))
	fmt.Printf("%s, resumes: %d\n", v, db.Metrics().Resumes)
	// Output:
	// put: true failed: true
	// read while failed: before
	// failed after Resume: false
	// after, resumes: 1
}
