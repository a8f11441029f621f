package memcache

import (
	"bytes"
	"math"
)

// MaxKeyLen is the longest key memcached accepts (KEY_MAX_LENGTH).
const MaxKeyLen = 250

// maxBytes is the largest <bytes> a storage line may declare: memcached
// rejects vlen > INT_MAX-2 because it adds the trailing CRLF to it.
const maxBytes = math.MaxInt32 - 2

// maxArgs is the most tokens after the command name that a fixed-arity
// command takes (cas <key> <flags> <exptime> <bytes> <cas> noreply).
const maxArgs = 6

// tokenizer splits a command line on spaces (0x20 only), skipping runs of
// them, as memcached's tokenize_command does. Tokens alias the line.
type tokenizer struct {
	line []byte
	pos  int
}

// next returns the next token, or nil at the end of the line. Tokens are
// never empty, so nil is unambiguous.
func (t *tokenizer) next() []byte {
	i := t.pos
	for i < len(t.line) && t.line[i] == ' ' {
		i++
	}
	if i == len(t.line) {
		t.pos = i
		return nil
	}
	j := i
	for j < len(t.line) && t.line[j] != ' ' {
		j++
	}
	t.pos = j
	return t.line[i:j:j]
}

// fields stores up to len(f) remaining tokens in f and returns how many
// tokens remained in all, so an over-long line is still counted right.
func (t *tokenizer) fields(f *[maxArgs][]byte) int {
	n := 0
	for tok := t.next(); tok != nil; tok = t.next() {
		if n < len(f) {
			f[n] = tok
		}
		n++
	}
	return n
}

