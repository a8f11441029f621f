package lsm_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/minikv/minikv/lsm"
)

// closedDB writes three keys in a fresh temporary directory and closes the
// database; the returned function removes the directory.
func closedDB() (string, func()) {
	dir, err := os.MkdirTemp("", "lsm-example-")
	if err != nil {
		log.Fatal(err)
	}
	db, err := lsm.Open(dir, lsm.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range []string{"apple", "banana", "cherry"} {
		if err := db.Put([]byte(k), []byte("fruit")); err != nil {
			log.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}
	return dir, func() { os.RemoveAll(dir) }
}

func ExampleCheck() {
	dir, cleanup := closedDB()
	defer cleanup()

	r, err := lsm.Check(dir, lsm.InspectOptions{})
	fmt.Println("healthy:", err == nil, r.OK())

	// Remove a table the manifest lists.
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	os.Remove(tables[0])
	r, err = lsm.Check(dir, lsm.InspectOptions{})
	fmt.Println("corrupt:", errors.Is(err, lsm.ErrCorrupt))
	for _, d := range r.Damage {
		fmt.Println("damaged:", d.File == filepath.Base(tables[0]))
	}
	// Output:
	// healthy: true true
	// corrupt: true
	// damaged: true
}

func ExampleInspect() {
	dir, cleanup := closedDB()
	defer cleanup()

	in, err := lsm.Inspect(dir, lsm.InspectOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	it, err := in.NewIter(&lsm.IterOptions{LowerBound: []byte("b")})
	if err != nil {
		log.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		fmt.Printf("%s=%s\n", it.Key(), it.Value())
	}
	if err := it.Close(); err != nil {
		log.Fatal(err)
	}
	s, err := in.Stats()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("live keys:", s.LiveKeys)
	// Output:
	// banana=fruit
	// cherry=fruit
	// live keys: 3
}

func ExampleReadManifest() {
	dir, cleanup := closedDB()
	defer cleanup()

	d, err := lsm.ReadManifest(dir, "", lsm.InspectOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// The first edit is a snapshot of the tree as Open found it (empty);
	// the last one adds the table Close flushed.
	last := d.Edits[len(d.Edits)-1]
	fmt.Println(len(d.Edits), last.Added[0].Level, last.Added[0].Entries, last.Added[0].Smallest)
	// Output:
	// 2 0 3 "apple"#1,SET
}
