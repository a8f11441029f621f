package store

import (
	"fmt"
	"testing"
)

// streamLP is a listpack of the elements in their decimal or string form.
func streamLP(elems ...any) []byte {
	lp := lpNew()
	for _, e := range elems {
		lp = lpAppend(lp, []byte(fmt.Sprint(e)))
	}
	return lp
}

// TestValidateStreamNode: what a node must be, and what it says of
// itself: its live entries, first live ID and last ID.
func TestValidateStreamNode(t *testing.T) {
	m := StreamID{Ms: 100, Seq: 5}
	for _, c := range []struct {
		name string
		lp   []byte
		ok   bool
		info StreamNodeInfo
	}{
		// 100-5 (deleted), 100-7, 102-0 (fields of its own: seq-diff -5).
		{"valid", streamLP(2, 1, 1, "f", 0, 3, 0, 0, "a", 4, 2, 0, 2, "b", 4, 0, 2, -5, 2, "x", 1, "y", 2, 8), true,
			StreamNodeInfo{Live: 2, FirstLive: StreamID{100, 7}, Last: StreamID{102, 0}}},
		{"all deleted", streamLP(0, 1, 1, "f", 0, 3, 0, 0, "a", 4), false, StreamNodeInfo{}},
		{"master entry only", streamLP(0, 0, 1, "f", 0), false, StreamNodeInfo{}},
		{"empty", streamLP(), false, StreamNodeInfo{}},
		{"count a string", streamLP("x", 0, 1, "f", 0, 2, 0, 0, "a", 4), false, StreamNodeInfo{}},
		{"negative count", streamLP(-1, 0, 1, "f", 0), false, StreamNodeInfo{}},
		{"huge field count", streamLP(1, 0, 1<<40, "f", 0, 2, 0, 0, "a", 4), false, StreamNodeInfo{}},
		{"before the master", streamLP(1, 0, 1, "f", 0, 2, 0, -1, "a", 4), false, StreamNodeInfo{}},
		{"repeated ID", streamLP(2, 0, 1, "f", 0, 2, 0, 0, "a", 4, 2, 0, 0, "b", 4), false, StreamNodeInfo{}},
		{"lp-count off", streamLP(1, 0, 1, "f", 0, 2, 0, 0, "a", 3), false, StreamNodeInfo{}},
		{"truncated entry", streamLP(1, 0, 1, "f", 0, 2, 0, 0), false, StreamNodeInfo{}},
		{"not a listpack", []byte{1, 2, 3}, false, StreamNodeInfo{}},
	} {
		info, err := ValidateStreamNode(c.lp, m)
		if (err == nil) != c.ok || info != c.info {
			t.Errorf("%s: %+v %v, want %+v ok %v", c.name, info, err, c.info, c.ok)
		}
	}
}

// TestEstimateEntriesRead: Redis's streamEstimateDistanceFromFirstEverEntry
// over a StreamValue's counters.
func TestEstimateEntriesRead(t *testing.T) {
	v := &StreamValue{Length: 3, LastID: StreamID{9, 0}, FirstID: StreamID{5, 0}, EntriesAdded: 10}
	for id, want := range map[StreamID]int64{{9, 0}: 10, {10, 0}: -1, {5, 0}: 8, {4, 0}: 7, {6, 0}: -1} {
		if got := v.EstimateEntriesRead(id); got != want {
			t.Errorf("%v: %d, want %d", id, got, want)
		}
	}
	v.MaxDeletedID = StreamID{6, 0} // a tombstone after the first entry
	if got := v.EstimateEntriesRead(StreamID{4, 0}); got != -1 {
		t.Errorf("with a tombstone: %d, want -1", got)
	}
	if got := (&StreamValue{}).EstimateEntriesRead(StreamID{1, 0}); got != 0 {
		t.Errorf("never used: %d", got)
	}
}

// FuzzValidateStreamNode: any bytes as a node's listpack: never a panic;
// a node it accepts is walked by the stream's own iterator (every entry,
// its fields and values) without one, and agrees with what it said.
func FuzzValidateStreamNode(f *testing.F) {
	f.Add(streamLP(2, 1, 1, "f", 0, 3, 0, 0, "a", 4, 2, 0, 2, "b", 4, 0, 2, -5, 2, "x", 1, "y", 2, 8), uint64(100), uint64(5))
	f.Add(streamLP(1, 0, 2, "f", "g", 0, 2, 0, 0, "a", 1234567, 5), uint64(0), uint64(0))
	f.Add(streamLP(1, 0, 0, 0, 0, 0, 0, 0, 4), uint64(1<<63), uint64(1<<63))
	f.Fuzz(func(t *testing.T, lp []byte, ms, seq uint64) {
		m := StreamID{ms, seq}
		info, err := ValidateStreamNode(lp, m)
		if err != nil {
			return
		}
		var st Stream
		it := newNodeIter(m, lp)
		live, n := 0, 0
		var last StreamID
		for p := it.first; p >= 0; n++ {
			flags, id, nf, fp, next := it.entry(p)
			if n > 0 && !last.Less(id) || id.Less(m) {
				t.Fatalf("entry %d: ID %v after %v (master %v)", n, id, last, m)
			}
			if flags&streamFlagDeleted == 0 {
				if live == 0 && id != info.FirstLive {
					t.Fatalf("first live %v, ValidateStreamNode said %v", id, info.FirstLive)
				}
				live++
			}
			if fv := st.fields(&it, flags, nf, fp); len(fv) != 2*nf {
				t.Fatalf("entry %d: %d fields and values for %d fields", n, len(fv), nf)
			}
			last, p = id, next
		}
		if live != info.Live || last != info.Last {
			t.Fatalf("walked %d live, last %v; ValidateStreamNode said %+v", live, last, info)
		}
	})
}
