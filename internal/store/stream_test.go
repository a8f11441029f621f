package store

import (
	"fmt"
	"reflect"
	"testing"
)

// TestStreamFlatRoundTrip checks that a stream with deleted entries,
// several nodes and groups reads back its own flat encoding (durable
// mode, COPY) exactly.
func TestStreamFlatRoundTrip(t *testing.T) {
	s := New(Config{MemoryLimit: 64 << 20})
	key := []byte("s")
	var st Stream
	err := s.UpdateStream(key, &st, func() error {
		for i := 1; i <= 250; i++ {
			fv := [][]byte{[]byte("a"), []byte(fmt.Sprint(i))}
			if i%7 == 0 {
				fv = append(fv, []byte("b"), []byte("x"))
			}
			st.Append(StreamID{uint64(i), 1}, fv, 4096, 100)
		}
		st.DeleteIDs([]StreamID{{3, 1}, {150, 1}})
		st.Trim(StreamTrim{MinID: true, ID: StreamID{2, 1}})
		g, _ := st.CreateGroup([]byte("g"), StreamID{}, -1)
		c, _ := st.CreateConsumer(g, []byte("c"), 1000)
		d, _ := st.CreateConsumer(g, []byte("d"), 1000)
		st.Deliver(g, c, StreamID{1, 1}, 5)
		st.Deliver(g, d, StreamID{2, 1}, 6)
		st.Deliver(g, c, StreamID{4, 1}, 7)
		st.Advance(g, StreamID{4, 1})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.ViewStream(key, &st, func() error {
		o := st.o()
		b := o.appendFlat(nil)
		back, err := streamFromFlat(b)
		if err != nil {
			t.Fatalf("streamFromFlat: %v", err)
		}
		var st2 Stream
		st2.c.obj = back
		if got, want := st2.Export(), st.Export(); !reflect.DeepEqual(got, want) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, want)
		}
		var caps int64
		for _, nd := range o.nodes {
			caps += int64(cap(nd.LP))
		}
		if caps != o.lpBytes {
			t.Fatalf("lpBytes %d, the nodes' capacities %d", o.lpBytes, caps)
		}
		if st.Len() != 247 || st.Nodes() != 3 {
			t.Fatalf("len %d nodes %d, want 248 and 3", st.Len(), st.Nodes())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
