package acl

import "strings"

// Descriptions in Redis 7.2's forms (acl.c's ACLDescribe*): what ACL
// LIST, ACL GETUSER and ACL SAVE print.

func (k keyPattern) String() string {
	switch k.flags {
	case PermRead:
		return "%R~" + k.pat
	case PermWrite:
		return "%W~" + k.pat
	}
	return "~" + k.pat
}

// commandRules is Redis 7.2's ACLDescribeSelectorCommandRules: +@all
// or -@all, then the command and category rules as they were applied
// since (addRule).
func (s *selector) commandRules() string {
	first := "-@all"
	if s.future {
		first = "+@all"
	}
	if len(s.rules) == 0 {
		return first
	}
	return first + " " + strings.Join(s.rules, " ")
}

// describe is ACLDescribeSelector.
func (s *selector) describe() string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, k := range s.keys {
			b.WriteString(k.String())
			b.WriteByte(' ')
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.commandRules())
	return b.String()
}

// Flags are the user's flags in Redis's order.
func (r *Rules) Flags() []string {
	var f []string
	if r.Enabled {
		f = append(f, "on")
	} else {
		f = append(f, "off")
	}
	if r.NoPass {
		f = append(f, "nopass")
	}
	switch r.sanitize {
	case 2:
		f = append(f, "skip-sanitize-payload")
	case 1:
		f = append(f, "sanitize-payload")
	}
	return f
}

// Passwords are the password hashes, in the order given.
func (r *Rules) Passwords() []string { return r.passwords }

// Describe is ACLDescribeUser: the rules as ACL LIST prints them after
// "user <name> ".
func (r *Rules) Describe() string {
	var b strings.Builder
	for _, f := range r.Flags() {
		b.WriteString(f + " ")
	}
	for _, p := range r.passwords {
		b.WriteString("#" + p + " ")
	}
	b.WriteString(r.root.describe())
	for _, s := range r.selectors {
		b.WriteString(" (" + s.describe() + ")")
	}
	return b.String()
}

// SelectorView is what ACL GETUSER shows of one selector.
type SelectorView struct{ Commands, Keys, Channels string }

func (s *selector) view() SelectorView {
	v := SelectorView{Commands: s.commandRules()}
	if s.allKeys {
		v.Keys = "~*"
	} else {
		ks := make([]string, len(s.keys))
		for i, k := range s.keys {
			ks[i] = k.String()
		}
		v.Keys = strings.Join(ks, " ")
	}
	if s.allChannels {
		v.Channels = "&*"
	} else {
		cs := make([]string, len(s.channels))
		for i, c := range s.channels {
			cs[i] = "&" + c
		}
		v.Channels = strings.Join(cs, " ")
	}
	return v
}

// Root is the root selector's view; Selectors the others'.
func (r *Rules) Root() SelectorView { return r.root.view() }

func (r *Rules) Selectors() []SelectorView {
	out := make([]SelectorView, len(r.selectors))
	for i, s := range r.selectors {
		out[i] = s.view()
	}
	return out
}
