package rdb

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

// lzfCompress compresses s as Redis's lzf_compress does (VERY_FAST, a
// hash table of 2^16 offsets, here zeroed), or returns nil when that does
// not save at least 4 bytes (Redis then stores the string as it is).
func lzfCompress(s []byte) []byte {
	if len(s) <= 4 {
		return nil
	}
	limit := len(s) - 4
	htab := make([]uint32, 1<<lzfHashLog)
	idx := func(h uint32) uint32 { return ((h >> (3*8 - lzfHashLog)) - h*5) & (1<<lzfHashLog - 1) }
	out := make([]byte, 1, limit+3)
	lit := 0 // the run being written starts at out[len(out)-lit-1]
	ip := 0
	end := len(s)
	hval := uint32(s[0])<<8 | uint32(s[1])
	for ip < end-2 {
		hval = hval<<8 | uint32(s[ip+2])
		slot := &htab[idx(hval)]
		ref := int(*slot)
		*slot = uint32(ip)
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
			htab[idx(hval)] = uint32(ip)
			ip++
			hval = hval<<8 | uint32(s[ip+2])
			htab[idx(hval)] = uint32(ip)
			ip++
		} else {
			lit++
			out = append(out, s[ip])
			ip++
			if lit == lzfMaxLit {
				out[len(out)-lit-1] = byte(lit - 1)
				lit = 0
				out = append(out, 0)
			}
		}
		if len(out) > limit+1 {
			return nil
		}
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
