package release

import (
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/plans"
)

func TestNorm(t *testing.T) {
	for in, want := range map[string]string{"": Default, "2.10.22": "v2.10.22", "v2.12.1": "v2.12.1"} {
		if got, err := Norm(in); err != nil || got != want {
			t.Errorf("Norm(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"1.4.1", "v2.10", "latest", "v2.10.22; rm -rf /"} {
		if _, err := Norm(bad); err == nil {
			t.Errorf("Norm(%q) accepted", bad)
		}
	}
}

// Since refuses releases before the feature's minor release, names the
// feature and the field, and leaves a bad version to the target.
func TestSince(t *testing.T) {
	for version, refused := range map[string]bool{"v2.10.22": true, "2.10.99": true, "v2.11.0": false, "v2.15.3": false, "": false, "latest": false} {
		p := &plans.Plan{File: "p.yaml", Target: plans.Target{Kind: "nats", Version: version}, Workload: plans.Workload{Kind: "w"}}
		err := Since(p, 11, "feature F")
		if refused != (err != nil) || err != nil && !(strings.Contains(err.Error(), "target.version") && strings.Contains(err.Error(), "w needs feature F, in NATS from v2.11.0 on")) {
			t.Errorf("%q: %v; want refused %v", version, err, refused)
		}
	}
}
