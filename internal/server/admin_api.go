package server

// Read-only accessors for the admin side port (internal/admin): /doctor's
// listener check and the memcached_max_connections metric need state that
// Stats does not carry.

// Listening reports whether the server is serving: at least one listener has
// been handed to Serve and Shutdown has not begun.
func (s *Server) Listening() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listeners) > 0 && !s.shuttingDown.Load()
}

// ListenerAddrs returns the addresses of the listeners handed to Serve, in
// the order they were added.
func (s *Server) ListenerAddrs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	addrs := make([]string, 0, len(s.listeners))
	for _, ln := range s.listeners {
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}
