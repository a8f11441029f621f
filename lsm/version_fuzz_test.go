package lsm

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

// FuzzVersionEdit feeds arbitrary bytes to the manifest edit decoder. It
// must return an error or an edit, never panic; an edit it returns encodes
// and decodes back to itself; and applying it to a version (empty, or one
// that already holds tables) returns an error or a version that keeps the
// level invariants, never a panic.
func FuzzVersionEdit(f *testing.F) {
	ef := makeEngineFiles(f)
	for _, e := range ef.edits {
		f.Add(e)
	}
	ik := func(k string, seq uint64) []byte { return appendInternalKey(nil, []byte(k), seq, kindSet) }
	mixed := &versionEdit{
		logNum: 7, nextFile: 9, lastSeq: 1 << 40,
		added: []newFile{
			{1, &fileMeta{num: 5, size: 100, smallest: ik("a", 3), largest: ik("c", 1), entries: 3}},
			{1, &fileMeta{num: 6, size: 100, smallest: ik("d", 3), largest: ik("f", 1), deletes: 1}},
			{6, &fileMeta{num: 8, size: 1 << 30, smallest: ik("", 0), largest: ik("\xff", maxSeq), expiring: 2}},
		},
		deleted: []deletedFile{{0, 4}, {1, 5}},
	}
	f.Add(mixed.encode())
	overlap := &versionEdit{added: []newFile{
		{2, &fileMeta{num: 10, smallest: ik("a", 1), largest: ik("m", 1)}},
		{2, &fileMeta{num: 11, smallest: ik("k", 1), largest: ik("z", 1)}},
	}}
	f.Add(overlap.encode())
	f.Add([]byte{})
	f.Add([]byte{tagAdd, numLevels})
	f.Add([]byte{tagDelete, 0})
	f.Add([]byte{tagAdd, 0, 1, 2, 3, 4, 5, 7, 'x'})
	f.Add([]byte{0x80})

	base, err := (&version{}).apply(mixed)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := decodeEdit(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		again, err := decodeEdit(e.encode())
		if err != nil || !sameEdit(again, e) {
			t.Fatalf("edit %+v re-encodes to %+v, %v", e, again, err)
		}
		for _, v := range []*version{{}, base} {
			nv, err := v.apply(e)
			if err != nil {
				continue
			}
			for level := 1; level < numLevels; level++ {
				files := nv.levels[level]
				for i := 1; i < len(files); i++ {
					if bytes.Compare(files[i-1].largestUser(), files[i].smallestUser()) >= 0 {
						t.Fatalf("L%d: tables %d and %d overlap after apply", level, files[i-1].num, files[i].num)
					}
				}
			}
		}
	})
}

func sameEdit(a, b *versionEdit) bool {
	return a.logNum == b.logNum && a.nextFile == b.nextFile && a.lastSeq == b.lastSeq &&
		slices.Equal(a.deleted, b.deleted) &&
		slices.EqualFunc(a.added, b.added, func(x, y newFile) bool {
			m, n := x.meta, y.meta
			return x.level == y.level && m.num == n.num && m.size == n.size && m.entries == n.entries &&
				m.deletes == n.deletes && m.expiring == n.expiring &&
				bytes.Equal(m.smallest, n.smallest) && bytes.Equal(m.largest, n.largest)
		})
}
