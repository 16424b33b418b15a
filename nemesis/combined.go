package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Nemeses.Register("combined", Combined{}) }

// Combined is Jepsen's combined nemesis, for exploratory runs: each time
// its schedule fires, it draws, with the run's seed, one fault of one of
// its kinds, with its victims and fields drawn too, and that fault runs in
// its place for the duration (the history records it under its own kind).
// Several combined entries in one plan overlap as any faults do.
type Combined struct{}

// CombinedParams are a combined fault's own fields.
type CombinedParams struct {
	// Kinds are the kinds drawn from; every explorable kind if empty.
	Kinds []string `yaml:"kinds"`
}

// Explorable is a fault kind that can draw a fault of its own for a
// cluster of some nodes: its victims' role and count and its fields, all
// valid (its CheckFault accepts them).
type Explorable interface {
	Explore(rng *rand.Rand, nodes int) plans.Fault
}

// Drawer is a nemesis that stands for another: the schedule asks it for
// the fault to run each time, and runs that one.
type Drawer interface {
	Draw(f plans.Fault, rng *rand.Rand, nodes int) plans.Fault
}

// NewParams makes Combined a plans.Parameterized.
func (Combined) NewParams() any { return &CombinedParams{} }

// explorable lists the registered kinds that can draw their own faults.
func explorable() []string {
	var out []string
	for _, k := range Nemeses.Names() {
		n, _ := Nemeses.Lookup(k)
		if _, ok := n.(Explorable); ok {
			out = append(out, k)
		}
	}
	return out
}

// CheckFault checks the kinds, and fills in every explorable one if none
// is named.
func (Combined) CheckFault(p *plans.Plan, i int) error {
	cp := p.Nemesis[i].Spec.(*CombinedParams)
	all := explorable()
	if len(cp.Kinds) == 0 {
		cp.Kinds = all
	}
	for _, k := range cp.Kinds {
		if !slices.Contains(all, k) {
			return p.Errorf(plans.FaultField(i, "kinds"), "%q: expected kinds among %s", k, strings.Join(all, ", "))
		}
	}
	return nil
}

// Draw picks a kind and has it draw a fault, on f's schedule.
func (Combined) Draw(f plans.Fault, rng *rand.Rand, nodes int) plans.Fault {
	kinds := f.Spec.(*CombinedParams).Kinds
	n, _ := Nemeses.Lookup(kinds[rng.IntN(len(kinds))])
	g := n.(Explorable).Explore(rng, nodes)
	g.FirstAfter, g.Interval, g.Duration = f.FirstAfter, f.Interval, f.Duration
	return g
}

// Start is never called: the schedule runs the fault Draw gives.
func (Combined) Start(context.Context, *World, plans.Fault, *rand.Rand) (Injected, error) {
	return Injected{}, fmt.Errorf("a combined fault runs the fault it draws")
}

// Stop is never called, as Start.
func (Combined) Stop(context.Context, *World, Injected) error { return nil }

// drawShare draws a probability from 5% to max, in steps of 5%.
func drawShare(rng *rand.Rand, max float64) float64 {
	steps := int(max / 0.05)
	return float64(1+rng.IntN(steps)) * 0.05
}

// drawRole picks one of roles.
func drawRole(rng *rand.Rand, roles ...string) string { return roles[rng.IntN(len(roles))] }
