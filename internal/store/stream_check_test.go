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
