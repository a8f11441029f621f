package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/minikv/minikv/lsm"
	"github.com/minikv/minikv/lsm/vfs"
)

const checkAbout = `Verifies the directory without writing to it: CURRENT, every record of the
manifest (replayed into the tree), every table the manifest lists (present,
of the recorded size, every block's checksum, keys in order, the filter,
first and last keys and counts as recorded), the live write-ahead logs (a
torn last record, which recovery drops, is a note) and the level invariants
(L1+ sorted and disjoint, no older version of a key above a newer one).

Prints one "damaged FILE: REASON" line per damaged file, "note: ..." lines
for leftovers of a crash that Open cleans up, and a last "status: ok" or
"status: damaged" line. Exit status 0 when healthy, 1 when damaged or when
the check could not run.
`

func checkFlags(*flag.FlagSet) func(string, []string, io.Writer, io.Writer) int {
	return func(dir string, _ []string, stdout, stderr io.Writer) int {
		r, err := lsm.Check(dir, lsm.InspectOptions{})
		if r == nil {
			return fail(stderr, "check", err)
		}
		fmt.Fprintf(stdout, "checked %s: manifest %s, %d %s (%d blocks, %d entries), %d %s (%d records)\n",
			r.Dir, orNone(r.Manifest), r.Tables, plural(r.Tables, "table", "tables"), r.Blocks, r.Entries,
			r.Logs, plural(r.Logs, "log", "logs"), r.Records)
		for _, n := range r.Notes {
			fmt.Fprintf(stdout, "note: %s\n", n)
		}
		for _, d := range r.Damage {
			fmt.Fprintf(stdout, "damaged %s: %v\n", d.File, d.Err)
		}
		if !r.OK() {
			fmt.Fprintf(stdout, "status: damaged (%d %s)\n", len(r.Damage), plural(len(r.Damage), "file", "files"))
			return exitFailed
		}
		fmt.Fprintln(stdout, "status: ok")
		return exitOK
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

const scanAbout = `Prints the live keys (neither deleted nor expired) in key order, as Open
would show them (the logs' writes included), one per line:

  KEY<tab>VALUE[<tab>expires=TIME]

Bytes outside printable ASCII, the backslash and tab are escaped (\x00,
\\, \t); --hex prints keys and values in hex instead (and reads --prefix,
--from and --to in hex). In MiniKV's data directory client keys carry the
prefix "k" (--prefix k).
`

func scanFlags(fs *flag.FlagSet) func(string, []string, io.Writer, io.Writer) int {
	prefix := fs.String("prefix", "", "only keys that start with `P`")
	from := fs.String("from", "", "start at key `A` (inclusive)")
	to := fs.String("to", "", "stop before key `B` (exclusive)")
	limit := fs.Int("limit", 0, "print at most `N` keys (0: all)")
	isHex := fs.Bool("hex", false, "keys and values in hex, in and out")
	return func(dir string, _ []string, stdout, stderr io.Writer) int {
		var o lsm.IterOptions
		for _, b := range []struct {
			arg string
			dst *[]byte
		}{{*from, &o.LowerBound}, {*to, &o.UpperBound}} {
			if b.arg == "" {
				continue
			}
			k, err := keyArg(b.arg, *isHex)
			if err != nil {
				return usageErr(stderr, "scan", err)
			}
			*b.dst = k
		}
		if *prefix != "" {
			p, err := keyArg(*prefix, *isHex)
			if err != nil {
				return usageErr(stderr, "scan", err)
			}
			if o.LowerBound == nil || bytes.Compare(p, o.LowerBound) > 0 {
				o.LowerBound = p
			}
			if end := prefixEnd(p); end != nil && (o.UpperBound == nil || bytes.Compare(end, o.UpperBound) < 0) {
				o.UpperBound = end
			}
		}
		in, err := lsm.Inspect(dir, lsm.InspectOptions{})
		if err != nil {
			return fail(stderr, "scan", err)
		}
		defer in.Close()
		it, err := in.NewIter(&o)
		if err != nil {
			return fail(stderr, "scan", err)
		}
		w := bufio.NewWriter(stdout) // keeps the first write error
		n := 0
		for ok := it.First(); ok && (*limit <= 0 || n < *limit); ok = it.Next() {
			fmt.Fprintf(w, "%s\t%s%s\n", printable(it.Key(), *isHex), printable(it.Value(), *isHex), expires(it.Expiry()))
			n++
		}
		err = errors.Join(it.Close(), w.Flush())
		if err != nil {
			return fail(stderr, "scan", err)
		}
		return exitOK
	}
}

// prefixEnd returns the smallest key after every key with prefix p, or nil
// if there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func expires(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "\texpires=" + t.UTC().Format(time.RFC3339Nano)
}

const getAbout = `Prints the value of KEY as Open would return it, escaped as scan does
("\texpires=TIME" follows when it has an expiry). Exit status 3 when the key
is absent, deleted or expired.
`

func getFlags(fs *flag.FlagSet) func(string, []string, io.Writer, io.Writer) int {
	isHex := fs.Bool("hex", false, "KEY in hex, the value printed in hex")
	return func(dir string, args []string, stdout, stderr io.Writer) int {
		key, err := keyArg(args[0], *isHex)
		if err != nil {
			return usageErr(stderr, "get", err)
		}
		in, err := lsm.Inspect(dir, lsm.InspectOptions{})
		if err != nil {
			return fail(stderr, "get", err)
		}
		defer in.Close()
		v, exp, err := in.Get(key)
		if errors.Is(err, lsm.ErrNotFound) {
			fmt.Fprintf(stderr, "minikv-lsm get: %s: not found\n", printable(key, *isHex))
			return exitNotFound
		}
		if err != nil {
			return fail(stderr, "get", err)
		}
		fmt.Fprintf(stdout, "%s%s\n", printable(v, *isHex), expires(exp))
		return exitOK
	}
}

const statsAbout = `Prints, per level and for the live logs, the files, bytes, entries (every
version and tombstone), tombstones, values with an expiry and expired values,
then the live keys (what scan prints) and the last sequence number. It reads
every entry; --quick answers from the manifest alone (no expired values, no
live keys, the logs' writes not counted).
`

func statsFlags(fs *flag.FlagSet) func(string, []string, io.Writer, io.Writer) int {
	quick := fs.Bool("quick", false, "from the manifest alone, without reading the tables")
	tables := fs.Bool("tables", false, "also list every table: level, file, size, counts, key range")
	return func(dir string, _ []string, stdout, stderr io.Writer) int {
		in, err := lsm.Inspect(dir, lsm.InspectOptions{})
		if err != nil {
			return fail(stderr, "stats", err)
		}
		defer in.Close()
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "level\tfiles\tbytes\tentries\ttombstones\texpiring\texpired\t")
		var total lsm.LevelStats
		line := func(name string, l lsm.LevelStats, expired string) {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", name, l.Files, l.Bytes, l.Entries, l.Tombstones, l.Expiring, expired)
		}
		row := func(name string, l lsm.LevelStats, expired string) {
			line(name, l, expired)
			total = sum(total, l)
		}
		var tail string
		if *quick {
			var levels [len(lsm.Stats{}.Levels)]lsm.LevelStats
			for _, t := range in.Tables() {
				levels[t.Level] = sum(levels[t.Level], lsm.LevelStats{Files: 1, Bytes: int64(t.Size),
					Entries: t.Entries, Tombstones: t.Tombstones, Expiring: t.Expiring})
			}
			for i, l := range levels {
				row(fmt.Sprintf("L%d", i), l, "-")
			}
			line("total", total, "-")
		} else {
			s, err := in.Stats()
			if err != nil {
				return fail(stderr, "stats", err)
			}
			for i, l := range s.Levels {
				row(fmt.Sprintf("L%d", i), l, fmt.Sprint(l.Expired))
			}
			row("logs", s.Logs, fmt.Sprint(s.Logs.Expired))
			line("total", total, fmt.Sprint(total.Expired))
			tail = fmt.Sprintf("live keys %d\nlast seq %d\n", s.LiveKeys, s.LastSeq)
		}
		if err := tw.Flush(); err != nil {
			return fail(stderr, "stats", err)
		}
		fmt.Fprint(stdout, tail)
		if *tables {
			for _, t := range in.Tables() {
				fmt.Fprintf(stdout, "table %v\n", t)
			}
		}
		return exitOK
	}
}

