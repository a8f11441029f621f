package redis

import (
	"bytes"
	"strings"

	"github.com/minikv/minikv/internal/protocol/resp"
	"github.com/minikv/minikv/internal/rdb"
	"github.com/minikv/minikv/internal/script"
)

// Functions (Redis 7.0's functions.c): FUNCTION and FCALL. The libraries
// and their Lua state are package script's (script.Functions); this file
// is the server side: the commands, the checks before a function runs
// (the same as a shebang script's: scriptMayRun), the DUMP payload, and
// durability.
//
// A function runs as EVAL's scripts do (runScript in script.go): inside
// store.Exclusive, through the same script client, BUSY and kill
// machinery; while one runs, other clients are told to use FUNCTION KILL.
//
// Durable mode. Redis keeps the libraries in its RDB and AOF; MiniKV
// keeps them in one record of the store's own (store.SetAux), whose
// value is FUNCTION DUMP's payload, rewritten whole by every FUNCTION
// LOAD, DELETE, FLUSH and RESTORE that changes the libraries, before its
// reply (the reply waits for the store's Sync). New reads it back and
// loads the libraries before the port serves anyone.

// functionsAux is the name of the store record holding the libraries.
const functionsAux = "functions"

// The FUNCTION HELP lines of the subcommands that have more than one.
const (
	functionListHelp = "Return general information on all the libraries:\n* Library name\n* The engine used to run the Library\n" +
		"* Library description\n* Functions list\n* Library code (if WITHCODE is given)\n" +
		"It also possible to get only function that matches a pattern using LIBRARYNAME argument."
	functionStatsHelp = "Return information about the current function running:\n* Function name\n* Command used to run the function\n" +
		"* Duration in MS that the function is running\nIf no function is running, return nil\n" +
		"In addition, returns a list of available engines."
	functionFlushHelp = "Delete all the libraries.\nWhen called without the optional mode argument, the behavior is determined by the\n" +
		"lazyfree-lazy-user-flush configuration directive. Valid modes are:\n" +
		"* ASYNC: Asynchronously flush the libraries.\n* SYNC: Synchronously flush the libraries."
	functionRestoreHelp = "Restore the libraries represented by the given payload, it is possible to give a restore policy to\n" +
		"control how to handle existing libraries (default APPEND):\n* FLUSH: delete all existing libraries.\n" +
		"* APPEND: appends the restored libraries to the existing libraries. On collision, abort.\n" +
		"* REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old\n" +
		"  libraries with the new libraries (notice that even on this option there is a chance of failure\n" +
		"  in case of functions name collision with another library)."
)

func functionCommands() []respCommand {
	fcall := func(name, summary string, run func(*conn, [][]byte)) respCommand {
		return respCommand{name: name, arity: -3, group: "scripting", since: "7.0.0", complexity: "Depends on the function that is executed.",
			summary: summary, args: []docArg{str("function"), integ("numkeys"), opt(keys("key")), {name: "arg", typ: "string", optional: true, multiple: true}},
			keysOf: numKeys(2), run: run}
	}
	// The subcommands that change the libraries are writes (refused while
	// the disk fails, as Redis refuses them on a failed AOF).
	write := func(c *respCommand) *respCommand { c.write = true; return c }
	return []respCommand{
		fcall("fcall", "Invokes a function.", cmdFCall),
		fcall("fcall_ro", "Invokes a read-only function.", cmdFCallRO),
		{name: "function", arity: -2, group: "scripting", since: "7.0.0", complexity: "Depends on subcommand.",
			summary: "A container for function commands.", subs: []*respCommand{
				write(sub("function|load", -3, "7.0.0", "Creates a library.", "LOAD [REPLACE] <FUNCTION CODE>",
					"Create a new library with the given library name and code.", cmdFunctionLoad,
					opt(token("REPLACE")), str("function-code"))),
				write(sub("function|delete", 3, "7.0.0", "Deletes a library and its functions.", "DELETE <LIBRARY NAME>",
					"Delete the given library.", cmdFunctionDelete, str("library-name"))),
				sub("function|list", -2, "7.0.0", "Returns information about all libraries.", "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
					functionListHelp, cmdFunctionList, opt(tokArg("LIBRARYNAME", "library-name-pattern", "string")), opt(token("WITHCODE"))),
				sub("function|stats", 2, "7.0.0", "Returns information about a function during execution.", "STATS",
					functionStatsHelp, cmdFunctionStats),
				sub("function|kill", 2, "7.0.0", "Terminates a function during execution.", "KILL",
					"Kill the current running function.", cmdFunctionKill),
				write(sub("function|flush", -2, "7.0.0", "Deletes all libraries and functions.", "FLUSH [ASYNC|SYNC]",
					functionFlushHelp, cmdFunctionFlush, oneOf("flush-type", true, token("ASYNC"), token("SYNC")))),
				sub("function|dump", 2, "7.0.0", "Dumps all libraries into a serialized binary payload.", "DUMP",
					"Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
					cmdFunctionDump),
				write(sub("function|restore", -3, "7.0.0", "Restores all libraries from a payload.", "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
					functionRestoreHelp, cmdFunctionRestore, str("serialized-value"),
					oneOf("policy", true, token("FLUSH"), token("APPEND"), token("REPLACE")))),
				// Redis 7.2's wording ("Print", where 7.0 had "Prints").
				sub("function|help", 2, "5.0.0", "Returns helpful text about the different subcommands.", "HELP",
					"Print this help.", cmdHelp),
			}},
	}
}

