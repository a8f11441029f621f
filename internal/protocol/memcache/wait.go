package memcache

// Wait blocks until at least one byte of the next request is available (or
// the underlying reader fails) without consuming anything. The server calls
// it when the buffer is drained so that it can tell "idle between commands"
// from "in the middle of one" and give each its own deadline: the idle
// timeout while waiting here, the command deadline once a request has begun.
func (r *Reader) Wait() error {
	_, err := r.br.Peek(1)
	return err
}
