package acl

import (
	"fmt"
	"os"
	"strings"
)

// LoadFile is ACL LOAD (and aclfile at start): every line of the file is
// "user <name> <rules...>" or blank; when any line is bad nothing
// changes and the error lists every problem, in Redis's words.
func (us *Users) LoadFile(path string, keep any) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("Error loading ACLs, opening file '%s': %s", path, errnoText(err))
	}
	users, errs := us.parseFile(path, string(data))
	if errs != "" {
		return errs + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	}
	us.Replace(users, keep)
	return ""
}

func (us *Users) parseFile(path, data string) (map[string]*Rules, string) {
	var errs strings.Builder
	users := map[string]*Rules{}
	pubsubAll := us.PubsubDefault()
	for i, line := range strings.Split(data, "\n") {
		n := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		var argv []string
		for _, f := range strings.Split(line, " ") {
			if f != "" {
				argv = append(argv, f)
			}
		}
		if len(argv) == 0 {
			continue
		}
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", path, n)
			continue
		}
		if hasSpaces(argv[1]) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", path, n, argv[1])
			continue
		}
		if _, dup := users[argv[1]]; dup {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], n)
			continue
		}
		r := NewRules(pubsubAll)
		users[argv[1]] = r
		ops, bad := MergeSelectorArgs(argv[2:])
		if bad >= 0 {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", path, n)
		}
		syntaxErr := false
		for _, op := range ops {
			op = strings.Trim(op, "\t\r\n")
			switch err := r.Apply(op); {
			case err == errUnknown:
				// Redis names the rule of a missing command (no secret
				// in it), and reports only a line's first other error.
				fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", path, n, cstr(op), err.Error())
			case err != nil && !syntaxErr:
				fmt.Fprintf(&errs, "%s:%d: %s. ", path, n, err.Error())
				syntaxErr = true
			}
		}
	}
	return users, errs.String()
}

// SaveFile is ACL SAVE: the table written to a temporary file renamed
// over path.
func (us *Users) SaveFile(path string) error {
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	if err := os.WriteFile(tmp, []byte(us.File()), 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// errnoText is strerror's text of an open error.
func errnoText(err error) string {
	switch {
	case os.IsNotExist(err):
		return "No such file or directory"
	case os.IsPermission(err):
		return "Permission denied"
	}
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}
