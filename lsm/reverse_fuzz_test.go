package lsm

import (
	"fmt"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm/vfs"
)

// FuzzIterDirection writes what writes describes (puts, deletes, expired
// puts, flushes and compactions over 24 keys, so versions pile up in every
// layer), then makes the moves moves describes with an Iterator, bounded
// by lo and hi when they are not empty, and checks every move against a
// map.
//
// Each write byte: low 3 bits the operation (0-2 put, 3 delete, 4 put
// expired, 5 put expiring later, 6 flush, 7 compact), the rest the key.
// Each move byte: low 4 bits the move (0 First, 1 Last, 2 SeekGE, 3 SeekLT,
// 4-9 Next, 10-15 Prev), the rest the key for a seek (odd: just after a
// key).
func FuzzIterDirection(f *testing.F) {
	f.Add([]byte{0, 8, 16, 6, 3, 11, 24, 7, 1, 9}, []byte{1, 8, 8, 8, 4, 4, 9, 0, 8, 4}, "", "")
	f.Add([]byte{0, 8, 16, 24, 32, 6, 11, 19, 7, 40, 48, 6, 43}, []byte{3 | 5<<4, 4, 8, 8, 2 | 9<<4, 8, 4, 4, 4, 8}, "k03", "k09")
	f.Add([]byte{0, 5, 8, 13, 16, 6, 4, 12, 7, 1, 2}, []byte{0, 8, 4, 1, 4, 8, 8, 3 | 15<<4, 4, 8}, "k01", "")
	f.Fuzz(fuzzIterBody)
}

func fuzzIterBody(t *testing.T, writes, moves []byte, lo, hi string) {
	if len(writes) > 512 || len(moves) > 512 {
		return
	}
	db, err := Open("/db", Options{FS: vfs.NewMem(), DisableAutoCompaction: true, BlockSize: 64, MemTableSize: 32 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := model{}
	past, later := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	for i, b := range writes {
		k := fmt.Appendf(nil, "k%02d", int(b>>3)%24)
		v := fmt.Appendf(nil, "v%d", i)
		switch b & 7 {
		case 0, 1, 2:
			err = db.Put(k, v)
			m[string(k)] = v
		case 3:
			err = db.Delete(k)
			delete(m, string(k))
		case 4:
			err = db.PutExpiring(k, v, past)
			delete(m, string(k))
		case 5:
			err = db.PutExpiring(k, v, later)
			m[string(k)] = v
		case 6:
			err = db.Flush()
		case 7:
			err = db.Compact()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	o := &IterOptions{}
	if lo != "" {
		o.LowerBound = []byte(lo)
	}
	if hi != "" {
		o.UpperBound = []byte(hi)
	}
	it, err := db.NewIter(o)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	w := newWalk(it, m, o.LowerBound, o.UpperBound)
	for i, b := range moves {
		move := int(b & 15)
		switch {
		case i == 0:
			move &= 3 // start with a positioning
		case move >= 10:
			move = 7 // Prev
		case move >= 4:
			move = 4 // Next
		}
		n := int(b >> 4)
		key := fmt.Appendf(nil, "k%02d", n*3/2)
		if n%2 == 1 {
			key = append(key, 0)
		}
		if err := w.step(move, key); err != nil {
			t.Fatalf("move %d: %v", i, err)
		}
	}
}
