package server

import (
	"slices"

	"github.com/minikv/minikv/internal/server/acl"
)

// AuthRequired reports whether connections must authenticate before their
// first command: the default ACL user has a password (the auth token,
// requirepass) or is off (memcached -Y users without a token), as Redis's
// authRequired.
func (s *Server) AuthRequired() bool {
	return s.acl.AuthRequired()
}

// TokenConfigured reports whether the default user has a password (the
// auth token, or requirepass set since): what memcached's "auth <token>"
// checks against.
func (s *Server) TokenConfigured() bool {
	r := s.acl.Default().Rules()
	return !r.NoPass && len(r.Passwords()) > 0
}

// CheckToken reports whether tok is a password of the default user
// (false when it has none). Hashes are compared in constant time.
func (s *Server) CheckToken(tok []byte) bool {
	return s.TokenConfigured() && s.acl.Authenticate([]byte("default"), tok) != nil
}

// CheckUser authenticates an ACL user (memcached's -Y handshake): the
// user, or nil.
func (s *Server) CheckUser(user, pass []byte) *acl.User {
	return s.acl.Authenticate(user, pass)
}

// newACL makes the user table: the default user has the auth token as
// its password (nopass without one), as Redis's requirepass; each user of
// memcached's -Y file is an ACL user with its password and every
// permission, and with such users and no token the default user is off
// (every connection authenticates, as memcached -Y wants).
func newACL(s *Server) *acl.Users {
	cfg := s.cfg
	var pass []byte
	if len(cfg.AuthToken) > 0 {
		pass = cfg.AuthToken
	}
	us := acl.NewUsers(pass)
	names := make([]string, 0, len(cfg.AuthUsers))
	for u := range cfg.AuthUsers {
		names = append(names, u)
	}
	slices.Sort(names)
	for _, u := range names {
		if u == "default" {
			us.SetUser(u, []string{"resetpass", ">" + cfg.AuthUsers[u]})
			continue
		}
		if msg := us.SetUser(u, []string{"on", ">" + cfg.AuthUsers[u], "~*", "&*", "+@all"}); msg != "" {
			s.log.Warn("auth user not usable as an ACL user", "user", u, "err", msg)
		}
	}
	if len(cfg.AuthUsers) > 0 && len(cfg.AuthToken) == 0 {
		if _, ok := cfg.AuthUsers["default"]; !ok {
			us.SetUser("default", []string{"off", "resetpass"})
		}
	}
	us.OnRemove = s.killUsers
	return us
}

// killUsers closes the connections of removed ACL users (ACL DELUSER,
// ACL LOAD), except keep, which closes after its reply.
func (s *Server) killUsers(removed []*acl.User, keep any) {
	var kill []*Conn
	s.EachConn(func(c *Conn) { // under the server's lock, which Kill takes
		if c != keep && slices.Contains(removed, c.aclUser.Load()) {
			kill = append(kill, c)
		}
	})
	for _, c := range kill {
		c.Kill()
	}
}

// ACLUser is the ACL user the connection authenticated as (the default
// user until it does).
func (c *Conn) ACLUser() *acl.User {
	if u := c.aclUser.Load(); u != nil {
		return u
	}
	return c.srv.acl.Default()
}

// SetACLUser makes the connection u's (nil: the default user's).
func (c *Conn) SetACLUser(u *acl.User) { c.aclUser.Store(u) }

// ACL is the server's user table, shared by both ports.
func (s *Server) ACL() *acl.Users { return s.acl }

// ACLFile is the aclfile setting ("" when none).
func (s *Server) ACLFile() string { return s.cfg.ACLFile }
