package nemesis

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/plans"
)

func ms(n int) plans.Duration { return plans.Duration{Duration: time.Duration(n) * time.Millisecond} }

// TestFaultChecks: each kind refuses its bad fields, naming the field, and
// accepts good ones, filling its defaults.
func TestFaultChecks(t *testing.T) {
	type fault struct {
		kind string
		plans.Schedule
		params any // a *P of the kind's; nil for none
	}
	bad := []struct {
		f    fault
		want string
	}{
		{fault{"loss", plans.Schedule{Target: "nodes"}, &ShareParams{}}, "probability"},
		{fault{"loss", plans.Schedule{Target: "nodes"}, &ShareParams{Probability: 1.5}}, "probability"},
		{fault{"loss", plans.Schedule{Target: "clients"}, &ShareParams{Probability: 0.3}}, "target"},
		{fault{"duplicate", plans.Schedule{Target: "nodes"}, &ShareParams{Probability: -0.1}}, "probability"},
		{fault{"corrupt", plans.Schedule{Target: "holder"}, &ShareParams{Probability: 0.1}}, "target"},
		{fault{"delay", plans.Schedule{Target: "nodes"}, &DelayParams{}}, "delay"},
		{fault{"delay", plans.Schedule{Target: "nodes"}, &DelayParams{Delay: ms(10), Jitter: ms(20)}}, "jitter"},
		{fault{"delay", plans.Schedule{Target: "nodes"}, &DelayParams{Delay: ms(10), Distribution: "pareto"}}, "distribution"},
		{fault{"reorder", plans.Schedule{Target: "nodes"}, &ReorderParams{Probability: 1}}, "probability"},
		{fault{"reorder", plans.Schedule{Target: "nodes"}, &ReorderParams{Probability: 0.5, Gap: ms(-1)}}, "gap"},
		{fault{"bandwidth", plans.Schedule{Target: "nodes"}, &BandwidthParams{Rate: "fast"}}, "rate"},
		{fault{"bandwidth", plans.Schedule{Target: "nodes"}, &BandwidthParams{Rate: "9kbit"}}, "rate"},
		{fault{"cpu", plans.Schedule{Target: "nodes"}, &CPUParams{}}, "cpus"},
		{fault{"cpu", plans.Schedule{Target: "nodes"}, &CPUParams{CPUs: -0.5}}, "cpus"},
		{fault{"cpu", plans.Schedule{Target: "nodes"}, &CPUParams{CPUs: 0.005}}, "cpus"},
		{fault{"cpu", plans.Schedule{Target: "nodes"}, &CPUParams{CPUs: math.NaN()}}, "cpus"},
		{fault{"cpu", plans.Schedule{Target: "nodes"}, &CPUParams{CPUs: math.Inf(1)}}, "cpus"},
		{fault{"cpu", plans.Schedule{Target: "all"}, &CPUParams{CPUs: 0.5}}, "target"},
		{fault{"remove-member", plans.Schedule{Target: "nodes", Count: 2}, nil}, "count"},
		{fault{"remove-member", plans.Schedule{Target: "clients", Count: 1}, nil}, "target"},
		{fault{"combined", plans.Schedule{}, &CombinedParams{Kinds: []string{"kill", "power-loss"}}}, "kinds"},
		{fault{"partition", plans.Schedule{Target: "holder"}, &PartitionParams{Shape: "halves"}}, "target"},
		{fault{"partition", plans.Schedule{Target: "clients"}, &PartitionParams{Shape: "isolate-one"}}, "target"},
		{fault{"partition", plans.Schedule{Target: "holder", Count: 2}, &PartitionParams{Shape: "isolate-one"}}, "target"},
	}
	// A target of 3 nodes that has every capability a fault may need: a
	// fault is refused for its own fields, not for what the target lacks.
	set := newFakeCluster(3, 0).setting()
	for _, c := range bad {
		_, err := bind(c.f.kind, c.f.Schedule, c.f.params, set)
		if fe, ok := errors.AsType[*plans.FieldError](err); !ok || fe.Field != c.want {
			t.Errorf("%s %+v: %v; want an error about %s", c.f.kind, c.f.params, err, c.want)
		}
	}
	good := []fault{
		{"loss", plans.Schedule{Target: "leader"}, &ShareParams{Probability: 1}},
		{"delay", plans.Schedule{Target: "nodes"}, &DelayParams{Delay: ms(100), Jitter: ms(100)}},
		{"delay", plans.Schedule{Target: "nodes"}, &DelayParams{Delay: ms(10), Jitter: ms(50), Distribution: "normal"}},
		{"reorder", plans.Schedule{Target: "leader"}, &ReorderParams{Probability: 0.25}},
		{"bandwidth", plans.Schedule{Target: "nodes"}, &BandwidthParams{Rate: "10kbit"}},
		{"cpu", plans.Schedule{Target: "leader"}, &CPUParams{CPUs: 0.01}},
		{"cpu", plans.Schedule{Target: "holder"}, &CPUParams{CPUs: 2}},
		{"remove-member", plans.Schedule{Target: "leader", Count: 1}, nil},
		{"combined", plans.Schedule{}, &CombinedParams{}},
		{"partition", plans.Schedule{Target: "holder", Count: 1}, &PartitionParams{Shape: "isolate-one", OneWay: true}},
	}
	for _, g := range good {
		f, err := bind(g.kind, g.Schedule, g.params, set)
		if err != nil {
			t.Errorf("%s %+v: %v", g.kind, g.params, err)
			continue
		}
		// The bound fault's own fields, as the schedule runs them.
		switch s := f.params.(type) {
		case *DelayParams:
			if s.Distribution == "" {
				t.Errorf("delay: no distribution filled in")
			}
		case *ReorderParams:
			if s.Gap.Duration != defaultReorderGap {
				t.Errorf("reorder: gap %s, want the default %s", s.Gap, defaultReorderGap)
			}
		case *CombinedParams:
			if len(s.Kinds) == 0 || slices.ContainsFunc(s.Kinds, func(k string) bool { return traitsOfKind(k).Disks }) {
				t.Errorf("combined: kinds %v, want every explorable one but those on disks", s.Kinds)
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
