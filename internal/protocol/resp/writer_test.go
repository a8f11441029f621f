package resp

import (
	"bytes"
	"math"
	"testing"
)

func TestWriter(t *testing.T) {
	tests := []struct {
		name       string
		write      func(w *Writer)
		resp2, rs3 string
	}{
		{"simple", func(w *Writer) { w.Simple("PONG") }, "+PONG\r\n", "+PONG\r\n"},
		{"ok", func(w *Writer) { w.OK() }, "+OK\r\n", "+OK\r\n"},
		{"error", func(w *Writer) { w.Error("ERR bad\r\nthing") }, "-ERR bad  thing\r\n", "-ERR bad  thing\r\n"},
		{"int", func(w *Writer) { w.Int(-42) }, ":-42\r\n", ":-42\r\n"},
		{"bulk", func(w *Writer) { w.Bulk([]byte("a\r\nb")) }, "$4\r\na\r\nb\r\n", "$4\r\na\r\nb\r\n"},
		{"bulk empty", func(w *Writer) { w.Bulk(nil) }, "$0\r\n\r\n", "$0\r\n\r\n"},
		{"bulk string", func(w *Writer) { w.BulkString("hi") }, "$2\r\nhi\r\n", "$2\r\nhi\r\n"},
		{"bulk int", func(w *Writer) { w.BulkInt(1700000000) }, "$10\r\n1700000000\r\n", "$10\r\n1700000000\r\n"},
		{"null", func(w *Writer) { w.Null() }, "$-1\r\n", "_\r\n"},
		{"null array", func(w *Writer) { w.NullArray() }, "*-1\r\n", "_\r\n"},
		{"array", func(w *Writer) { w.Array(2); w.Int(1); w.Null() }, "*2\r\n:1\r\n$-1\r\n", "*2\r\n:1\r\n_\r\n"},
		{"map", func(w *Writer) { w.Map(1); w.BulkString("k"); w.Int(1) }, "*2\r\n$1\r\nk\r\n:1\r\n", "%1\r\n$1\r\nk\r\n:1\r\n"},
		{"set", func(w *Writer) { w.Set(1); w.BulkString("a") }, "*1\r\n$1\r\na\r\n", "~1\r\n$1\r\na\r\n"},
		{"double", func(w *Writer) { w.Double(1.5) }, "$3\r\n1.5\r\n", ",1.5\r\n"},
		{"double inf", func(w *Writer) { w.Double(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
		{"double shortest", func(w *Writer) { w.Double(0.1) }, "$3\r\n0.1\r\n", ",0.1\r\n"}, // Redis 7.0: 0.10000000000000001
		{"double integer", func(w *Writer) { w.Double(1e17) }, "$18\r\n100000000000000000\r\n", ",100000000000000000\r\n"},
		{"double nan", func(w *Writer) { w.Double(math.NaN()) }, "$3\r\nnan\r\n", ",nan\r\n"},
		{"bool", func(w *Writer) { w.Bool(true) }, ":1\r\n", "#t\r\n"},
		{"verbatim", func(w *Writer) { w.Verbatim("txt", []byte("a:1")) }, "$3\r\na:1\r\n", "=7\r\ntxt:a:1\r\n"},
		{"push", func(w *Writer) { w.Push(2); w.BulkString("a"); w.Int(1) }, "*2\r\n$1\r\na\r\n:1\r\n", ">2\r\n$1\r\na\r\n:1\r\n"},
	}
	for _, tt := range tests {
		for _, resp3 := range []bool{false, true} {
			var buf bytes.Buffer
			w := NewWriter(&buf, 64)
			w.SetRESP3(resp3)
			tt.write(w)
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			want := tt.resp2
			if resp3 {
				want = tt.rs3
			}
			if got := buf.String(); got != want {
				t.Errorf("%s (RESP3 %v) = %q, want %q", tt.name, resp3, got, want)
			}
		}
	}
}

func TestWriterZeroAllocs(t *testing.T) {
	var sink bytes.Buffer
	w := NewWriter(&sink, 4096)
	val := bytes.Repeat([]byte("v"), 100)
	allocs := testing.AllocsPerRun(1000, func() {
		w.Bulk(val)
		w.Int(12345)
		w.OK()
		w.Null()
		w.Array(3)
		w.Error("ERR syntax error")
		w.Double(3.25)
		w.BulkInt(99)
		sink.Reset()
		_ = w.Flush()
		sink.Reset()
	})
	if allocs != 0 {
		t.Errorf("%v allocs per reply batch, want 0", allocs)
	}
}

// TestAppendPush pins that a message encoded once with AppendPush and
// AppendBulk is byte for byte what a Writer writes for it.
func TestAppendPush(t *testing.T) {
	for _, resp3 := range []bool{false, true} {
		var buf bytes.Buffer
		w := NewWriter(&buf, 64)
		w.SetRESP3(resp3)
		w.Push(3)
		w.BulkString("message")
		w.Bulk([]byte("ch"))
		w.Bulk(nil)
		_ = w.Flush()
		got := AppendBulk(AppendBulk(AppendBulk(AppendPush(nil, resp3, 3), []byte("message")), []byte("ch")), nil)
		if string(got) != buf.String() {
			t.Errorf("resp3=%v: AppendPush... = %q, Writer wrote %q", resp3, got, buf.String())
		}
	}
}
