package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minikv/minikv/lsm"
)

// holdEnv makes the test binary a child that holds a database open (see
// TestMain): the LOCK test needs a lock held by another process.
const holdEnv = "MINIKV_LSM_TEST_HOLD"

// bin is the minikv-lsm command built once for the tests that run it as
// the operator would.
var bin string

func TestMain(m *testing.M) {
	if dir := os.Getenv(holdEnv); dir != "" {
		holdOpen(dir)
		return
	}
	tmp, err := os.MkdirTemp("", "minikv-lsm-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(tmp, "minikv-lsm")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// holdOpen opens the database in dir, says "ready" and keeps it open until
// its stdin closes.
func holdOpen(dir string) {
	db, err := lsm.Open(dir, lsm.Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if err := db.Close(); err != nil {
		os.Exit(1)
	}
}

// buildDB writes a small known database in a new temp dir and closes it:
// two L0 tables and an L6 one, an overwrite, a deletion, a live and an
// expired value, and keys and values that need escaping.
func buildDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := lsm.Open(dir, lsm.Options{DisableAutoCompaction: true, BlockSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		must(db.Put(fmt.Appendf(nil, "key%03d", i), fmt.Appendf(nil, "value%d", i)))
	}
	must(db.Compact()) // to L6
	must(db.Put([]byte("a"), []byte("1")))
	must(db.Put([]byte("b"), []byte("two\tparts")))
	must(db.Put([]byte("c"), []byte("3")))
	must(db.Flush())
	must(db.Put([]byte("key007"), []byte("seven")))
	must(db.Delete([]byte("c")))
	must(db.Put([]byte("z\x00\xff"), []byte("bin\n")))
	must(db.PutExpiring([]byte("ttl"), []byte("later"), time.Now().Add(time.Hour)))
	must(db.PutExpiring([]byte("gone"), []byte("past"), time.Now().Add(-time.Hour)))
	must(db.Close()) // flushes the rest to a second L0 table
	return dir
}

// runTool runs the command in this process.
func runTool(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

// runBin runs the built command.
func runBin(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// tables returns the directory's table files, in name order.
func tables(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no tables in %s: %v", dir, err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

func manifestName(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// checkFinds runs the checker three ways on a damaged dir — the function,
// the command in this process, the built binary — and wants each to name
// file.
func checkFinds(t *testing.T, dir, file string) {
	t.Helper()
	r, err := lsm.Check(dir, lsm.InspectOptions{})
	if !errors.Is(err, lsm.ErrCorrupt) || r == nil || r.OK() {
		t.Fatalf("lsm.Check: %v, want ErrCorrupt", err)
	}
	named := false
	for _, d := range r.Damage {
		named = named || d.File == file
	}
	if !named || !strings.Contains(err.Error(), file) {
		t.Errorf("lsm.Check: damage %v, error %q; want %s named", r.Damage, err, file)
	}
	want := "damaged " + file + ": "
	for _, how := range []string{"run", "binary"} {
		var out, errOut string
		var code int
		if how == "run" {
			out, errOut, code = runTool("check", dir)
		} else {
			out, errOut, code = runBin(t, "check", dir)
		}
		if code != exitFailed || !strings.Contains(out, want) || !strings.Contains(out, "status: damaged") {
			t.Errorf("%s: check %s: exit %d, stdout:\n%s\nstderr: %s\nwant exit 1 and a line %q",
				how, dir, code, out, errOut, want)
		}
	}
}

func TestCheckHealthy(t *testing.T) {
	dir := buildDB(t)
	out, errOut, code := runBin(t, "check", dir)
	if code != exitOK || !strings.HasSuffix(out, "status: ok\n") || errOut != "" {
		t.Fatalf("check of a healthy DB: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "3 tables") {
		t.Errorf("check output does not count 3 tables:\n%s", out)
	}
}

func TestCheckFindsFlippedByteInTable(t *testing.T) {
	dir := buildDB(t)
	victim := tables(t, dir)[0]
	path := filepath.Join(dir, victim)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/3] ^= 0x10 // inside a data block
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	checkFinds(t, dir, victim)
}

func TestCheckFindsTruncatedManifest(t *testing.T) {
	dir := buildDB(t)
	name := manifestName(t, dir)
	path := filepath.Join(dir, name)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside the last record (Close's flush). Open alone would take
	// this for a crash in the middle of an append and start without the
	// last table.
	if err := os.Truncate(path, st.Size()-7); err != nil {
		t.Fatal(err)
	}
	checkFinds(t, dir, name)
}

func TestCheckFindsMissingTable(t *testing.T) {
	dir := buildDB(t)
	victim := tables(t, dir)[1]
	if err := os.Remove(filepath.Join(dir, victim)); err != nil {
		t.Fatal(err)
	}
	checkFinds(t, dir, victim)
}

// TestRefusesDirectoryHeldByAnotherProcess holds the database open in a
// child process, as a running server does, and runs every command on it.
func TestRefusesDirectoryHeldByAnotherProcess(t *testing.T) {
	dir := buildDB(t)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), holdEnv+"="+dir)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("child: %q", line)
	}
	const want = "data directory is in use by another process (LOCK held)"
	for _, args := range [][]string{
		{"check", dir}, {"scan", dir}, {"get", dir, "a"}, {"stats", dir}, {"manifest", dir}, {"compact", dir},
	} {
		_, errOut, code := runBin(t, args...)
		if code != exitFailed || !strings.Contains(errOut, want) {
			t.Errorf("%v while held: exit %d, stderr %q; want 1 and %q", args, code, errOut, want)
		}
	}
	stdin.Close()
	if err := child.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if out, _, code := runBin(t, "check", dir); code != exitOK {
		t.Errorf("check after the holder exited: exit %d\n%s", code, out)
	}
}

func TestScan(t *testing.T) {
	dir := buildDB(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--prefix", "key00"}, []string{
			"key000\tvalue0", "key001\tvalue1", "key002\tvalue2", "key003\tvalue3", "key004\tvalue4",
			"key005\tvalue5", "key006\tvalue6", "key007\tseven", "key008\tvalue8", "key009\tvalue9",
		}},
		{[]string{"--from", "a", "--to", "key001"}, []string{"a\t1", "b\t" + `two\tparts`, "key000\tvalue0"}},
		{[]string{"--from", "key098"}, []string{"key098\tvalue98", "key099\tvalue99", "ttl\tlater", `z\x00\xff` + "\t" + `bin\n`}},
		{[]string{"--limit", "2"}, []string{"a\t1", "b\t" + `two\tparts`}},
		{[]string{"--hex", "--prefix", "7a"}, []string{"7a00ff\t62696e0a"}},
		{[]string{"--prefix", "c"}, nil},    // deleted
		{[]string{"--prefix", "gone"}, nil}, // expired
	} {
		args := append([]string{"scan", dir}, tc.args...)
		out, errOut, code := runTool(args...)
		var got []string
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if l != "" {
				l, _, _ = strings.Cut(l, "\texpires=")
				got = append(got, l)
			}
		}
		if code != exitOK || !slices.Equal(got, tc.want) {
			t.Errorf("%q: exit %d %s\ngot  %q\nwant %q", args, code, errOut, got, tc.want)
		}
	}
	out, _, _ := runTool("scan", dir, "--prefix", "ttl")
	if exp := strings.TrimPrefix(strings.TrimSpace(out), "ttl\tlater\texpires="); exp == out {
		t.Errorf("scan of a key with an expiry: %q, want an expires= column", out)
	} else if tm, err := time.Parse(time.RFC3339Nano, exp); err != nil || time.Until(tm) < 50*time.Minute {
		t.Errorf("expires=%q: %v", exp, err)
	}
	if out, _, _ := runTool("scan", dir); strings.Count(out, "\n") != 104 {
		t.Errorf("full scan: %d lines, want 104 (key000..key099, a, b, ttl, z...)", strings.Count(out, "\n"))
	}
}

func TestGet(t *testing.T) {
	dir := buildDB(t)
	for _, tc := range []struct {
		args []string
		out  string
		code int
	}{
		{[]string{"a"}, "1\n", exitOK},
		{[]string{"key007"}, "seven\n", exitOK},
		{[]string{"key008"}, "value8\n", exitOK},
		{[]string{"b"}, `two\tparts` + "\n", exitOK},
		{[]string{"--hex", "7a00ff"}, "62696e0a\n", exitOK},
		{[]string{"c"}, "", exitNotFound},
		{[]string{"gone"}, "", exitNotFound},
		{[]string{"nope"}, "", exitNotFound},
		{[]string{"--hex", "zz"}, "", exitUsage},
	} {
		args := append([]string{"get", dir}, tc.args...)
		out, errOut, code := runTool(args...)
		if out != tc.out || code != tc.code {
			t.Errorf("%q: %q exit %d (%s), want %q exit %d", args, out, code, errOut, tc.out, tc.code)
		}
	}
}

// statsRows parses the stats table into its rows by first column.
func statsRows(out string) map[string][]string {
	rows := map[string][]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			rows[f[0]] = f[1:]
		}
	}
	return rows
}

