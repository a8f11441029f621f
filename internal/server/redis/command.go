package redis

import (
	"bytes"
	"slices"
	"strings"
)

// COMMAND and its subcommands: COUNT, LIST [FILTERBY ...], INFO, DOCS,
// GETKEYS, GETKEYSANDFLAGS, HELP. The replies come from the command table
// and, for every command Redis 7.0 has, from the metadata redis-server
// 7.0.15 reports (cmdmeta.go), so COMMAND INFO and COMMAND DOCS of a
// command answer as Redis does, but list only the subcommands MiniKV
// serves.

func commandCommand() respCommand {
	return respCommand{name: "command", arity: -1, flags: []string{"loading", "stale"}, group: "server", since: "2.8.13",
		complexity: "O(N) where N is the total number of Redis commands",
		summary:    "Returns detailed information about all commands.", run: cmdCommand,
		noSubHelp: "Return details about all Redis commands.",
		subs: []*respCommand{
			sub("command|count", 2, "2.8.13", "Returns a count of commands.", "COUNT",
				"Return the total number of commands in this Redis server.", cmdCommandCount),
			sub("command|list", -2, "7.0.0", "Returns a list of command names.", "LIST",
				"Return a list of all commands in this Redis server.", cmdCommandList),
			sub("command|info", -2, "2.8.13", "Returns information about one, multiple or all commands.", "INFO [<command-name> ...]",
				"Return details about multiple Redis commands.\nIf no command names are given, documentation details for all\ncommands are returned.",
				cmdCommandInfo, docArg{name: "command-name", typ: "string", optional: true, multiple: true}),
			sub("command|docs", -2, "7.0.0", "Returns documentary information about one, multiple or all commands.", "DOCS [<command-name> ...]",
				"Return documentation details about multiple Redis commands.\nIf no command names are given, documentation details for all\ncommands are returned.",
				cmdCommandDocs, docArg{name: "command-name", typ: "string", optional: true, multiple: true}),
			sub("command|getkeys", -3, "2.8.13", "Extracts the key names from an arbitrary command.", "GETKEYS <full-command>",
				"Return the keys from a full Redis command.", cmdCommandGetKeys,
				str("command"), docArg{name: "arg", typ: "string", optional: true, multiple: true}),
			sub("command|getkeysandflags", -3, "7.0.0", "Extracts the key names and access flags for an arbitrary command.", "GETKEYSANDFLAGS <full-command>",
				"Return the keys and the access flags from a full Redis command.", cmdCommandGetKeysAndFlags,
				str("command"), docArg{name: "arg", typ: "string", optional: true, multiple: true}),
			helpSub("command"),
		}}
}

// sortedCommands lists the table by name, so replies are stable.
func sortedCommands() []*respCommand {
	cmds := make([]*respCommand, 0, len(respCommands))
	for _, c := range respCommands {
		cmds = append(cmds, c)
	}
	slices.SortFunc(cmds, func(a, b *respCommand) int { return strings.Compare(a.name, b.name) })
	return cmds
}

// lookupFull finds a command by its full name, in any case: "get", or
// "client|list" for a subcommand (Redis's lookupCommandBySds).
func lookupFull(name []byte) *respCommand {
	lower := strings.ToLower(string(name))
	container, sub, isSub := strings.Cut(lower, "|")
	c := respCommands[container]
	if !isSub || c == nil {
		return c
	}
	if len(c.subs) == 0 || strings.Contains(sub, "|") {
		return nil
	}
	return c.subcommand([]byte(sub))
}

func cmdCommand(rc *conn, _ [][]byte) { rc.writeCommandInfos(sortedCommands()) }

// cmdCommandCount is COMMAND COUNT: the top-level commands, as Redis
// counts them.
func cmdCommandCount(rc *conn, _ [][]byte) { rc.w.Int(int64(len(respCommands))) }

