package rdb

import (
	"bytes"
	"sync"
)

// LZF, the compression of strings in Redis's RDB format (Redis's lzf_c.c
// and lzf_d.c, liblzf 3.6). A compressed block is a sequence of
//
//	000LLLLL + L+1 literal bytes
//	LLLooooo [+ LLLLLLLL when LLL is 7] + oooooooo
//	         a back reference: copy len+2 bytes from offset+1 bytes back
//	         (len = LLL, or 7 + the extra byte)

const (
	lzfHashLog = 16
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 1<<8 + 1<<3
)

// lzfDecompress expands in, which must produce exactly n bytes. It
// checks every run and reference against the input and the output.
func lzfDecompress(in []byte, n int) ([]byte, bool) {
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < lzfMaxLit {
			l := ctrl + 1
			if len(out)+l > n || i+l > len(in) {
				return nil, false
			}
			out = append(out, in[i:i+l]...)
			i += l
			continue
		}
		l := ctrl >> 5
		if i >= len(in) {
			return nil, false
		}
		if l == 7 {
			l += int(in[i])
			i++
			if i >= len(in) {
				return nil, false
			}
		}
		ref := len(out) - (ctrl&0x1f)<<8 - 1 - int(in[i])
		i++
		if len(out)+l+2 > n || ref < 0 {
			return nil, false
		}
		for k := 0; k < l+2; k++ { // may overlap what it appends
			out = append(out, out[ref+k])
		}
	}
	return out, len(out) == n
}

// lzfTable is lzf_compress's hash table of 2^16 offsets, reused across
// calls: an entry counts only if it was set in the current call (its
// epoch is cur), so each call sees a zeroed table, as with a fresh one,
// without clearing (or allocating) 384 KiB per string. Zeroing it per
// call made saving 200k 100-byte strings take 16 s.
type lzfTable struct {
	pos   [1 << lzfHashLog]uint32
	epoch [1 << lzfHashLog]uint16
	cur   uint16
	out   []byte // lzfCompressTo's output, reused
}

// begin starts a call: every entry reads as 0.
func (t *lzfTable) begin() {
	t.cur++
	if t.cur == 0 { // wrapped: the old epochs must go
		clear(t.epoch[:])
		t.cur = 1
	}
}

// swap returns the entry at i (0 if unset in this call) and sets it to v.
func (t *lzfTable) swap(i uint32, v int) int {
	old := 0
	if t.epoch[i] == t.cur {
		old = int(t.pos[i])
	}
	t.pos[i], t.epoch[i] = uint32(v), t.cur
	return old
}

// lzfTables lends tables to lzfCompress; a table is 384 KiB, too much
// for each call to allocate.
var lzfTables = sync.Pool{New: func() any { return new(lzfTable) }}

// lzfCompress compresses s as Redis's lzf_compress does (VERY_FAST, a
// hash table of 2^16 offsets, here zeroed), or returns nil when that does
// not save at least 4 bytes (Redis then stores the string as it is).
func lzfCompress(s []byte) []byte {
	htab := lzfTables.Get().(*lzfTable)
	defer lzfTables.Put(htab)
	return bytes.Clone(lzfCompressTo(htab, s))
}

// lzfCompressTo is lzfCompress with htab's table, writing into its
// buffer: the result is valid until htab's next use (AppendString copies
// it, saving an allocation a string).
func lzfCompressTo(htab *lzfTable, s []byte) []byte {
	if len(s) <= 4 {
		return nil
	}
	htab.begin()
	limit := len(s) - 4
	idx := func(h uint32) uint32 { return ((h >> (3*8 - lzfHashLog)) - h*5) & (1<<lzfHashLog - 1) }
	if cap(htab.out) < limit+3 || cap(htab.out) > 1<<20 && limit+3 < 1<<20 {
		htab.out = make([]byte, 0, limit+3)
	}
	out := append(htab.out[:0], 0)
	defer func() { htab.out = out[:0] }()
	lit := 0 // the run being written starts at out[len(out)-lit-1]
	ip := 0
	end := len(s)
	hval := uint32(s[0])<<8 | uint32(s[1])
	for ip < end-2 {
		hval = hval<<8 | uint32(s[ip+2])
		ref := htab.swap(idx(hval), ip)
		if off := ip - ref - 1; ref > 0 && off >= 0 && off < lzfMaxOff && s[ref+2] == s[ip+2] && s[ref] == s[ip] && s[ref+1] == s[ip+1] {
			l := 2
			maxlen := min(end-ip-l, lzfMaxRef)
			matched := false
			if maxlen > 16 {
				for range 16 {
					l++
					if s[ref+l] != s[ip+l] {
						matched = true
						break
					}
				}
			}
			if !matched {
				for {
					l++
					if !(l < maxlen && s[ref+l] == s[ip+l]) {
						break
					}
				}
			}
			// lzf_compress gives up when the match and the run after
			// it might not fit before the output's end (limit), with
			// its exact test: a string whose output would just fit is
			// then stored as it is, as Redis stores it.
			if undo := len(out) + 4; lit == 0 && undo-1 >= limit || lit > 0 && undo >= limit {
				return nil
			}
			out[len(out)-lit-1] = byte(lit - 1) // stop the run
			if lit == 0 {
				out = out[:len(out)-1] // undo an empty run
			}
			l -= 2
			ip++
			if l < 7 {
				out = append(out, byte(off>>8+l<<5))
			} else {
				out = append(out, byte(off>>8+7<<5), byte(l-7))
			}
			out = append(out, byte(off), 0) // and start a run
			lit = 0
			ip += l + 1
			if ip >= end-2 {
				break
			}
			ip -= 2
			hval = uint32(s[ip])<<8 | uint32(s[ip+1])
			hval = hval<<8 | uint32(s[ip+2])
			htab.swap(idx(hval), ip)
			ip++
			hval = hval<<8 | uint32(s[ip+2])
			htab.swap(idx(hval), ip)
			ip++
		} else {
			if len(out) >= limit { // no room for one more literal
				return nil
			}
			lit++
			out = append(out, s[ip])
			ip++
			if lit == lzfMaxLit {
				out[len(out)-lit-1] = byte(lit - 1)
				lit = 0
				out = append(out, 0)
			}
		}
	}
	if len(out)+3 > limit { // the last (at most 2) literals and their run
		return nil
	}
	for ip < end {
		lit++
		out = append(out, s[ip])
		ip++
		if lit == lzfMaxLit {
			out[len(out)-lit-1] = byte(lit - 1)
			lit = 0
			out = append(out, 0)
		}
	}
	out[len(out)-lit-1] = byte(lit - 1)
	if lit == 0 {
		out = out[:len(out)-1]
	}
	if len(out) > limit {
		return nil
	}
	return out
}
