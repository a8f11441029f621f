package redis

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisBitmapsHLL runs the bitmap, BITFIELD, HyperLogLog and LCS
// commands through go-redis's typed API, over RESP3 and RESP2.
func TestGoRedisBitmapsHLL(t *testing.T) {
	for _, resp2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("resp2=%v", resp2), func(t *testing.T) {
			rdb, _ := newGoRedis(t, resp2)
			ctx := context.Background()
			check := func(what string, got any, err error, want any) {
				t.Helper()
				if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s = %v (%v), want %v", what, got, err, want)
				}
			}
			n, err := rdb.SetBit(ctx, "b", 7, 1).Result()
			check("SETBIT", n, err, 0)
			n, err = rdb.GetBit(ctx, "b", 7).Result()
			check("GETBIT", n, err, 1)
			rdb.Set(ctx, "s", "foobar", 0)
			n, err = rdb.BitCount(ctx, "s", nil).Result()
			check("BITCOUNT", n, err, 26)
			n, err = rdb.BitCount(ctx, "s", &redis.BitCount{Start: 5, End: 30, Unit: "BIT"}).Result()
			check("BITCOUNT BIT", n, err, 17)
			n, err = rdb.BitPos(ctx, "s", 1, 2).Result()
			check("BITPOS", n, err, 17)
			n, err = rdb.BitPosSpan(ctx, "s", 0, 1, 20, "bit").Result()
			check("BITPOS BIT", n, err, 3)
			n, err = rdb.BitOpAnd(ctx, "d", "s", "b").Result()
			check("BITOP AND", n, err, 6)
			n, err = rdb.BitOpNot(ctx, "d", "b").Result()
			check("BITOP NOT", n, err, 1)
			v, err := rdb.Get(ctx, "d").Result()
			check("GET d", []byte(v), err, []byte{0xfe})
			f, err := rdb.BitField(ctx, "bf", "SET", "i8", 0, -100, "INCRBY", "u4", "#3", 20, "GET", "i8", 0).Result()
			check("BITFIELD", f, err, []int64{0, 4, -100})
			f, err = rdb.BitFieldRO(ctx, "bf", "u8", 0).Result()
			check("BITFIELD_RO", f, err, []int64{156})
			added, err := rdb.PFAdd(ctx, "h", "a", "b", "c", "a").Result()
			check("PFADD", added, err, 1)
			rdb.PFAdd(ctx, "h2", "c", "d")
			n, err = rdb.PFCount(ctx, "h").Result()
			check("PFCOUNT", n, err, 3)
			n, err = rdb.PFCount(ctx, "h", "h2").Result()
			check("PFCOUNT union", n, err, 4)
			ok, err := rdb.PFMerge(ctx, "hm", "h", "h2").Result()
			check("PFMERGE", ok, err, "OK")
			rdb.Set(ctx, "l1", "ohmytext", 0)
			rdb.Set(ctx, "l2", "mynewtext", 0)
			lcs, err := rdb.LCS(ctx, &redis.LCSQuery{Key1: "l1", Key2: "l2"}).Result()
			check("LCS", lcs.MatchString, err, "mytext")
			lcs, err = rdb.LCS(ctx, &redis.LCSQuery{Key1: "l1", Key2: "l2", Idx: true, MinMatchLen: 4, WithMatchLen: true}).Result()
			check("LCS IDX", fmt.Sprint(lcs.Matches, lcs.Len), err, "[{{4 7} {5 8} 4}] 6")
			rdb.HSet(ctx, "hash", "f", "v")
			if err := rdb.PFAdd(ctx, "s", "x").Err(); err == nil || err.Error() != errNotHLL {
				t.Errorf("PFADD on a plain string: %v", err)
			}
			if err := rdb.SetBit(ctx, "hash", 1, 1).Err(); err == nil || err.Error() != errWrongType {
				t.Errorf("SETBIT on a hash: %v", err)
			}
		})
	}
}
