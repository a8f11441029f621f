package redis

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/minikv/minikv/internal/protocol/resp"
)

// Command metadata as Redis 7.2 declares it. cmddata.go, generated from
// redis-server 7.2.4 (TestCommandData), holds for every Redis command its
// COMMAND INFO and COMMAND DOCS replies in RESP3. At start-up each command
// of the table takes from them:
//
//   - its flags (write, denyoom, fast, admin, skip_monitor, ...), which
//     decide the -OOM refusal, MONITOR, SLOWLOG and the latency events;
//   - the COMMAND INFO reply (arity, flags, ACL categories, tips, key
//     specs), written as Redis writes it, with the subcommands MiniKV
//     serves;
//   - the COMMAND DOCS reply (summary, since, history, arguments, ...);
//   - its key specs, which COMMAND GETKEYS and GETKEYSANDFLAGS read the
//     way Redis's getKeysFromCommandWithSpecs does, with the command's own
//     getkeys function where Redis has one (SET, BITFIELD, SORT, the
//     numkeys commands).
//
//	cmddata.go: "get" -> {"*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n...", "%5\r\n$7\r\nsummary\r\n..."}
//	                         │ parseRV, at init                                          │ parseRV, on first COMMAND DOCS
//	                         ▼                                                           ▼
//	respCommand.meta: info (rv), flags, specs                                   docs (rv)

// rv is one value of a RESP3 reply: a map (its keys and values
// alternate in elems), an array, a set, a bulk string, a simple string or
// an integer. COMMAND INFO and DOCS write it back with the connection's
// protocol version (a map is a flat array in RESP2, a set an array).
type rv struct {
	kind  byte // '%' map, '*' array, '~' set, '$' bulk, '+' simple, ':' integer
	str   string
	num   int64
	elems []rv
}

// parseRV parses one RESP3 value from the start of s and returns it with
// the rest of s. The input is generated data: a malformed one is a broken
// invariant and panics.
func parseRV(s string) (rv, string) {
	i := strings.Index(s, "\r\n")
	if i < 1 {
		panic("redis: malformed command data: " + strconv.Quote(s[:min(len(s), 40)]))
	}
	t, body, rest := s[0], s[1:i], s[i+2:]
	switch t {
	case '+':
		return rv{kind: '+', str: body}, rest
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			panic("redis: malformed command data integer " + strconv.Quote(body))
		}
		return rv{kind: ':', num: n}, rest
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 || n+2 > len(rest) {
			panic("redis: malformed command data bulk " + strconv.Quote(body))
		}
		return rv{kind: '$', str: rest[:n]}, rest[n+2:]
	case '*', '~', '%':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			panic("redis: malformed command data length " + strconv.Quote(body))
		}
		if t == '%' {
			n *= 2
		}
		v := rv{kind: t, elems: make([]rv, n)}
		for j := range v.elems {
			v.elems[j], rest = parseRV(rest)
		}
		return v, rest
	}
	panic("redis: command data type " + strconv.Quote(string(t)))
}

// field returns the value under key in map v.
func (v rv) field(key string) (rv, bool) {
	for i := 0; i+1 < len(v.elems); i += 2 {
		if v.elems[i].str == key {
			return v.elems[i+1], true
		}
	}
	return rv{}, false
}

// strs returns the strings of a set or array of strings.
func (v rv) strs() []string {
	out := make([]string, 0, len(v.elems))
	for _, e := range v.elems {
		out = append(out, e.str)
	}
	return out
}

// writeRV writes v in the connection's protocol version.
func (rc *conn) writeRV(v rv) {
	switch v.kind {
	case '%':
		rc.w.Map(len(v.elems) / 2)
	case '*':
		rc.w.Array(len(v.elems))
	case '~':
		rc.w.Set(len(v.elems))
	case '$':
		rc.w.BulkString(v.str)
		return
	case '+':
		rc.w.Simple(v.str)
		return
	case ':':
		rc.w.Int(v.num)
		return
	}
	for _, e := range v.elems {
		rc.writeRV(e)
	}
}

// cmdMeta is what a command takes from Redis's metadata.
type cmdMeta struct {
	info  rv        // COMMAND INFO's ten elements; the subcommands' one is left out
	acl   []string  // ACL categories, with their '@'
	specs []keySpec // key specs, in Redis's order

	docsRaw  string // COMMAND DOCS's map in RESP3, parsed on first use
	docsOnce sync.Once
	docs     rv
}

