package redis

import (
	"bytes"

	"github.com/minikv/minikv/internal/store"
)

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN] (Redis's
// lcsCommand): the longest common subsequence of two strings by the
// usual dynamic programming table, walked back from the end as Redis
// does, so the string and the ranges are the ones Redis picks.

// lcsMaxTable is Redis's proto-max-bulk-len default, the largest table of
// 4-byte cells LCS builds.
const lcsMaxTable = 512 << 20

func lcsCommands() []respCommand {
	return []respCommand{
		{name: "lcs", arity: -3, flags: []string{"readonly"}, firstKey: 1, lastKey: 2, step: 1, group: "string", since: "7.0.0",
			complexity: "O(N*M) where N and M are the lengths of s1 and s2, respectively",
			summary:    "Finds the longest common substring.",
			args: []docArg{key("key1"), key("key2"), opt(token("LEN")), opt(token("IDX")),
				opt(tokArg("MINMATCHLEN", "min-match-len", "integer")), opt(token("WITHMATCHLEN"))},
			run: cmdLCS},
	}
}

// cmdLCS reads the two keys one at a time: the command is not atomic
// across them until it runs in a store.Tx.
func cmdLCS(rc *conn, argv [][]byte) {
	ia, fa := rc.st.Get(argv[1])
	ib, fb := rc.st.Get(argv[2])
	if fa && ia.Kind != store.KindString || fb && ib.Kind != store.KindString {
		rc.w.Error("ERR The specified keys must contain string values")
		return
	}
	a, b := ia.Value, ib.Value
	var getLen, getIdx, withLen bool
	var minLen int64
	for j := 3; j < len(argv); j++ {
		switch opt := argv[j]; {
		case bytes.EqualFold(opt, []byte("idx")):
			getIdx = true
		case bytes.EqualFold(opt, []byte("len")):
			getLen = true
		case bytes.EqualFold(opt, []byte("withmatchlen")):
			withLen = true
		case bytes.EqualFold(opt, []byte("minmatchlen")) && j+1 < len(argv):
			n, ok := rc.parseInt(argv[j+1])
			if !ok {
				return
			}
			minLen = max(n, 0)
			j++
		default:
			rc.w.Error(errSyntax)
			return
		}
	}
	if getIdx && getLen {
		rc.w.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	alen, blen := len(a), len(b)
	if int64(alen+1)*int64(blen+1)*4 > lcsMaxTable {
		rc.w.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	w := blen + 1
	t := make([]uint32, (alen+1)*w)
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				t[i*w+j] = t[(i-1)*w+j-1] + 1
			} else {
				t[i*w+j] = max(t[(i-1)*w+j], t[i*w+j-1])
			}
		}
	}
	total := int(t[alen*w+blen])
	if getLen {
		rc.w.Int(int64(total))
		return
	}
	result := make([]byte, total)
	type match struct{ a0, a1, b0, b1 int }
	var matches []match
	idx := total
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0 // aStart == alen: no range open
	for i, j := alen, blen; i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if t[(i-1)*w+j] > t[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			if n := aEnd - aStart + 1; minLen == 0 || int64(n) >= minLen {
				matches = append(matches, match{aStart, aEnd, bStart, bEnd})
			}
			aStart = alen
		}
	}
	if !getIdx {
		rc.w.Bulk(result)
		return
	}
	rc.w.Map(2)
	rc.w.BulkString("matches")
	rc.w.Array(len(matches))
	for _, m := range matches {
		if withLen {
			rc.w.Array(3)
		} else {
			rc.w.Array(2)
		}
		rc.w.Array(2)
		rc.w.Int(int64(m.a0))
		rc.w.Int(int64(m.a1))
		rc.w.Array(2)
		rc.w.Int(int64(m.b0))
		rc.w.Int(int64(m.b1))
		if withLen {
			rc.w.Int(int64(m.a1 - m.a0 + 1))
		}
	}
	rc.w.BulkString("len")
	rc.w.Int(int64(total))
}
