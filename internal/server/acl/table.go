// Package acl is Redis 7.0's access control lists for both of MiniKV's
// ports: users with passwords and rules, the rule language of ACL
// SETUSER and ACL files, the descriptions ACL LIST and GETUSER print, the
// permission check every command passes, and the ACL log.
//
// The rules are read against Redis 7.0.15's own command table (names,
// subcommands and ACL categories), registered once by the Redis command
// package (RegisterCommands), so a rule naming a Redis command MiniKV
// does not serve is still accepted and described as Redis would.
package acl

import (
	"slices"
	"strings"
	"sync"
)

// Categories are Redis 7.0's ACL categories, in its order (ACL CAT).
var Categories = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
	"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous", "connection",
	"transaction", "scripting"}

// CategoryBit is the bit of a category name (any case), 0 when unknown.
func CategoryBit(name string) uint32 {
	for i, c := range Categories {
		if strings.EqualFold(c, name) {
			return 1 << i
		}
	}
	return 0
}

// Command is one command of Redis's table as the ACL sees it.
type Command struct {
	ID     int
	Name   string // full name, lower case: "get", "config|get"
	Cats   uint32 // category bits
	NoAuth bool   // "no_auth": allowed to every user (AUTH, HELLO)
	Parent *Command
	Subs   []*Command // sorted by name
}

// CommandDef is what RegisterCommands takes for one command.
type CommandDef struct {
	Name   string   // "get", "config|get"
	Cats   []string // "@read", ...
	NoAuth bool
}

// table is the registered command table.
type table struct {
	byName map[string]*Command
	top    []*Command // top-level commands, sorted by name
	all    []*Command // by ID
}

var (
	tblMu sync.RWMutex
	tbl   = &table{byName: map[string]*Command{}}
)

// RegisterCommands sets the command table the rules are read against.
// IDs follow the sorted names, parents before their subcommands.
func RegisterCommands(defs []CommandDef) {
	t := &table{byName: map[string]*Command{}}
	sorted := slices.Clone(defs)
	slices.SortFunc(sorted, func(a, b CommandDef) int { return strings.Compare(a.Name, b.Name) })
	for _, d := range sorted {
		c := &Command{Name: strings.ToLower(d.Name), NoAuth: d.NoAuth}
		for _, cat := range d.Cats {
			c.Cats |= CategoryBit(strings.TrimPrefix(cat, "@"))
		}
		t.byName[c.Name] = c
	}
	for _, d := range sorted {
		c := t.byName[strings.ToLower(d.Name)]
		if i := strings.IndexByte(c.Name, '|'); i >= 0 {
			if p := t.byName[c.Name[:i]]; p != nil {
				c.Parent = p
				p.Subs = append(p.Subs, c)
				continue
			}
		}
		t.top = append(t.top, c)
	}
	var number func(cs []*Command)
	number = func(cs []*Command) {
		for _, c := range cs {
			c.ID = len(t.all)
			t.all = append(t.all, c)
			number(c.Subs)
		}
	}
	number(t.top)
	tblMu.Lock()
	tbl = t
	tblMu.Unlock()
}

func commands() *table {
	tblMu.RLock()
	defer tblMu.RUnlock()
	return tbl
}

// Lookup finds a command by name, "container|sub" for a subcommand, as
// Redis's lookupCommandBySds (any case); nil when unknown.
func Lookup(name string) *Command {
	t := commands()
	name = strings.ToLower(name)
	if c := t.byName[name]; c != nil {
		if c.Parent == nil || strings.Count(name, "|") == 1 {
			return c
		}
	}
	return nil
}

// lookupACL is Redis's ACLLookupCommand: "a|b" names a subcommand of a
// container only; more than one '|' names nothing.
func lookupACL(name string) *Command {
	parts := strings.Split(strings.ToLower(name), "|")
	t := commands()
	switch len(parts) {
	case 1:
		c := t.byName[parts[0]]
		if c == nil || c.Parent != nil {
			return nil
		}
		return c
	case 2:
		p := t.byName[parts[0]]
		if p == nil || p.Parent != nil || len(p.Subs) == 0 {
			return nil
		}
		return t.byName[parts[0]+"|"+parts[1]]
	}
	return nil
}

// InCategory lists the full names of the commands in a category (nil,
// false when the category is unknown), sorted.
func InCategory(name string) ([]string, bool) {
	bit := CategoryBit(name)
	if bit == 0 {
		return nil, false
	}
	var out []string
	for _, c := range commands().all {
		if c.Cats&bit != 0 {
			out = append(out, c.Name)
		}
	}
	return out, true
}
