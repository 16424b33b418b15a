package nemesis

import (
	"context"
	"errors"
)

func init() { Nemeses.Register("pause", Pause{}) }

// Pause stops processes with SIGSTOP and resumes them with SIGCONT, the way
// a stop-the-world GC or a frozen VM stops a process: it sees nothing, and
// its timers and leases run on without it.
type Pause struct{}

// Start sends SIGSTOP to each victim.
func (Pause) Start(ctx context.Context, env Env, victims []Process) error {
	return signalAll(ctx, env, victims, "STOP")
}

// Stop sends SIGCONT to each victim.
func (Pause) Stop(ctx context.Context, env Env, victims []Process) error {
	return signalAll(ctx, env, victims, "CONT")
}

func signalAll(ctx context.Context, env Env, victims []Process, sig string) error {
	var errs []error
	for _, v := range victims {
		errs = append(errs, env.Signal(ctx, v, sig))
	}
	return errors.Join(errs...)
}