// validKey reports whether k is a legal key: 1..MaxKeyLen bytes, none of
// them a control character or space (protocol.txt "Keys"). memcached 1.6.18
// checks only the length; rejecting control bytes is a documented MiniKV
// difference that matches what gomemcache enforces client-side.
func validKey(k []byte) bool {
	if len(k) == 0 || len(k) > MaxKeyLen {
		return false
	}
	for _, c := range k {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// parseUint parses a decimal uint64 the way memcached's strtoull-based
// parsers accept it: an optional leading '+', digits, and trailing
// whitespace other than spaces (tokens are split on spaces, so only "\r",
// "\t" and friends can remain, as in "set k 0 0 1\r\r\n").
func parseUint(b []byte) (uint64, bool) {
	if len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	return parseDigits(b)
}

// parseDigits parses ASCII digits followed by optional trailing whitespace.
func parseDigits(b []byte) (uint64, bool) {
	for len(b) > 0 && isSpaceByte(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func isSpaceByte(c byte) bool { return c == '\r' || c == '\t' || c == '\v' || c == '\f' }

// parseInt parses a decimal int64 with an optional leading '-' or '+'.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg || len(b) > 0 && b[0] == '+' {
		b = b[1:]
	}
	u, ok := parseDigits(b)
	switch {
	case !ok:
		return 0, false
	case neg && u <= 1<<63:
		return int64(-u), true // -(1<<63) wraps to MinInt64, which is right
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	}
	return 0, false
}

// isNoreply reports whether tok is the classic noreply option.
func isNoreply(tok []byte) bool { return string(tok) == "noreply" }

// parse turns one command line (without its line ending) into req. For a
// storage command it copies the key out of the read buffer, because reading
// the data block may slide that buffer; every other token stays aliased.
func (r *Reader) parse(line []byte, req *Request) error {
	t := tokenizer{line: line}
	name := t.next()
	if name == nil {
		return ErrUnknown // empty line
	}
	req.Command = lookupCommand(name)
	switch req.Command {
	case CmdGet, CmdGets, CmdMget:
		return parseRetrieval(&t, req, false)
	case CmdGat, CmdGats:
		return parseRetrieval(&t, req, true)
	case CmdSet, CmdAdd, CmdReplace, CmdAppend, CmdPrepend, CmdCAS:
		return r.parseStorage(&t, req)
	case CmdDelete:
		return parseDelete(&t, req)
	case CmdIncr, CmdDecr:
		return parseArith(&t, req)
	case CmdTouch:
		return parseTouch(&t, req)
	case CmdFlushAll:
		return parseFlushAll(&t, req)
	case CmdVerbosity:
		return parseVerbosity(&t, req)
	case CmdAuth:
		var f [maxArgs][]byte
		if t.fields(&f) != 1 {
			return ErrUnknown
		}
		req.Args = append(req.Args, f[0])
		return nil
	case CmdStats:
		for a := t.next(); a != nil; a = t.next() {
			req.Args = append(req.Args, a)
		}
		return nil
	case CmdVersion, CmdQuit:
		return nil // memcached 1.6 ignores any further tokens
	case CmdMetaSet:
		// Every token must outlive reading the data block, which may slide
		// br's buffer: parse a copy of the line (at most MaxLineLen bytes,
		// as ms is not a retrieval command).
		n := copy(r.mline[:], line)
		t.line = r.mline[:n]
		fallthrough
	case CmdMetaGet, CmdMetaDelete, CmdMetaArithmetic, CmdMetaNoop, CmdMetaDebug:
		var err error
		req.hasData, err = r.parseMeta(&t, req)
		return err
	}
	// Unknown command. A line ending in an HTTP version is a browser or an
	// HTTP client on the wrong port: memcached closes without a word
	// (t/malicious-commands.t), so no HTML page is ever fed back as a reply.
	last := name
	for a := t.next(); a != nil; a = t.next() {
		last = a
	}
	if bytes.HasPrefix(last, []byte("HTTP/")) {
		return ErrHTTP
	}
	return ErrUnknown
}

// parseRetrieval parses "get|gets|mget <key>+" and "gat|gats <exptime> <key>*".
// memcached answers ERROR to a bare "get" or "gat" but END to "gat 10".
func parseRetrieval(t *tokenizer, req *Request, touch bool) error {
	if touch {
		tok := t.next()
		if tok == nil {
			return ErrUnknown
		}
		exp, ok := parseInt(tok)
		if !ok {
			return ErrBadExptime
		}
		req.Exptime = exp
	}
	for k := t.next(); k != nil; k = t.next() {
		if !validKey(k) {
			return ErrBadFormat
		}
		req.Keys = append(req.Keys, k)
	}
	if !touch && len(req.Keys) == 0 {
		return ErrUnknown
	}
	return nil
}

// parseStorage parses "<cmd> <key> <flags> <exptime> <bytes> [noreply]" and
// "cas <key> <flags> <exptime> <bytes> <cas> [noreply]". As in memcached, one
// extra token that is not "noreply" is ignored, and noreply is taken from the
// last token once the count is right, even if that token was meant as a
// number: "set k 0 0 noreply" is a silent bad command line.
func (r *Reader) parseStorage(t *tokenizer, req *Request) error {
	var f [maxArgs][]byte
	n := t.fields(&f)
	want := 4
	if req.Command == CmdCAS {
		want = 5
	}
	if n != want && n != want+1 {
		return ErrUnknown
	}
	req.Noreply = isNoreply(f[n-1])
	if !validKey(f[0]) {
		return ErrBadFormat
	}
	flags, ok := parseUint(f[1])
	if !ok || flags > math.MaxUint32 {
		return ErrBadFormat
	}
	exp, ok := parseInt(f[2])
	if !ok {
		return ErrBadFormat
	}
	size, ok := parseUint(f[3])
	if !ok || size > maxBytes {
		return ErrBadFormat
	}
	if req.Command == CmdCAS {
		if req.CAS, ok = parseUint(f[4]); !ok {
			return ErrBadFormat
		}
	}
	req.Flags = uint32(flags)
	req.Exptime = exp
	req.Bytes = int(size)
	k := copy(r.key[:], f[0])
	req.Keys = append(req.Keys, r.key[:k:k])
	return nil
}

// parseDelete parses "delete <key> [0] [noreply]". The legacy hold time is
// accepted only as "0"; anything else gets the usage error libmemcached's
// tests expect for "delete a b c".
func parseDelete(t *tokenizer, req *Request) error {
	var f [maxArgs][]byte
	n := t.fields(&f)
	if n < 1 || n > 3 {
		return ErrUnknown
	}
	if n > 1 {
		holdZero := string(f[1]) == "0"
		req.Noreply = isNoreply(f[n-1])
		if !((n == 2 && (holdZero || req.Noreply)) || (n == 3 && holdZero && req.Noreply)) {
			return ErrDeleteUsage
		}
	}
	if !validKey(f[0]) {
		return ErrBadFormat
	}
	req.Keys = append(req.Keys, f[0])
	return nil
}

// parseArith parses "incr|decr <key> <delta> [noreply]".
func parseArith(t *tokenizer, req *Request) error {
	arg, err := parseKeyArg(t, req)
	if err != nil {
		return err
	}
	delta, ok := parseUint(arg)
	if !ok {
		return ErrBadDelta
	}
	req.Delta = delta
	return nil
}

// parseTouch parses "touch <key> <exptime> [noreply]".
func parseTouch(t *tokenizer, req *Request) error {
	arg, err := parseKeyArg(t, req)
	if err != nil {
		return err
	}
	exp, ok := parseInt(arg)
	if !ok {
		return ErrBadExptime
	}
	req.Exptime = exp
	return nil
}

// parseKeyArg parses the "<key> <arg> [noreply]" shape that incr, decr and
// touch share: it sets Noreply, appends the key and returns the argument.
// When the caller then rejects the argument, the key stays in req.Keys;
// no one reads the fields of a request that failed to parse.
func parseKeyArg(t *tokenizer, req *Request) ([]byte, error) {
	var f [maxArgs][]byte
	n := t.fields(&f)
	if n != 2 && n != 3 {
		return nil, ErrUnknown
	}
	req.Noreply = isNoreply(f[n-1])
	if !validKey(f[0]) {
		return nil, ErrBadFormat
	}
	req.Keys = append(req.Keys, f[0])
	return f[1], nil
}

// parseFlushAll parses "flush_all [delay] [noreply]". Like memcached, the
// first argument is read as the delay unless the line is exactly
// "flush_all" or "flush_all noreply".
func parseFlushAll(t *tokenizer, req *Request) error {
	var f [maxArgs][]byte
	n := t.fields(&f)
	if n > 2 {
		return ErrUnknown
	}
	if n > 0 {
		req.Noreply = isNoreply(f[n-1])
	}
	bare := 0
	if req.Noreply {
		bare = 1
	}
	if n != bare {
		delay, ok := parseInt(f[0])
		if !ok {
			return ErrBadExptime
		}
		req.Exptime = delay
		req.HasExptime = true
	}
	return nil
}

// parseVerbosity parses "verbosity <level> [noreply]"; Args[0] is the level.
// "verbosity noreply" is a silent bad command line, as in memcached.
func parseVerbosity(t *tokenizer, req *Request) error {
	var f [maxArgs][]byte
	n := t.fields(&f)
	if n != 1 && n != 2 {
		return ErrUnknown
	}
	req.Noreply = isNoreply(f[n-1])
	if level, ok := parseUint(f[0]); !ok || level > math.MaxUint32 {
		return ErrBadFormat
	}
	req.Args = append(req.Args, f[0])
	return nil
}
