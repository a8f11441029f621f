package redis

// The command lookup on the request path. A Go map keyed by the
// lower-cased name cost about 5 % of the server's CPU at P=16 (hashing
// the string, probing, comparing), twice per request (prefetch and
// dispatch). The table below is built once from respCommands: an
// open-addressed array indexed by an FNV-1a hash of the name folded to
// lower case as it is hashed, so a lookup is one pass over the name's
// bytes and one comparison with the entry's name.

const lookupBits = 10 // 1024 slots for ~250 commands: probes stay short

var lookupTable [1 << lookupBits]*respCommand

// buildLookup fills lookupTable from respCommands (table.go's init).
func buildLookup() {
	for name, c := range respCommands {
		h := nameHash(name)
		for i := h; ; i = (i + 1) & (1<<lookupBits - 1) {
			if lookupTable[i] == nil {
				lookupTable[i] = c
				break
			}
		}
	}
}

// nameHash is FNV-1a over name with ASCII letters folded to lower case,
// reduced to a slot.
func nameHash[S string | []byte](name S) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		b := name[i]
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		h = (h ^ uint32(b)) * 16777619
	}
	return (h ^ h>>lookupBits ^ h>>(2*lookupBits)) & (1<<lookupBits - 1)
}

// lookupCommand finds a command by its name in any case, or returns nil.
func lookupCommand(name []byte) *respCommand {
	if len(name) > maxCommandName {
		return nil
	}
	for i := nameHash(name); ; i = (i + 1) & (1<<lookupBits - 1) {
		c := lookupTable[i]
		if c == nil {
			return nil
		}
		if nameIs(name, c.name) {
			return c
		}
	}
}

// nameIs reports whether name is lower in any case (ASCII).
func nameIs(name []byte, lower string) bool {
	if len(name) != len(lower) {
		return false
	}
	for i, b := range name {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != lower[i] {
			return false
		}
	}
	return true
}

// maxCommandName bounds the names lookupCommand hashes: no command's
// name is longer, so a longer one is unknown without looking.
const maxCommandName = 32
