package etcdkv

import (
	"strings"
	"testing"
	"time"

	_ "github.com/chaos-testing/chaos/analysis/etcd" // the workload's checker
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/runner"
	_ "github.com/chaos-testing/chaos/targets/etcd" // the workload's target
)

// check parses and validates a plan whose workload section is section.
func check(t *testing.T, section string) (*Params, error) {
	t.Helper()
	plan := "name: t\ntime_limit: 10s\ntarget: {kind: etcd}\nworkload:\n  kind: etcd-kv\n  clients: 8\n" + section
	p, err := plans.Parse("t.yaml", []byte(plan))
	if err == nil {
		err = runner.Validate(p)
	}
	if err != nil {
		return nil, err
	}
	return p.Workload.Spec.(*Params), nil
}

// A profile fills the kinds the mix leaves out; a load sets each client's
// share of the total rate.
func TestProfilesAndLoads(t *testing.T) {
	ps, err := check(t, "  profile: kubernetes\n  load: high\n  mix: {list: 1}\n")
	if err != nil {
		t.Fatal(err)
	}
	if ps.Rate != 125 || ps.Mix[kindList] != 1 || ps.Mix[kindUpdate] != 15 || ps.Mix[kindGet] != 0 || ps.Mix[kindPut] != 0 {
		t.Errorf("kubernetes at high load: rate %g, mix %v", ps.Rate, ps.Mix)
	}
	// A run's resolved plan records the rate a load set.
	if _, err := check(t, "  load: high\n  rate: 125\n"); err != nil {
		t.Errorf("a load and its own rate: %v", err)
	}
	ps, err = check(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if ps.Profile != "mixed" || ps.Rate != 0 || ps.Mix[kindGet] != 4 || ps.Mix[kindMulti] != 1 || ps.WatchSpan.Duration != 5*time.Second {
		t.Errorf("the default: profile %q, rate %g, mix %v, watch span %s", ps.Profile, ps.Rate, ps.Mix, ps.WatchSpan)
	}
	for section, want := range map[string]string{
		"  profile: web\n":          "kubernetes, mixed, put-delete-lease",
		"  load: medium\n":          "expected low or high",
		"  load: low\n  rate: 10\n": "give one of them",
		"  watch_span: 10ms\n":      "expected at least 100ms",
	} {
		if _, err := check(t, section); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "t.yaml:") {
			t.Errorf("%q: error %v, want one with the file and %q", section, err, want)
		}
	}
}

// A large value travels with its filler and is recorded without it; a
// filler that came back altered is recorded whole, for the model to see.
func TestLargeValues(t *testing.T) {
	v := "p3-17#32769"
	if w := wire(v); len(w) != len("p3-17#")+32769 || recorded(w) != v {
		t.Errorf("%q: sent as %d bytes, recorded back as %q", v, len(wire(v)), recorded(wire(v)))
	}
	for _, v := range []string{"p3-17", "p3-17#xxy", "p3-17#"} {
		if wire(v) != v || recorded(v) != v {
			t.Errorf("%q: sent as %q, recorded as %q; want it as is", v, wire(v), recorded(v))
		}
	}
	if got := recorded(wire(v)[:100]); got != "p3-17#94" {
		t.Errorf("a truncated large value recorded as %q", got)
	}
}
