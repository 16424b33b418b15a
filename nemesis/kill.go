package nemesis

import (
	"context"
	"math/rand/v2"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Nemeses.Register("kill", Kill{}) }

// Kill crashes nodes with SIGKILL and restarts them at heal with their data
// directory kept, as a power loss and reboot of the process would. Kills
// compose (see World): a node stays down while any kill holds it.
type Kill struct{}

// CheckFault allows nodes only: a client that crashed and came back would
// be a new process reusing the old one's identity in the history.
func (Kill) CheckFault(p *plans.Plan, i int) error { return checkRole(p, i, "nodes", "leader") }

// Start sends SIGKILL to the victims.
func (Kill) Start(ctx context.Context, w *World, f plans.Fault, rng *rand.Rand) (Injected, error) {
	return holdAll(ctx, w, pickVictims(ctx, w, f, rng), w.kill)
}

// RestartsNodes marks Kill as a NodeRestarter.
func (Kill) RestartsNodes() {}

// Pin kills the nodes recorded, by name.
func (Kill) Pin(f plans.Fault, targets []string) (plans.Fault, error) {
	return pinProcesses(f, targets)
}

// Stop releases the victims, restarting those no other kill holds down.
func (Kill) Stop(ctx context.Context, w *World, in Injected) error { return restartHeld(ctx, w, in) }

// restartHeld heals a fault that holds nodes down as a kill does: it
// releases them, restarting those no other fault holds down.
func restartHeld(ctx context.Context, w *World, in Injected) error {
	st := in.State.(*holding)
	return releaseAll(ctx, st, st.held, w.restart)
}

// Explore kills one node or the leader.
func (Kill) Explore(rng *rand.Rand, _ int) plans.Fault {
	return plans.Fault{Kind: "kill", Target: drawRole(rng, "nodes", "leader"), Count: 1}
}
