package nemesis

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/plans"
)

// pickVictims draws f.Count processes of f's role (among f.Nodes, if
// given); the role all is every node, for a fault that hits them all at
// once (a coordinated power failure). A leader or a holder is a process that is up: a node that a
// kill holds down may still be named leader by the others for a while.
// The members of nodes and clients are drawn whether up or not, and a
// fault records what it found. A role can be empty for a moment (between
// two lock holders, during an election), so it waits for one until ctx
// ends, and returns none if it never fills.
func pickVictims(ctx context.Context, w *World, f plans.Schedule, rng *rand.Rand) []Process {
	role, count := f.Target, max(f.Count, 1)
	if role == "all" {
		role, count = "nodes", len(w.Candidates(ctx, "nodes"))
	}
	for {
		cands := w.Candidates(ctx, role)
		if len(f.Nodes) > 0 {
			cands = slices.DeleteFunc(cands, func(p Process) bool { return !slices.Contains(f.Nodes, p.Name) })
		}
		if f.Target == "leader" || f.Target == "holder" {
			cands = slices.DeleteFunc(cands, w.down)
		}
		if len(cands) > 0 {
			slices.SortFunc(cands, func(a, b Process) int { return strings.Compare(a.Name, b.Name) })
			rng.Shuffle(len(cands), func(a, b int) { cands[a], cands[b] = cands[b], cands[a] })
			return cands[:min(count, len(cands))]
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func names(ps []Process) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// checkRole refuses a fault whose target is not one of roles.
func checkRole[P any](e *Entry[P], roles ...string) error {
	if !slices.Contains(roles, e.Target) {
		return plans.Fieldf("target", "%q: a %s fault targets one of %s", e.Target, e.Kind, strings.Join(roles, ", "))
	}
	return nil
}

// pinProcesses is Pin for the faults whose targets each begin with the
// name of a process hit ("n3", "c2 (paused already)", "n2 +20s (all)"):
// the same fault on those processes, nodes or clients.
func pinProcesses[P any](f Entry[P], targets []string) (Entry[P], error) {
	if len(targets) == 0 {
		return f, ErrNobodyHit
	}
	f.Target, f.Nodes, f.Count = "nodes", nil, len(targets)
	for _, t := range targets {
		name, _, _ := strings.Cut(t, " ")
		if strings.HasPrefix(name, "c") {
			f.Target = "clients"
		}
		f.Nodes = append(f.Nodes, name)
	}
	return f, nil
}