func sum(a, b lsm.LevelStats) lsm.LevelStats {
	a.Files += b.Files
	a.Bytes += b.Bytes
	a.Entries += b.Entries
	a.Tombstones += b.Tombstones
	a.Expiring += b.Expiring
	a.Expired += b.Expired
	return a
}

const manifestAbout = `Prints the manifest CURRENT names (or --file), one version edit per line:

  @OFFSET log=LOG next-file=N last-seq=S [del LEVEL FILE]... [add LEVEL FILE size=... entries=... KEY#SEQ,KIND..KEY#SEQ,KIND]...

The first edit is a snapshot of the whole tree. On damage it prints the
edits before it, then the error, and exits 1.
`

func manifestFlags(fs *flag.FlagSet) func(string, []string, io.Writer, io.Writer) int {
	file := fs.String("file", "", "read manifest `MANIFEST-NNNNNN` instead of the one CURRENT names")
	return func(dir string, _ []string, stdout, stderr io.Writer) int {
		d, err := lsm.ReadManifest(dir, *file, lsm.InspectOptions{})
		if d != nil {
			fmt.Fprintf(stdout, "manifest %s\n", d.Name)
			for _, e := range d.Edits {
				fmt.Fprintln(stdout, e)
			}
			if d.TornAt >= 0 {
				fmt.Fprintf(stdout, "torn @%d: last record cut short; recovery drops it\n", d.TornAt)
			}
		}
		if err != nil {
			return fail(stderr, "manifest", err)
		}
		return exitOK
	}
}