// docMap is the command's COMMAND DOCS map (without subcommands).
func (m *cmdMeta) docMap() rv {
	m.docsOnce.Do(func() { m.docs, _ = parseRV(m.docsRaw) })
	return m.docs
}

// keyFlags are a key spec's flags (Redis's CMD_KEY_*), in the order
// COMMAND INFO and GETKEYSANDFLAGS print them.
type keyFlags uint16

const (
	keyRO keyFlags = 1 << iota
	keyRW
	keyOW
	keyRM
	keyAccess
	keyUpdate
	keyInsert
	keyDelete
	keyNotKey
	keyIncomplete
	keyVariableFlags
)

var keyFlagNames = []string{"RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key", "incomplete", "variable_flags"}

func parseKeyFlags(names []string) keyFlags {
	var f keyFlags
	for _, n := range names {
		i := slices.Index(keyFlagNames, n)
		if i < 0 {
			panic("redis: unknown key spec flag " + n)
		}
		f |= 1 << i
	}
	return f
}

// writeKeyFlags writes f as a set of simple strings.
func (rc *conn) writeKeyFlags(f keyFlags) {
	n := 0
	for i := range keyFlagNames {
		if f&(1<<i) != 0 {
			n++
		}
	}
	rc.w.Set(n)
	for i, name := range keyFlagNames {
		if f&(1<<i) != 0 {
			rc.w.Simple(name)
		}
	}
}

// keySpec is one of Redis 7's key specs: where the search for keys
// begins (an index, or after a keyword) and how keys are found from
// there (a range, or a count argument followed by the keys).
type keySpec struct {
	flags keyFlags

	begin     byte // 'i' index, 'k' keyword, 'u' unknown
	index     int
	keyword   string // lower case
	startFrom int

	find      byte // 'r' range, 'n' keynum, 'u' unknown
	lastKey   int  // range
	keyStep   int  // range and keynum
	limit     int  // range
	keyNumIdx int  // keynum
	firstKey  int  // keynum
}

// parseKeySpec reads a key spec map of COMMAND INFO.
func parseKeySpec(v rv) keySpec {
	var ks keySpec
	flags, _ := v.field("flags")
	ks.flags = parseKeyFlags(flags.strs())
	num := func(m rv, key string) int {
		f, _ := m.field(key)
		return int(f.num)
	}
	bs, _ := v.field("begin_search")
	bsType, _ := bs.field("type")
	bsSpec, _ := bs.field("spec")
	switch bsType.str {
	case "index":
		ks.begin, ks.index = 'i', num(bsSpec, "index")
	case "keyword":
		kw, _ := bsSpec.field("keyword")
		ks.begin, ks.keyword, ks.startFrom = 'k', strings.ToLower(kw.str), num(bsSpec, "startfrom")
	default:
		ks.begin = 'u'
	}
	fk, _ := v.field("find_keys")
	fkType, _ := fk.field("type")
	fkSpec, _ := fk.field("spec")
	switch fkType.str {
	case "range":
		ks.find, ks.lastKey, ks.keyStep, ks.limit = 'r', num(fkSpec, "lastkey"), num(fkSpec, "keystep"), num(fkSpec, "limit")
	case "keynum":
		ks.find, ks.keyNumIdx, ks.firstKey, ks.keyStep = 'n', num(fkSpec, "keynumidx"), num(fkSpec, "firstkey"), num(fkSpec, "keystep")
	default:
		ks.find = 'u'
	}
	return ks
}

// applyRedisMeta gives the table's commands (and their subcommands) the
// flags and metadata Redis 7.2 declares for them. table.go's init calls
// it before deriving anything from the flags.
func applyRedisMeta(table []respCommand) {
	for i := range table {
		c := &table[i]
		c.applyMeta()
		for _, sc := range c.subs {
			if !sc.applyMeta() {
				sc.flags = c.flags // as the table gives them
			}
		}
	}
}

// applyMeta takes c's metadata from cmddata.go, if Redis has the command.
func (c *respCommand) applyMeta() bool {
	data, ok := redisCommandData[c.name]
	if !ok {
		return false
	}
	info, _ := parseRV(data[0])
	m := &cmdMeta{info: info, docsRaw: data[1]}
	c.flags = info.elems[2].strs()
	m.acl = info.elems[6].strs()
	for _, s := range info.elems[8].elems {
		m.specs = append(m.specs, parseKeySpec(s))
	}
	c.meta = m
	return true
}

