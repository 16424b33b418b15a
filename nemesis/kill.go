package nemesis

import (
	"context"
	"math/rand/v2"
)

func init() { Register[struct{}]("kill", Kill{}) }

// Kill crashes nodes with SIGKILL and restarts them at heal with their data
// directory kept, as a power loss and reboot of the process would. Kills
// compose (see World): a node stays down while any kill holds it.
type Kill struct{}

// Check allows nodes only: a client that crashed and came back would be
// a new process reusing the old one's identity in the history.
func (Kill) Check(e *Entry[struct{}], _ Setting) error { return checkRole(e, "nodes", "leader") }

// Start sends SIGKILL to the victims.
func (Kill) Start(ctx context.Context, w *World, e Entry[struct{}], rng *rand.Rand) (Injected, error) {
	return holdAll(ctx, w, pickVictims(ctx, w, e.Schedule, rng), w.kill)
}

// Traits: a kill's heal restarts its victims.
func (Kill) Traits() Traits { return Traits{RestartsNodes: true} }

// Pin kills the nodes recorded, by name.
func (Kill) Pin(e Entry[struct{}], targets []string) (Entry[struct{}], error) {
	return pinProcesses(e, targets)
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
func (Kill) Explore(rng *rand.Rand, _ int) Entry[struct{}] {
	return explored(drawRole(rng, "nodes", "leader"), struct{}{})
}
