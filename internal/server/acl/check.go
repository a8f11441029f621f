package acl

// The permission check (Redis's ACLCheckAllUserCommandPerm).

// KeyRef is one key of a call: its argument index and whether the
// command reads it (PermRead: key spec "access") and writes it
// (PermWrite: "insert", "delete" or "update").
type KeyRef struct {
	Pos   int
	Flags uint8
}

// Channel kinds of a call.
const (
	ChanNone      = iota
	ChanPublish   // PUBLISH, SPUBLISH: argument 1
	ChanSubscribe // SUBSCRIBE, SSUBSCRIBE: every argument
	ChanPattern   // PSUBSCRIBE: every argument, compared literally
)

// Call is what the check needs of one command call.
type Call struct {
	Cmd      *Command
	Argv     [][]byte // Argv[0] is the command's name
	HasKeys  bool
	Keys     func() []KeyRef // called at most once, only when needed
	Channels int             // a Chan kind
}

// Check reports whether the rules allow the call: OK, or the reason and
// the index of the denied key or channel (Redis picks, of all selectors'
// denials, the most severe, then the last index).
func (r *Rules) Check(c *Call) (reason, idx int) {
	var keys []KeyRef
	keysDone := false
	getKeys := func() []KeyRef {
		if !keysDone && c.Keys != nil {
			keys, keysDone = c.Keys(), true
		}
		return keys
	}
	reason = DeniedCommand
	check := func(s *selector) bool {
		res, i := s.check(c, getKeys)
		if res == OK {
			return true
		}
		if res > reason || res == reason && i > idx {
			reason, idx = res, i
		}
		return false
	}
	if check(r.root) {
		return OK, 0
	}
	for _, s := range r.selectors {
		if check(s) {
			return OK, 0
		}
	}
	return reason, idx
}

func (s *selector) check(c *Call, keys func() []KeyRef) (int, int) {
	cmd := c.Cmd
	if !s.allCommands && !cmd.NoAuth && !s.bit(cmd.ID) {
		args := s.firstArgs[cmd.ID]
		if len(c.Argv) < 2 || args == nil {
			return DeniedCommand, 0
		}
		i := 1
		if cmd.Parent != nil {
			i = 2
		}
		if i >= len(c.Argv) {
			return DeniedCommand, 0
		}
		arg := cstr(string(c.Argv[i]))
		ok := false
		for _, a := range args {
			if equalFoldASCII(a, arg) {
				ok = true
				break
			}
		}
		if !ok {
			return DeniedCommand, 0
		}
	}
	if !s.allKeys && c.HasKeys {
		for _, k := range keys() {
			if !s.keyOK(c.Argv[k.Pos], k.Flags) {
				return DeniedKey, k.Pos
			}
		}
	}
	if !s.allChannels && c.Channels != ChanNone {
		from, to := 1, len(c.Argv)
		if c.Channels == ChanPublish {
			to = 2
		}
		for j := from; j < to && j < len(c.Argv); j++ {
			if !s.channelOK(c.Argv[j], c.Channels == ChanPattern) {
				return DeniedChannel, j
			}
		}
	}
	return OK, 0
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func (s *selector) keyOK(key []byte, flags uint8) bool {
	for _, p := range s.keys {
		if p.flags&flags != flags {
			continue
		}
		if p.glob().match(key) {
			return true
		}
	}
	return false
}

func (s *selector) channelOK(ch []byte, literal bool) bool {
	for _, p := range s.channels {
		if literal && cstr(p) == cstr(string(ch)) || !literal && Match(p, ch) {
			return true
		}
	}
	return false
}

// KeyAllowed reports whether any selector lets the user touch key with
// the given permissions (what a memcached command checks).
func (r *Rules) KeyAllowed(key []byte, flags uint8) bool {
	if r.root.allKeys || r.root.keyOK(key, flags) {
		return true
	}
	for _, s := range r.selectors {
		if s.allKeys || s.keyOK(key, flags) {
			return true
		}
	}
	return false
}

// Match is Redis's stringmatchlen (case-sensitive).
func Match(pattern string, s []byte) bool {
	return compileGlob([]byte(pattern)).match(s)
}
