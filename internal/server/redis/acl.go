package redis

// ACL: Redis 7.0's ACL command over the server's user table
// (internal/server/acl), shared with the memcached port.

import (
	"crypto/rand"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/server"
	"github.com/minikv/minikv/internal/server/acl"
)

// init registers Redis 7.0.15's command table (names, categories,
// no_auth) with the ACL package: the rules are read against it.
func init() {
	defs := make([]acl.CommandDef, 0, len(redisCommandData))
	for name, data := range redisCommandData {
		info, _ := parseRV(data[0])
		flags := info.elems[2].strs()
		defs = append(defs, acl.CommandDef{Name: name, Cats: info.elems[6].strs(), NoAuth: contains(flags, "no_auth")})
	}
	acl.RegisterCommands(defs)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// aclCommand is the ACL container's table entry.
func aclCommand() respCommand {
	return respCommand{name: "acl", arity: -2, group: "server", since: "6.0.0", complexity: "Depends on subcommand.",
		summary: "A container for Access List Control commands.", subs: []*respCommand{
			sub("acl|cat", -2, "6.0.0", "Lists the ACL categories, or the commands inside a category.", "CAT [<category>]",
				"List all commands that belong to <category>, or all command categories\nwhen no category is specified.", cmdACLCat,
				opt(str("categoryname"))),
			sub("acl|deluser", -3, "6.0.0", "Deletes ACL users, and terminates their connections.", "DELUSER <username> [<username> ...]",
				"Delete a list of users.", cmdACLDelUser, docArg{name: "username", typ: "string", multiple: true}),
			sub("acl|dryrun", -4, "7.0.0", "Simulates the execution of a command by a user, without executing the command.",
				"DRYRUN <username> <command> [<arg> ...]",
				"Returns whether the user can execute the given command without executing the command.", cmdACLDryRun,
				str("username"), str("command"), docArg{name: "arg", typ: "string", optional: true, multiple: true}),
			sub("acl|getuser", 3, "6.0.0", "Lists the ACL rules of a user.", "GETUSER <username>",
				"Get the user's details.", cmdACLGetUser, str("username")),
			sub("acl|genpass", -2, "6.0.0", "Generates a pseudorandom, secure password that can be used to identify ACL users.",
				"GENPASS [<bits>]", "Generate a secure 256-bit user password. The optional `bits` argument can\nbe used to specify a different size.",
				cmdACLGenPass, opt(integ("bits"))),
			sub("acl|list", 2, "6.0.0", "Dumps the effective rules in ACL file format.", "LIST",
				"Show users details in config file format.", cmdACLList),
			sub("acl|load", 2, "6.0.0", "Reloads the rules from the configured ACL file.", "LOAD",
				"Reload users from the ACL file.", cmdACLLoad),
			sub("acl|log", -2, "6.0.0", "Lists recent security events generated due to ACL rules.", "LOG [<count> | RESET]",
				"Show the ACL log entries.", cmdACLLog, opt(oneOf("operation", true, integ("count"), token("RESET")))),
			sub("acl|save", 2, "6.0.0", "Saves the effective ACL rules in the configured ACL file.", "SAVE",
				"Save the current config to the ACL file.", cmdACLSave),
			sub("acl|setuser", -3, "6.0.0", "Creates and modifies an ACL user and its rules.", "SETUSER <username> <attribute> [<attribute> ...]",
				"Create or modify a user with the specified attributes.", cmdACLSetUser,
				str("username"), docArg{name: "rule", typ: "string", optional: true, multiple: true}),
			sub("acl|users", 2, "6.0.0", "Lists all ACL users.", "USERS",
				"List all the registered usernames.", cmdACLUsers),
			sub("acl|whoami", 2, "6.0.0", "Returns the authenticated username of the current connection.", "WHOAMI",
				"Return the current connection username.", cmdACLWhoami),
			helpSub("acl"),
		}}
}

// aclErrorf is addReplyErrorFormat's cleaning: no newline may reach the
// error line.
func aclError(rc *conn, msg string) {
	rc.w.Error("ERR " + strings.NewReplacer("\r", " ", "\n", " ").Replace(msg))
}

// aclSyntax is Redis's addReplySubcommandSyntaxError for ACL.
func aclSyntax(rc *conn, argv [][]byte) {
	aclError(rc, "unknown subcommand or wrong number of arguments for '"+string(cString(argv[1], 128))+"'. Try ACL HELP.")
}

func cstr(b []byte) string { return string(cString(b, len(b))) }

func cmdACLCat(rc *conn, argv [][]byte) {
	switch len(argv) {
	case 2:
		rc.w.Array(len(acl.Categories))
		for _, c := range acl.Categories {
			rc.w.BulkString(c)
		}
	case 3:
		names, ok := acl.InCategory(cstr(argv[2]))
		if !ok {
			aclError(rc, "Unknown category '"+string(cString(argv[2], 128))+"'")
			return
		}
		rc.w.Array(len(names))
		for _, n := range names {
			rc.w.BulkString(n)
		}
	default:
		aclSyntax(rc, argv)
	}
}

func cmdACLSetUser(rc *conn, argv [][]byte) {
	ops := make([]string, 0, len(argv)-3)
	for _, a := range argv[3:] {
		ops = append(ops, string(a))
	}
	if msg := rc.p.srv.ACL().SetUser(string(argv[2]), ops); msg != "" {
		aclError(rc, msg)
		return
	}
	rc.w.OK()
}

func cmdACLDelUser(rc *conn, argv [][]byte) {
	names := make([]string, 0, len(argv)-2)
	for _, a := range argv[2:] {
		names = append(names, string(a))
	}
	n, msg := rc.p.srv.ACL().DelUser(names, rc.Conn)
	if msg != "" {
		aclError(rc, msg)
		return
	}
	rc.w.Int(int64(n))
	if rc.ACLUser().Deleted() {
		rc.quit = true // its own user: closed after the reply, as Redis
	}
}

func cmdACLGetUser(rc *conn, argv [][]byte) {
	u := rc.p.srv.ACL().Get(string(argv[2]))
	if u == nil {
		rc.w.Null()
		return
	}
	r := u.Rules()
	rc.w.Map(6)
	rc.w.BulkString("flags")
	flags := r.Flags()
	rc.w.Set(len(flags))
	for _, f := range flags {
		rc.w.BulkString(f)
	}
	rc.w.BulkString("passwords")
	rc.w.Array(len(r.Passwords()))
	for _, p := range r.Passwords() {
		rc.w.BulkString(p)
	}
	writeSel := func(v acl.SelectorView) {
		rc.w.BulkString("commands")
		rc.w.BulkString(v.Commands)
		rc.w.BulkString("keys")
		rc.w.BulkString(v.Keys)
		rc.w.BulkString("channels")
		rc.w.BulkString(v.Channels)
	}
	writeSel(r.Root())
	rc.w.BulkString("selectors")
	sels := r.Selectors()
	rc.w.Array(len(sels))
	for _, s := range sels {
		rc.w.Map(3)
		writeSel(s)
	}
}

func cmdACLList(rc *conn, _ [][]byte) {
	lines := rc.p.srv.ACL().List()
	rc.w.Array(len(lines))
	for _, l := range lines {
		rc.w.BulkString(l)
	}
}

func cmdACLUsers(rc *conn, _ [][]byte) {
	names := rc.p.srv.ACL().Names()
	rc.w.Array(len(names))
	for _, n := range names {
		rc.w.BulkString(n)
	}
}

func cmdACLWhoami(rc *conn, _ [][]byte) {
	rc.w.BulkString(rc.ACLUser().Name)
}

const genpassMaxBits = 4096

func cmdACLGenPass(rc *conn, argv [][]byte) {
	bits := int64(256)
	switch len(argv) {
	case 2:
	case 3:
		var ok bool
		if bits, ok = resp.ParseInt(argv[2]); !ok {
			rc.w.Error("ERR value is not an integer or out of range")
			return
		}
	default:
		aclSyntax(rc, argv)
		return
	}
	if bits <= 0 || bits > genpassMaxBits {
		aclError(rc, "ACL GENPASS argument must be the number of bits for the output password, a positive number up to "+
			strconv.Itoa(genpassMaxBits))
		return
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	_, _ = rand.Read(buf)
	rc.w.BulkString(hex.EncodeToString(buf)[:chars])
}

func cmdACLLog(rc *conn, argv [][]byte) {
	us := rc.p.srv.ACL()
	count := int64(10)
	switch len(argv) {
	case 2:
	case 3:
		if is(argv[2], "reset") {
			us.ResetLog()
			rc.w.OK()
			return
		}
		var ok bool
		if count, ok = resp.ParseInt(argv[2]); !ok {
			rc.w.Error("ERR value is not an integer or out of range")
			return
		}
		count = max(count, 0)
	default:
		aclSyntax(rc, argv)
		return
	}
	entries := us.Log(int(min(count, 1<<30)))
	now := time.Now()
	rc.w.Array(len(entries))
	for _, e := range entries {
		rc.w.Map(10)
		rc.w.BulkString("count")
		rc.w.Int(e.Count)
		rc.w.BulkString("reason")
		rc.w.BulkString([...]string{"unknown", "command", "key", "auth", "channel"}[e.Reason])
		rc.w.BulkString("context")
		rc.w.BulkString([...]string{"toplevel", "multi", "lua"}[e.Context])
		rc.w.BulkString("object")
		rc.w.BulkString(e.Object)
		rc.w.BulkString("username")
		rc.w.BulkString(e.Username)
		rc.w.BulkString("age-seconds")
		rc.w.Double(float64(now.Sub(e.CTime).Milliseconds()) / 1000)
		rc.w.BulkString("client-info")
		rc.w.BulkString(e.ClientInfo)
		// Redis 7.2's fields (its ACL LOG history).
		rc.w.BulkString("entry-id")
		rc.w.Int(e.EntryID)
		rc.w.BulkString("timestamp-created")
		rc.w.Int(e.Created.UnixMilli())
		rc.w.BulkString("timestamp-last-updated")
		rc.w.Int(e.CTime.UnixMilli())
	}
}

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

func cmdACLLoad(rc *conn, _ [][]byte) {
	path := rc.p.aclFile()
	if path == "" {
		rc.w.Error(errNoACLFile)
		return
	}
	if msg := rc.p.srv.ACL().LoadFile(path, rc.Conn); msg != "" {
		aclError(rc, msg)
		return
	}
	rc.w.OK()
	if rc.ACLUser().Deleted() {
		rc.quit = true
	}
}

func cmdACLSave(rc *conn, _ [][]byte) {
	path := rc.p.aclFile()
	if path == "" {
		rc.w.Error(errNoACLFile)
		return
	}
	if err := rc.p.srv.ACL().SaveFile(path); err != nil {
		rc.p.log.Warn("ACL SAVE failed", "path", path, "err", err)
		rc.w.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	rc.w.OK()
}

// cmdACLDryRun is ACL DRYRUN user command [arg ...]: the check a call
// would pass, without running it.
func cmdACLDryRun(rc *conn, argv [][]byte) {
	u := rc.p.srv.ACL().Get(string(argv[2]))
	if u == nil {
		aclError(rc, "User '"+cstr(argv[2])+"' not found")
		return
	}
	call := argv[3:]
	cmd := respCommands[strings.ToLower(string(call[0]))]
	if cmd != nil && len(cmd.subs) > 0 && len(call) > 1 {
		cmd = cmd.subcommand(call[1])
	}
	if cmd == nil {
		aclError(rc, "Command '"+cstr(call[0])+"' not found")
		return
	}
	if !cmd.arityOK(len(call)) {
		rc.w.Error("ERR wrong number of arguments for '" + cmd.name + "' command")
		return
	}
	reason, idx := aclCheck(u.Rules(), cmd, call)
	switch reason {
	case acl.OK:
		rc.w.OK()
	default:
		rc.w.BulkString(aclDenial(reason, u.Name, cmd.name, call, idx, true))
	}
}

// aclCheck checks a call of cmd (argv[0] its name) against rules.
func aclCheck(r *acl.Rules, cmd *respCommand, argv [][]byte) (reason, idx int) {
	ac := cmd.aclCmd()
	if ac == nil {
		// A command Redis 7.0 does not have: only +@all's "future
		// commands" reach it, with no key or channel check.
		if r.AllCommands() {
			return acl.OK, 0
		}
		return acl.DeniedCommand, 0
	}
	c := acl.Call{Cmd: ac, Argv: argv, HasKeys: cmd.hasKeys()}
	if c.HasKeys {
		c.Keys = func() []acl.KeyRef {
			refs := cmd.keyRefs(argv)
			out := make([]acl.KeyRef, len(refs))
			for i, k := range refs {
				var f uint8
				if k.flags&keyAccess != 0 {
					f |= acl.PermRead
				}
				if k.flags&(keyInsert|keyDelete|keyUpdate) != 0 {
					f |= acl.PermWrite
				}
				out[i] = acl.KeyRef{Pos: k.pos, Flags: f}
			}
			return out
		}
	}
	switch cmd.name {
	case "publish", "spublish":
		c.Channels = acl.ChanPublish
	case "subscribe", "ssubscribe":
		c.Channels = acl.ChanSubscribe
	case "psubscribe":
		c.Channels = acl.ChanPattern
	}
	return r.Check(&c)
}

// aclCmd is the command in the ACL's table (nil for a command Redis 7.0
// does not have).
func (c *respCommand) aclCmd() *acl.Command {
	return acl.Lookup(c.name)
}

// aclFile is the aclfile setting ("" when none).
func (p *Protocol) aclFile() string { return p.srv.ACLFile() }

// aclPermit checks a call against the connection's user's rules (the
// caller has seen they are not unlimited). A denial is logged and
// refused with Redis's -NOPERM text; the command never runs.
func (rc *conn) aclPermit(r *acl.Rules, cmd *respCommand, argv [][]byte) bool {
	reason, idx := aclCheck(r, cmd, argv)
	if reason == acl.OK {
		return true
	}
	ctx := acl.CtxTopLevel
	if rc.multi.active {
		ctx = acl.CtxMulti
	}
	rc.aclLog(reason, ctx, cmd, argv, idx)
	rc.reject("NOPERM " + aclDenial(reason, rc.ACLUser().Name, cmd.name, argv, idx, false))
	return false
}

// aclDenial is Redis 7.2's text for a denied call (getAclErrorMessage):
// the user and the command, or with verbose (ACL DRYRUN) the user and
// the key or channel, else a key or channel unnamed (-NOPERM replies).
func aclDenial(reason int, user, cmd string, argv [][]byte, idx int, verbose bool) string {
	var arg []byte
	if idx >= 0 && idx < len(argv) {
		arg = argv[idx]
	}
	switch {
	case reason == acl.DeniedCommand:
		return "User " + user + " has no permissions to run the '" + cmd + "' command"
	case reason == acl.DeniedKey && verbose:
		return "User " + user + " has no permissions to access the '" + cstr(arg) + "' key"
	case reason == acl.DeniedKey:
		return "No permissions to access a key"
	case verbose:
		return "User " + user + " has no permissions to access the '" + cstr(arg) + "' channel"
	default:
		return "No permissions to access a channel"
	}
}

// aclLog adds an ACL LOG entry for a denied call of the connection.
func (rc *conn) aclLog(reason, ctx int, cmd *respCommand, argv [][]byte, idx int) {
	obj := cmd.name
	if reason != acl.DeniedCommand {
		obj = string(argv[idx])
	}
	rc.p.srv.ACL().AddLog(reason, ctx, obj, rc.ACLUser().Name, rc.clientInfoLine(argv))
}

// clientInfoLine is the connection's CLIENT INFO line, for the ACL log.
func (rc *conn) clientInfoLine(argv [][]byte) string {
	ci := clientInfo{c: rc.Conn, rc: rc, addr: rc.RemoteAddr().String(), laddr: rc.LocalAddr().String()}
	return string(ci.line(nil, rc, argv, time.Now()))
}

// scriptACL is redis.call's check (Redis's scriptVerifyACL): the error
// reply, or nil.
func (rc *conn) scriptACL(cmd *respCommand, argv [][]byte) []byte {
	r := rc.ACLUser().Rules()
	if r.Unlimited || rc.master {
		return nil
	}
	reason, idx := aclCheck(r, cmd, argv)
	if reason == acl.OK {
		return nil
	}
	rc.aclLog(reason, acl.CtxLua, cmd, argv, idx)
	return []byte("-ERR ACL failure in script: " + aclDenial(reason, rc.ACLUser().Name, cmd.name, argv, idx, false) + "\r\n")
}

// aclConfigParams are the ACL's CONFIG parameters: requirepass (the
// default user's password, as Redis's ACLUpdateDefaultUserPassword: ""
// makes it nopass), aclfile (immutable), acllog-max-len and
// acl-pubsub-default (the channels of users created from now on).
func aclConfigParams() []*configParam {
	return []*configParam{
		{name: "requirepass", get: func(rc *conn) string { return rc.p.srv.ACL().RequirePass() },
			set: func(p *Protocol, v []byte) (func() string, string) {
				return func() string {
					if len(v) == 0 {
						p.srv.ACL().SetDefaultPassword(nil)
					} else {
						p.srv.ACL().SetDefaultPassword(v)
					}
					return ""
				}, ""
			}, noRewrite: true},
		{name: "aclfile", get: func(rc *conn) string { return rc.p.aclFile() }, noRewrite: true},
		{name: "acllog-max-len", get: func(rc *conn) string { return itoa64(int64(rc.p.srv.ACL().LogMax())) },
			set: intConfig(0, math.MaxInt64, func(p *Protocol, v int64) string {
				p.srv.ACL().SetLogMax(int(min(v, math.MaxInt32)))
				return ""
			}), def: "128"},
		{name: "acl-pubsub-default", get: func(rc *conn) string {
			if rc.p.srv.ACL().PubsubDefault() {
				return "allchannels"
			}
			return "resetchannels"
		}, set: func(p *Protocol, v []byte) (func() string, string) {
			switch {
			case is(v, "allchannels"):
				return func() string { p.srv.ACL().SetPubsubDefault(true); return "" }, ""
			case is(v, "resetchannels"):
				return func() string { p.srv.ACL().SetPubsubDefault(false); return "" }, ""
			}
			return nil, "argument(s) must be one of the following: allchannels, resetchannels"
		}, def: "resetchannels"},
	}
}

// aclRecheck is EXEC's check of a queued call against the rules as they
// are now (Redis's execCommand): a denial is that call's reply.
func (rc *conn) aclRecheck(r *acl.Rules, cmd *respCommand, argv [][]byte) bool {
	reason, idx := aclCheck(r, cmd, argv)
	if reason == acl.OK {
		return true
	}
	rc.aclLog(reason, acl.CtxMulti, cmd, argv, idx)
	why := "no permission to execute the command or subcommand"
	switch reason {
	case acl.DeniedKey:
		why = "no permission to touch the specified keys"
	case acl.DeniedChannel:
		why = "no permission to access one of the channels used as arguments"
	}
	rc.w.Error("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. " +
		"This command is no longer allowed for the following reason: " + why)
	return false
}

// killRevokedSubscribers closes u's subscribers that hold a channel,
// pattern or shard channel u's rules no longer allow (ACL SETUSER).
func (p *Protocol) killRevokedSubscribers(u *acl.User) {
	r := u.Rules()
	var kill []*server.Conn
	seen := map[*server.Conn]bool{}
	check := func(subs []*subscriber, name []byte, literal bool) {
		for _, s := range subs {
			if !seen[s.conn] && s.conn.ACLUser() == u && !r.ChannelAllowed(name, literal) {
				seen[s.conn] = true
				kill = append(kill, s.conn)
			}
		}
	}
	h := &p.pubsub
	h.mu.RLock()
	for ch, subs := range h.channels {
		check(subs, []byte(ch), false)
	}
	for ch, subs := range h.shards {
		check(subs, []byte(ch), false)
	}
	for _, ps := range h.patterns {
		check(ps.subs, ps.pattern, true)
	}
	h.mu.RUnlock()
	for _, c := range kill {
		c.Kill()
	}
}

// CheckCmd is redis.acl_check_cmd: whether the script's user may run
// the call (Redis's lookupCommand then ACLCheckAllUserCommandPerm).
func (h *scriptHost) CheckCmd(argv [][]byte) (known, allowed bool) {
	cmd := lookupCommand(argv[0])
	if cmd != nil && len(cmd.subs) > 0 && len(argv) > 1 {
		cmd = cmd.subcommand(argv[1])
	}
	if cmd == nil {
		return false, false
	}
	r := h.rc.ACLUser().Rules()
	if r.Unlimited {
		return true, true
	}
	reason, _ := aclCheck(r, cmd, argv)
	return true, reason == acl.OK
}
