package acl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
)

// Key pattern permissions.
const (
	PermRead  = 1
	PermWrite = 2
	permAll   = PermRead | PermWrite
)

// keyPattern is one ~pattern, %R~pattern or %W~pattern.
type keyPattern struct {
	pat   string
	flags uint8
	g     *glob // compiled when the rule is read
}

func (k *keyPattern) glob() *glob { return k.g }

// selector is one set of command, key and channel rules: the user's root
// one, or a "(...)" selector.
type selector struct {
	bits        []uint64 // allowed command IDs
	future      bool     // +@all's reserved bit: later commands are allowed too
	allCommands bool     // +@all and no command taken away since
	allKeys     bool
	allChannels bool
	keys        []keyPattern
	channels    []string
	firstArgs   map[int][]string // +select|0: first arguments of an otherwise denied command
	// rules are the command and category rules applied since the last
	// +@all or -@all, in order, each command or category once (Redis
	// 7.2's command_rules): what ACL LIST describes.
	rules []string
}

func newSelector() *selector {
	return &selector{bits: make([]uint64, (len(commands().all)+63)/64)}
}

func (s *selector) clone() *selector {
	c := *s
	c.bits = slices.Clone(s.bits)
	c.keys = slices.Clone(s.keys)
	c.channels = slices.Clone(s.channels)
	c.rules = slices.Clone(s.rules)
	if s.firstArgs != nil {
		c.firstArgs = make(map[int][]string, len(s.firstArgs))
		for k, v := range s.firstArgs {
			c.firstArgs[k] = slices.Clone(v)
		}
	}
	return &c
}

func (s *selector) bit(id int) bool {
	if id/64 >= len(s.bits) {
		return false
	}
	return s.bits[id/64]&(1<<(id%64)) != 0
}

