// Command minikv-lsm looks inside a data directory of the lsm engine (the
// one MiniKV's durable mode keeps under --data-dir) while no process has it
// open, as Pebble's "pebble tool" and LevelDB's ldb do for theirs:
//
//	minikv-lsm check DIR                  verify every checksum and invariant
//	minikv-lsm scan DIR [--prefix P] [--from A --to B] [--limit N] [--hex]
//	minikv-lsm get DIR KEY [--hex]
//	minikv-lsm stats DIR [--quick] [--tables]
//	minikv-lsm manifest DIR [--file MANIFEST-000012]
//	minikv-lsm compact DIR
//
// Every command but compact only reads, through the engine's own readers
// (lsm.Check, lsm.Inspect, lsm.ReadManifest), and refuses a directory that a
// running process holds. Output is plain text, one record per line, for
// grep and awk. Exit status: 0 ok, 1 damage found or the command failed,
// 2 usage error, 3 get found no such key.
package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailed   = 1 // damage found, or the command could not run
	exitUsage    = 2
	exitNotFound = 3 // get: no such key
)

const usage = `minikv-lsm looks inside an lsm data directory (MiniKV's --data-dir) offline.

usage: minikv-lsm COMMAND DIR [ARGS] [FLAGS]

commands:
  check     verify every checksum, the manifest, the logs and the level invariants
  scan      print the live keys and their values, in key order
  get       print the value of one key
  stats     count tables, bytes, entries, tombstones and expired values per level
  manifest  print the manifest's version edits, one per line
  compact   open the database and merge every table into the last level (writes)

Every command but compact only reads, and each refuses a directory that a
running process holds (its LOCK). "minikv-lsm COMMAND --help" shows a
command's flags.

exit status: 0 ok; 1 damage found, or the command failed; 2 usage error;
3 get found no such key.
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// command is one subcommand: its flags, its usage line and what it does.
type command struct {
	name  string
	args  string // positional arguments after DIR, for the usage line
	nargs int    // how many
	about string
	flags func(*flag.FlagSet) func(dir string, args []string, stdout, stderr io.Writer) int
}

var commands = []command{
	{name: "check", about: checkAbout, flags: checkFlags},
	{name: "scan", about: scanAbout, flags: scanFlags},
	{name: "get", args: " KEY", nargs: 1, about: getAbout, flags: getFlags},
	{name: "stats", about: statsAbout, flags: statsFlags},
	{name: "manifest", about: manifestAbout, flags: manifestFlags},
	{name: "compact", about: compactAbout, flags: compactFlags},
}

// run executes one command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "minikv-lsm: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}

func (c command) run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	do := c.flags(fs)
	printUsage := func(w io.Writer) {
		fmt.Fprintf(w, "usage: minikv-lsm %s DIR%s [flags]\n\n%s", c.name, c.args, c.about)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nflags:\n")
			fs.SetOutput(w)
			fs.PrintDefaults()
		}
	}
	if wantsHelp(args) {
		printUsage(stdout)
		return exitOK
	}
	fs.SetOutput(io.Discard) // errors are printed below, once
	pos, err := parseInterspersed(fs, args)
	if err != nil || len(pos) != 1+c.nargs {
		if err == nil {
			err = fmt.Errorf("want DIR%s, got %d argument(s)", c.args, len(pos))
		}
		fmt.Fprintf(stderr, "minikv-lsm %s: %v\n", c.name, err)
		printUsage(stderr)
		return exitUsage
	}
	return do(pos[0], pos[1:], stdout, stderr)
}

// wantsHelp reports whether a help flag comes before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// parseInterspersed parses flags anywhere among the positional arguments
// ("scan DIR --prefix k" as well as "scan --prefix k DIR"), which package
// flag alone stops at.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// fail prints err for command name and returns exitFailed.
func fail(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "minikv-lsm %s: %v\n", name, err)
	return exitFailed
}

// keyArg decodes a key given on the command line: as is, or in hex.
func keyArg(s string, isHex bool) ([]byte, error) {
	if !isHex {
		return []byte(s), nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("--hex: %q is not hex: %w", s, err)
	}
	return b, nil
}

// printable formats a key or value on one line: bytes outside printable
// ASCII, the backslash and the tab as escapes (\x00, \\, \t), so a line
// splits on tabs and each record is one line.
func printable(b []byte, isHex bool) string {
	if isHex {
		return hex.EncodeToString(b)
	}
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c == '\\':
			sb.WriteString(`\\`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, c)
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}
