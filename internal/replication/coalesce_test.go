package replication

import (
	"bytes"
	"testing"
)

// TestMarkStale: of a key's big records in one batch only the last is
// encoded, never one inside a MULTI section, and nothing is coalesced
// across a FLUSHALL, a GETACK, a SELECT reset or a command; small
// records are always encoded.
func TestMarkStale(t *testing.T) {
	big := bytes.Repeat([]byte("x"), coalesceMin)
	type op struct {
		kind uint8
		key  string
		rec  []byte
	}
	for _, tc := range []struct {
		name  string
		depth int // sections open before the batch
		ops   []op
		stale []bool
	}{
		{"last of three wins", 0, []op{{opWrite, "s", big}, {opWrite, "s", big}, {opWrite, "s", big}}, []bool{true, true, false}},
		{"small records stay", 0, []op{{opWrite, "s", []byte("v")}, {opWrite, "s", []byte("w")}}, []bool{false, false}},
		{"other keys stay", 0, []op{{opWrite, "a", big}, {opWrite, "b", big}, {opWrite, "a", big}}, []bool{true, false, false}},
		{"a delete supersedes", 0, []op{{opWrite, "s", big}, {opDelete, "s", nil}}, []bool{true, false}},
		{"inside a section stays", 0, []op{{opHold, "", nil}, {opWrite, "s", big}, {opRelease, "", nil}, {opWrite, "s", big}}, []bool{false, false, false, false}},
		{"before a section's write goes", 0, []op{{opWrite, "s", big}, {opHold, "", nil}, {opWrite, "s", big}, {opRelease, "", nil}}, []bool{true, false, false, false}},
		{"a section open before the batch", 1, []op{{opWrite, "s", big}, {opRelease, "", nil}, {opWrite, "s", big}}, []bool{false, false, false}},
		{"barriers", 0, []op{{opWrite, "s", big}, {opGetAck, "", nil}, {opWrite, "s", big}, {opFlush, "", nil}, {opWrite, "s", big},
			{opCommand, "", nil}, {opWrite, "s", big}, {opReselect, "", nil}, {opWrite, "s", big}}, []bool{false, false, false, false, false, false, false, false, false}},
		{"a ping is no barrier", 0, []op{{opWrite, "s", big}, {opPing, "", nil}, {opWrite, "s", big}}, []bool{true, false, false}},
	} {
		s := &Source{depth: tc.depth}
		var q queue
		for _, o := range tc.ops {
			e := queued{op: o.kind, keyOff: len(q.arena)}
			q.arena = append(q.arena, o.key...)
			e.keyEnd = len(q.arena)
			q.arena = append(q.arena, o.rec...)
			e.recEnd = len(q.arena)
			q.ops = append(q.ops, e)
		}
		s.markStale(&q)
		for i, want := range tc.stale {
			if s.stale[i] != want {
				t.Errorf("%s: op %d stale = %v, want %v (all %v)", tc.name, i, s.stale[i], want, s.stale)
			}
		}
	}
}
