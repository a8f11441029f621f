package resp

// splitArgs splits an inline request line into the arena with the rules of
// Redis's sdssplitargs (sds.c):
//
//   - arguments are separated by runs of C isspace bytes;
//   - "double quotes" take the escapes \xHH, \n, \r, \t, \b, \a and \<c>
//     for any other c;
//   - 'single quotes' take only \' as an escape;
//   - a closing quote must be followed by a space or the end of the line,
//     and a quote left open is an error (ErrUnbalancedQuotes);
//   - a quote may open in the middle of an argument: a"b c" is `ab c`.
//
// The line has no NUL byte (readInline refuses those), so the C string's
// end is the end of the slice.
func (r *Reader) splitArgs(line []byte) error {
	p := 0
	at := func(i int) byte { // the byte at i, or the C string's NUL
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p >= len(line) {
			return nil
		}
		start := len(r.arena)
		inq, insq := false, false
		for done := false; !done; {
			c := at(p)
			switch {
			case inq:
				switch {
				case c == '\\' && at(p+1) == 'x' && isHex(at(p+2)) && isHex(at(p+3)):
					r.arena = append(r.arena, unhex(at(p+2))<<4|unhex(at(p+3)))
					p += 3
				case c == '\\' && at(p+1) != 0:
					p++
					switch e := line[p]; e {
					case 'n':
						r.arena = append(r.arena, '\n')
					case 'r':
						r.arena = append(r.arena, '\r')
					case 't':
						r.arena = append(r.arena, '\t')
					case 'b':
						r.arena = append(r.arena, '\b')
					case 'a':
						r.arena = append(r.arena, '\a')
					default:
						r.arena = append(r.arena, e)
					}
				case c == '"':
					if n := at(p + 1); n != 0 && !isSpace(n) {
						return ErrUnbalancedQuotes
					}
					done = true
				case c == 0:
					return ErrUnbalancedQuotes
				default:
					r.arena = append(r.arena, c)
				}
			case insq:
				switch {
				case c == '\\' && at(p+1) == '\'':
					p++
					r.arena = append(r.arena, '\'')
				case c == '\'':
					if n := at(p + 1); n != 0 && !isSpace(n) {
						return ErrUnbalancedQuotes
					}
					done = true
				case c == 0:
					return ErrUnbalancedQuotes
				default:
					r.arena = append(r.arena, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					r.arena = append(r.arena, c)
				}
			}
			if p < len(line) {
				p++
			}
		}
		r.offs = append(r.offs, start, len(r.arena))
	}
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
