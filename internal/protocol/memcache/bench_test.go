package memcache

import (
	"io"
	"strings"
	"testing"
)

func benchRead(b *testing.B, in string) {
	r := NewReader(&loopReader{data: []byte(in)}, 16<<10, nil)
	var req Request
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Read(&req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadGet(b *testing.B)   { benchRead(b, "get user:1000\r\n") }
func BenchmarkReadGet10(b *testing.B) { benchRead(b, "get k1 k2 k3 k4 k5 k6 k7 k8 k9 k10\r\n") }
func BenchmarkReadSet32(b *testing.B) {
	benchRead(b, "set user:1000 0 0 32\r\n"+strings.Repeat("v", 32)+"\r\n")
}

func BenchmarkReadSet4K(b *testing.B) {
	benchRead(b, "set user:1000 0 0 4096\r\n"+strings.Repeat("v", 4096)+"\r\n")
}

func BenchmarkReadSet64K(b *testing.B) {
	benchRead(b, "set user:1000 0 0 65536\r\n"+strings.Repeat("v", 65536)+"\r\n")
}
func BenchmarkReadDelete(b *testing.B) { benchRead(b, "delete user:1000\r\n") }
func BenchmarkReadIncr(b *testing.B)   { benchRead(b, "incr counter 1\r\n") }

func BenchmarkWriterValue(b *testing.B) {
	w := NewWriter(io.Discard, 16<<10)
	key, val := []byte("user:1000"), []byte(strings.Repeat("v", 32))
	b.ReportAllocs()
	for b.Loop() {
		w.Value(key, 0, val, 12345, true)
	}
}

func BenchmarkWriterGetReply(b *testing.B) {
	w := NewWriter(io.Discard, 16<<10)
	key, val := []byte("user:1000"), []byte(strings.Repeat("v", 32))
	b.ReportAllocs()
	for b.Loop() {
		w.Value(key, 0, val, 0, false)
		w.Line(End)
		_ = w.Flush()
	}
}
