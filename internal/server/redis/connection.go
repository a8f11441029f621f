package redis

import (
	"strconv"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/acl"
)

// Connection commands of the RESP port: PING, ECHO, HELLO, AUTH, QUIT,
// SELECT, CLIENT and TIME.

// cmdPing is PING [message].
func cmdPing(rc *conn, argv [][]byte) {
	if rc.master && len(argv) == 2 {
		rc.takeFlagsHint(argv[1]) // memcached flags for the next SET (flags.go)
	}
	if len(argv) <= 2 && rc.subscribed() && !rc.w.RESP3() {
		// RESP2 subscribed mode: a reply shaped like a message.
		rc.w.Array(2)
		rc.w.BulkString("pong")
		if len(argv) == 2 {
			rc.w.Bulk(argv[1])
		} else {
			rc.w.BulkString("")
		}
		return
	}
	switch len(argv) {
	case 1:
		rc.w.Simple("PONG")
	case 2:
		rc.w.Bulk(argv[1])
	default:
		rc.w.Error("ERR wrong number of arguments for 'ping' command")
	}
}

// cmdEcho is ECHO message.
func cmdEcho(rc *conn, argv [][]byte) { rc.w.Bulk(argv[1]) }

// cmdQuit is QUIT: OK, then the connection closes.
func cmdQuit(rc *conn, _ [][]byte) {
	rc.w.OK()
	rc.quit = true
}

// cmdSelect is SELECT index: 0 to databases-1 (db.go); database 0 only
// in cluster mode.
func cmdSelect(rc *conn, argv [][]byte) {
	n, ok := resp.ParseInt(argv[1])
	if !ok {
		rc.w.Error(errNotInt)
		return
	}
	if n < math32Min || n > math32Max {
		rc.w.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
		return
	}
	if n != 0 && rc.p.cluster != nil {
		rc.w.Error("ERR SELECT is not allowed in cluster mode")
		return
	}
	if n < 0 || n >= int64(rc.p.databases()) {
		rc.w.Error(errDBRange)
		return
	}
	rc.db = int(n)
	rc.pub.db.Store(int32(n)) // CLIENT LIST's db=
	rc.w.OK()
}

const errDBRange = "ERR DB index is out of range"

const (
	math32Min = -1 << 31
	math32Max = 1<<31 - 1
)

// cmdAuth is AUTH [username] password. With an auth token configured
// (--auth-token-file), "AUTH <token>" and "AUTH default <token>" pass, and
// so do the users of memcached's -Y file; a wrong password is WRONGPASS
// and the connection stays open, as in Redis. Without any auth configured
// MiniKV answers as Redis does without requirepass: the one-argument form
// is an error and the default user accepts any password.
func cmdAuth(rc *conn, argv [][]byte) {
	switch len(argv) {
	case 2:
		rc.Count(server.StatAuthCmds)
		if rc.p.srv.ACL().Default().Rules().NoPass {
			rc.Count(server.StatAuthErrors)
			rc.w.Error(errNoPassword)
			return
		}
		rc.authenticate([]byte("default"), argv[1], argv)
	case 3:
		rc.Count(server.StatAuthCmds)
		rc.authenticate(argv[1], argv[2], argv)
	default:
		rc.w.Error(errSyntax)
	}
}

// checkAuth checks user and password against the ACL users
// (ACLAuthenticateUser): on success the connection is that user's; a
// failure is logged (ACL LOG's "auth" entries, object argv[0]).
func (rc *conn) checkAuth(user, pass []byte, argv [][]byte) bool {
	u := rc.p.srv.ACL().Authenticate(user, pass)
	if u == nil {
		ctx := acl.CtxTopLevel
		if rc.multi.active {
			ctx = acl.CtxMulti
		}
		rc.p.srv.ACL().AddLog(acl.DeniedAuth, ctx, string(argv[0]), string(user), rc.clientInfoLine(argv))
		return false
	}
	rc.SetAuthed()
	rc.r.SetUnauthenticated(false)
	rc.SetACLUser(u)
	rc.user = u.Name
	if u == rc.p.srv.ACL().Default() {
		rc.user = ""
	}
	return true
}

// authenticate checks user and password and replies OK or WRONGPASS.
func (rc *conn) authenticate(user, pass []byte, argv [][]byte) {
	if !rc.checkAuth(user, pass, argv) {
		rc.Count(server.StatAuthErrors)
		rc.w.Error(errWrongPass)
		return
	}
	rc.w.OK()
}

// cmdHello is HELLO [protover [AUTH username password] [SETNAME name]]:
// it switches the connection to RESP2 or RESP3 and describes the server.
func cmdHello(rc *conn, argv [][]byte) {
	ver := int64(0)
	next := 1
	if len(argv) >= 2 {
		var ok bool
		if ver, ok = resp.ParseInt(argv[1]); !ok {
			rc.w.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		next = 2
		if ver < 2 || ver > 3 {
			rc.w.Error("NOPROTO unsupported protocol version")
			return
		}
	}
	var user, pass, name []byte
	for j := next; j < len(argv); j++ {
		more := len(argv) - 1 - j
		switch {
		case is(argv[j], "auth") && more >= 2:
			user, pass = argv[j+1], argv[j+2]
			j += 2
		case is(argv[j], "setname") && more >= 1:
			name = argv[j+1]
			if msg := validateClientName(name); msg != "" {
				rc.w.Error(msg)
				return
			}
			j++
		default:
			rc.w.Error("ERR Syntax error in HELLO option '" + string(cString(argv[j], len(argv[j]))) + "'")
			return
		}
	}
	if user != nil {
		rc.Count(server.StatAuthCmds)
		if !rc.checkAuth(user, pass, argv) {
			rc.Count(server.StatAuthErrors)
			rc.w.Error(errWrongPass)
			return
		}
	}
	if !rc.Authed() {
		rc.w.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if name != nil {
		rc.name = string(name)
	}
	if ver != 0 {
		rc.setRESP3(ver == 3)
	}
	proto := int64(2)
	if rc.w.RESP3() {
		proto = 3
	}
	rc.w.Map(7)
	rc.w.BulkString("server")
	rc.w.BulkString("redis")
	rc.w.BulkString("version")
	rc.w.BulkString(Version)
	rc.w.BulkString("proto")
	rc.w.Int(proto)
	rc.w.BulkString("id")
	rc.w.Int(int64(rc.ID()))
	rc.w.BulkString("mode")
	rc.w.BulkString(rc.p.redisMode())
	rc.w.BulkString("role")
	rc.w.BulkString("master")
	rc.w.BulkString("modules")
	rc.w.Array(0)
}

// validateClientName is Redis's rule: printable ASCII without spaces.
func validateClientName(name []byte) string {
	for _, c := range name {
		if c < '!' || c > '~' {
			return "ERR Client names cannot contain spaces, newlines or special characters."
		}
	}
	return ""
}

// cmdTime is TIME: Unix seconds and microseconds, as bulk strings.
func cmdTime(rc *conn, _ [][]byte) {
	now := time.Now()
	if us := rc.st.FrozenMicros(); us != 0 {
		// In a script or EXEC the clock stands still, TIME's too (Redis
		// 7.2 answers its command's time snapshot).
		now = time.UnixMicro(us)
	}
	rc.w.Array(2)
	rc.w.BulkInt(now.Unix())
	rc.w.BulkInt(int64(now.Nanosecond() / 1000))
}

// itoa64 formats n for INFO and CONFIG values.
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
