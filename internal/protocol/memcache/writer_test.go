package memcache

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestWriter(t *testing.T) {
	tests := []struct {
		name  string
		write func(w *Writer)
		want  string
	}{
		{"value", func(w *Writer) { w.Value([]byte("k"), 5, []byte("hello"), 0, false) }, "VALUE k 5 5\r\nhello\r\n"},
		{"value cas", func(w *Writer) { w.Value([]byte("k"), 0, []byte("x"), 42, true) }, "VALUE k 0 1 42\r\nx\r\n"},
		{"value extremes", func(w *Writer) { w.Value([]byte("k"), math.MaxUint32, nil, math.MaxUint64, true) }, "VALUE k 4294967295 0 18446744073709551615\r\n\r\n"},
		{"value binary", func(w *Writer) { w.Value([]byte("k"), 1, []byte("a\r\nb"), 0, false) }, "VALUE k 1 4\r\na\r\nb\r\n"},
		{"line", func(w *Writer) { w.Line(Stored) }, "STORED\r\n"},
		{"empty line", func(w *Writer) { w.Line("") }, "\r\n"},
		{"uint", func(w *Writer) { w.Uint(18446744073709551615) }, "18446744073709551615\r\n"},
		{"uint zero", func(w *Writer) { w.Uint(0) }, "0\r\n"},
		{"stat", func(w *Writer) { w.Stat("version", "1.6.18") }, "STAT version 1.6.18\r\n"},
		{"stat uint", func(w *Writer) { w.StatUint("curr_items", 12) }, "STAT curr_items 12\r\n"},
		{"stat int", func(w *Writer) { w.StatInt("delta", -3) }, "STAT delta -3\r\n"},
		{"raw", func(w *Writer) { _, _ = w.Write([]byte("MN\r\n")) }, "MN\r\n"},
		{"get reply", func(w *Writer) {
			w.Value([]byte("a"), 0, []byte("1"), 0, false)
			w.Value([]byte("b"), 2, []byte("22"), 0, false)
			w.Line(End)
		}, "VALUE a 0 1\r\n1\r\nVALUE b 2 2\r\n22\r\nEND\r\n"},
	}
	for _, tt := range tests {
		for _, size := range []int{16, 4096} {
			var out bytes.Buffer
			w := NewWriter(&out, size)
			tt.write(w)
			if err := w.Flush(); err != nil {
				t.Fatalf("%s: Flush = %v", tt.name, err)
			}
			if got := out.String(); got != tt.want {
				t.Errorf("%s (buffer %d): wrote %q, want %q", tt.name, size, got, tt.want)
			}
		}
	}
}

func TestWriterLargeValue(t *testing.T) {
	val := bytes.Repeat([]byte("v"), 100000)
	var out bytes.Buffer
	w := NewWriter(&out, 4096)
	w.Value([]byte("big"), 0, val, 0, false)
	w.Line(End)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "VALUE big 0 100000\r\n" + string(val) + "\r\nEND\r\n"
	if out.String() != want {
		t.Errorf("large value: wrote %d bytes, want %d", out.Len(), len(want))
	}
}

func TestWriterBufferedAndReset(t *testing.T) {
	var a, b bytes.Buffer
	w := NewWriter(&a, 4096)
	w.Line(OK)
	if w.Buffered() != 4 {
		t.Errorf("Buffered = %d, want 4", w.Buffered())
	}
	w.Reset(&b)
	if w.Buffered() != 0 {
		t.Errorf("Buffered after Reset = %d, want 0", w.Buffered())
	}
	w.Line(End)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if a.Len() != 0 || b.String() != "END\r\n" {
		t.Errorf("after Reset: old writer got %q, new got %q", a.String(), b.String())
	}
}

type failWriter struct{}

var errWrite = errors.New("write failed")

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestWriterStickyError(t *testing.T) {
	w := NewWriter(failWriter{}, 16)
	w.Value([]byte("k"), 0, []byte(strings.Repeat("x", 100)), 0, false)
	w.Line(End)
	if err := w.Flush(); !errors.Is(err, errWrite) {
		t.Errorf("Flush after failed writes = %v, want %v", err, errWrite)
	}
}
