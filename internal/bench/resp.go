package bench

import (
	"bufio"
	"fmt"
	"strconv"
)

// RESP is the client side of the Redis protocol (RESP2), enough for GET and
// SET. It is deliberately separate from the server codec in
// internal/protocol/resp: a load generator must not share a parser bug with
// the server it measures.
//
// Requests are arrays of bulk strings:
//
//	*2\r\n$3\r\nGET\r\n$<n>\r\n<key>\r\n
//	*3\r\n$3\r\nSET\r\n$<n>\r\n<key>\r\n$<m>\r\n<value>\r\n   (+ $2 EX $<k> <ttl>)
//
// Replies: +OK, $-1 (nil), $<n>\r\n<data>\r\n, -ERR ..., _ (RESP3 null).
type RESP struct{}

// Name returns "resp".
func (RESP) Name() string { return "resp" }

// AppendGet appends GET <key>.
func (RESP) AppendGet(dst, key []byte) []byte {
	dst = append(dst, "*2\r\n$3\r\nGET\r\n"...)
	return appendBulk(dst, key)
}

// AppendSet appends SET <key> <value> [EX <ttl>].
func (RESP) AppendSet(dst, key, value []byte, ttl int) []byte {
	if ttl > 0 {
		dst = append(dst, "*5\r\n$3\r\nSET\r\n"...)
	} else {
		dst = append(dst, "*3\r\n$3\r\nSET\r\n"...)
	}
	dst = appendBulk(dst, key)
	dst = appendBulk(dst, value)
	if ttl > 0 {
		dst = append(dst, "$2\r\nEX\r\n"...)
		var num [20]byte
		dst = appendBulk(dst, strconv.AppendInt(num[:0], int64(ttl), 10))
	}
	return dst
}

func appendBulk(dst, b []byte) []byte {
	dst = append(dst, '$')
	dst = strconv.AppendInt(dst, int64(len(b)), 10)
	dst = append(dst, '\r', '\n')
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// AppendMultiGet appends MGET <k1> <k2> ....
func (RESP) AppendMultiGet(dst []byte, keys [][]byte) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(keys)+1), 10)
	dst = append(dst, "\r\n$4\r\nMGET\r\n"...)
	for _, k := range keys {
		dst = appendBulk(dst, k)
	}
	return dst
}

// ReadMultiGet reads MGET's array reply and counts the non-nil elements.
func (RESP) ReadMultiGet(br *bufio.Reader, n int) (int, Outcome, error) {
	line, err := readLine(br)
	if err != nil {
		return 0, OutError, err
	}
	if len(line) > 0 && line[0] == '-' {
		return 0, OutError, nil
	}
	if len(line) < 2 || line[0] != '*' {
		return 0, OutError, fmt.Errorf("%w: unexpected MGET reply %q", ErrProtocol, line)
	}
	if m, err := strconv.Atoi(string(line[1:])); err != nil || m != n {
		return 0, OutError, fmt.Errorf("%w: MGET of %d keys answered %q", ErrProtocol, n, line)
	}
	hits := 0
	for range n {
		out, err := RESP{}.ReadReply(br, OpGet)
		if err != nil {
			return hits, OutError, err
		}
		if out == OutHit {
			hits++
		}
	}
	return hits, OutHit, nil
}

// ReadReply reads one GET or SET reply.
func (RESP) ReadReply(br *bufio.Reader, op Op) (Outcome, error) {
	line, err := readLine(br)
	if err != nil {
		return OutError, err
	}
	if len(line) == 0 {
		return OutError, fmt.Errorf("%w: empty RESP reply line", ErrProtocol)
	}
	switch line[0] {
	case '-':
		return OutError, nil
	case '+':
		if op == OpSet {
			return OutStored, nil
		}
	case '_':
		if op == OpGet {
			return OutMiss, nil
		}
	case '$':
		n, err := strconv.Atoi(string(line[1:]))
		if err != nil {
			return OutError, fmt.Errorf("%w: bad bulk length %q", ErrProtocol, line)
		}
		if n < 0 {
			if op == OpGet {
				return OutMiss, nil
			}
			return OutError, nil // SET answered nil: not stored
		}
		if _, err := br.Discard(n + 2); err != nil {
			return OutError, err
		}
		if op == OpGet {
			return OutHit, nil
		}
	}
	return OutError, fmt.Errorf("%w: unexpected reply %q to %s", ErrProtocol, line, op)
}
