package server

import "errors"

// serveRESP is the Redis-protocol connection loop.
func (c *conn) serveRESP() error {
	return errors.New("server: RESP not implemented yet")
}
