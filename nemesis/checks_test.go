package nemesis

import (
	"strings"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/plans"
)

func ms(n int) plans.Duration { return plans.Duration{Duration: time.Duration(n) * time.Millisecond} }

// TestFaultChecks: each kind refuses its bad fields, naming the field, and
// accepts good ones, filling its defaults.
func TestFaultChecks(t *testing.T) {
	bad := []struct {
		f    plans.Fault
		want string
	}{
		{plans.Fault{Kind: "loss", Target: "nodes", Spec: &ShareParams{}}, "probability"},
		{plans.Fault{Kind: "loss", Target: "nodes", Spec: &ShareParams{Probability: 1.5}}, "probability"},
		{plans.Fault{Kind: "loss", Target: "clients", Spec: &ShareParams{Probability: 0.3}}, "target"},
		{plans.Fault{Kind: "duplicate", Target: "nodes", Spec: &ShareParams{Probability: -0.1}}, "probability"},
		{plans.Fault{Kind: "corrupt", Target: "holder", Spec: &ShareParams{Probability: 0.1}}, "target"},
		{plans.Fault{Kind: "delay", Target: "nodes", Spec: &DelayParams{}}, "delay"},
		{plans.Fault{Kind: "delay", Target: "nodes", Spec: &DelayParams{Delay: ms(10), Jitter: ms(20)}}, "jitter"},
		{plans.Fault{Kind: "delay", Target: "nodes", Spec: &DelayParams{Delay: ms(10), Distribution: "pareto"}}, "distribution"},
		{plans.Fault{Kind: "reorder", Target: "nodes", Spec: &ReorderParams{Probability: 1}}, "probability"},
		{plans.Fault{Kind: "reorder", Target: "nodes", Spec: &ReorderParams{Probability: 0.5, Gap: ms(-1)}}, "gap"},
		{plans.Fault{Kind: "bandwidth", Target: "nodes", Spec: &BandwidthParams{Rate: "fast"}}, "rate"},
		{plans.Fault{Kind: "bandwidth", Target: "nodes", Spec: &BandwidthParams{Rate: "9kbit"}}, "rate"},
		{plans.Fault{Kind: "remove-member", Target: "nodes", Count: 2}, "count"},
		{plans.Fault{Kind: "remove-member", Target: "clients", Count: 1}, "target"},
		{plans.Fault{Kind: "combined", Spec: &CombinedParams{Kinds: []string{"kill", "power-loss"}}}, "kinds"},
		{plans.Fault{Kind: "partition", Target: "holder", Spec: &PartitionParams{Shape: "halves"}}, "target"},
		{plans.Fault{Kind: "partition", Target: "clients", Spec: &PartitionParams{Shape: "isolate-one"}}, "target"},
		{plans.Fault{Kind: "partition", Target: "holder", Count: 2, Spec: &PartitionParams{Shape: "isolate-one"}}, "target"},
	}
	check := func(f plans.Fault) (*plans.Plan, error) {
		p := &plans.Plan{File: "p.yaml", Target: plans.Target{Nodes: 3}, Nemesis: []plans.Fault{f}}
		n, _ := Nemeses.Lookup(f.Kind)
		return p, n.(FaultChecker).CheckFault(p, 0)
	}
	for _, c := range bad {
		if _, err := check(c.f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: %v; want an error about %s", c.f.Kind, c.f.Spec, err, c.want)
		}
	}
	good := []plans.Fault{
		{Kind: "loss", Target: "leader", Spec: &ShareParams{Probability: 1}},
		{Kind: "delay", Target: "nodes", Spec: &DelayParams{Delay: ms(100), Jitter: ms(100)}},
		{Kind: "delay", Target: "nodes", Spec: &DelayParams{Delay: ms(10), Jitter: ms(50), Distribution: "normal"}},
		{Kind: "reorder", Target: "leader", Spec: &ReorderParams{Probability: 0.25}},
		{Kind: "bandwidth", Target: "nodes", Spec: &BandwidthParams{Rate: "10kbit"}},
		{Kind: "remove-member", Target: "leader", Count: 1},
		{Kind: "combined", Spec: &CombinedParams{}},
		{Kind: "partition", Target: "holder", Count: 1, Spec: &PartitionParams{Shape: "isolate-one", OneWay: true}},
	}
	for _, f := range good {
		p, err := check(f)
		if err != nil {
			t.Errorf("%s %+v: %v", f.Kind, f.Spec, err)
		}
		switch s := p.Nemesis[0].Spec.(type) {
		case *DelayParams:
			if s.Distribution == "" {
				t.Errorf("delay: no distribution filled in")
			}
		case *ReorderParams:
			if s.Gap.Duration != defaultReorderGap {
				t.Errorf("reorder: gap %s, want the default %s", s.Gap, defaultReorderGap)
			}
		case *CombinedParams:
			if len(s.Kinds) != len(explorable()) {
				t.Errorf("combined: kinds %v, want every explorable one", s.Kinds)
			}
		}
	}
	if got := bitsPerSecond("8mbit"); got != 8_000_000 {
		t.Errorf("8mbit is %d bit/s", got)
	}
}

func TestPercent(t *testing.T) {
	three := 3.0 // 3 × 0.05 computed at run time, as drawShare does: 0.15000000000000002
	for _, c := range []struct {
		p    float64
		want string
	}{{0.15, "15%"}, {three * 0.05, "15%"}, {1.0 / 3, "33.33%"}, {1, "100%"}, {0.001, "0.1%"}} {
		if got := percent(c.p); got != c.want {
			t.Errorf("percent(%v) = %q, want %q", c.p, got, c.want)
		}
	}
}