func TestStats(t *testing.T) {
	dir := buildDB(t)
	out, errOut, code := runTool("stats", dir, "--tables")
	if code != exitOK {
		t.Fatalf("stats: exit %d %s", code, errOut)
	}
	rows := statsRows(out)
	// columns: files bytes entries tombstones expiring expired
	for _, tc := range []struct {
		row   string
		col   int
		value string
	}{
		{"L0", 0, "2"}, {"L6", 0, "1"}, {"L1", 0, "0"}, {"logs", 0, "0"},
		{"L6", 2, "100"},    // the first 100 keys
		{"total", 2, "108"}, // 100 + a b c + key007 c-tombstone z ttl gone
		{"total", 3, "1"}, {"total", 4, "2"}, {"total", 5, "1"},
		{"live", 1, "104"}, // "live keys 104"
		{"last", 1, "108"}, // "last seq 108"
	} {
		if r := rows[tc.row]; len(r) <= tc.col || r[tc.col] != tc.value {
			t.Errorf("stats row %s column %d = %v, want %s\n%s", tc.row, tc.col, r, tc.value, out)
		}
	}
	if n := strings.Count(out, "\ntable L"); n != 3 {
		t.Errorf("stats --tables lists %d tables, want 3\n%s", n, out)
	}
	quick, _, code := runTool("stats", dir, "--quick")
	if q := statsRows(quick); code != exitOK || q["total"][2] != "108" || q["total"][5] != "-" {
		t.Errorf("stats --quick: exit %d\n%s", code, quick)
	}
}