// Key extraction for COMMAND GETKEYS and GETKEYSANDFLAGS, as Redis 7.2's
// getKeysFromCommandWithSpecs: the key specs when every one is
// reliable, else (or when the specs fail on these arguments) the
// command's own getkeys function.

// keyRef is one key found in a call: its position and flags.
type keyRef struct {
	pos   int
	flags keyFlags
}

// getKeysFunc is a command's own key finder (Redis's getkeys_proc).
type getKeysFunc func(argv [][]byte) []keyRef

// redisGetKeys are Redis 7.2's getkeys functions of the commands MiniKV
// serves.
var redisGetKeys = map[string]getKeysFunc{
	"set":         setGetKeys,
	"bitfield":    bitfieldGetKeys,
	"sort":        sortGetKeys,
	"sort_ro":     func([][]byte) []keyRef { return []keyRef{{1, keyRO | keyAccess}} },
	"zunionstore": genericGetKeys(1, 2, 3),
	"zinterstore": genericGetKeys(1, 2, 3),
	"zdiffstore":  genericGetKeys(1, 2, 3),
	"zunion":      genericGetKeys(0, 1, 2),
	"zinter":      genericGetKeys(0, 1, 2),
	"zdiff":       genericGetKeys(0, 1, 2),
	"zintercard":  genericGetKeys(0, 1, 2),
	"sintercard":  genericGetKeys(0, 1, 2),
	"lmpop":       genericGetKeys(0, 1, 2),
	"zmpop":       genericGetKeys(0, 1, 2),
	"blmpop":      genericGetKeys(0, 2, 3),
	"bzmpop":      genericGetKeys(0, 2, 3),
}

// genericGetKeys is Redis's genericGetKeys: a count at countAt, that many
// keys from firstAt, then the destination at storeAt (0: none), all
// without flags. A count that is not a number in range gives no keys.
func genericGetKeys(storeAt, countAt, firstAt int) getKeysFunc {
	return func(argv [][]byte) []keyRef {
		if countAt >= len(argv) {
			return nil
		}
		n := atoi(argv[countAt])
		if n < 1 || n > len(argv)-firstAt {
			return nil
		}
		keys := make([]keyRef, 0, n+1)
		for i := range n {
			keys = append(keys, keyRef{pos: firstAt + i})
		}
		if storeAt > 0 {
			keys = append(keys, keyRef{pos: storeAt})
		}
		return keys
	}
}

// atoi is C's atoi: optional blanks and sign, then digits up to the
// first other byte; 0 when there are none. It saturates instead of
// overflowing.
func atoi(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	n := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if n < 1<<31 {
			n = n*10 + int(b[i]-'0')
		}
	}
	if neg {
		return -n
	}
	return n
}

// setGetKeys: SET's key is read too when GET is given.
func setGetKeys(argv [][]byte) []keyRef {
	for _, a := range argv[min(3, len(argv)):] {
		if is(a, "get") {
			return []keyRef{{1, keyRW | keyAccess | keyUpdate}}
		}
	}
	return []keyRef{{1, keyOW | keyUpdate}}
}

// bitfieldGetKeys: BITFIELD only reads its key when it has nothing but
// GET (and OVERFLOW) operations.
func bitfieldGetKeys(argv [][]byte) []keyRef {
	readonly := true
	for i := 2; i < len(argv); i++ {
		rem := len(argv) - i - 1
		switch a := argv[i]; {
		case is(a, "get") && rem >= 2:
			i += 2
			continue
		case (is(a, "set") || is(a, "incrby")) && rem >= 3:
			readonly = false
		case is(a, "overflow") && rem >= 1:
			i++
			continue
		default:
			readonly = false
		}
		break
	}
	if readonly {
		return []keyRef{{1, keyRO | keyAccess}}
	}
	return []keyRef{{1, keyRW | keyAccess | keyUpdate}}
}

