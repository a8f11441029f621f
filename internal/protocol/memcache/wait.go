package memcache

// Wait blocks until at least one byte of the next request is available (or
// the underlying reader fails) and returns that byte without consuming it. The server calls
// it when the buffer is drained so that it can tell "idle between commands"
// from "in the middle of one" and give each its own deadline: the idle
// timeout while waiting here, the command deadline once a request has begun.
func (r *Reader) Wait() (byte, error) {
	b, err := r.br.Peek(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}
