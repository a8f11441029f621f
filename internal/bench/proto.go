package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/minikv/minikv/internal/protocol/memcache"
)

// Outcome is how the server answered one request.
type Outcome uint8

// Outcomes. OutError is an error reply (the connection stays usable); a
// broken stream is reported by ReadReply's error instead.
const (
	OutHit    Outcome = iota // get found the key
	OutMiss                  // get did not
	OutStored                // set succeeded
	OutError                 // the server answered with an error
)

// Proto is the client side of a wire protocol: it encodes requests and
// decodes their replies. Encoding appends to a caller's buffer so a whole
// pipelined batch goes out in one write.
type Proto interface {
	Name() string
	AppendGet(dst, key []byte) []byte
	AppendSet(dst, key, value []byte, ttl int) []byte
	// ReadReply reads the reply to one request of kind op. A non-nil error
	// means the stream is broken or out of step and the connection must go.
	ReadReply(br *bufio.Reader, op Op) (Outcome, error)
	// AppendMultiGet and ReadMultiGet are one get of several keys
	// (memcached "get k1 k2 ...", Redis MGET); hits is how many were found.
	AppendMultiGet(dst []byte, keys [][]byte) []byte
	ReadMultiGet(br *bufio.Reader, n int) (hits int, out Outcome, err error)
}

// ErrProtocol reports a reply that does not parse.
var ErrProtocol = errors.New("bench: protocol error")

// ProtoByName returns "memcache" (alias "mc") or "resp" (alias "redis").
func ProtoByName(name string) (Proto, error) {
	switch name {
	case "memcache", "memcached", "mc", "text":
		return Memcache{}, nil
	case "resp", "redis":
		return RESP{}, nil
	}
	return nil, fmt.Errorf("bench: unknown protocol %q (want memcache or resp)", name)
}

// Memcache is the client side of the memcached text protocol. The server
// side lives in internal/protocol/memcache; a client needs only get, set
// and the handful of reply lines below.
type Memcache struct{}

// Reply lines the client recognises, spelt by the project's codec.
var (
	mcEnd         = []byte(memcache.End)
	mcStored      = []byte(memcache.Stored)
	mcValue       = []byte("VALUE ")
	mcErrPrefixes = [][]byte{
		[]byte(memcache.Error), []byte("CLIENT_ERROR"), []byte("SERVER_ERROR"),
		[]byte(memcache.NotStored), []byte(memcache.Exists), []byte(memcache.NotFound),
	}
)

// Name returns "memcache".
func (Memcache) Name() string { return "memcache" }

// AppendGet appends "get <key>\r\n".
func (Memcache) AppendGet(dst, key []byte) []byte {
	dst = append(dst, "get "...)
	dst = append(dst, key...)
	return append(dst, '\r', '\n')
}

// AppendSet appends "set <key> 0 <ttl> <bytes>\r\n<value>\r\n".
func (Memcache) AppendSet(dst, key, value []byte, ttl int) []byte {
	dst = append(dst, "set "...)
	dst = append(dst, key...)
	dst = append(dst, " 0 "...)
	dst = strconv.AppendInt(dst, int64(ttl), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(value)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, value...)
	return append(dst, '\r', '\n')
}

// AppendMultiGet appends "get <k1> <k2> ...\r\n".
func (Memcache) AppendMultiGet(dst []byte, keys [][]byte) []byte {
	dst = append(dst, "get"...)
	for _, k := range keys {
		dst = append(dst, ' ')
		dst = append(dst, k...)
	}
	return append(dst, '\r', '\n')
}

// ReadMultiGet reads VALUE blocks up to END and counts them.
func (Memcache) ReadMultiGet(br *bufio.Reader, n int) (int, Outcome, error) {
	hits := 0
	for {
		line, err := readLine(br)
		if err != nil {
			return hits, OutError, err
		}
		if bytes.Equal(line, mcEnd) {
			return hits, OutHit, nil
		}
		if !bytes.HasPrefix(line, mcValue) {
			out, err := mcError(line)
			return hits, out, err
		}
		size, ok := valueLen(line[len(mcValue):])
		if !ok || hits == n {
			return hits, OutError, fmt.Errorf("%w: %q after %d of %d values", ErrProtocol, line, hits, n)
		}
		if _, err := br.Discard(size + 2); err != nil {
			return hits, OutError, err
		}
		hits++
	}
}

// ReadReply reads one get or set reply.
func (Memcache) ReadReply(br *bufio.Reader, op Op) (Outcome, error) {
	line, err := readLine(br)
	if err != nil {
		return OutError, err
	}
	if op == OpSet {
		if bytes.Equal(line, mcStored) {
			return OutStored, nil
		}
		return mcError(line)
	}
	if bytes.Equal(line, mcEnd) {
		return OutMiss, nil
	}
	if !bytes.HasPrefix(line, mcValue) {
		return mcError(line)
	}
	// VALUE <key> <flags> <bytes>[ <cas>]
	n, ok := valueLen(line[len(mcValue):])
	if !ok {
		return OutError, fmt.Errorf("%w: %q", ErrProtocol, line)
	}
	if _, err := br.Discard(n + 2); err != nil {
		return OutError, err
	}
	line, err = readLine(br)
	if err != nil {
		return OutError, err
	}
	if !bytes.Equal(line, mcEnd) {
		return OutError, fmt.Errorf("%w: want END after one value, got %q", ErrProtocol, line)
	}
	return OutHit, nil
}

// valueLen returns <bytes> from "<key> <flags> <bytes>[ <cas>]" without
// allocating (bytes.Fields would, on every hit).
func valueLen(rest []byte) (int, bool) {
	var field [3][]byte
	n := 0
	for len(rest) > 0 && n < 3 {
		rest = bytes.TrimLeft(rest, " ")
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		if end > 0 {
			field[n] = rest[:end]
			n++
		}
		rest = rest[end:]
	}
	if n < 3 {
		return 0, false
	}
	v := 0
	for _, c := range field[2] {
		if c < '0' || c > '9' || v > 1<<30 {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, len(field[2]) > 0
}

// mcError classifies a reply line that is not the expected success: a
// known error line is a counted error, anything else breaks the stream.
func mcError(line []byte) (Outcome, error) {
	for _, p := range mcErrPrefixes {
		if bytes.HasPrefix(line, p) {
			return OutError, nil
		}
	}
	return OutError, fmt.Errorf("%w: unexpected reply %q", ErrProtocol, line)
}

// readLine returns the next line without its CRLF. The slice aliases br's
// buffer until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: reply line longer than %d bytes", ErrProtocol, br.Size())
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}
