package memcache

import "bytes"

// Pending returns the bytes already read and not yet parsed, without
// consuming them. They alias the Reader's buffer and are valid until the
// next Read or Wait.
func (r *Reader) Pending() []byte {
	b, _ := r.br.Peek(r.br.Buffered())
	return b
}

// Keys appends to dst the keys of the complete requests at the start of
// buf, at most max of them, and returns the extended slice; the keys alias
// buf. It exists so a server can prefetch what a pipelined batch will look
// up before running it, and it is only a hint: it checks nothing, stops at
// the first incomplete or unparsable line, and a wrong key costs a wasted
// prefetch, never a wrong answer. Data blocks are skipped by their declared
// length, so a value is never taken for a command.
func Keys(dst [][]byte, buf []byte, max int) [][]byte {
	for len(dst) < max {
		nl := bytes.IndexByte(buf, '\n')
		if nl < 0 {
			return dst
		}
		t := tokenizer{line: trimEOL(buf[:nl+1])}
		buf = buf[nl+1:]
		var data []byte // the token holding a data block's length
		switch cmd := lookupCommand(t.next()); {
		case cmd == CmdGat || cmd == CmdGats:
			t.next() // exptime
			fallthrough
		case cmd.IsRetrieval():
			for k := t.next(); k != nil && len(dst) < max; k = t.next() {
				dst = append(dst, k)
			}
		case cmd.IsStorage():
			dst = append(dst, t.next())
			t.next() // flags
			t.next() // exptime
			data = t.next()
		case cmd == CmdMetaSet:
			dst = append(dst, t.next())
			data = t.next()
		case cmd == CmdDelete, cmd == CmdIncr, cmd == CmdDecr, cmd == CmdTouch,
			cmd == CmdMetaGet, cmd == CmdMetaDelete, cmd == CmdMetaArithmetic, cmd == CmdMetaDebug:
			dst = append(dst, t.next())
		}
		if n := len(dst); n > 0 && dst[n-1] == nil {
			return dst[:n-1] // a command without its key
		}
		if data != nil {
			n, ok := parseUint(data)
			if !ok || n > uint64(len(buf)) || uint64(len(buf))-n < 2 {
				return dst
			}
			buf = buf[n+2:]
		}
	}
	return dst
}