func cmdFCall(rc *conn, argv [][]byte)   { rc.fcall(argv, false) }
func cmdFCallRO(rc *conn, argv [][]byte) { rc.fcall(argv, true) }

// fcall is fcallCommandGeneric: the function, numkeys, the checks of its
// flags, then the run.
func (rc *conn) fcall(argv [][]byte, ro bool) {
	f := rc.p.functions.Lookup(argv[1])
	if f == nil {
		rc.w.Error("ERR Function not found")
		return
	}
	numkeys, ok := resp.ParseInt(argv[2])
	switch {
	case !ok:
		rc.w.Error("ERR Bad number of keys provided")
		return
	case numkeys > int64(len(argv)-3):
		rc.w.Error("ERR Number of keys can't be greater than number of args")
		return
	case numkeys < 0:
		rc.w.Error("ERR Number of keys can't be negative")
		return
	}
	flags := 0
	for i, name := range script.FlagNames {
		if f.Flags&(1<<i) != 0 {
			flags |= shebangFlags[name]
		}
	}
	if !rc.scriptMayRun(flags, ro) {
		return
	}
	rc.runScript(nil, f, argv, argv[3:3+numkeys], argv[3+numkeys:], ro || flags&flagNoWrites != 0, flags)
}

func cmdFunctionLoad(rc *conn, argv [][]byte) {
	replace := false
	i := 2
	for ; i < len(argv)-1; i++ {
		if !is(argv[i], "replace") {
			rc.w.Error("ERR Unknown option given: " + string(argv[i]))
			return
		}
		replace = true
	}
	name, err := rc.p.functions.Load(argv[i], replace, rc.scriptHost())
	if err != nil {
		rc.w.Error("ERR " + err.Error())
		return
	}
	rc.p.saveFunctions()
	rc.w.BulkString(name)
}

func cmdFunctionDelete(rc *conn, argv [][]byte) {
	if !rc.p.functions.Delete(string(argv[2])) {
		rc.w.Error("ERR Library not found")
		return
	}
	rc.p.saveFunctions()
	rc.w.OK()
}

func cmdFunctionFlush(rc *conn, argv [][]byte) {
	if len(argv) > 3 {
		rc.subcommandSyntaxError(argv)
		return
	}
	if len(argv) == 3 && !is(argv[2], "sync") && !is(argv[2], "async") {
		rc.w.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		return
	}
	rc.p.functions.Flush()
	rc.p.saveFunctions()
	rc.w.OK()
}

func cmdFunctionKill(rc *conn, _ [][]byte) { rc.killScript(true) } // script.go

