package redis

import (
	"fmt"
	"testing"

	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/store"
)

// TestZSetDispatchZeroAllocs: ZADD (a new score for a member) and ZSCORE
// allocate nothing once warm, on a small and a big sorted set.
func TestZSetDispatchZeroAllocs(t *testing.T) {
	rs := startRESP(t, server.Config{}, store.Config{})
	rc := dispatchConn(New(rs.srv))
	for _, n := range []int{10, 1000} {
		key := fmt.Sprint("z", n)
		for i := range n {
			rc.dispatch([][]byte{[]byte("ZADD"), []byte(key), []byte(fmt.Sprint(i)), []byte(fmt.Sprint("member", i))})
		}
		scores := [][]byte{[]byte("1.5"), []byte("7"), []byte("-2.25")}
		i := 0
		zadd := [][]byte{[]byte("ZADD"), []byte(key), nil, []byte("member3")}
		zscore := [][]byte{[]byte("ZSCORE"), []byte(key), []byte("member3")}
		allocs := testing.AllocsPerRun(1000, func() {
			zadd[2] = scores[i%len(scores)]
			i++
			rc.dispatch(zadd)
			rc.dispatch(zscore)
		})
		if allocs != 0 {
			t.Errorf("n=%d: ZADD+ZSCORE allocate %v times per pair", n, allocs)
		}
	}
}