func TestManifest(t *testing.T) {
	dir := buildDB(t)
	out, errOut, code := runTool("manifest", dir)
	if code != exitOK {
		t.Fatalf("manifest: exit %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "manifest "+manifestName(t, dir) {
		t.Errorf("first line %q", lines[0])
	}
	d, err := lsm.ReadManifest(dir, "", lsm.InspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines)-1 != len(d.Edits) {
		t.Errorf("%d edit lines, ReadManifest has %d edits", len(lines)-1, len(d.Edits))
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "@") || !strings.Contains(l, " log=") || !strings.Contains(l, " last-seq=") {
			t.Errorf("edit line %q", l)
		}
	}
	if !strings.Contains(out, " del L0 ") || !strings.Contains(out, " add L6 ") || !strings.Contains(out, `"key000"#1,SET..`) {
		t.Errorf("manifest lacks the compaction's edit:\n%s", out)
	}
	if _, errOut, code := runTool("manifest", dir, "--file", "MANIFEST-999999"); code != exitFailed || !strings.Contains(errOut, "MANIFEST-999999") {
		t.Errorf("manifest --file of a missing manifest: exit %d %q", code, errOut)
	}
}

func TestCompact(t *testing.T) {
	dir := buildDB(t)
	out, errOut, code := runTool("compact", dir)
	if code != exitOK || !strings.Contains(out, "after: L0=0/0B") {
		t.Fatalf("compact: exit %d\n%s%s", code, out, errOut)
	}
	stats, _, _ := runTool("stats", dir)
	rows := statsRows(stats)
	if rows["L6"][0] != "1" || rows["total"][3] != "0" || rows["total"][5] != "0" || rows["live"][1] != "104" {
		t.Errorf("after compact, want one L6 table, no tombstones or expired values, 104 live keys:\n%s", stats)
	}
	if out, _, code := runTool("check", dir); code != exitOK {
		t.Errorf("check after compact: exit %d\n%s", code, out)
	}
}

func TestUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // a line the output must hold
		stderr string
	}{
		{nil, exitUsage, "", "usage: minikv-lsm COMMAND"},
		{[]string{"--help"}, exitOK, "usage: minikv-lsm COMMAND", ""},
		{[]string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{[]string{"check"}, exitUsage, "", "want DIR"},
		{[]string{"check", dir, dir}, exitUsage, "", "want DIR"},
		{[]string{"get", dir}, exitUsage, "", "want DIR KEY"},
		{[]string{"scan", dir, "--bogus"}, exitUsage, "", "flag provided but not defined: -bogus"},
		{[]string{"scan", dir, "--limit", "x"}, exitUsage, "", "invalid value"},
		{[]string{"check", dir}, exitFailed, "", "not a data directory"},
		{[]string{"check", filepath.Join(dir, "nope")}, exitFailed, "", "no such file or directory"},
	} {
		out, errOut, code := runTool(tc.args...)
		if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errOut, tc.stderr) {
			t.Errorf("%q: exit %d\nstdout: %s\nstderr: %s\nwant exit %d, %q, %q", tc.args, code, out, errOut, tc.code, tc.stdout, tc.stderr)
		}
	}
	for _, c := range commands {
		out, _, code := runTool(c.name, "--help")
		if code != exitOK || !strings.HasPrefix(out, "usage: minikv-lsm "+c.name+" DIR") {
			t.Errorf("%s --help: exit %d\n%s", c.name, code, out)
		}
	}
}
