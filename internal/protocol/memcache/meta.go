package memcache

import (
	"encoding/base64"
	"errors"
	"math"
)

// Meta commands (protocol.txt "Meta Commands"):
//
//	mg <key> <flag>*\r\n
//	ms <key> <datalen> <flag>*\r\n<data block>\r\n
//	md <key> <flag>*\r\n
//	ma <key> <flag>*\r\n
//	mn\r\n
//	me <key> [b]\r\n
//
// A flag is one character, optionally followed by a token ("T30", "O1").
// Read checks every flag and its token, so the server only sees valid
// requests; the flags the client sent are kept in order in Meta.Order,
// because return flags are answered in request order.

// maxOpaqueLen bounds the O token including its 'O' (memcached's
// MFLAG_MAX_OPAQUE_LENGTH, 32): the opaque itself is at most 31 bytes.
const maxOpaqueLen = 32

// maxMetaFlags is the number of distinct flag characters; each may appear
// once, so it bounds the flags of one request.
const maxMetaFlags = 52

// Meta holds the flags of a meta command. Tokens alias the Reader's buffers
// and stay valid until the next Read.
type Meta struct {
	Order  [maxMetaFlags]byte // flag characters in request order
	NFlags int
	seen   uint64 // bit per flag character (see flagBit)

	RawKey []byte // the key as sent (base64 text when Base64 is set)
	Opaque []byte // O token without the 'O' (may be empty)

	Base64      bool   // b
	Quiet       bool   // q
	TTL         int64  // T: exptime, when Has('T')
	Vivify      int64  // N: exptime, when Has('N')
	Recache     int64  // R: seconds, when Has('R')
	CompareCAS  uint64 // C, when Has('C')
	NewCAS      uint64 // E, when Has('E')
	ClientFlags uint32 // F
	Delta       uint64 // D (default 1)
	Initial     uint64 // J
	Mode        byte   // M token (0 when absent)
}

// Has reports whether flag c was sent.
func (m *Meta) Has(c byte) bool {
	b, ok := flagBit(c)
	return ok && m.seen&b != 0
}

// Flags returns the flag characters in request order.
func (m *Meta) Flags() []byte { return m.Order[:m.NFlags] }

// flagBit maps a flag character (A-Z, a-z) to its bit.
func flagBit(c byte) (uint64, bool) {
	switch {
	case c >= 'A' && c <= 'Z':
		return 1 << (c - 'A'), true
	case c >= 'a' && c <= 'z':
		return 1 << (26 + c - 'a'), true
	}
	return 0, false
}

// metaFlagsKnown are the flags any meta command accepts. memcached 1.6
// validates all meta flags in one shared pass and each command then ignores
// the ones it has no use for (mg C5 or ms N5 are accepted and do nothing in
// 1.6.18), so MiniKV accepts the same union; anything else is an invalid
// flag. E and x are newer than 1.6.18; x (md only) is refused elsewhere.
const metaFlagsKnown = "bcfhklOqstuvNRTCFIMDJPLEx"

// Meta errors. Each is sent even with q; ErrorReply maps them to the wire.
var (
	ErrMetaInvalidFlag   = errors.New("memcache: invalid meta flag")            // CLIENT_ERROR invalid flag
	ErrMetaDuplicateFlag = errors.New("memcache: duplicate meta flag")          // CLIENT_ERROR duplicate flag
	ErrMetaBadToken      = errors.New("memcache: bad meta flag token")          // CLIENT_ERROR bad token in command line format
	ErrMetaOpaqueTooLong = errors.New("memcache: opaque token too long")        // CLIENT_ERROR opaque token too long
	ErrMetaKeyDecode     = errors.New("memcache: error decoding key")           // CLIENT_ERROR error decoding key
	ErrMetaModeLength    = errors.New("memcache: incorrect length for M token") // CLIENT_ERROR incorrect length for M token
	ErrMetaSetMode       = errors.New("memcache: invalid mode for ms M token")  // CLIENT_ERROR invalid mode for ms M token
	ErrMetaArithMode     = errors.New("memcache: invalid mode for ma M token")  // CLIENT_ERROR invalid mode for ma M token
	ErrMetaFlag          = errors.New("memcache: invalid or duplicate flag")    // CLIENT_ERROR invalid or duplicate flag (md, ma)
)

// Meta error lines.
const (
	ClientErrorInvalidFlag   = "CLIENT_ERROR invalid flag"
	ClientErrorDuplicateFlag = "CLIENT_ERROR duplicate flag"
	ClientErrorBadToken      = "CLIENT_ERROR bad token in command line format"
	ClientErrorOpaqueTooLong = "CLIENT_ERROR opaque token too long"
	ClientErrorKeyDecode     = "CLIENT_ERROR error decoding key"
	ClientErrorModeLength    = "CLIENT_ERROR incorrect length for M token"
	ClientErrorSetMode       = "CLIENT_ERROR invalid mode for ms M token"
	ClientErrorArithMode     = "CLIENT_ERROR invalid mode for ma M token"
	ClientErrorFlag          = "CLIENT_ERROR invalid or duplicate flag"
)

