package resp

import (
	"bytes"
	"fmt"
	"testing"
)

func TestNext(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		args string // the first two arguments, %q (when ok)
		rest string
		ok   bool
	}{
		{"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*1\r\n$4\r\nPING\r\n", 2, `["GET" "a"]`, "*1\r\n$4\r\nPING\r\n", true},
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", 3, `["SET" "k"]`, "", true},
		{"*1\r\n$4\r\nPING\r\n", 1, `["PING" ""]`, "", true},
		{"*2\r\n$3\r\nGET\r\n$1\r\na", 0, `["" ""]`, "", false}, // incomplete
		{"*2\r\n$3\r\nGET\r\n$1\r\nab\r\n", 0, `["" ""]`, "", false},
		{"*0\r\n", 0, `["" ""]`, "", false},
		{"*-1\r\n", 0, `["" ""]`, "", false},
		{"GET a\r\n", 0, `["" ""]`, "", false}, // inline
		{"*1\r\n:4\r\nPING\r\n", 0, `["" ""]`, "", false},
		{"", 0, `["" ""]`, "", false},
	} {
		var argv [2][]byte
		n, rest, ok := Next([]byte(tt.in), argv[:])
		args := fmt.Sprintf("%q", argv)
		if !ok {
			args = tt.args // argv holds whatever was parsed before the failure
		}
		if n != tt.n || args != tt.args || string(rest) != tt.rest || ok != tt.ok {
			t.Errorf("Next(%q) = %d %s %q %v, want %d %s %q %v", tt.in, n, args, rest, ok, tt.n, tt.args, tt.rest, tt.ok)
		}
	}
}

// FuzzNext checks Next against the Reader: whenever Next accepts a
// request, Read parses the same arguments from the same bytes and leaves
// the same bytes unread.
func FuzzNext(f *testing.F) {
	for _, s := range []string{
		"*2\r\n$3\r\nGET\r\n$1\r\na\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\nGET a\r\n",
		"*1\r\n$-1\r\n", "*2\r\n$01\r\na\r\n", "*1\r\n$1\r\n\r\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		var argv [8][]byte
		n, rest, ok := Next(data, argv[:])
		if !ok {
			return
		}
		r := NewReader(bytes.NewReader(data), 16<<10, 0)
		got, err := r.Read()
		if err != nil {
			t.Fatalf("Next(%q) accepted %d arguments, Read: %v", data, n, err)
		}
		if len(got) != n {
			t.Fatalf("Next(%q) = %d arguments, Read %d", data, n, len(got))
		}
		for i := range min(n, len(argv)) {
			if !bytes.Equal(got[i], argv[i]) {
				t.Fatalf("Next(%q) argument %d = %q, Read %q", data, i, argv[i], got[i])
			}
		}
		if r.Buffered() != len(rest) {
			t.Fatalf("Next(%q) left %d bytes, Read %d", data, len(rest), r.Buffered())
		}
	})
}
