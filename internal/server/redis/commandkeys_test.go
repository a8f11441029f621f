package redis

import (
	"fmt"
	"testing"
)

// TestNumKeys: the keysOf of numkeys commands finds the destination and
// exactly numkeys keys, and reports a numkeys the arguments cannot hold.
func TestNumKeys(t *testing.T) {
	args := func(s ...string) [][]byte {
		var out [][]byte
		for _, a := range s {
			out = append(out, []byte(a))
		}
		return out
	}
	for _, tc := range []struct {
		f    func([][]byte, [][]byte) ([][]byte, bool)
		argv [][]byte
		want string
		ok   bool
	}{
		{numKeys(2, 1), args("zunionstore", "d", "2", "a", "b", "weights", "1", "2"), "[d a b]", true},
		{numKeys(2, 1), args("zunionstore", "d", "3", "a", "b"), "[d]", false},
		{numKeys(2, 1), args("zunionstore", "d", "x", "a"), "[d]", false},
		{numKeys(2, 1), args("zunionstore", "d", "0", "a"), "[d]", false},
		{numKeys(1), args("lmpop", "2", "a", "b", "left"), "[a b]", true},
		{numKeys(1), args("lmpop", "-1", "a"), "[]", false},
	} {
		got, ok := tc.f(tc.argv, nil)
		if s := fmt.Sprintf("%s", got); s != tc.want || ok != tc.ok {
			t.Errorf("keys of %q = %s %v, want %s %v", tc.argv, s, ok, tc.want, tc.ok)
		}
	}
}
