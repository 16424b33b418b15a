package nemesis

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/chaos-testing/chaos/plans"
)

func init() {
	for _, action := range []string{"compact", "defrag"} {
		Nemeses.Register(action, Admin{Action: action})
	}
}

// Admin runs a target's maintenance action on nodes, as operators do while
// the cluster serves (etcd: compact, which drops old revisions cluster-wide
// and breaks watches resuming before them, and defrag, which blocks a
// member while it rewrites its database). Jepsen and etcd's robustness
// tests run both alongside their faults. The act is over when it returns;
// the fault's duration only spaces it from the next one, and its heal
// does nothing.
type Admin struct{ Action string }

// CheckFault allows nodes only; runner.Validate checks that the target
// has the action (TargetAction).
func (Admin) CheckFault(p *plans.Plan, i int) error { return checkRole(p, i, "nodes", "leader") }

// TargetAction is the maintenance action the target must offer.
func (a Admin) TargetAction() string { return a.Action }

// Start runs the action on each victim that is up. An action that fails
// (a member cut off, paused or down) is recorded beside its victim: the
// cluster was asked, which is the fault.
func (a Admin) Start(ctx context.Context, w *World, f plans.Fault, rng *rand.Rand) (Injected, error) {
	env, ok := w.Env.(ActionEnv)
	if !ok {
		return Injected{}, errors.New(a.Action + ": the run's target has no maintenance actions")
	}
	var in Injected
	for _, v := range pickVictims(ctx, w, f, rng) {
		if w.down(v) {
			in.Targets = append(in.Targets, v.Name+" (down)")
			continue
		}
		did, err := env.Act(context.WithoutCancel(ctx), v, a.Action)
		if err != nil {
			did = a.Action + " failed: " + err.Error()
		}
		in.Targets = append(in.Targets, v.Name+" ("+did+")")
	}
	return in, nil
}

// Stop has nothing to heal.
func (Admin) Stop(context.Context, *World, Injected) error { return nil }
