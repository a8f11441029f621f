// Package script runs Lua scripts as Redis 7.0 runs EVAL: Lua 5.1
// (github.com/yuin/gopher-lua, the language Redis embeds), in Redis's
// sandbox, with Redis's redis.* API and its conversions between Lua values
// and RESP replies (Redis's script_lua.c and eval.c).
//
// The package knows nothing of the server: a script's redis.call goes to
// a Host, which runs the command as the script's client and hands back
// the raw RESP reply, exactly the bytes the command wrote. The package
// parses them into Lua values, so a command's reply reaches a script the
// way it reaches a client, and every command works in a script without
// an API of its own (Redis does the same with its fake client).
//
//	EVAL body numkeys k... a...      (server: checks, store held exclusively)
//	   │ Engine.Load: SHA1 -> compiled *lua.FunctionProto (bounded cache)
//	   │ Engine.Run: a pooled, sandboxed *lua.LState; KEYS, ARGV set
//	   ▼
//	script ── redis.call(argv) ──► Host.Call ──► the command table ──► "$3\r\nbar\r\n"
//	   ◄───────────── "bar" ◄── parseReply (RESP2 or RESP3, per redis.setresp)
//	   │ return value
//	   ▼
//	appendReply: the Lua value as a RESP reply in the caller's protocol
//
// The sandbox is Redis's: the globals table and the library tables are
// read-only (a write raises "Attempt to modify a readonly table"), reading
// an undefined global raises "Script attempted to access nonexistent
// global variable", and only the libraries Redis loads are there (base
// without print, dofile and loadfile; string, table, math; the data
// libraries of package lib, cjson, cmsgpack, bit, struct, once added).
//
// Functions (function.go) are Redis 7.0's FUNCTION libraries: their
// code runs once, at FUNCTION LOAD, in one state kept for them, and
// registers the functions FCALL runs (Run.Call), through the same Run
// and Host as EVAL.
//
// A running script is stopped by Kill (SCRIPT KILL), through the state's
// context, which gopher-lua checks before every instruction, and by the
// memory guard, which stops a script whose allocations pass the limit.
package script
