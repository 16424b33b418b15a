package etcdkv

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/plans"
	_ "github.com/chaos-testing/chaos/targets/etcd" // the workload's target
)

// check parses and binds a plan whose workload section is section, and
// returns the workload's fields as bound, as its clients get them.
func check(t *testing.T, section string) (*Params, error) {
	t.Helper()
	plan := "name: t\ntime_limit: 10s\ntarget: {kind: etcd}\nworkload:\n  kind: etcd-kv\n  clients: 8\n" + section
	p, err := plans.Parse("t.yaml", []byte(plan))
	if err != nil {
		return nil, err
	}
	b, err := bind.Bind(p)
	if err != nil {
		return nil, err
	}
	var ps Params
	if f, err := b.Workload.Fields(); err != nil || json.Unmarshal(f, &ps) != nil {
		t.Fatalf("the workload's fields %s: %v", f, err)
	}
	return &ps, nil
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
	if ps.Profile != "mixed" || ps.Rate != 0 || ps.Mix[kindGet] != 4 || ps.Mix[kindMulti] != 1 || ps.WatchSpan.Duration != 5*time.Second || ps.WatchFrom != "last" {
		t.Errorf("the default: profile %q, rate %g, mix %v, watch span %s, from %q", ps.Profile, ps.Rate, ps.Mix, ps.WatchSpan, ps.WatchFrom)
	}
	for section, want := range map[string]string{
		"  profile: web\n":          "kubernetes, mixed, put-delete-lease",
		"  load: medium\n":          "expected low or high",
		"  load: low\n  rate: 10\n": "give one of them",
		"  watch_span: 10ms\n":      "expected at least 100ms",
		"  watch_from: first\n":     "expected last or compacted",
	} {
		if _, err := check(t, section); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "t.yaml:") {
			t.Errorf("%q: error %v, want one with the file and %q", section, err, want)
		}
	}
}