// sortGetKeys: SORT's key, and the last STORE destination, skipping the
// arguments of LIMIT, GET and BY as Redis's sortGetKeys does.
func sortGetKeys(argv [][]byte) []keyRef {
	keys := []keyRef{{1, keyRO | keyAccess}}
	store := 0
	for i := 2; i < len(argv); i++ {
		switch a := argv[i]; {
		case is(a, "limit"):
			i += 2
		case is(a, "store") && i+1 < len(argv):
			store = i + 1
		case is(a, "get"), is(a, "by"):
			i++
		}
	}
	if store > 0 {
		keys = append(keys, keyRef{store, keyOW | keyUpdate})
	}
	return keys
}

// hasKeys is Redis's doesCommandHaveKeys: a getkeys function, or a key
// spec for real keys.
func (c *respCommand) hasKeys() bool {
	if c.meta == nil {
		return c.firstKey > 0 || c.keysOf != nil
	}
	if redisGetKeys[c.name] != nil {
		return true
	}
	for _, s := range c.meta.specs {
		if s.flags&keyNotKey == 0 {
			return true
		}
	}
	return false
}

// keyRefs finds the keys of argv, a call of c with a valid arity, as
// Redis's getKeysFromCommandWithSpecs; none when the arguments do not say
// (a bad numkeys).
func (c *respCommand) keyRefs(argv [][]byte) []keyRef {
	if c.meta == nil {
		// Not a Redis 7.2 command: the table's key range, without flags.
		var refs []keyRef
		for _, k := range c.keyPositions(len(argv)) {
			refs = append(refs, keyRef{pos: k})
		}
		return refs
	}
	reliable, varFlags := false, false
	for _, s := range c.meta.specs {
		reliable = reliable || s.flags&keyNotKey == 0
		varFlags = varFlags || s.flags&keyVariableFlags != 0
	}
	if reliable && !varFlags {
		if refs, ok := keysBySpecs(c.meta.specs, c.arity, argv); ok {
			return refs
		}
	}
	if f := redisGetKeys[c.name]; f != nil {
		return f(argv)
	}
	return nil
}

// keysBySpecs is Redis's getKeysUsingKeySpecs: false when a spec cannot
// be followed on argv (a keynum that is not a number, keys past the end,
// an unknown or incomplete spec).
func keysBySpecs(specs []keySpec, arity int, argv [][]byte) ([]keyRef, bool) {
	var refs []keyRef
	argc := len(argv)
	for _, s := range specs {
		if s.flags&keyNotKey != 0 {
			continue
		}
		first := 0
		switch s.begin {
		case 'i':
			first = s.index
		case 'k':
			start, end := s.startFrom, argc-1
			if s.startFrom <= 0 {
				start, end = argc+s.startFrom, 1
			}
			for i := start; i != end; {
				if i >= argc || i < 1 {
					break
				}
				if is(argv[i], s.keyword) {
					first = i + 1
					break
				}
				if start <= end {
					i++
				} else {
					i--
				}
			}
			if first == 0 {
				continue // keyword not found
			}
		default:
			return nil, false
		}
		var last, step int
		switch s.find {
		case 'r':
			step = s.keyStep
			switch {
			case s.lastKey >= 0:
				last = first + s.lastKey
			case s.limit == 0:
				last = argc + s.lastKey
			default:
				last = first + ((argc-first)/s.limit + s.lastKey)
			}
		case 'n':
			step = s.keyStep
			if s.keyNumIdx >= argc || first+s.keyNumIdx >= argc {
				return nil, false
			}
			n, ok := resp.ParseInt(argv[first+s.keyNumIdx])
			if !ok || n < 0 || n > int64(argc) {
				return nil, false
			}
			first += s.firstKey
			last = first + int(n) - 1
		default:
			return nil, false
		}
		if last >= argc || last < first || first >= argc {
			return nil, false
		}
		for i := first; i <= last; i += max(step, 1) {
			if i >= argc || i < first {
				if arity < 0 {
					continue
				}
				break
			}
			refs = append(refs, keyRef{i, s.flags})
		}
		if s.flags&keyIncomplete != 0 {
			return nil, false
		}
	}
	return refs, true
}

// keyPositions are the positions of the keys in a call of n arguments by
// the table's first key, last key and step.
func (c *respCommand) keyPositions(n int) []int {
	if c.firstKey <= 0 {
		return nil
	}
	last := c.lastKey
	if last < 0 {
		last += n
	}
	var pos []int
	for i := c.firstKey; i <= last && i < n; i += max(c.step, 1) {
		pos = append(pos, i)
	}
	return pos
}