// cmdCommandList is COMMAND LIST [FILTERBY MODULE name|ACLCAT category|
// PATTERN pattern]: every command's full name, subcommands included.
func cmdCommandList(rc *conn, argv [][]byte) {
	filter := func(*respCommand) bool { return true }
	for i := 2; i < len(argv); i++ {
		if !is(argv[i], "filterby") || len(argv)-1-i != 2 {
			rc.w.Error(errSyntax)
			return
		}
		arg := argv[i+2]
		switch kind := argv[i+1]; {
		case is(kind, "module"):
			filter = func(*respCommand) bool { return false } // MiniKV loads no modules
		case is(kind, "aclcat"):
			cat := "@" + strings.ToLower(string(arg))
			filter = func(c *respCommand) bool { return c.meta != nil && slices.Contains(c.meta.acl, cat) }
		case is(kind, "pattern"):
			g := compileGlob(bytes.ToLower(arg))
			filter = func(c *respCommand) bool { return g.match([]byte(c.name)) }
		default:
			rc.w.Error(errSyntax)
			return
		}
		i += 2
	}
	var names []string
	for _, c := range sortedCommands() {
		if filter(c) {
			names = append(names, c.name)
		}
		for _, sc := range c.subs {
			if filter(sc) {
				names = append(names, sc.name)
			}
		}
	}
	rc.w.Array(len(names))
	for _, n := range names {
		rc.w.BulkString(n)
	}
}

// cmdCommandInfo is COMMAND INFO [name ...]: a null for a name MiniKV
// does not serve.
func cmdCommandInfo(rc *conn, argv [][]byte) {
	if len(argv) == 2 {
		rc.writeCommandInfos(sortedCommands())
		return
	}
	rc.w.Array(len(argv) - 2)
	for _, name := range argv[2:] {
		if c := lookupFull(name); c != nil {
			rc.writeCommandInfo(c)
		} else {
			rc.w.Null()
		}
	}
}

// cmdCommandDocs is COMMAND DOCS [name ...]: names MiniKV does not serve
// are left out.
func cmdCommandDocs(rc *conn, argv [][]byte) {
	var cmds []*respCommand
	if len(argv) == 2 {
		cmds = sortedCommands()
	} else {
		for _, name := range argv[2:] {
			if c := lookupFull(name); c != nil {
				cmds = append(cmds, c)
			}
		}
	}
	rc.writeCommandDocsMap(cmds)
}

// cmdCommandGetKeys is COMMAND GETKEYS command [arg ...].
func cmdCommandGetKeys(rc *conn, argv [][]byte) { rc.getKeys(argv[2:], false) }

// cmdCommandGetKeysAndFlags is COMMAND GETKEYSANDFLAGS command [arg
// ...]: each key with the flags of the key spec that found it.
func cmdCommandGetKeysAndFlags(rc *conn, argv [][]byte) { rc.getKeys(argv[2:], true) }

// getKeys answers GETKEYS and GETKEYSANDFLAGS for call with Redis's
// checks, in Redis's order (getKeysSubcommandImpl).
func (rc *conn) getKeys(call [][]byte, withFlags bool) {
	cmd := rc.lookup(call[0])
	if cmd != nil && len(cmd.subs) > 0 && len(call) > 1 {
		cmd = cmd.subcommand(call[1])
	}
	switch {
	case cmd == nil:
		rc.w.Error("ERR Invalid command specified")
		return
	case !cmd.hasKeys():
		rc.w.Error("ERR The command has no key arguments")
		return
	case !cmd.arityOK(len(call)):
		rc.w.Error("ERR Invalid number of arguments specified for command")
		return
	}
	refs := cmd.keyRefs(call)
	if len(refs) == 0 {
		if slices.Contains(cmd.flags, "no_mandatory_keys") {
			rc.w.Array(0)
		} else {
			rc.w.Error("ERR Invalid arguments specified for command")
		}
		return
	}
	rc.w.Array(len(refs))
	for _, r := range refs {
		if !withFlags {
			rc.w.Bulk(call[r.pos])
			continue
		}
		rc.w.Array(2)
		rc.w.Bulk(call[r.pos])
		rc.writeKeyFlags(r.flags)
	}
}

func (rc *conn) writeCommandInfos(cmds []*respCommand) {
	rc.w.Array(len(cmds))
	for _, c := range cmds {
		rc.writeCommandInfo(c)
	}
}

