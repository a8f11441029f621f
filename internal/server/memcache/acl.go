package memcache

// ACL on the memcached port: a connection runs as the ACL user it
// authenticated as (the -Y handshake's user, or the default user), and
// each command is checked as the Redis command of the same effect on its
// keys (docs/redis.md, "ACL", has the table):
//
//	get gets mget mg me   GET      keys read
//	gat gats              GETEX    keys read and written
//	set add replace cas ms SET     key written
//	append prepend        APPEND   key written
//	delete md             DEL      key written
//	incr ma               INCRBY   key read and written
//	decr                  DECRBY   key read and written
//	touch                 EXPIRE   key written
//	flush_all             FLUSHALL
//	stats                 INFO
//	verbosity             CONFIG SET
//	version mn quit auth  (always allowed)
//
// A denial is CLIENT_ERROR with Redis's -NOPERM text and an ACL LOG
// entry; the command never reaches the store.

import (
	"strconv"

	"github.com/minikv/minikv/internal/protocol/memcache"
	"github.com/minikv/minikv/internal/server/acl"
)

// aclMap is the Redis command each memcached command is checked as, and
// its keys' permissions.
var aclMap = [...]struct {
	name  string
	perms uint8
}{
	memcache.CmdGet:            {"get", acl.PermRead},
	memcache.CmdGets:           {"get", acl.PermRead},
	memcache.CmdMget:           {"get", acl.PermRead},
	memcache.CmdMetaGet:        {"get", acl.PermRead},
	memcache.CmdMetaDebug:      {"get", acl.PermRead},
	memcache.CmdGat:            {"getex", acl.PermRead | acl.PermWrite},
	memcache.CmdGats:           {"getex", acl.PermRead | acl.PermWrite},
	memcache.CmdSet:            {"set", acl.PermWrite},
	memcache.CmdAdd:            {"set", acl.PermWrite},
	memcache.CmdReplace:        {"set", acl.PermWrite},
	memcache.CmdCAS:            {"set", acl.PermWrite},
	memcache.CmdMetaSet:        {"set", acl.PermWrite},
	memcache.CmdAppend:         {"append", acl.PermWrite},
	memcache.CmdPrepend:        {"append", acl.PermWrite},
	memcache.CmdDelete:         {"del", acl.PermWrite},
	memcache.CmdMetaDelete:     {"del", acl.PermWrite},
	memcache.CmdIncr:           {"incrby", acl.PermRead | acl.PermWrite},
	memcache.CmdMetaArithmetic: {"incrby", acl.PermRead | acl.PermWrite},
	memcache.CmdDecr:           {"decrby", acl.PermRead | acl.PermWrite},
	memcache.CmdTouch:          {"expire", acl.PermWrite},
	memcache.CmdFlushAll:       {"flushall", 0},
	memcache.CmdStats:          {"info", 0},
	memcache.CmdVerbosity:      {"config|set", 0},
	memcache.CmdMetaNoop:       {},
	memcache.CmdVersion:        {},
	memcache.CmdQuit:           {},
	memcache.CmdAuth:           {},
}

// aclPermit checks req against the connection's user's rules (the caller
// has seen they are not unlimited); a denial is answered here.
func (c *conn) aclPermit(r *acl.Rules, req *memcache.Request, w *memcache.Writer) bool {
	if int(req.Command) >= len(aclMap) || aclMap[req.Command].name == "" {
		return true
	}
	m := aclMap[req.Command]
	cmd := acl.Lookup(m.name)
	argv := make([][]byte, 0, 1+len(req.Keys))
	argv = append(argv, []byte(m.name))
	argv = append(argv, req.Keys...)
	reason, idx := acl.DeniedCommand, 0
	if cmd != nil {
		call := acl.Call{Cmd: cmd, Argv: argv, HasKeys: len(req.Keys) > 0}
		call.Keys = func() []acl.KeyRef {
			refs := make([]acl.KeyRef, len(req.Keys))
			for i := range refs {
				refs[i] = acl.KeyRef{Pos: i + 1, Flags: m.perms}
			}
			return refs
		}
		reason, idx = r.Check(&call)
	} else if r.AllCommands() {
		reason = acl.OK // the ACL's command table is not registered
	}
	if reason == acl.OK {
		return true
	}
	obj := m.name
	msg := "CLIENT_ERROR NOPERM User " + c.ACLUser().Name + " has no permissions to run the '" + m.name + "' command"
	switch reason {
	case acl.DeniedKey:
		obj = string(argv[idx])
		msg = "CLIENT_ERROR NOPERM No permissions to access a key"
	case acl.DeniedChannel:
		obj = string(argv[idx])
	}
	c.p.srv.ACL().AddLog(reason, acl.CtxTopLevel, obj, c.ACLUser().Name, c.aclClientInfo())
	if !req.Noreply {
		w.Line(msg)
	}
	return false
}

// aclClientInfo is the connection as an ACL LOG entry's client-info.
func (c *conn) aclClientInfo() string {
	return "id=" + strconv.FormatUint(c.ID(), 10) + " addr=" + c.RemoteAddr().String() + " laddr=" + c.LocalAddr().String() +
		" user=" + c.ACLUser().Name + " proto=memcached"
}
