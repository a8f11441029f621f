package bench

import (
	"math"
	"testing"
)

func TestParseRatio(t *testing.T) {
	tests := []struct {
		in   string
		want Ratio
		ok   bool
	}{
		{"1:9", Ratio{1, 9}, true},
		{"1:10", Ratio{1, 10}, true},
		{"0:1", Ratio{0, 1}, true},
		{"1:0", Ratio{1, 0}, true},
		{" 3 : 7 ", Ratio{3, 7}, true},
		{"0:0", Ratio{}, false},
		{"-1:3", Ratio{}, false},
		{"19", Ratio{}, false},
		{"a:b", Ratio{}, false},
	}
	for _, tt := range tests {
		got, err := ParseRatio(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseRatio(%q) = %+v, %v; want %+v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseDist(t *testing.T) {
	for in, want := range map[string]Dist{"uniform": DistUniform, "zipf": DistZipf, "sequential": DistSequential, "SEQ": DistSequential} {
		if got, err := ParseDist(in); err != nil || got != want {
			t.Errorf("ParseDist(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseDist("gaussian"); err == nil {
		t.Errorf("ParseDist(%q) succeeded, want an error", "gaussian")
	}
}

func TestAppendKeyFixedWidth(t *testing.T) {
	w := &Workload{Keys: 100000, ValueSize: 8}
	if err := w.Init(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		i    int
		want string
	}{{0, "key:00000"}, {42, "key:00042"}, {99999, "key:99999"}} {
		if got := string(w.AppendKey(nil, tt.i)); got != tt.want || len(got) != w.KeyLen() {
			t.Errorf("AppendKey(%d) = %q (len %d), want %q (len %d)", tt.i, got, len(got), tt.want, w.KeyLen())
		}
	}
	if len(w.Value()) != 8 {
		t.Errorf("len(Value()) = %d, want 8", len(w.Value()))
	}
}

func draw(t *testing.T, w *Workload, n int) (sets int, counts []int) {
	t.Helper()
	if err := w.Init(); err != nil {
		t.Fatal(err)
	}
	g := w.NewGenerator(0, 1)
	counts = make([]int, w.Keys)
	for range n {
		op, k := g.Next()
		if k < 0 || k >= w.Keys {
			t.Fatalf("key index %d outside 0..%d", k, w.Keys-1)
		}
		if op == OpSet {
			sets++
		}
		counts[k]++
	}
	return sets, counts
}

func TestRatioHonoured(t *testing.T) {
	const n = 200000
	for _, r := range []Ratio{{1, 9}, {1, 1}, {0, 1}, {1, 0}, {3, 7}} {
		sets, _ := draw(t, &Workload{Keys: 1000, Ratio: r, Seed: 7}, n)
		got, want := float64(sets)/n, r.SetFraction()
		// Binomial standard deviation is at most 0.0012 here; 5 sigma.
		if math.Abs(got-want) > 0.006 {
			t.Errorf("ratio %v: set fraction %.4f, want %.4f", r, got, want)
		}
	}
}

func TestUniformIsFlat(t *testing.T) {
	const n, keys = 200000, 100
	_, counts := draw(t, &Workload{Keys: keys, Dist: DistUniform, Seed: 3}, n)
	chi2 := 0.0
	exp := float64(n) / keys
	for _, c := range counts {
		chi2 += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	// 99 degrees of freedom: the 99.99th percentile of chi-square is ~160.
	if chi2 > 160 {
		t.Errorf("uniform: chi-square %.1f over %d keys, want < 160 (counts %v)", chi2, keys, counts[:10])
	}
}

func TestZipfIsSkewed(t *testing.T) {
	const n, keys = 200000, 10000
	_, counts := draw(t, &Workload{Keys: keys, Dist: DistZipf, ZipfTheta: 0.99, Seed: 5}, n)
	// With theta 0.99 over 10k keys, key 0 gets 1/zeta(10000) ≈ 10% of
	// draws, and the top 1% of keys about 55%.
	p := newZipfParams(keys, 0.99)
	want0 := 1 / p.zetan
	got0 := float64(counts[0]) / n
	if math.Abs(got0-want0) > 0.01 {
		t.Errorf("zipf: key 0 drew %.4f of requests, want %.4f", got0, want0)
	}
	if counts[0] < counts[1] || counts[1] < counts[100] || counts[100] < counts[9000] {
		t.Errorf("zipf: counts not decreasing: c[0]=%d c[1]=%d c[100]=%d c[9000]=%d", counts[0], counts[1], counts[100], counts[9000])
	}
	top := 0
	for _, c := range counts[:keys/100] {
		top += c
	}
	if f := float64(top) / n; f < 0.45 || f > 0.65 {
		t.Errorf("zipf: top 1%% of keys drew %.3f of requests, want 0.45..0.65", f)
	}
}

func TestSequentialWalksItsStretch(t *testing.T) {
	w := &Workload{Keys: 100, Dist: DistSequential, Ratio: Ratio{0, 1}}
	if err := w.Init(); err != nil {
		t.Fatal(err)
	}
	for conn, origin := range []int{0, 25, 50, 75} {
		g := w.NewGenerator(conn, 4)
		for i := range 150 {
			if _, k := g.Next(); k != (origin+i)%100 {
				t.Fatalf("conn %d request %d: key %d, want %d", conn, i, k, (origin+i)%100)
			}
		}
	}
}

func TestSplitKeysCoversEveryKeyOnce(t *testing.T) {
	for _, n := range []int{1, 3, 8, 7000} {
		split := SplitKeys(5000, 1000, n)
		seen := map[int]int{}
		for i := range n {
			for _, k := range split(i) {
				seen[k]++
			}
		}
		if len(seen) != 1000 {
			t.Errorf("SplitKeys(5000, 1000, %d): %d distinct keys, want 1000", n, len(seen))
		}
		for k, c := range seen {
			if c != 1 || k < 5000 || k >= 6000 {
				t.Errorf("SplitKeys(5000, 1000, %d): key %d appears %d times", n, k, c)
			}
		}
	}
}
