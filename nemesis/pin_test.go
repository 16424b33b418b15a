package nemesis

import (
	"errors"
	"slices"
	"testing"

	"github.com/chaos-testing/chaos/plans"
)

// TestPinHitsTheSameVictims: a fault pinned from what the history
// recorded of it hits the same processes, or cuts the same way, though
// the role it was drawn from (the leader) has moved on, and a shape's
// random draw would differ.
func TestPinHitsTheSameVictims(t *testing.T) {
	c := newFakeCluster(5, 3)
	c.roles["leader"] = []string{"n4"}
	st := newSteps(t, c)
	for i, f := range []*Fault{
		st.bind("pause", plans.Schedule{Target: "leader"}, nil),
		st.bind("kill", plans.Schedule{Target: "nodes", Count: 2}, nil),
		st.bind("pause", plans.Schedule{Target: "clients", Count: 2}, nil),
		st.bind("partition", plans.Schedule{}, &PartitionParams{Shape: "majorities-ring"}),
		st.bind("partition", plans.Schedule{}, &PartitionParams{Shape: "isolate-leader", OneWay: true}),
	} {
		recorded := st.start(2*i, f)
		st.stop(2 * i)
		c.roles["leader"] = []string{"n1"} // another leader by the replay
		pinned, err := f.Pin(recorded)
		if err != nil {
			t.Fatalf("%s: Pin(%q): %v", f.Kind, recorded, err)
		}
		again := st.start(2*i+1, pinned)
		if f.Kind == "partition" {
			wantDrops(t, c, grudgeOf(c, recorded))
		}
		st.stop(2*i + 1)
		if !slices.Equal(slices.Sorted(slices.Values(again)), slices.Sorted(slices.Values(recorded))) {
			t.Errorf("%s on %s: pinned as %+v (params %+v) it hit %q; the original hit %q", f.Kind, f.Target, pinned.Schedule, pinned.params, again, recorded)
		}
		c.roles["leader"] = []string{"n4"}
	}
}

// TestPinNames: the victims' names are the first word of each target, a
// client's make a fault on clients, and a fault that hit nobody cannot
// be pinned.
func TestPinNames(t *testing.T) {
	f, err := pinProcesses(Entry[ClockParams]{Kind: "clock", Schedule: plans.Schedule{Target: "holder"}}, []string{"c2 +20s (all)"})
	if err != nil || f.Target != "clients" || !slices.Equal(f.Nodes, []string{"c2"}) || f.Count != 1 {
		t.Errorf("clock on the holder pinned as %+v, %v; want clients [c2]", f, err)
	}
	k, err := pinProcesses(Entry[struct{}]{Kind: "kill", Schedule: plans.Schedule{Target: "leader"}}, []string{"n3", "n5 (down already)"})
	if err != nil || k.Target != "nodes" || !slices.Equal(k.Nodes, []string{"n3", "n5"}) || k.Count != 2 {
		t.Errorf("kill pinned as %+v, %v; want nodes [n3 n5]", k, err)
	}
	if _, err := pinProcesses(Entry[struct{}]{Kind: "pause"}, nil); !errors.Is(err, ErrNobodyHit) {
		t.Errorf("nobody hit: %v; want ErrNobodyHit", err)
	}
	if _, err := (Partition{}).Pin(Entry[PartitionParams]{Kind: "partition"}, []string{"n1 drops n2"}); err == nil {
		t.Error("a partition target without -x-: no error")
	}
}
