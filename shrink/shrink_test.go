package shrink_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/shrink"

	_ "github.com/chaos-testing/chaos/plugins"
)

// A replay plan of Redlock: six pinned pauses of clients.
const plan = `
name: pauses-replay
seed: 1
time_limit: 60s
target: {kind: redis, nodes: 5}
workload: {kind: redlock, clients: 3, lease: 2s}
nemesis:
  - {kind: pause, target: clients, nodes: [c0], first_after: 3s, duration: 5s, times: 1}
  - {kind: pause, target: clients, nodes: [c1], first_after: 13s, duration: 5s, times: 1}
  - {kind: pause, target: clients, nodes: [c2], first_after: 23s, duration: 5s, times: 1}
  - {kind: pause, target: clients, nodes: [c1], first_after: 33s, duration: 5s, times: 1}
  - {kind: pause, target: clients, nodes: [c0], first_after: 43s, duration: 5s, times: 1}
  - {kind: pause, target: clients, nodes: [c2], first_after: 53s, duration: 5s, times: 1}
`

// TestShrink: with an oracle that sees the finding while c1 is paused at
// 13 s for at least a second and two clients run, on at least three
// nodes, the plan shrinks to that one pause, 1.25 s long (halved twice),
// a time limit that ends soon after it, two clients and three nodes; and
// no change the validator refuses is tried.
func TestShrink(t *testing.T) {
	p := validPlan(t, plan)
	shows := func(_ context.Context, p *plans.Plan) (bool, error) {
		if p.Workload.Clients < 2 || p.Target.Nodes < 3 {
			return false, nil
		}
		return slices.ContainsFunc(p.Nemesis, func(f plans.Fault) bool {
			return slices.Equal(f.Nodes, []string{"c1"}) && f.FirstAfter.Duration == 13*time.Second && f.Duration.Duration >= time.Second
		}), nil
	}
	var tried []string
	got, steps, err := shrink.Shrink(context.Background(), p, binds, shows, func(what string, kept bool) { tried = append(tried, what) })
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		t.Logf("kept after %d runs: %s", s.Runs, s.What)
	}
	if len(got.Nemesis) != 1 || !slices.Equal(got.Nemesis[0].Nodes, []string{"c1"}) || got.Nemesis[0].Duration.Duration != 1250*time.Millisecond {
		t.Errorf("faults %+v; want c1's pause at 13s, 1.25s long", got.Nemesis)
	}
	if got.TimeLimit.Duration != 20*time.Second || got.Workload.Clients != 2 || got.Target.Nodes != 3 {
		t.Errorf("time limit %s, %d clients, %d nodes; want 20s (5s after the pause), 2, 3", got.TimeLimit, got.Workload.Clients, got.Target.Nodes)
	}
	if len(steps) == 0 || len(tried) <= len(steps) {
		t.Errorf("%d changes kept of %d tried", len(steps), len(tried))
	}
	if err := binds(got); err != nil {
		t.Errorf("the shrunk plan is illegal: %v", err)
	}
}

// TestShrinkKeepsWhatItNeeds: when no change keeps the finding, the plan
// comes back as it was.
func TestShrinkKeepsWhatItNeeds(t *testing.T) {
	p := validPlan(t, plan)
	never := func(context.Context, *plans.Plan) (bool, error) { return false, nil }
	got, steps, err := shrink.Shrink(context.Background(), p, binds, never, nil)
	if err != nil || len(steps) != 0 || len(got.Nemesis) != 6 || got.TimeLimit.Duration != time.Minute {
		t.Errorf("%d steps, %d faults, %s, %v; want the plan unchanged", len(steps), len(got.Nemesis), got.TimeLimit, err)
	}
}

// TestShrinkToTheHolder: a pause pinned on the client that held the lock
// becomes a pause of whoever holds it, when the finding needs the role
// only; on a workload without a holder the change is not tried.
func TestShrinkToTheHolder(t *testing.T) {
	for _, c := range []struct {
		workload, want string
	}{
		{"{kind: redlock, clients: 3, lease: 2s}", "holder"},
		{"{kind: etcd-register, clients: 3}", "clients"},
	} {
		p, err := plans.Parse("p.yaml", []byte(`
name: pause-replay
seed: 1
time_limit: 20s
target: {kind: etcd, nodes: 3}
workload: `+c.workload+`
nemesis:
  - {kind: pause, target: clients, nodes: [c1], first_after: 13s, duration: 1s, times: 1}
`))
		if err != nil {
			t.Fatal(err)
		}
		if c.want == "holder" {
			p.Target.Kind = "redis"
		}
		p = resolved(t, p)
		shows := func(_ context.Context, p *plans.Plan) (bool, error) {
			return len(p.Nemesis) == 1 && p.Nemesis[0].Duration.Duration == time.Second && p.Workload.Clients == 3 && p.Target.Nodes == 3, nil
		}
		got, steps, err := shrink.Shrink(context.Background(), p, binds, shows, nil)
		if err != nil {
			t.Fatal(err)
		}
		if f := got.Nemesis[0]; f.Target != c.want || c.want == "holder" && (f.Nodes != nil || f.Count != 1) {
			t.Errorf("%s: target %s %v, count %d; want %s (steps %+v)", c.workload, f.Target, f.Nodes, f.Count, c.want, steps)
		}
	}
}

// TestShrinkToNoFault: a finding that shows whatever the faults shrinks to
// a plan without any.
func TestShrinkToNoFault(t *testing.T) {
	p := validPlan(t, plan)
	always := func(context.Context, *plans.Plan) (bool, error) { return true, nil }
	got, steps, err := shrink.Shrink(context.Background(), p, binds, always, nil)
	if err != nil || len(got.Nemesis) != 0 {
		t.Errorf("faults %+v (steps %+v, %v); want none", got.Nemesis, steps, err)
	}
}

// validPlan parses a plan's text and resolves it (resolved).
func validPlan(t *testing.T, text string) *plans.Plan {
	t.Helper()
	p, err := plans.Parse("p.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return resolved(t, p)
}

// resolved is p bound, as a run would bind it, and written back as a plan
// with every default written out: Shrink takes such a plan (a replay's),
// whose counts, intervals, clients and nodes it reduces.
func resolved(t *testing.T, p *plans.Plan) *plans.Plan {
	t.Helper()
	b, err := bind.Bind(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := b.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// binds is Shrink's validator: a candidate must bind, as a run binds it.
func binds(p *plans.Plan) error {
	_, err := bind.Bind(p)
	return err
}
