package memcache

import (
	"bytes"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/acl"
)

// preAuthMaxValue is the largest data block a memcached connection that
// has not authenticated may send, as Redis limits its unauthenticated
// clients (CVE-2021-32675): the -Y handshake's "user pass" is tiny.
const preAuthMaxValue = 16 << 10

// maxValueLen is the data-block limit the codec applies: the store's, or
// the pre-auth limit until the connection has authenticated.
func (c *conn) maxValueLen(keyLen int) int {
	n := c.st.MaxValueLen(keyLen)
	if !c.Authed() {
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
	cfg := &c.p.cfg
	token := c.p.srv.TokenConfigured()
	if readErr == nil {
		switch {
		case req.Command == memcache.CmdAuth:
			return c.authCommand(req, w)
		case req.Command == memcache.CmdSet && (len(cfg.AuthUsers) > 0 || len(c.p.srv.ACL().Names()) > 1):
			c.Count(server.StatAuthCmds)
			f := bytes.Fields(req.Value)
			switch {
			case len(f) < 2:
				c.Count(server.StatAuthErrors)
				w.Line("CLIENT_ERROR bad authentication token format")
			case c.authUser(f[0], f[1]):
				w.Line(memcache.Stored)
			default:
				c.Count(server.StatAuthErrors)
				c.p.srv.ACL().AddLog(acl.DeniedAuth, acl.CtxTopLevel, "set", string(f[0]), c.aclClientInfo())
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
	c.Count(server.StatAuthCmds)
	if !c.p.srv.TokenConfigured() {
		c.Count(server.StatAuthErrors)
		w.Line(memcache.ClientErrorAuthNotConfigured)
		return false
	}
	if len(req.Args) == 0 || !c.p.srv.CheckToken(req.Args[0]) {
		c.Count(server.StatAuthErrors)
		w.Line(memcache.ClientErrorAuthFailed)
		return false
	}
	c.SetAuthed()
	c.SetACLUser(nil) // the default user's password
	w.Line(memcache.Authenticated)
	return true
}

// authUser authenticates the -Y handshake's user as an ACL user.
func (c *conn) authUser(user, pass []byte) bool {
	u := c.p.srv.CheckUser(user, pass)
	if u == nil {
		return false
	}
	c.SetAuthed()
	c.SetACLUser(u)
	return true
}
