// Package lib gives gopher-lua the four C libraries Redis 7.2 loads into every
// script state: cjson (lua-cjson 2.1.0), cmsgpack (lua-cmsgpack 0.4.0), bit
// (LuaBitOp 1.0.2) and struct (Roberto Ierusalimschy's struct.c, with the
// bounds fixes Redis applied). Each is a translation of the C file Redis ships
// in deps/lua/src, down to its error texts, so that a script sees the values
// and the messages redis-server 7.2.4 gives it (7.0.15's are the same).
//
// The libraries keep Lua 5.1's view of numbers: a Lua number is a float64, and
// where the C code casts a double to an integer type the cast is done here the
// way an x86-64 build of Redis does it (see cInt64, cInt32, cUint64), because
// scripts can observe the result (bit.tobit(2^40), struct.pack('L', -1)).
//
// Where gopher-lua, another implementation of Lua 5.1, shows through (the
// differences from Redis that could not be avoided, and one that is avoided by
// reading gopher-lua's internals):
//
//   - Table traversal order. cjson.encode and cmsgpack.pack walk a table with
//     next(); gopher-lua walks the array part, then the other keys in the order
//     they were inserted, while Lua 5.1 walks its hash nodes. An object or map
//     with more than one key may therefore be encoded with its keys in another
//     order (the same set of keys and values), and when two keys are both
//     unencodable the error names the first one met.
//   - Stack limits. Lua 5.1 refuses to grow a C function's stack past 8000
//     slots (LUAI_MAXCSTACK); the libraries count the slots the C code would
//     use and raise the same "stack overflow (...)" errors. gopher-lua's own
//     data stack is fixed at lua.RegistrySize (5120) values unless the state is
//     created with a larger RegistryMaxSize, so returning several thousand
//     values (cmsgpack.unpack of a long stream, struct.unpack of a long format)
//     can fail with gopher-lua's "registry overflow" before Redis's limit.
//     A state made with lua.Options{RegistryMaxSize: 1 << 18} (or more)
//     reaches Redis's limits exactly; the tests use such a state.
//   - Argument errors name the function from gopher-lua's debug information,
//     which names a called global, field, local or upvalue the way Lua 5.1 does
//     (an unnamed call, through pcall, is '?'), and recognise a method call
//     (cjson:encode(x), "calling 'encode' on bad self") by reading the
//     caller's bytecode, through an unexported field of gopher-lua v1.1.2 (see
//     calledAsMethod): another gopher-lua version may lose the latter.
//   - gopher-lua stores a table key k with 1 <= k < lua.MaxArrayIndex in its
//     array part, padding the gap with nils: a msgpack map with one key near
//     64M allocates that array, where Lua 5.1 would use one hash node. Lua code
//     can do the same (t[6e7] = 1), so the script engine must bound memory
//     anyway; lowering lua.MaxArrayIndex, a process-wide setting, bounds the
//     padding (keys past it go to the hash part, with no visible change but
//     the order pairs() sees).
//   - The tables Open registers are ordinary tables: Redis 7.0 makes them
//     (like the globals) read-only, which is the sandbox's business, not
//     theirs ("Attempt to modify a readonly table").
//   - bit.tohex(x, -2^31) makes Redis 7.2.4 copy (size_t)INT_MIN bytes out
//     of an 8-byte buffer (CVE-2024-31449, fixed in later releases by
//     clamping n to -2^31+1); here n is clamped as the fix does, giving 8
//     upper-case digits, rather than crashing.
package lib
