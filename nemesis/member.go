package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/chaos-testing/chaos/plans"
)

func init() { Nemeses.Register("remove-member", RemoveMember{}) }

// MemberEnv is an Env whose target can change its cluster's members
// (targets.Membered).
type MemberEnv interface {
	// RemoveMember takes node p, down, out of its cluster.
	RemoveMember(ctx context.Context, p Process) (string, error)
	// AddMember readies node p, removed and down, to come back as a new
	// member with no data; a restart then brings it.
	AddMember(ctx context.Context, p Process) (string, error)
	// Joined waits until p, restarted, has joined, after which its
	// restarts keep its data.
	Joined(ctx context.Context, p Process) error
}

// RemoveMember replaces members while the cluster serves, as etcd's
// robustness tests' MemberReplace and Jepsen's shrink and grow do: the
// victim is stopped (SIGKILL, held down as a kill holds it) and removed
// from the cluster for the fault's duration; at heal it is added back as a
// new member, its data wiped, and started. The cluster ends every fault
// with its original members. A removal the cluster refuses (no quorum
// reachable) leaves the fault a plain kill, recorded as such.
type RemoveMember struct{}

// CheckFault checks the role, and that the members left keep a quorum of
// the original cluster.
func (RemoveMember) CheckFault(p *plans.Plan, i int) error {
	if err := checkRole(p, i, "nodes", "leader"); err != nil {
		return err
	}
	if f := p.Nemesis[i]; f.Count > (p.Target.Nodes-1)/2 {
		return p.Errorf(plans.FaultField(i, "count"), "%d: removing more than %d of %d members leaves no quorum to add them back", f.Count, (p.Target.Nodes-1)/2, p.Target.Nodes)
	}
	return nil
}

// Membership says that the target must be able to change its members.
func (RemoveMember) Membership() {}

// RestartsNodes makes the heal's restarts reinstall other faults.
func (RemoveMember) RestartsNodes() {}

// memberState is a removal in force: the victims it holds down, and which
// of them it removed.
type memberState struct {
	held    Injected // as a kill's: restartHeld heals it
	removed []Process
}

// Start stops the victims, then removes each from the cluster, trying
// until ctx ends.
func (RemoveMember) Start(ctx context.Context, w *World, f plans.Fault, rng *rand.Rand) (Injected, error) {
	held, err := holdAll(ctx, w, pickVictims(ctx, w, f, rng), w.kill)
	if err != nil || held.State == nil {
		return Injected{Targets: held.Targets, State: memberState{held: held}}, err
	}
	menv, ok := w.Env.(MemberEnv)
	if !ok {
		return Injected{Targets: held.Targets, State: memberState{held: held}}, fmt.Errorf("this run cannot change members")
	}
	st := memberState{held: held}
	var targets []string
	for _, v := range held.State.(*holding).held {
		note, err := retry(ctx, func(ctx context.Context) (string, error) { return menv.RemoveMember(ctx, v) })
		if err != nil {
			targets = append(targets, fmt.Sprintf("%s (killed, not removed: %v)", v.Name, err))
			continue
		}
		st.removed = append(st.removed, v)
		targets = append(targets, fmt.Sprintf("%s %s", v.Name, note))
	}
	return Injected{Targets: targets, State: st}, nil
}

// Stop releases the victims as a kill's heal does; the restart that
// brings a removed victim back, this heal's or a later kill's, adds it
// back to the cluster as the cluster is at that moment (another member
// may have left meanwhile), trying until ctx ends, and holds it against
// other faults' kills until it has joined: killed while joining it would
// only join again, but killed between its join and the harness's learning
// of it, an etcd member would come back wiped under the identity it had
// just taken.
func (RemoveMember) Stop(ctx context.Context, w *World, in Injected) error {
	st := in.State.(memberState)
	if st.held.State == nil {
		return nil // nobody was hit
	}
	for _, v := range st.removed {
		w.awaitRejoin(v, rejoin{w.Env.(MemberEnv), v}) // Start removed none without one
	}
	return restartHeld(ctx, w, st.held)
}

// rejoin brings a removed node back through its env.
type rejoin struct {
	env MemberEnv
	p   Process
}

func (r rejoin) Add(ctx context.Context) error {
	_, err := retry(ctx, func(ctx context.Context) (string, error) { return r.env.AddMember(ctx, r.p) })
	if err != nil {
		return fmt.Errorf("add %s back to the cluster: %w", r.p.Name, err)
	}
	return nil
}

func (r rejoin) Joined(ctx context.Context) error { return r.env.Joined(ctx, r.p) }

// retry runs f until it succeeds or ctx ends, a quarter second apart: a
// membership change needs a leader and a quorum, which other faults may
// take away for a while.
func retry(ctx context.Context, f func(context.Context) (string, error)) (string, error) {
	for {
		res, err := f(ctx)
		if err == nil {
			return res, nil
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(250 * time.Millisecond):
		}
	}
}
