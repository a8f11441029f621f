package memcache

// Command identifies a parsed request.
type Command uint8

// Commands of the memcached text protocol.
const (
	CmdNone Command = iota
	CmdGet
	CmdGets
	CmdGat
	CmdGats
	CmdMget // seed alias of a multi-key get
	CmdSet
	CmdAdd
	CmdReplace
	CmdAppend
	CmdPrepend
	CmdCAS
	CmdDelete
	CmdIncr
	CmdDecr
	CmdTouch
	CmdFlushAll
	CmdStats
	CmdVersion
	CmdVerbosity
	CmdQuit
	CmdAuth
	CmdMetaGet        // mg
	CmdMetaSet        // ms
	CmdMetaDelete     // md
	CmdMetaArithmetic // ma
	CmdMetaNoop       // mn
	CmdMetaDebug      // me
)

var commandNames = [...]string{
	CmdNone:      "",
	CmdGet:       "get",
	CmdGets:      "gets",
	CmdGat:       "gat",
	CmdGats:      "gats",
	CmdMget:      "mget",
	CmdSet:       "set",
	CmdAdd:       "add",
	CmdReplace:   "replace",
	CmdAppend:    "append",
	CmdPrepend:   "prepend",
	CmdCAS:       "cas",
	CmdDelete:    "delete",
	CmdIncr:      "incr",
	CmdDecr:      "decr",
	CmdTouch:     "touch",
	CmdFlushAll:  "flush_all",
	CmdStats:     "stats",
	CmdVersion:   "version",
	CmdVerbosity: "verbosity",
	CmdQuit:      "quit",
	CmdAuth:      "auth",

	CmdMetaGet:        "mg",
	CmdMetaSet:        "ms",
	CmdMetaDelete:     "md",
	CmdMetaArithmetic: "ma",
	CmdMetaNoop:       "mn",
	CmdMetaDebug:      "me",
}

// String returns the wire name of the command ("get", "flush_all", ...),
// or "" for CmdNone and unknown values.
func (c Command) String() string {
	if int(c) < len(commandNames) {
		return commandNames[c]
	}
	return ""
}

// IsStorage reports whether the command is followed by a data block
// (set, add, replace, append, prepend, cas).
func (c Command) IsStorage() bool { return c >= CmdSet && c <= CmdCAS }

// IsRetrieval reports whether the command is a (multi-key) get:
// get, gets, gat, gats or mget.
func (c Command) IsRetrieval() bool { return c >= CmdGet && c <= CmdMget }

// IsMeta reports whether the command is a meta command (mg, ms, md, ma,
// mn, me), whose errors are sent even with the q flag.
func (c Command) IsMeta() bool { return c >= CmdMetaGet && c <= CmdMetaDebug }

// lookupCommand maps a command token to its Command. Names are lower-case
// and case-sensitive, as in memcached ("GET" is unknown). The conversion in
// the switch does not allocate.
func lookupCommand(name []byte) Command {
	switch string(name) {
	case "get", "bget": // bget: ancient alias memcached 1.6 still accepts
		return CmdGet
	case "gets":
		return CmdGets
	case "set":
		return CmdSet
	case "delete":
		return CmdDelete
	case "incr":
		return CmdIncr
	case "decr":
		return CmdDecr
	case "touch":
		return CmdTouch
	case "gat":
		return CmdGat
	case "gats":
		return CmdGats
	case "mget":
		return CmdMget
	case "add":
		return CmdAdd
	case "replace":
		return CmdReplace
	case "append":
		return CmdAppend
	case "prepend":
		return CmdPrepend
	case "cas":
		return CmdCAS
	case "flush_all":
		return CmdFlushAll
	case "stats":
		return CmdStats
	case "version":
		return CmdVersion
	case "verbosity":
		return CmdVerbosity
	case "quit":
		return CmdQuit
	case "auth":
		return CmdAuth
	case "mg":
		return CmdMetaGet
	case "ms":
		return CmdMetaSet
	case "md":
		return CmdMetaDelete
	case "ma":
		return CmdMetaArithmetic
	case "mn":
		return CmdMetaNoop
	case "me":
		return CmdMetaDebug
	}
	return CmdNone
}
