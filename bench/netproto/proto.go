package main

import "bytes"

// value is what every GET answers: the 3-byte "xxx" redis-benchmark sets
// by default, so the wire carries what a real hit carries.
var value = []byte("xxx")

// serveFunc consumes the complete requests at the front of in, appends
// their replies to out, and returns how many bytes of in it consumed.
// An incomplete request at the end is left for the next read.
type serveFunc func(in, out []byte) (int, []byte)

// serveRESP answers RESP arrays of bulk strings: GET with a bulk value,
// SET (and anything else) with +OK, PING with +PONG, CONFIG with an empty
// array (redis-benchmark asks for two settings at start).
func serveRESP(in, out []byte) (int, []byte) {
	done := 0
	for done < len(in) {
		p := in[done:]
		if p[0] != '*' {
			// An inline command: one line.
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				return done, out
			}
			out = append(out, "+PONG\r\n"...)
			done += i + 1
			continue
		}
		n, i, ok := respInt(p, 1)
		if !ok {
			return done, out
		}
		var name []byte
		for a := 0; a < n; a++ {
			if i >= len(p) || p[i] != '$' {
				return done, out // incomplete (or not a bulk: treat as incomplete)
			}
			l, j, ok := respInt(p, i+1)
			if !ok || j+l+2 > len(p) {
				return done, out
			}
			if a == 0 {
				name = p[j : j+l]
			}
			i = j + l + 2
		}
		switch {
		case len(name) == 3 && name[0]|0x20 == 'g':
			out = append(out, "$3\r\n"...)
			out = append(out, value...)
			out = append(out, "\r\n"...)
		case len(name) == 4 && name[0]|0x20 == 'p':
			out = append(out, "+PONG\r\n"...)
		case len(name) == 6 && name[0]|0x20 == 'c':
			out = append(out, "*0\r\n"...)
		default:
			out = append(out, "+OK\r\n"...)
		}
		done += i
	}
	return done, out
}

// respInt parses the decimal number at p[i:] up to CRLF, returning it and
// the index after the LF.
func respInt(p []byte, i int) (int, int, bool) {
	n := 0
	for ; i < len(p); i++ {
		c := p[i]
		if c == '\r' {
			if i+1 >= len(p) {
				return 0, 0, false
			}
			return n, i + 2, true
		}
		if c == '-' {
			continue
		}
		n = n*10 + int(c-'0')
	}
	return 0, 0, false
}

// serveMemcache answers memcached text commands: get with one hit of
// value, set with STORED (after its data block), anything else ERROR.
func serveMemcache(in, out []byte) (int, []byte) {
	done := 0
	for done < len(in) {
		p := in[done:]
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return done, out
		}
		line := p[:i]
		switch {
		case bytes.HasPrefix(line, []byte("get ")) || bytes.HasPrefix(line, []byte("gets ")):
			key := bytes.TrimSpace(line[bytes.IndexByte(line, ' ')+1:])
			if sp := bytes.IndexByte(key, ' '); sp >= 0 {
				key = key[:sp]
			}
			out = append(out, "VALUE "...)
			out = append(out, key...)
			out = append(out, " 0 3\r\n"...)
			out = append(out, value...)
			out = append(out, "\r\nEND\r\n"...)
			done += i + 1
		case bytes.HasPrefix(line, []byte("set ")):
			f := bytes.Fields(line)
			if len(f) < 5 {
				out = append(out, "ERROR\r\n"...)
				done += i + 1
				continue
			}
			n := 0
			for _, c := range f[4] {
				n = n*10 + int(c-'0')
			}
			if i+1+n+2 > len(p) {
				return done, out
			}
			out = append(out, "STORED\r\n"...)
			done += i + 1 + n + 2
		default:
			out = append(out, "ERROR\r\n"...)
			done += i + 1
		}
	}
	return done, out
}