func (s *selector) setBit(id int, on bool) {
	if id/64 >= len(s.bits) {
		return
	}
	if on {
		s.bits[id/64] |= 1 << (id % 64)
	} else {
		s.bits[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

// changePerm allows or denies a command and, for a container, its
// subcommands (Redis's ACLChangeSelectorPerm).
func (s *selector) changePerm(c *Command, on bool) {
	s.setBit(c.ID, on)
	delete(s.firstArgs, c.ID)
	for _, sc := range c.Subs {
		s.setBit(sc.ID, on)
	}
}

// addRule is Redis 7.2's ACLUpdateCommandRules: rule (a command, a
// command|arg or an @category, lower-cased) replaces the earlier rules
// of the same name and those of its subcommands or first arguments,
// and goes last.
func (s *selector) addRule(rule string, allow bool) {
	rule = strings.ToLower(rule)
	s.rules = slices.DeleteFunc(s.rules, func(r string) bool {
		r = r[1:]
		return r == rule || len(r) > len(rule) && r[len(rule)] == '|' && r[:len(rule)] == rule
	})
	if allow {
		s.rules = append(s.rules, "+"+rule)
	} else {
		s.rules = append(s.rules, "-"+rule)
	}
}

// setCategory applies +@cat or -@cat.
func (s *selector) setCategory(bit uint32, on bool) {
	for _, c := range commands().all {
		if c.Cats&bit != 0 {
			s.changePerm(c, on)
		}
	}
}

// Rule errors, Redis's ACLSetUserStringError texts.
var (
	errUnknown      = errors.New("Unknown command or category name in ACL")
	errSyntax       = errors.New("Syntax error")
	errKeysAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errChanAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errNoSuchPass   = errors.New("The password you are trying to remove from the user does not exist")
	errBadHash      = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errFirstArgSub  = errors.New("Allowing first-arg of a subcommand is not supported")
	errDuplicate    = errors.New("Duplicate user found. A user can only be defined once in config files")
)

// cstr is op up to its first NUL: what Redis's strcasecmp and lookups see.
func cstr(op string) string {
	if i := strings.IndexByte(op, 0); i >= 0 {
		return op[:i]
	}
	return op
}

// hasSpaces is ACLStringHasSpaces: a space (isspace) or a NUL.
func hasSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

// apply is ACLSetSelector: one rule on a selector.
func (s *selector) apply(op string) error {
	if op == "" {
		return errSyntax
	}
	cs := cstr(op)
	switch {
	case strings.EqualFold(cs, "allkeys") || strings.EqualFold(cs, "~*"):
		s.allKeys, s.keys = true, nil
	case strings.EqualFold(cs, "resetkeys"):
		s.allKeys, s.keys = false, nil
	case strings.EqualFold(cs, "allchannels") || strings.EqualFold(cs, "&*"):
		s.allChannels, s.channels = true, nil
	case strings.EqualFold(cs, "resetchannels"):
		s.allChannels, s.channels = false, nil
	case strings.EqualFold(cs, "allcommands") || strings.EqualFold(cs, "+@all"):
		for i := range s.bits {
			s.bits[i] = ^uint64(0)
		}
		s.future, s.allCommands, s.firstArgs, s.rules = true, true, nil, nil
	case strings.EqualFold(cs, "nocommands") || strings.EqualFold(cs, "-@all"):
		clear(s.bits)
		s.future, s.allCommands, s.firstArgs, s.rules = false, false, nil, nil
	case op[0] == '~' || op[0] == '%':
		if s.allKeys {
			return errKeysAfterAll
		}
		var flags uint8
		off := 1
		if op[0] == '%' {
			for ; off < len(op); off++ {
				switch {
				case (op[off] == 'R' || op[off] == 'r') && flags&PermRead == 0:
					flags |= PermRead
				case (op[off] == 'W' || op[off] == 'w') && flags&PermWrite == 0:
					flags |= PermWrite
				case op[off] == '~':
					off++
					goto done
				default:
					return errSyntax
				}
			}
		done:
			if flags == 0 {
				return errSyntax
			}
		} else {
			flags = permAll
		}
		pat := op[off:]
		if hasSpaces(pat) {
			return errSyntax
		}
		if i := slices.IndexFunc(s.keys, func(k keyPattern) bool { return k.pat == pat }); i >= 0 {
			s.keys[i].flags |= flags
		} else {
			s.keys = append(s.keys, keyPattern{pat: pat, flags: flags, g: compileGlob([]byte(pat))})
		}
		s.allKeys = false
	case op[0] == '&':
		if s.allChannels {
			return errChanAfterAll
		}
		pat := op[1:]
		if hasSpaces(pat) {
			return errSyntax
		}
		if !slices.Contains(s.channels, pat) {
			s.channels = append(s.channels, pat)
		}
		s.allChannels = false
	case op[0] == '+' && (len(cs) < 2 || cs[1] != '@'):
		name := cs[1:]
		i := strings.LastIndexByte(name, '|')
		if i < 0 {
			c := lookupACL(name)
			if c == nil {
				return errUnknown
			}
			s.changePerm(c, true)
			s.addRule(c.Name, true)
			return nil
		}
		c := lookupACL(name[:i])
		switch {
		case c == nil:
			return errUnknown
		case c.Parent != nil:
			return errFirstArgSub
		case i == len(name)-1:
			return errSyntax
		case len(c.Subs) > 0:
			sc := lookupACL(name)
			if sc == nil {
				return errUnknown
			}
			s.changePerm(sc, true)
		default:
			sub := name[i+1:]
			if s.firstArgs == nil {
				s.firstArgs = map[int][]string{}
			}
			if !slices.ContainsFunc(s.firstArgs[c.ID], func(a string) bool { return strings.EqualFold(a, sub) }) {
				s.firstArgs[c.ID] = append(s.firstArgs[c.ID], sub)
			}
		}
		s.addRule(name, true)
	case op[0] == '-' && (len(cs) < 2 || cs[1] != '@'):
		c := lookupACL(cs[1:])
		if c == nil {
			return errUnknown
		}
		s.changePerm(c, false)
		s.addRule(c.Name, false)
	case (op[0] == '+' || op[0] == '-') && len(cs) >= 2 && cs[1] == '@':
		bit := CategoryBit(cs[2:])
		if bit == 0 {
			return errUnknown
		}
		s.setCategory(bit, op[0] == '+')
		s.addRule(cs[1:], op[0] == '+')
	default:
		return errSyntax
	}
	return nil
}

// Rules are one user's flags, passwords and selectors. A User's Rules
// are never changed once published: a change makes new Rules.
type Rules struct {
	Enabled    bool // "on"; else "off"
	NoPass     bool
	sanitize   int8 // 0 neither, 1 sanitize-payload, 2 skip-sanitize-payload
	passwords  []string
	root       *selector
	selectors  []*selector
	Unlimited  bool // every command, key and channel: the check's fast path
	pubsubDflt bool // acl-pubsub-default allchannels when the rules were made
}

// NewRules are a new user's: off, sanitize-payload (as Redis 7.2 creates
// users), no password, no keys, no channels (allchannels when
// acl-pubsub-default is allchannels), no commands.
func NewRules(allChannels bool) *Rules {
	r := &Rules{root: newSelector(), sanitize: 1, pubsubDflt: allChannels}
	r.root.allChannels = allChannels
	return r
}

// DefaultRules are the default user's: on, nopass, ~* &* +@all.
func DefaultRules() *Rules {
	r := NewRules(false)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		_ = r.Apply(op)
	}
	r.finish()
	return r
}

// Clone copies r for a change.
func (r *Rules) Clone() *Rules {
	c := *r
	c.passwords = slices.Clone(r.passwords)
	c.root = r.root.clone()
	c.selectors = make([]*selector, len(r.selectors))
	for i, s := range r.selectors {
		c.selectors[i] = s.clone()
	}
	return &c
}

// finish computes the fast-path flag; call it before publishing.
func (r *Rules) finish() {
	s := r.root
	r.Unlimited = s.allCommands && s.allKeys && s.allChannels
}

// HashPassword is the hex SHA-256 Redis keeps of a password.
func HashPassword(p []byte) string {
	h := sha256.Sum256(p)
	return hex.EncodeToString(h[:])
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if !(h[i] >= '0' && h[i] <= '9' || h[i] >= 'a' && h[i] <= 'f') {
			return false
		}
	}
	return true
}

// Apply is ACLSetUser: one rule on r. An empty rule does nothing.
func (r *Rules) Apply(op string) error {
	if op == "" {
		return nil
	}
	cs := cstr(op)
	switch {
	case strings.EqualFold(cs, "on"):
		r.Enabled = true
	case strings.EqualFold(cs, "off"):
		r.Enabled = false
	case strings.EqualFold(cs, "skip-sanitize-payload"):
		r.sanitize = 2
	case strings.EqualFold(cs, "sanitize-payload"):
		r.sanitize = 1
	case strings.EqualFold(cs, "nopass"):
		r.NoPass, r.passwords = true, nil
	case strings.EqualFold(cs, "resetpass"):
		r.NoPass, r.passwords = false, nil
	case op[0] == '>' || op[0] == '#':
		var h string
		if op[0] == '>' {
			h = HashPassword([]byte(op[1:]))
		} else {
			if !validHash(op[1:]) {
				return errBadHash
			}
			h = op[1:]
		}
		if !slices.Contains(r.passwords, h) {
			r.passwords = append(r.passwords, h)
		}
		r.NoPass = false
	case op[0] == '<' || op[0] == '!':
		var h string
		if op[0] == '<' {
			h = HashPassword([]byte(op[1:]))
		} else {
			if !validHash(op[1:]) {
				return errBadHash
			}
			h = op[1:]
		}
		i := slices.Index(r.passwords, h)
		if i < 0 {
			return errNoSuchPass
		}
		r.passwords = slices.Delete(r.passwords, i, i+1)
	case op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector()
		s.allChannels = r.pubsubDflt
		args, _ := SplitArgs(op[1 : len(op)-1]) // unbalanced quotes: an empty selector, as Redis
		for _, a := range args {
			if err := s.apply(a); err != nil {
				return err
			}
		}
		r.selectors = append(r.selectors, s)
	case strings.EqualFold(cs, "clearselectors"):
		r.selectors = nil
	case strings.EqualFold(cs, "reset"):
		for _, o := range []string{"resetpass", "resetkeys", "resetchannels"} {
			_ = r.Apply(o)
		}
		if r.pubsubDflt {
			_ = r.Apply("allchannels")
		}
		for _, o := range []string{"off", "sanitize-payload", "clearselectors", "-@all"} {
			_ = r.Apply(o)
		}
	default:
		return r.root.apply(op)
	}
	return nil
}

// MergeSelectorArgs joins a selector given over several arguments
// ("(~a", "+get)") into one, as Redis's ACLMergeSelectorArguments; bad
// is the index of an unmatched "(" argument, or -1.
func MergeSelectorArgs(args []string) (out []string, bad int) {
	open := -1
	var cur string
	for j, op := range args {
		if open < 0 && len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			cur, open = op, j
			continue
		}
		if open >= 0 {
			cur += " " + op
			if len(op) > 0 && op[len(op)-1] == ')' {
				out = append(out, cur)
				open = -1
			}
			continue
		}
		out = append(out, op)
	}
	if open >= 0 {
		return nil, open
	}
	return out, -1
}

// SplitArgs is Redis's sdssplitargs: arguments separated by spaces, with
// "double" (escapes \n \r \t \b \a \\ \" \xHH) and 'single' quotes; ok is
// false for unbalanced quotes or a closing quote not followed by a space.
func SplitArgs(line string) (args []string, ok bool) {
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return args, true
		}
		var cur []byte
		inq, insq := false, false
		for {
			if inq {
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, unhex(line[i+2])<<4|unhex(line[i+3]))
					i += 3
				case c == '\\' && i+1 < len(line):
					i++
					switch line[i] {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, line[i])
					}
				case c == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					inq = false
					i++
					goto next
				default:
					cur = append(cur, c)
				}
				i++
				continue
			}
			if insq {
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				case c == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					insq = false
					i++
					goto next
				default:
					cur = append(cur, c)
				}
				i++
				continue
			}
			if i >= len(line) {
				break
			}
			switch c := line[i]; {
			case isSpace(c):
				break
			case c == '"':
				inq = true
				i++
				continue
			case c == '\'':
				insq = true
				i++
				continue
			default:
				cur = append(cur, c)
				i++
				continue
			}
			break
		}
	next:
		args = append(args, string(cur))
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == 0 || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
