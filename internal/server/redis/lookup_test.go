package redis

import (
	"strings"
	"testing"
)

// TestLookupFindsEveryCommand checks the lookup table against the map it
// is built from, in every case, and that names it does not hold miss.
func TestLookupFindsEveryCommand(t *testing.T) {
	for name, c := range respCommands {
		for _, n := range []string{name, strings.ToUpper(name), strings.ToUpper(name[:1]) + name[1:]} {
			if got := lookupCommand([]byte(n)); got != c {
				t.Fatalf("lookup(%q) = %v, want %q", n, got, c.name)
			}
		}
	}
	for _, n := range []string{"", "gett", "ge", "get\x00", "GET ", strings.Repeat("a", 40), "client|list", "\xff\xfe"} {
		if got := lookupCommand([]byte(n)); got != nil {
			t.Fatalf("lookup(%q) = %q, want nil", n, got.name)
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	names := [][]byte{[]byte("GET"), []byte("set"), []byte("zrangebyscore"), []byte("hset")}
	for i := 0; b.Loop(); i++ {
		if lookupCommand(names[i&3]) == nil {
			b.Fatal("miss")
		}
	}
}
