package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Nemeses.Register("kill", Kill{}) }

// Kill crashes nodes with SIGKILL and restarts them at heal with their data
// directory kept, as a power loss and reboot of the process would.
type Kill struct{}

// CheckFault allows nodes only: a client that crashed and came back would
// be a new process reusing the old one's identity in the history.
func (Kill) CheckFault(p *plans.Plan, i int) error { return checkRole(p, i, "nodes", "leader") }

// Start sends SIGKILL to the victims.
func (Kill) Start(ctx context.Context, env Env, f plans.Fault, rng *rand.Rand) (Injected, error) {
	return signalVictims(ctx, env, f, rng, "KILL")
}

// RestartsNodes marks Kill as a NodeRestarter.
func (Kill) RestartsNodes() {}

// Stop starts the victims again.
func (Kill) Stop(ctx context.Context, env Env, in Injected) error {
	var errs []error
	for _, v := range in.State.([]Process) {
		errs = append(errs, env.Restart(ctx, v))
	}
	return errors.Join(errs...)
}
