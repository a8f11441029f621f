package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"

	"github.com/minikv/minikv/internal/protocol/memcache"
)

// Limits for a connection that has not authenticated yet, as Redis applies
// them (CVE-2021-32675): tiny values, few arguments.
const (
	preAuthMaxValue = 16 << 10
	preAuthMaxArgs  = 10
)

func (s *Server) authRequired() bool {
	return len(s.cfg.AuthToken) > 0 || len(s.cfg.AuthUsers) > 0
}

// checkToken compares in constant time. Both sides are hashed first so the
// comparison does not leak the token's length either.
func (s *Server) checkToken(tok []byte) bool {
	if len(s.cfg.AuthToken) == 0 {
		return false
	}
	a, b := sha256.Sum256(tok), sha256.Sum256(s.cfg.AuthToken)
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// checkUser compares against every configured user, always, so the time
// taken does not tell which user names exist.
func (s *Server) checkUser(user, pass []byte) bool {
	hu, hp := sha256.Sum256(user), sha256.Sum256(pass)
	ok := 0
	for u, p := range s.cfg.AuthUsers {
		wu, wp := sha256.Sum256([]byte(u)), sha256.Sum256([]byte(p))
		ok |= subtle.ConstantTimeCompare(hu[:], wu[:]) & subtle.ConstantTimeCompare(hp[:], wp[:])
	}
	return ok == 1
}

// maxValueLen is the data-block limit the codec applies: the store's, or
// the pre-auth limit until the connection has authenticated.
func (c *conn) maxValueLen(keyLen int) int {
	n := c.srv.store.MaxValueLen(keyLen)
	if !c.authed {
		n = min(n, preAuthMaxValue)
	}
	return n
}

// preAuthMemcache handles one request (or parse error) from a memcached
// connection that has not authenticated. It reports false when the
// connection must close. Two mechanisms are accepted:
//
//   - MiniKV's token (the seed's table): "auth <token>" first →
//     AUTHENTICATED; a wrong token → CLIENT_ERROR auth failed, close;
//     anything else → CLIENT_ERROR auth required, close.
//   - memcached's -Y authfile: "set <any> <any> <any> <n>" whose data is
//     "user pass" → STORED; a wrong pair → CLIENT_ERROR authentication
//     failure; anything else → CLIENT_ERROR unauthenticated, as memcached,
//     which keeps the connection open.
func (c *conn) preAuthMemcache(req *memcache.Request, readErr error, w *memcache.Writer) bool {
	s := c.srv
	token := len(s.cfg.AuthToken) > 0
	if readErr == nil {
		switch {
		case req.Command == memcache.CmdAuth:
			return c.authCommand(req, w)
		case req.Command == memcache.CmdSet && len(s.cfg.AuthUsers) > 0:
			c.stats.add(statAuthCmds, 1)
			f := bytes.Fields(req.Value)
			switch {
			case len(f) < 2:
				c.stats.add(statAuthErrors, 1)
				w.Line("CLIENT_ERROR bad authentication token format")
			case s.checkUser(f[0], f[1]):
				c.authed = true
				w.Line(memcache.Stored)
			default:
				c.stats.add(statAuthErrors, 1)
				w.Line("CLIENT_ERROR authentication failure")
			}
			return true
		}
	}
	if token {
		w.Line(memcache.ClientErrorAuthRequired)
		return false
	}
	if _, closeConn := memcache.ErrorReply(readErr); readErr != nil && closeConn {
		return false
	}
	if readErr == memcache.ErrBadChunk {
		w.Line("CLIENT_ERROR bad command line termination")
		return true
	}
	w.Line("CLIENT_ERROR unauthenticated")
	return true
}

// authCommand answers "auth <token>" (before or after authenticating).
func (c *conn) authCommand(req *memcache.Request, w *memcache.Writer) bool {
	c.stats.add(statAuthCmds, 1)
	if len(c.srv.cfg.AuthToken) == 0 {
		c.stats.add(statAuthErrors, 1)
		w.Line(memcache.ClientErrorAuthNotConfigured)
		return false
	}
	if len(req.Args) == 0 || !c.srv.checkToken(req.Args[0]) {
		c.stats.add(statAuthErrors, 1)
		w.Line(memcache.ClientErrorAuthFailed)
		return false
	}
	c.authed = true
	w.Line(memcache.Authenticated)
	return true
}
