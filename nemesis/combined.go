package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[CombinedParams]("combined", Combined{}) }

// Combined is Jepsen's combined nemesis, for exploratory runs: each time
// its schedule fires, it draws, with the run's seed, one fault of one of
// its kinds, with its victims and fields drawn too, and that fault runs in
// its place for the duration (the history records it under its own kind).
// Several combined entries in one plan overlap as any faults do.
type Combined struct{}

// CombinedParams are a combined fault's own fields.
type CombinedParams struct {
	// Kinds are the kinds drawn from; if empty, every explorable kind
	// but those on disks (which give the nodes disks: name them).
	Kinds []string `yaml:"kinds"`
}

// explorable lists the registered kinds that can draw their own faults.
func explorable() []string {
	var out []string
	for _, k := range Nemeses.Names() {
		if n, _ := Nemeses.Lookup(k); n.Explorable() {
			out = append(out, k)
		}
	}
	return out
}

// Check checks the kinds, and fills in every explorable one but those on
// disks if none is named; a kind on disks needs a target that keeps a
// data directory.
func (Combined) Check(e *Entry[CombinedParams], s Setting) error {
	cp := &e.Params
	all := explorable()
	if len(cp.Kinds) == 0 {
		cp.Kinds = slices.DeleteFunc(slices.Clone(all), func(k string) bool { return traitsOfKind(k).Disks })
	}
	for _, k := range cp.Kinds {
		if !slices.Contains(all, k) {
			return plans.Fieldf("kinds", "%q: expected kinds among %s", k, strings.Join(all, ", "))
		}
		if traitsOfKind(k).Disks {
			if err := checkDisk(k, "", s); err != nil {
				return plans.Fieldf("kinds", "%s: %v", k, err)
			}
		}
	}
	return nil
}

// traitsOf are the traits of the kinds a combined fault draws, together:
// it needs disks if one of them does.
func (Combined) traitsOf(e Entry[CombinedParams]) Traits {
	var t Traits
	for _, k := range e.Params.Kinds {
		kt := traitsOfKind(k)
		t.Disks = t.Disks || kt.Disks
		t.RestartsNodes = t.RestartsNodes || kt.RestartsNodes
	}
	return t
}

// traitsOfKind are the traits of the kind registered as name.
func traitsOfKind(name string) Traits {
	n, _ := Nemeses.Lookup(name)
	return n.kind().traits()
}

// draw picks a kind and has it draw a fault, on e's schedule.
func (Combined) draw(e Entry[CombinedParams], rng *rand.Rand, nodes int) *Fault {
	kinds := e.Params.Kinds
	n, _ := Nemeses.Lookup(kinds[rng.IntN(len(kinds))])
	g := n.kind().explore(rng, nodes)
	g.FirstAfter, g.Interval, g.Duration = e.FirstAfter, e.Interval, e.Duration
	return g
}

// explored is a fault a kind draws (Explorable): on role, one victim,
// with params.
func explored[P any](role string, params P) Entry[P] {
	return Entry[P]{Schedule: plans.Schedule{Target: role, Count: 1}, Params: params}
}

// Start is never called: the schedule runs the fault draw gives.
func (Combined) Start(context.Context, *World, Entry[CombinedParams], *rand.Rand) (Injected, error) {
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
