package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Nemeses.Register("pause", Pause{}) }

// Pause stops processes with SIGSTOP and resumes them with SIGCONT, the way
// a stop-the-world GC or a frozen VM stops a process: it sees nothing, and
// its timers and leases run on without it.
type Pause struct{}

// CheckFault accepts any role: nodes and clients can both be paused.
func (Pause) CheckFault(p *plans.Plan, i int) error {
	return checkRole(p, i, "nodes", "leader", "clients", "holder")
}

// Start sends SIGSTOP to the victims.
func (Pause) Start(ctx context.Context, env Env, f plans.Fault, rng *rand.Rand) (Injected, error) {
	return signalVictims(ctx, env, f, rng, "STOP")
}

// Stop sends SIGCONT to the victims.
func (Pause) Stop(ctx context.Context, env Env, in Injected) error {
	return signalAll(ctx, env, in.State.([]Process), "CONT")
}

// signalVictims draws the fault's victims and sends them sig; the victims
// are the Injected's state, for Stop.
func signalVictims(ctx context.Context, env Env, f plans.Fault, rng *rand.Rand, sig string) (Injected, error) {
	victims := pickVictims(ctx, env, f, rng)
	if len(victims) == 0 {
		return Injected{}, nil
	}
	in := Injected{Targets: names(victims), State: victims}
	return in, signalAll(context.WithoutCancel(ctx), env, victims, sig)
}

func signalAll(ctx context.Context, env Env, victims []Process, sig string) error {
	var errs []error
	for _, v := range victims {
		errs = append(errs, env.Signal(ctx, v, sig))
	}
	return errors.Join(errs...)
}
