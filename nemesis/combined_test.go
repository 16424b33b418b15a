package nemesis

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/chaos-testing/chaos/plans"
)

// Every explorable kind draws, for clusters of 3 and 5 nodes, faults that
// its own checks and the checks every fault shares accept.
func TestExploredFaultsPassTheirChecks(t *testing.T) {
	kinds := explorable()
	for _, want := range []string{"pause", "kill", "partition", "clock", "loss", "delay", "reorder", "duplicate", "corrupt", "bandwidth", "cpu",
		"disk-slow", "disk-stall", "disk-error", "disk-full", "crash-point"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("%s is not explorable; explorable: %v", want, kinds)
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for _, k := range kinds {
		n, _ := Nemeses.Lookup(k)
		for _, nodes := range []int{3, 5} {
			for range 200 {
				f := n.kind().explore(rng, nodes)
				f.Duration = plans.Duration{Duration: 5 * time.Second}
				if f.Kind != k {
					t.Fatalf("%s drew a fault of kind %s", k, f.Kind)
				}
				// As bind.Bind checks a plan's fault: the shared fields,
				// then the kind's own, against a target that offers
				// nothing (combined draws faults without asking).
				s, err := f.Schedule.Resolve(plans.Limits{TimeLimit: time.Minute, Nodes: nodes, Clients: 3})
				set := Setting{TargetKind: "fake", Nodes: nodes, Clients: 3}
				if n.kind().traits().Disks { // combined draws them only on such a target
					set.Target = fakeTarget{}
				}
				if err == nil {
					_, err = n.Bind(s, f.params, set)
				}
				if err != nil {
					t.Fatalf("%s drew %+v (params %+v) for %d nodes: %v", k, f.Schedule, f.params, nodes, err)
				}
			}
		}
	}
}

// A combined fault runs, and the history records, the faults it draws,
// one seed giving one sequence; each heals as its own kind would, and
// after the last nothing is left on the cluster.
func TestCombinedRunsWhatItDraws(t *testing.T) {
	draws := func(seed uint64) []string {
		rng := rand.New(rand.NewPCG(seed, seed))
		var kinds []string
		e := Entry[CombinedParams]{Kind: "combined", Params: CombinedParams{Kinds: explorable()}}
		for range 30 {
			kinds = append(kinds, Combined{}.draw(e, rng, 5).Kind)
		}
		return kinds
	}
	a, b := draws(3), draws(3)
	if !slices.Equal(a, b) {
		t.Errorf("one seed drew %v, then %v", a, b)
	}
	if got := slices.Compact(slices.Sorted(slices.Values(a))); len(got) < 6 {
		t.Errorf("30 draws gave only the kinds %v", got)
	}

	c := newFakeCluster(5, 2)
	c.roles["leader"] = []string{"n2"}
	st := newSteps(t, c)
	kinds := []string{"partition", "loss", "kill", "delay", "pause", "duplicate"}
	seen := map[string]bool{}
	for i := range 12 { // each index a stream of its own, as each entry of a plan
		st.start(i, st.bind("combined", plans.Schedule{}, &CombinedParams{Kinds: kinds}))
		st.s.mu.Lock()
		a := st.s.active[i]
		st.s.mu.Unlock()
		if a == nil {
			t.Fatal("the combined fault hit nobody")
		}
		if !slices.Contains(kinds, a.kind) {
			t.Fatalf("a combined fault ran as %q", a.kind)
		}
		seen[a.kind] = true
		st.stop(i)
	}
	if len(seen) < 3 {
		t.Errorf("12 draws ran only %v", seen)
	}
	if n := c.chains(); n != 0 {
		t.Errorf("%d chains left", n)
	}
	if n := c.openQueues(); n != 0 {
		t.Errorf("%d queues open", n)
	}
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5", "c0", "c1"} {
		if s := c.stateOf(n); s != "running" {
			t.Errorf("%s is %s after the heals", n, s)
		}
	}
	if ill := c.illegalActs(); len(ill) != 0 {
		t.Errorf("illegal acts: %q", ill)
	}
}

// A combined fault that may draw a fault on disks gives the run disks,
// and asks for a target that keeps data directories; by default it draws
// none.
func TestCombinedOnDisks(t *testing.T) {
	c, _ := diskCluster(t, 3)
	on := bindFault(t, "combined", plans.Schedule{}, &CombinedParams{Kinds: []string{"pause", "crash-point"}}, c.setting())
	if !on.Traits().Disks {
		t.Errorf("a combined fault that draws crash points: no disks")
	}
	if def := bindFault(t, "combined", plans.Schedule{}, &CombinedParams{}, c.setting()); def.Traits().Disks {
		t.Errorf("a combined fault of the default kinds: disks")
	}
	if _, err := bind("combined", plans.Schedule{}, &CombinedParams{Kinds: []string{"disk-stall"}}, Setting{TargetKind: "redis", Nodes: 3}); err == nil {
		t.Errorf("a combined fault on disks, on a target without data directories: accepted")
	}
}
