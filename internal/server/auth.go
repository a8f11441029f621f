package server

import (
	"crypto/sha256"
	"crypto/subtle"

	"github.com/minikv/minikv/internal/server/acl"
)

// AuthRequired reports whether connections must authenticate before their
// first command: an auth token or auth users are configured.
func (s *Server) AuthRequired() bool {
	return len(s.cfg.AuthToken) > 0 || len(s.cfg.AuthUsers) > 0
}

// CheckToken reports whether tok is the configured auth token (false when
// none is). It compares in constant time, and both sides are hashed first
// so the comparison does not leak the token's length either.
func (s *Server) CheckToken(tok []byte) bool {
	if len(s.cfg.AuthToken) == 0 {
		return false
	}
	a, b := sha256.Sum256(tok), sha256.Sum256(s.cfg.AuthToken)
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// CheckUser reports whether user and pass are one of the configured auth
// users (memcached's -Y file). It compares against every user, always, so
// the time taken does not tell which user names exist.
func (s *Server) CheckUser(user, pass []byte) bool {
	hu, hp := sha256.Sum256(user), sha256.Sum256(pass)
	ok := 0
	for u, p := range s.cfg.AuthUsers {
		wu, wp := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))
		ok |= subtle.ConstantTimeCompare(hu[:], wu[:]) & subtle.ConstantTimeCompare(hp[:], wp[:])
	}
	return ok == 1
}

// newACL makes the user table: the default user has the auth token as
// its password (nopass without one), as Redis's requirepass.
func newACL(cfg Config) *acl.Users {
	var pass []byte
	if len(cfg.AuthToken) > 0 {
		pass = cfg.AuthToken
	}
	return acl.NewUsers(pass)
}

// ACL is the server's user table, shared by both ports.
func (s *Server) ACL() *acl.Users { return s.acl }

// ACLFile is the aclfile setting ("" when none).
func (s *Server) ACLFile() string { return s.cfg.ACLFile }