// metaErrorLine maps a meta parse error to its line, or "".
func metaErrorLine(err error) string {
	switch {
	case errors.Is(err, ErrMetaInvalidFlag):
		return ClientErrorInvalidFlag
	case errors.Is(err, ErrMetaDuplicateFlag):
		return ClientErrorDuplicateFlag
	case errors.Is(err, ErrMetaBadToken):
		return ClientErrorBadToken
	case errors.Is(err, ErrMetaOpaqueTooLong):
		return ClientErrorOpaqueTooLong
	case errors.Is(err, ErrMetaKeyDecode):
		return ClientErrorKeyDecode
	case errors.Is(err, ErrMetaModeLength):
		return ClientErrorModeLength
	case errors.Is(err, ErrMetaSetMode):
		return ClientErrorSetMode
	case errors.Is(err, ErrMetaArithMode):
		return ClientErrorArithMode
	case errors.Is(err, ErrMetaFlag):
		return ClientErrorFlag
	}
	return ""
}

// parseMeta parses the rest of a meta command line. For ms it sets
// req.Bytes before anything that can fail after it, and reports through
// hasData whether the data block must be read (or swallowed on error), as
// memcached does once it knows the length.
func (r *Reader) parseMeta(t *tokenizer, req *Request) (hasData bool, err error) {
	m := &req.Meta
	if req.Command == CmdMetaNoop {
		return false, nil // memcached ignores any tokens
	}
	key := t.next()
	if key == nil {
		if req.Command == CmdMetaDebug {
			return false, ErrBadFormat
		}
		return false, ErrUnknown
	}
	if !validKey(key) {
		return false, ErrBadFormat
	}
	m.RawKey = key
	if req.Command == CmdMetaSet {
		tok := t.next()
		if tok == nil {
			return false, ErrBadFormat
		}
		size, ok := parseUint(tok)
		if !ok || size > maxBytes {
			return false, ErrBadFormat
		}
		req.Bytes = int(size)
		hasData = true
	}
	m.Delta = 1
	if req.Command == CmdMetaDebug {
		// me <key> [b]: memcached looks only at the second token.
		if tok := t.next(); tok != nil && tok[0] == 'b' {
			m.Base64 = true
		}
	} else if err := r.parseMetaFlags(t, req); err != nil {
		return hasData, metaCommandError(req.Command, err)
	}
	if !m.Base64 {
		req.Keys = append(req.Keys, key)
		return hasData, nil
	}
	n, err := base64.StdEncoding.Decode(r.b64key[:], key)
	if err != nil || n == 0 {
		return hasData, metaCommandError(req.Command, ErrMetaKeyDecode)
	}
	req.Keys = append(req.Keys, r.b64key[:n:n])
	return hasData, nil
}

// metaCommandError turns a flag error into the reply memcached 1.6.18 gives
// for the command: md and ma answer every flag error but the opaque and
// mode ones with one generic line.
func metaCommandError(cmd Command, err error) error {
	if cmd != CmdMetaDelete && cmd != CmdMetaArithmetic {
		return err
	}
	switch err {
	case ErrMetaOpaqueTooLong, ErrMetaArithMode:
		return err
	}
	return ErrMetaFlag
}

// parseMetaFlags reads the flags after the key (and datalen).
func (r *Reader) parseMetaFlags(t *tokenizer, req *Request) error {
	m := &req.Meta
	for tok := t.next(); tok != nil; tok = t.next() {
		c := tok[0]
		bit, ok := flagBit(c)
		if !ok || !isKnownMetaFlag(c) || c == 'x' && req.Command != CmdMetaDelete {
			return ErrMetaInvalidFlag
		}
		if m.seen&bit != 0 {
			return ErrMetaDuplicateFlag
		}
		m.seen |= bit
		m.Order[m.NFlags] = c
		m.NFlags++
		arg := tok[1:]
		switch c {
		case 'b':
			m.Base64 = true
		case 'q':
			m.Quiet = true
		case 'O':
			if len(tok) > maxOpaqueLen {
				return ErrMetaOpaqueTooLong
			}
			m.Opaque = arg
		case 'T', 'N', 'R':
			v, ok := parseInt(arg)
			if !ok || v < math.MinInt32 || v > math.MaxInt32 {
				return ErrMetaBadToken
			}
			switch c {
			case 'T':
				m.TTL = v
			case 'N':
				m.Vivify = v
			default:
				m.Recache = v
			}
		case 'C', 'E', 'D', 'J':
			v, ok := parseUint(arg)
			if !ok {
				return ErrMetaBadToken
			}
			switch c {
			case 'C':
				m.CompareCAS = v
			case 'E':
				m.NewCAS = v
			case 'D':
				m.Delta = v
			default:
				m.Initial = v
			}
		case 'F':
			v, ok := parseUint(arg)
			if !ok || v > math.MaxUint32 {
				return ErrBadFormat // memcached 1.6.18's reply for a bad F token
			}
			m.ClientFlags = uint32(v)
		case 'M':
			if len(arg) != 1 {
				return ErrMetaModeLength
			}
			m.Mode = arg[0]
			switch req.Command {
			case CmdMetaSet:
				if !isSetMode(m.Mode) {
					return ErrMetaSetMode
				}
			case CmdMetaArithmetic:
				if !isArithMode(m.Mode) {
					return ErrMetaArithMode
				}
			}
		}
	}
	return nil
}

func isKnownMetaFlag(c byte) bool {
	for i := 0; i < len(metaFlagsKnown); i++ {
		if metaFlagsKnown[i] == c {
			return true
		}
	}
	return false
}

// isSetMode reports whether c is an ms mode: E(add) A(ppend) P(repend)
// R(eplace) S(et). memcached 1.6.18 takes them upper-case only.
func isSetMode(c byte) bool {
	return c == 'E' || c == 'A' || c == 'P' || c == 'R' || c == 'S'
}

// isArithMode reports whether c is an ma mode: I or + (incr), D or - (decr).
func isArithMode(c byte) bool { return c == 'I' || c == '+' || c == 'D' || c == '-' }
