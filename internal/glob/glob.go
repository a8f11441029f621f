// Package glob is Redis's glob matching (util.c stringmatchlen), shared
// by the Redis port (KEYS, SCAN MATCH, PSUBSCRIBE, CONFIG GET, ...) and
// the ACL rules (key and channel patterns).
package glob

// Pattern is a compiled Redis glob pattern (util.c stringmatchlen): '*' any
// run of bytes, '?' any one byte, "[abc]", "[^a-z]" classes (ranges in
// either order), '\' escaping the next byte. Matching is the classic
// two-pointer wildcard algorithm, which backtracks only to the most
// recent '*': O(len(pattern) x len(key)) in the worst case, never the
// exponential blow-up of naive recursion on patterns like "*a*a*a*a*b".
//
// An empty key matches only the empty pattern, as in Redis, whose matcher
// never enters its loop for an empty string; KEYS and SCAN special-case
// the pattern "*" (every key, the empty one too) before matching.
type Pattern struct {
	toks  []globTok
	empty bool // the pattern has no bytes
}

type globTok struct {
	kind   byte // '*', '?', '[' or 'c' (a literal byte)
	c      byte
	negate bool
	set    []byte // '[' members: pairs lo,hi (a single byte is c,c)
}

// Compile parses the pattern p (any bytes; a malformed class is taken
// as Redis takes it).
func Compile(p []byte) *Pattern {
	g := &Pattern{empty: len(p) == 0}
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*':
			// Runs of '*' match as one.
			if n := len(g.toks); n == 0 || g.toks[n-1].kind != '*' {
				g.toks = append(g.toks, globTok{kind: '*'})
			}
		case '?':
			g.toks = append(g.toks, globTok{kind: '?'})
		case '[':
			t := globTok{kind: '['}
			i++
			if i < len(p) && p[i] == '^' {
				t.negate = true
				i++
			}
			for ; i < len(p) && p[i] != ']'; i++ {
				switch {
				case p[i] == '\\' && i+1 < len(p):
					i++
					t.set = append(t.set, p[i], p[i])
				case i+2 < len(p) && p[i+1] == '-':
					lo, hi := p[i], p[i+2]
					if lo > hi {
						lo, hi = hi, lo
					}
					t.set = append(t.set, lo, hi)
					i += 2
				default:
					t.set = append(t.set, p[i], p[i])
				}
			}
			// An unterminated class takes the rest of the pattern, as in
			// Redis.
			g.toks = append(g.toks, t)
		case '\\':
			if i+1 < len(p) {
				i++
			}
			g.toks = append(g.toks, globTok{kind: 'c', c: p[i]})
		default:
			g.toks = append(g.toks, globTok{kind: 'c', c: p[i]})
		}
	}
	return g
}

func (t *globTok) matchByte(c byte) bool {
	switch t.kind {
	case '?':
		return true
	case 'c':
		return t.c == c
	}
	in := false
	for i := 0; i < len(t.set); i += 2 {
		if t.set[i] <= c && c <= t.set[i+1] {
			in = true
			break
		}
	}
	return in != t.negate
}

// Match reports whether s matches the pattern, as stringmatchlen does.
func (g *Pattern) Match(s []byte) bool {
	if len(s) == 0 {
		return g.empty
	}
	p, i := 0, 0
	star, mark := -1, 0 // last '*' token and the key position it resumes from
	for i < len(s) {
		switch {
		case p < len(g.toks) && g.toks[p].kind == '*':
			star, mark = p, i
			p++
		case p < len(g.toks) && g.toks[p].matchByte(s[i]):
			p++
			i++
		case star >= 0:
			mark++
			p, i = star+1, mark
		default:
			return false
		}
	}
	for p < len(g.toks) && g.toks[p].kind == '*' {
		p++
	}
	return p == len(g.toks)
}
