package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestSeedShape runs a small workload and checks the seed's four lines.
func TestSeedShape(t *testing.T) {
	var out strings.Builder
	if err := run(&out, config{n: 20_000, reads: 5_000, dir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []string{
		`^writing 20,000 entries: +\S+s$`,
		`^reading 5,000 entries \(uncompacted\): +\S+s$`,
		`^compacting: +\S+s$`,
		`^reading 5,000 entries: +\S+s$`,
	}
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s\nwant %d lines", out.String(), len(want))
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %s", i, lines[i], re)
		}
	}
}

func TestCommas(t *testing.T) {
	for in, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 250_000: "250,000", 1_000_000: "1,000,000"} {
		if got := commas(in); got != want {
			t.Errorf("commas(%d) = %q, want %q", in, got, want)
		}
	}
}
