package nemesis

import (
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/plans"
)

// TestLossChecks: a loss needs a share of packets above 0 and at most 1,
// on nodes or the leader.
func TestLossChecks(t *testing.T) {
	for _, c := range []struct {
		f    plans.Fault
		want string
	}{
		{plans.Fault{Kind: "loss", Target: "nodes", Spec: &ShareParams{}}, "probability"},
		{plans.Fault{Kind: "loss", Target: "nodes", Spec: &ShareParams{Probability: 1.5}}, "probability"},
		{plans.Fault{Kind: "loss", Target: "clients", Spec: &ShareParams{Probability: 0.3}}, "target"},
	} {
		p := &plans.Plan{File: "p.yaml", Nemesis: []plans.Fault{c.f}}
		if err := (Loss{}).CheckFault(p, 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error about %s", c.f, err, c.want)
		}
	}
	p := &plans.Plan{File: "p.yaml", Nemesis: []plans.Fault{{Kind: "loss", Target: "leader", Spec: &ShareParams{Probability: 1}}}}
	if err := (Loss{}).CheckFault(p, 0); err != nil {
		t.Errorf("a loss of every packet on the leader: %v", err)
	}
}
