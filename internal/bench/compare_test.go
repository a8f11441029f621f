package bench

import "testing"

func TestBaseline(t *testing.T) {
	protos := map[string]string{"minikv": "memcache", "minikv-resp": "resp", "memcached": "memcache", "redis": "resp", "null": "memcache"}
	tests := []struct {
		targets []string
		t, want string
	}{
		{[]string{"minikv", "memcached", "redis"}, "memcached", "minikv"},
		{[]string{"minikv", "memcached", "redis"}, "redis", "minikv"},
		{[]string{"minikv", "memcached", "redis"}, "minikv", ""},
		{[]string{"minikv", "minikv-resp", "memcached", "redis"}, "redis", "minikv-resp"},
		{[]string{"minikv", "minikv-resp", "memcached", "redis"}, "memcached", "minikv"},
		{[]string{"minikv", "minikv-resp", "memcached", "redis"}, "minikv-resp", ""},
		{[]string{"minikv-resp", "redis", "memcached"}, "memcached", "minikv-resp"},
		{[]string{"memcached", "redis"}, "redis", "memcached"},
		{[]string{"memcached", "redis"}, "memcached", ""},
	}
	for _, tt := range tests {
		rep := &Report{Targets: tt.targets, Protocols: protos}
		if got := rep.Baseline(tt.t); got != tt.want {
			t.Errorf("targets %v: Baseline(%s) = %q, want %q", tt.targets, tt.t, got, tt.want)
		}
	}
}

func TestRatiosAreBaselineOverPeer(t *testing.T) {
	v := Variant{Conns: 50, Pipeline: 1}
	rep := &Report{Targets: []string{"minikv", "memcached"}}
	rep.Cells = []*Cell{
		{Label: "mixed", Variant: v, Target: "minikv", Median: &Result{OpsPerSec: 300}},
		{Label: "mixed", Variant: v, Target: "memcached", Median: &Result{OpsPerSec: 200}},
	}
	rep.fillRatios()
	if rep.Cells[0].Ratio != 0 || rep.Cells[1].Ratio != 1.5 || rep.Cells[1].Baseline != "minikv" {
		t.Errorf("ratios %v, %v (baseline %q); want 0 and 1.5 against minikv", rep.Cells[0].Ratio, rep.Cells[1].Ratio, rep.Cells[1].Baseline)
	}
}
