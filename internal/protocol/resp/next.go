package resp

import "bytes"

// Pending returns the bytes already read and not yet parsed, without
// consuming them. They alias the Reader's buffer and are valid until the
// next Read or Wait.
func (r *Reader) Pending() []byte {
	b, _ := r.br.Peek(r.br.Buffered())
	return b
}

// Next parses the multibulk request at the start of buf without copying
// anything, so a server can look at the requests of a pipelined batch
// (to prefetch what they will read) before running them. It stores up to
// len(argv) arguments in argv, aliasing buf, and returns how many the
// request has and the bytes after it. ok is false when buf does not start
// with a complete, well-formed multibulk request of at least one argument
// (an inline command, a request not fully read yet, anything Read would
// refuse): the caller stops there and lets Read deal with it.
func Next(buf []byte, argv [][]byte) (n int, rest []byte, ok bool) {
	count, buf, ok := countLine(buf, '*')
	if !ok || count < 1 || count > DefaultMaxArgs {
		return 0, nil, false
	}
	for i := range int(count) {
		size, b, ok := countLine(buf, '$')
		if !ok || size < 0 || size > int64(len(b))-2 || b[size] != '\r' || b[size+1] != '\n' {
			return 0, nil, false
		}
		if i < len(argv) {
			argv[i] = b[:size:size]
		}
		buf = b[size+2:]
	}
	return int(count), buf, true
}

// countLine parses "<kind><number>\r\n" at the start of buf.
func countLine(buf []byte, kind byte) (int64, []byte, bool) {
	if len(buf) == 0 || buf[0] != kind {
		return 0, nil, false
	}
	i := bytes.IndexByte(buf, '\r')
	if i < 0 || i+1 >= len(buf) || buf[i+1] != '\n' {
		return 0, nil, false
	}
	v, ok := ParseInt(buf[1:i])
	return v, buf[i+2:], ok
}
