package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"time"

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
	if f.Target == "holder" {
		return pauseHolders(ctx, env, f, rng)
	}
	return signalVictims(ctx, env, f, rng, "STOP")
}

// followLag bounds how late the harness learns what a client wrote to the
// history (history.Follow reads it every 20 ms), a release included.
const followLag = 60 * time.Millisecond

// pauseHolders stops lock holders. A client picked as a holder may have
// released in the moment before its stop landed, and such a pause would
// freeze a client with nothing to lose. So once the victims are stopped
// (they can write nothing more) and what they wrote has been read, a
// victim that no longer holds is resumed at once, tens of milliseconds
// later and within this fault's start, and holders are picked again until
// one is caught or ctx ends.
func pauseHolders(ctx context.Context, env Env, f plans.Fault, rng *rand.Rand) (Injected, error) {
	for {
		in, err := signalVictims(ctx, env, f, rng, "STOP")
		if err != nil || len(in.Targets) == 0 {
			return in, err
		}
		time.Sleep(followLag)
		holders := names(env.Candidates("holder"))
		var hit, missed []Process
		for _, v := range in.State.([]Process) {
			if slices.Contains(holders, v.Name) {
				hit = append(hit, v)
			} else {
				missed = append(missed, v)
			}
		}
		if err := signalAll(context.WithoutCancel(ctx), env, missed, "CONT"); err != nil {
			return in, err // Stop resumes them all
		}
		if len(hit) > 0 {
			return Injected{Targets: names(hit), State: hit}, nil
		}
		if ctx.Err() != nil {
			return Injected{}, nil
		}
	}
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