func (rc *conn) writeCommandDocsMap(cmds []*respCommand) {
	rc.w.Map(len(cmds))
	for _, c := range cmds {
		rc.w.BulkString(c.name)
		rc.writeCommandDocs(c)
	}
}

// writeCommandInfo writes Redis 7's ten-element command info array:
// name, arity, flags, first key, last key, step, ACL categories, tips,
// key specs, subcommands. A Redis 7.0 command's first nine are Redis's.
func (rc *conn) writeCommandInfo(c *respCommand) {
	rc.w.Array(10)
	if m := c.meta; m != nil {
		for _, e := range m.info.elems[:9] {
			rc.writeRV(e)
		}
	} else {
		rc.w.BulkString(c.name)
		rc.w.Int(int64(c.arity))
		rc.w.Set(len(c.flags))
		for _, f := range c.flags {
			rc.w.Simple(f)
		}
		rc.w.Int(int64(c.firstKey))
		rc.w.Int(int64(c.lastKey))
		rc.w.Int(int64(c.step))
		rc.w.Set(1)
		rc.w.Simple("@" + c.group)
		rc.w.Set(0)
		rc.w.Array(0)
	}
	if len(c.subs) == 0 {
		rc.w.Set(0) // as Redis: an empty set, but an array of subcommands
		return
	}
	rc.w.Array(len(c.subs))
	for _, sc := range c.subs {
		rc.writeCommandInfo(sc)
	}
}

// writeCommandDocs writes the documentation map of one command: Redis's
// for a Redis 7.0 command, with the subcommands MiniKV serves last, as
// Redis writes them.
func (rc *conn) writeCommandDocs(c *respCommand) {
	if m := c.meta; m != nil {
		d := m.docMap()
		n := len(d.elems) / 2
		if len(c.subs) > 0 {
			n++
		}
		rc.w.Map(n)
		for _, e := range d.elems {
			rc.writeRV(e)
		}
		if len(c.subs) > 0 {
			rc.w.BulkString("subcommands")
			rc.writeCommandDocsMap(c.subs)
		}
		return
	}
	n := 4
	if len(c.args) > 0 {
		n++
	}
	if len(c.subs) > 0 {
		n++
	}
	rc.w.Map(n)
	rc.w.BulkString("summary")
	rc.w.BulkString(c.summary)
	rc.w.BulkString("since")
	rc.w.BulkString(c.since)
	rc.w.BulkString("group")
	rc.w.BulkString(c.group)
	rc.w.BulkString("complexity")
	rc.w.BulkString(c.complexity)
	if len(c.args) > 0 {
		rc.w.BulkString("arguments")
		rc.writeDocArgs(c.args)
	}
	if len(c.subs) > 0 {
		rc.w.BulkString("subcommands")
		rc.writeCommandDocsMap(c.subs)
	}
}

// writeDocArgs writes a command's arguments from its table entry (a
// command Redis 7.0 does not have).
func (rc *conn) writeDocArgs(args []docArg) {
	rc.w.Array(len(args))
	for _, a := range args {
		n := 2
		if a.typ != "pure-token" && a.typ != "oneof" && a.typ != "block" {
			n++ // display_text
		}
		if a.token != "" {
			n++
		}
		if a.optional || a.multiple {
			n++
		}
		if len(a.sub) > 0 {
			n++
		}
		rc.w.Map(n)
		rc.w.BulkString("name")
		rc.w.BulkString(a.name)
		rc.w.BulkString("type")
		rc.w.BulkString(a.typ)
		if a.typ != "pure-token" && a.typ != "oneof" && a.typ != "block" {
			rc.w.BulkString("display_text")
			rc.w.BulkString(a.name)
		}
		if a.token != "" {
			rc.w.BulkString("token")
			rc.w.BulkString(a.token)
		}
		if a.optional || a.multiple {
			var flags []string
			if a.optional {
				flags = append(flags, "optional")
			}
			if a.multiple {
				flags = append(flags, "multiple")
			}
			rc.w.BulkString("flags")
			rc.w.Set(len(flags))
			for _, f := range flags {
				rc.w.Simple(f)
			}
		}
		if len(a.sub) > 0 {
			rc.w.BulkString("arguments")
			rc.writeDocArgs(a.sub)
		}
	}
}