// cmdFunctionList is functionListCommand. Redis lists in its dicts'
// order; MiniKV lists the libraries by name and each one's functions in
// the order they were registered.
func cmdFunctionList(rc *conn, argv [][]byte) {
	withCode := false
	var pattern []byte
	for i := 2; i < len(argv); i++ {
		switch {
		case !withCode && is(argv[i], "withcode"):
			withCode = true
		case pattern == nil && is(argv[i], "libraryname"):
			if i >= len(argv)-1 {
				rc.w.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern = argv[i]
		default:
			rc.w.Error("ERR Unknown argument " + string(argv[i]))
			return
		}
	}
	libs := rc.p.functions.Libraries()
	if pattern != nil {
		// stringmatchlen with nocase: library names are ASCII letters,
		// digits and '_', so lower-casing both sides is the same match.
		g := compileGlob(bytes.ToLower(pattern))
		kept := libs[:0]
		for _, lib := range libs {
			if g.match([]byte(strings.ToLower(lib.Name))) {
				kept = append(kept, lib)
			}
		}
		libs = kept
	}
	w := rc.w
	w.Array(len(libs))
	for _, lib := range libs {
		w.Map(3 + b2i(withCode))
		w.BulkString("library_name")
		w.BulkString(lib.Name)
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		w.Array(len(lib.Functions))
		for _, f := range lib.Functions {
			w.Map(3)
			w.BulkString("name")
			w.BulkString(f.Name)
			w.BulkString("description")
			if f.HasDesc {
				w.BulkString(f.Description)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			n := 0
			for i := range script.FlagNames {
				n += int(f.Flags >> i & 1)
			}
			w.Set(n)
			for i, name := range script.FlagNames {
				if f.Flags&(1<<i) != 0 {
					w.Simple(name)
				}
			}
		}
		if withCode {
			w.BulkString("library_code")
			w.Bulk(lib.Code)
		}
	}
}

// cmdFunctionStats is functionStatsCommand; while a script of EVAL runs
// it answers BUSY, as Redis does.
func cmdFunctionStats(rc *conn, _ [][]byte) {
	r := rc.p.scripts.Running()
	if r != nil && r.Func == nil {
		rc.w.Error(script.ErrBusyScript.Error())
		return
	}
	st := rc.p.functions.Stats()
	w := rc.w
	w.Map(2)
	w.BulkString("running_script")
	if r == nil {
		w.Null()
	} else {
		w.Map(3)
		w.BulkString("name")
		w.BulkString(r.Func.Name)
		w.BulkString("command")
		w.Array(len(r.Argv))
		for _, a := range r.Argv {
			w.Bulk(a)
		}
		w.BulkString("duration_ms")
		w.Int(rc.p.ops.clock.ns(rc.p.ops.now()-r.Started) / 1e6)
	}
	w.BulkString("engines")
	w.Map(1)
	w.BulkString("LUA")
	w.Map(2)
	w.BulkString("libraries_count")
	w.Int(int64(st.Libraries))
	w.BulkString("functions_count")
	w.Int(int64(st.Functions))
}

func cmdFunctionDump(rc *conn, _ [][]byte) {
	rc.w.Bulk(rc.p.functionsPayload())
}

// functionsPayload is FUNCTION DUMP's payload (rdb.AppendFunctions).
func (p *Protocol) functionsPayload() []byte { return rdb.AppendFunctions(nil, p.functionCodes()) }

// functionCodes are the libraries' codes, by library name: what DUMP and
// an RDB file hold (persist.go's saveOptions).
func (p *Protocol) functionCodes() [][]byte {
	libs := p.functions.Libraries()
	codes := make([][]byte, len(libs))
	for i, lib := range libs {
		codes[i] = lib.Code
	}
	return codes
}

func cmdFunctionRestore(rc *conn, argv [][]byte) {
	if len(argv) > 4 {
		rc.subcommandSyntaxError(argv)
		return
	}
	policy := script.RestoreAppend
	if len(argv) == 4 {
		switch {
		case is(argv[3], "append"):
		case is(argv[3], "replace"):
			policy = script.RestoreReplace
		case is(argv[3], "flush"):
			policy = script.RestoreFlush
		default:
			rc.w.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	codes, err := rdb.DecodeFunctions(argv[2])
	if err != nil {
		rc.w.Error("ERR " + err.Error())
		return
	}
	if err := rc.p.functions.Restore(codes, policy, rc.scriptHost()); err != nil {
		rc.w.Error("ERR " + err.Error())
		return
	}
	rc.p.saveFunctions()
	rc.w.OK()
}

// saveFunctions writes the libraries to the store's record, in durable
// mode: the reply that follows waits for it (Conn.Write syncs the store).
func (p *Protocol) saveFunctions() {
	payload := p.functionsPayload()
	if p.st.Durable() {
		p.st.SetAux(functionsAux, payload)
	}
	p.repl.mu.Lock()
	src := p.repl.src
	p.repl.mu.Unlock()
	if src != nil {
		// Replicas get the libraries' whole state (replication.go).
		src.Command([]byte("FUNCTION"), []byte("RESTORE"), payload, []byte("FLUSH"))
	}
}

// loadFunctions loads the libraries the store keeps, at start.
func (p *Protocol) loadFunctions() {
	rec, err := p.st.Aux(functionsAux)
	if err != nil {
		p.log.Error("reading the function libraries", "err", err)
		return
	}
	if rec == nil {
		return
	}
	codes, err := rdb.DecodeFunctions(rec)
	if err == nil {
		err = p.functions.Restore(codes, script.RestoreFlush, nil)
	}
	if err != nil {
		p.log.Error("loading the function libraries", "err", err)
	}
}

// loadRDBFunction loads a library of an RDB file (LoadRDB), replacing
// one of the same name, and keeps it in durable mode.
func (p *Protocol) loadRDBFunction(code []byte) error {
	if _, err := p.functions.Load(code, true, nil); err != nil {
		return err
	}
	p.saveFunctions()
	return nil
}
