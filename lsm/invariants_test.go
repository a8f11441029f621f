package lsm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/minikv/minikv/lsm/vfs"
)

// TestVersionVerify: the versions a real run installs pass the deep check
// (with -tags invariants every one of them is checked as it is installed),
// and each broken shape is named.
func TestVersionVerify(t *testing.T) {
	o := Options{FS: vfs.NewMem(), MemTableSize: 32 << 10, LBaseMaxBytes: 64 << 10, TargetFileSize: 16 << 10}
	db, err := Open("/db", o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range 5000 {
		if err := db.Put(fmt.Appendf(nil, "key_%05d", i*7919%5000), fmt.Appendf(nil, "value_%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	db.mu.Lock()
	v, next := db.current, db.nextFile
	v.ref()
	db.mu.Unlock()
	defer v.unref()
	if err := v.verify(next); err != nil {
		t.Fatalf("installed version: %v", err)
	}

	ik := func(k string, seq uint64) []byte { return appendInternalKey(nil, []byte(k), seq, kindSet) }
	file := func(num uint64, lo, hi string) *fileMeta {
		f := &fileMeta{num: num, smallest: ik(lo, 9), largest: ik(hi, 1)}
		f.refs.Store(1)
		return f
	}
	obsolete := file(5, "a", "b")
	obsolete.obsolete.Store(true)
	for _, tc := range []struct {
		name   string
		levels map[int][]*fileMeta
		want   string
	}{
		{"overlap", map[int][]*fileMeta{1: {file(1, "a", "m"), file(2, "k", "z")}}, "overlap or are out of order"},
		{"l0 order", map[int][]*fileMeta{0: {file(1, "a", "m"), file(2, "k", "z")}}, "want newest first"},
		{"twice", map[int][]*fileMeta{0: {file(3, "a", "m")}, 2: {file(3, "a", "m")}}, "is in L0 and L2"},
		{"inverted", map[int][]*fileMeta{3: {file(4, "z", "a")}}, "sorts after largest"},
		{"obsolete", map[int][]*fileMeta{1: {obsolete}}, "marked obsolete"},
		{"unreferenced", map[int][]*fileMeta{1: {{num: 6, smallest: ik("a", 1), largest: ik("b", 1)}}}, "0 references"},
		{"number", map[int][]*fileMeta{1: {file(100, "a", "b")}}, "not below nextFile"},
	} {
		var bad version
		for l, fs := range tc.levels {
			bad.levels[l] = fs
		}
		if err := bad.verify(50); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: verify = %v, want %q", tc.name, err, tc.want)
		}
	}
	if invariantsOn {
		defer func() {
			if p := fmt.Sprint(recover()); !strings.HasPrefix(p, "lsm: invariant broken in a new version: ") {
				t.Errorf("assertVersion panicked with %q", p)
			}
		}()
		var bad version
		bad.levels[1] = []*fileMeta{file(1, "a", "m"), file(2, "k", "z")}
		assertVersion(&bad, 0)
		t.Error("assertVersion did not panic")
	}
}
