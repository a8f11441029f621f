package redis

import (
	"fmt"
	"strconv"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
)

// Connection commands of the RESP port: PING, ECHO, HELLO, AUTH, QUIT,
// SELECT, CLIENT and TIME.

// cmdPing is PING [message].
func cmdPing(rc *conn, argv [][]byte) {
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

// cmdSelect is SELECT index: MiniKV has one database, 0.
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
	if n != 0 {
		rc.w.Error("ERR DB index is out of range")
		return
	}
	rc.w.OK()
}

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
		if !rc.p.srv.AuthRequired() {
			rc.Count(server.StatAuthErrors)
			rc.w.Error(errNoPassword)
			return
		}
		rc.authenticate([]byte("default"), argv[1])
	case 3:
		rc.Count(server.StatAuthCmds)
		rc.authenticate(argv[1], argv[2])
	default:
		rc.w.Error(errSyntax)
	}
}

// checkAuth reports whether user and password pass.
func (rc *conn) checkAuth(user, pass []byte) bool {
	s := rc.p.srv
	if !s.AuthRequired() {
		return string(user) == "default" // the default user has no password
	}
	ok := string(user) == "default" && s.CheckToken(pass)
	if len(rc.p.cfg.AuthUsers) > 0 && s.CheckUser(user, pass) {
		ok = true
	}
	return ok
}

// authenticate checks user and password and replies OK or WRONGPASS.
func (rc *conn) authenticate(user, pass []byte) {
	if !rc.checkAuth(user, pass) {
		rc.Count(server.StatAuthErrors)
		rc.w.Error(errWrongPass)
		return
	}
	rc.SetAuthed()
	rc.r.SetUnauthenticated(false)
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
		if !rc.checkAuth(user, pass) {
			rc.Count(server.StatAuthErrors)
			rc.w.Error(errWrongPass)
			return
		}
		rc.SetAuthed()
		rc.r.SetUnauthenticated(false)
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
	rc.w.Array(2)
	rc.w.BulkInt(now.Unix())
	rc.w.BulkInt(int64(now.Nanosecond() / 1000))
}

// CLIENT's subcommands (the table lists them under "client").

func cmdClientID(rc *conn, _ [][]byte) { rc.w.Int(int64(rc.ID())) }

func cmdClientSetName(rc *conn, argv [][]byte) {
	if msg := validateClientName(argv[2]); msg != "" {
		rc.w.Error(msg)
		return
	}
	rc.name = string(argv[2])
	rc.w.OK()
}

func cmdClientGetName(rc *conn, _ [][]byte) {
	if rc.name == "" {
		rc.w.Null()
		return
	}
	rc.w.BulkString(rc.name)
}

func cmdClientSetInfo(rc *conn, argv [][]byte) {
	if !is(argv[2], "lib-name") && !is(argv[2], "lib-ver") {
		rc.w.Error("ERR Unrecognized option '" + string(cString(argv[2], len(argv[2]))) + "'")
		return
	}
	rc.w.OK()
}

// cmdClientList is CLIENT LIST [TYPE type] [ID id ...], listing only the
// caller (see docs/redis.md) when the filters let it through.
func cmdClientList(rc *conn, argv [][]byte) {
	show := true
	switch {
	case len(argv) == 2:
	case len(argv) == 4 && is(argv[2], "type"):
		switch t := argv[3]; {
		case is(t, "normal"):
		case is(t, "master"), is(t, "replica"), is(t, "slave"), is(t, "pubsub"):
			show = false
		default:
			rc.w.Error("ERR Unknown client type '" + string(cString(t, len(t))) + "'")
			return
		}
	case len(argv) >= 4 && is(argv[2], "id"):
		show = false
		for _, a := range argv[3:] {
			id, err := strconv.ParseInt(string(a), 10, 64)
			if err != nil || id <= 0 {
				rc.w.Error("ERR Invalid client ID")
				return
			}
			show = show || uint64(id) == rc.ID()
		}
	default:
		rc.w.Error("ERR syntax error")
		return
	}
	line := ""
	if show {
		line = rc.clientLine(true)
	}
	rc.w.Verbatim("txt", []byte(line))
}
func cmdClientInfo(rc *conn, _ [][]byte) { rc.w.Verbatim("txt", []byte(rc.clientLine(false))) }

// clientLine is the caller's line of CLIENT LIST / CLIENT INFO, in Redis's
// field format (the fields MiniKV has).
func (rc *conn) clientLine(newline bool) string {
	now := time.Now()
	resp3 := 2
	if rc.w.RESP3() {
		resp3 = 3
	}
	s := fmt.Sprintf("id=%d addr=%s laddr=%s fd=-1 name=%s age=%d idle=%d flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 qbuf=%d obl=0 oll=0 omem=0 tot-mem=%d events=r cmd=client|%s user=default redir=-1 resp=%d",
		rc.ID(), rc.RemoteAddr(), rc.LocalAddr(), rc.name,
		int64(now.Sub(rc.Created())/time.Second), 0, rc.r.Buffered(), server.ReadBufSize+server.WriteBufSize,
		map[bool]string{true: "list", false: "info"}[newline], resp3)
	if newline {
		s += "\n"
	}
	return s
}

// itoa64 formats n for INFO and CONFIG values.
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
