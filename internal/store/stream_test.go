package store

import (
	"bytes"
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

// TestStreamColdNodesCompressed appends application-like entries and
// checks that every node but the last is kept compressed and charged as
// such (well under the listpacks' bytes), that reads walk the compressed
// nodes forwards, backwards and at random, and that a deletion in a cold
// node and a trim keep the stream whole.
func TestStreamColdNodesCompressed(t *testing.T) {
	s := New(Config{MemoryLimit: 64 << 20})
	verbs := []string{"view", "click", "buy", "share"}
	const n = 5000
	fields := func(k int) [][]byte {
		return [][]byte{[]byte("user"), fmt.Appendf(nil, "u%d", k*7919%100000), []byte("action"), []byte(verbs[k%4]),
			[]byte("page"), fmt.Appendf(nil, "/p/%d", k*31%5000), []byte("ts"), fmt.Appendf(nil, "%d", 1764000000000+37*k)}
	}
	key := []byte("events")
	for k := range n {
		var st Stream
		if err := s.UpdateStream(key, &st, func() error {
			st.Append(StreamID{uint64(k + 1), 0}, fields(k), 4096, 100)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var st Stream
	err := s.UpdateStream(key, &st, func() error {
		o := st.o()
		raw := 0
		for i := range o.nodes {
			nd := &o.nodes[i]
			if i < len(o.nodes)-1 && nd.raw <= 0 {
				t.Fatalf("node %d of %d is not compressed (raw %d)", i, len(o.nodes), nd.raw)
			}
			raw += nd.rawLen()
		}
		if len(o.nodes) < n/100 || o.lpBytes > int64(raw)*7/10 {
			t.Fatalf("%d nodes charged %d bytes for %d bytes of listpacks", len(o.nodes), o.lpBytes, raw)
		}
		check := func(id StreamID, fv [][]byte) {
			k := int(id.Ms) - 1
			if want := fields(k); fmt.Sprint(fv) != fmt.Sprint(want) {
				t.Fatalf("entry %v: %q, want %q", id, fv, want)
			}
		}
		seen := 0
		st.Range(StreamID{}, MaxStreamID, false, func(id StreamID, fv [][]byte) bool { check(id, fv); seen++; return true })
		st.Range(StreamID{}, MaxStreamID, true, func(id StreamID, fv [][]byte) bool { check(id, fv); seen++; return true })
		for k := 0; k < n; k += 997 {
			st.Range(StreamID{uint64(k + 1), 0}, StreamID{uint64(k + 1), 0}, false, func(id StreamID, fv [][]byte) bool { check(id, fv); seen++; return true })
		}
		if seen != 2*n+6 {
			t.Fatalf("reads saw %d entries, want %d", seen, 2*n+6)
		}
		if st.DeleteIDs([]StreamID{{1234, 0}}) != 1 || st.Has(StreamID{1234, 0}) || !st.Has(StreamID{1235, 0}) {
			t.Fatal("deleting an entry of a compressed node")
		}
		// The node stays plain after a deletion (later ones flag entries
		// in place); its neighbours stay compressed.
		if i := o.seekNode(StreamID{1235, 0}); i == len(o.nodes)-1 || o.nodes[i].raw != qnodeTried || o.nodes[i+1].raw <= 0 {
			t.Fatal("the node an entry was deleted from is not left plain, or its neighbour is not compressed")
		}
		if got := st.Trim(StreamTrim{MaxLen: 2950}); got != 2049 || st.Len() != 2950 {
			t.Fatalf("trim removed %d, left %d", got, st.Len())
		}
		if id, _ := st.Edge(false); id != (StreamID{2051, 0}) {
			t.Fatalf("first entry after the trim %v", id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FuzzStreamFlat: streamFromFlat refuses or rebuilds whatever bytes it is
// given (durable records come from disk), never panics, and what it
// accepts writes itself back readably. The seeds hold compressed nodes
// and plain ones, as records written before nodes were compressed do.
func FuzzStreamFlat(f *testing.F) {
	for _, pack := range []bool{true, false} {
		var st Stream
		st.Create()
		for k := range 60 { // small: the fuzzer minimizes what it finds
			st.Append(StreamID{uint64(k + 1), 0}, [][]byte{[]byte("f"), fmt.Appendf(nil, "v%d", k%3)}, 4096, 20)
		}
		st.Delete(StreamID{7, 0})
		g, _ := st.CreateGroup([]byte("g"), StreamID{}, -1)
		c, _ := st.CreateConsumer(g, []byte("c"), 1)
		st.Deliver(g, c, StreamID{3, 0}, 5)
		o := st.o()
		if !pack {
			o.nodes = o.plainNodes()
		} else if o.nodes[0].raw != qnodeTried || o.nodes[1].raw <= 0 {
			f.Fatal("the seed's first node (an entry deleted) is not plain or its second is not compressed")
		}
		f.Add(o.appendFlat(nil))
	}
	f.Add([]byte{0})
	flatNodeMax = 1 << 20
	f.Cleanup(func() { flatNodeMax = streamNodeMaxSize })
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := streamFromFlat(b)
		if err != nil {
			return
		}
		got := o.(*stream).appendFlat(nil)
		o2, err := streamFromFlat(got)
		if err != nil || !bytes.Equal(o2.(*stream).appendFlat(nil), got) {
			t.Fatalf("accepted %x but its rewrite %x does not read back: %v", b, got, err)
		}
	})
}
