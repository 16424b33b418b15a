package nemesis

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/plans"
)

func init() {
	for _, action := range []string{"compact", "defrag"} {
		Register[struct{}](action, Admin{Action: action})
	}
}

// Administered is a target with maintenance actions that a fault runs on
// a node as operators run them (etcd's compact and defrag).
type Administered interface {
	// Actions are the actions by name.
	Actions() []string
	// Act runs action on n and says in a few words what it did.
	Act(ctx context.Context, n cluster.Node, action string) (string, error)
}

// Admin runs a target's maintenance action on nodes, as operators do while
// the cluster serves (etcd: compact, which drops old revisions cluster-wide
// and breaks watches resuming before them, and defrag, which blocks a
// member while it rewrites its database). Jepsen and etcd's robustness
// tests run both alongside their faults. The act is over when it returns;
// the fault's duration only spaces it from the next one, and its heal
// does nothing.
type Admin struct{ Action string }

// Check allows nodes only, on a target that has the action.
func (a Admin) Check(e *Entry[struct{}], s Setting) error {
	if err := checkRole(e, "nodes", "leader"); err != nil {
		return err
	}
	var actions []string
	if adm, ok := s.Target.(Administered); ok {
		actions = adm.Actions()
	}
	if !slices.Contains(actions, a.Action) {
		return plans.Fieldf("kind", "%s: target %s has no such maintenance action (it has: %s)", a.Action, s.TargetKind, cmp.Or(strings.Join(actions, ", "), "none"))
	}
	return nil
}

// Start runs the action on each victim that is up. An action that fails
// (a member cut off, paused or down) is recorded beside its victim: the
// cluster was asked, which is the fault.
func (a Admin) Start(ctx context.Context, w *World, e Entry[struct{}], rng *rand.Rand) (Injected, error) {
	adm := w.Target.(Administered) // Check refused a target without
	var in Injected
	for _, v := range pickVictims(ctx, w, e.Schedule, rng) {
		if w.down(v) {
			in.Targets = append(in.Targets, v.Name+" (down)")
			continue
		}
		n, err := w.server(v)
		did := ""
		if err == nil {
			did, err = adm.Act(context.WithoutCancel(ctx), n, a.Action)
		}
		if err != nil {
			did = a.Action + " failed: " + err.Error()
		}
		in.Targets = append(in.Targets, v.Name+" ("+did+")")
	}
	return in, nil
}

// Stop has nothing to heal.
func (Admin) Stop(context.Context, *World, Injected) error { return nil }