const compactAbout = `Opens the database as the server does (replaying its logs), flushes it and
merges every table into the last level, dropping overwritten values,
tombstones and expired values, then closes it. It writes to the directory:
stop the server first (it refuses a directory a running process holds), and
run check before if the directory may be damaged. It prints the tables per
level before and after.
`

func compactFlags(*flag.FlagSet) func(string, []string, io.Writer, io.Writer) int {
	return func(dir string, _ []string, stdout, stderr io.Writer) int {
		// WriteWAL: compacting must not switch the directory's logs to
		// the recyclable format an older engine refuses.
		db, err := lsm.Open(dir, lsm.Options{WriteWAL: true})
		if errors.Is(err, vfs.ErrLocked) {
			err = fmt.Errorf("%w: %s", lsm.ErrInUse, dir)
		}
		if err != nil {
			return fail(stderr, "compact", err)
		}
		levels := func(when string) {
			m := db.Metrics()
			fmt.Fprintf(stdout, "%s:", when)
			for i, l := range m.Levels {
				fmt.Fprintf(stdout, " L%d=%d/%dB", i, l.Files, l.Bytes)
			}
			fmt.Fprintln(stdout)
		}
		levels("before")
		start := time.Now()
		err = db.Compact()
		if err == nil {
			levels("after")
			fmt.Fprintf(stdout, "compacted in %v\n", time.Since(start).Round(time.Millisecond))
		}
		if err := errors.Join(err, db.Close()); err != nil {
			return fail(stderr, "compact", err)
		}
		return exitOK
	}
}

// usageErr prints a usage error for command name and returns exitUsage.
func usageErr(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "minikv-lsm %s: %v\n", name, err)
	return exitUsage
}
