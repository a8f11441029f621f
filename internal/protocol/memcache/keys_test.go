package memcache

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

func TestKeys(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want []string
	}{
		{"get a\r\nget b\r\n", 8, []string{"a", "b"}},
		{"gets a b  c\r\n", 8, []string{"a", "b", "c"}},
		{"get a b c\r\nget d\r\n", 2, []string{"a", "b"}},
		{"gat 10 a b\r\ngats 0 c\r\n", 8, []string{"a", "b", "c"}},
		{"set a 0 0 3\r\nget\r\nget b\r\n", 8, []string{"a", "b"}}, // the value looks like a command
		{"set a 0 0 5 noreply\r\nhello\r\ncas b 0 0 1 7\r\nx\r\n", 8, []string{"a", "b"}},
		{"delete a\r\nincr b 1\r\ndecr c 1\r\ntouch d 10\r\n", 8, []string{"a", "b", "c", "d"}},
		{"mg a v\r\nms b 2 T0\r\nhi\r\nmd c q\r\nma d\r\nmn\r\n", 8, []string{"a", "b", "c", "d"}},
		{"version\r\nget a\nstats\r\n", 8, []string{"a"}},
		{"get a\r\nget b", 8, []string{"a"}},                     // incomplete line
		{"set a 0 0 10\r\nshort\r\nget b\r\n", 8, []string{"a"}}, // data block not here yet
		{"set a 0 0 x\r\nget b\r\n", 8, []string{"a"}},           // unparsable length
		{"set\r\nget b\r\n", 8, nil},                             // no key
		{"", 8, nil},
	} {
		got := Keys(nil, []byte(tt.in), tt.max)
		var gs []string
		for _, k := range got {
			gs = append(gs, string(k))
		}
		if !slices.Equal(gs, tt.want) {
			t.Errorf("Keys(%q, %d) = %q, want %q", tt.in, tt.max, gs, tt.want)
		}
	}
}

// TestKeysDoesNotAllocate: the server calls Keys with a fixed array.
func TestKeysDoesNotAllocate(t *testing.T) {
	var keys [32][]byte
	in := []byte("get a b\r\nset k 0 0 1\r\nx\r\nmg z v\r\n")
	if n := testing.AllocsPerRun(100, func() { Keys(keys[:0], in, len(keys)) }); n != 0 {
		t.Errorf("Keys allocates %.1f times per call", n)
	}
}

var keysReader *Reader

// FuzzKeys checks Keys against the Reader: the keys of the requests the
// Reader parses before its first error come first in what Keys returns,
// and when the Reader parses the whole input, Keys returns exactly their
// keys. Whatever the input, Keys returns at most max non-empty keys from
// inside it.
func FuzzKeys(f *testing.F) {
	for _, s := range []string{
		"get a b\r\nset k 0 0 1\r\nx\r\nmg z v\r\n", "gat 1 a\r\n", "ms a 2\r\nhi\r\nmd b\r\n",
		"set a 0 0 3\r\nget\r\nget b\r\n", "incr a 1\ndecr b 2\ntouch c 3\n", "mg YQ== b v\r\n",
		"set a 0 0 99999999999999999999\r\n", "cas a 0 0 1 1\r\nx\r\nmn\r\n",
	} {
		f.Add([]byte(s), uint8(4))
	}
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		if len(data) > fuzzMaxInput {
			return
		}
		got := Keys(nil, data, int(max))
		if len(got) > int(max) {
			t.Fatalf("%d keys, max %d", len(got), max)
		}
		for _, k := range got {
			if len(k) == 0 || bytes.IndexByte(k, ' ') >= 0 || bytes.IndexByte(k, '\n') >= 0 {
				t.Fatalf("key %q", k)
			}
		}

		if keysReader == nil {
			keysReader = NewReader(nil, 16<<10, nil)
		}
		r := keysReader
		r.Reset(bytes.NewReader(data))
		var want []string
		var req Request
		clean := false
		for len(want) < int(max) {
			err := r.Read(&req)
			if errors.Is(err, io.EOF) {
				clean = true
				break
			}
			if err != nil || req.Command.IsMeta() && req.Meta.Base64 {
				break // Keys may return anything from here on
			}
			for _, k := range req.Keys {
				want = append(want, string(k))
			}
		}
		want = want[:min(len(want), int(max))]
		var gs []string
		for _, k := range got {
			gs = append(gs, string(k))
		}
		if len(gs) < len(want) || !slices.Equal(gs[:len(want)], want) || clean && len(gs) != len(want) {
			t.Fatalf("Keys(%q) = %q, the Reader parsed keys %q (whole input: %v)", data, gs, want, clean)
		}
	})
}
