package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
)

func init() { Register[struct{}]("remove-member", RemoveMember{}) }

// Membered is a target whose cluster can lose a member and take it back
// while it serves, as operators replace a machine.
type Membered interface {
	// ChangesMembers says whether the cluster as the plan asks for it can
	// change its members (a *plans.FieldError naming the plan's field if
	// not).
	ChangesMembers() error
	// RemoveMember takes n, which is down, out of the cluster, asking the
	// other nodes, and says in a few words what it did.
	RemoveMember(ctx context.Context, nodes []cluster.Node, n cluster.Node) (string, error)
	// AddMember readies n, removed and down, to come back as a member
	// (etcd: a new one, with no data), and says what it did; the caller
	// then starts n.
	AddMember(ctx context.Context, run *containers.Run, nodes []cluster.Node, n cluster.Node) (string, error)
	// Joined waits until n, started after AddMember, serves as a member
	// (ZooKeeper: adds it, asking the other nodes, now that it runs), and
	// from then on has its restarts keep its data. If n stops first, it
	// says so (containers.ErrNotRunning).
	Joined(ctx context.Context, run *containers.Run, nodes []cluster.Node, n cluster.Node) error
	// Members are the nodes, by name, that the cluster counts as its
	// members now.
	Members(ctx context.Context, nodes []cluster.Node) ([]string, error)
}

// RejoinDelayed is a Membered target whose removed member can come back
// only some time after its removal (a NATS meta leader refuses a removed
// server for 5 minutes): a removal must last at least that long.
type RejoinDelayed interface {
	RejoinAfter() time.Duration
}

// RemoveMember replaces members while the cluster serves, as etcd's
// robustness tests' MemberReplace and Jepsen's shrink and grow do: the
// victim is stopped (SIGKILL, held down as a kill holds it) and removed
// from the cluster for the fault's duration; at heal it is added back as a
// new member, its data wiped, and started. The cluster ends every fault
// with its original members. A removal the cluster refuses (no quorum
// reachable) leaves the fault a plain kill, recorded as such.
type RemoveMember struct{}

// Check checks the role, that the members left keep a quorum of the
// original cluster, and that the target can change its members, for as
// long as the fault lasts.
func (RemoveMember) Check(e *Entry[struct{}], s Setting) error {
	if err := checkRole(e, "nodes", "leader"); err != nil {
		return err
	}
	if e.Count > (s.Nodes-1)/2 {
		return plans.Fieldf("count", "%d: removing more than %d of %d members leaves no quorum to add them back", e.Count, (s.Nodes-1)/2, s.Nodes)
	}
	m, err := need[Membered](s, e.Kind, "cannot change its members here")
	if err != nil {
		return err
	}
	if err := m.ChangesMembers(); err != nil {
		if fe, ok := errors.AsType[*plans.FieldError](err); ok {
			return &plans.FieldError{Field: fe.Field, InPlan: fe.InPlan, Msg: fe.Msg + " (fault " + e.Kind + ")"}
		}
		return plans.Fieldf("kind", "%v", err)
	}
	if d, ok := s.Target.(RejoinDelayed); ok && e.Duration.Duration < d.RejoinAfter() {
		return plans.Fieldf("duration", "%s: a removed %s member can rejoin only %s after its removal", e.Duration, s.TargetKind, d.RejoinAfter())
	}
	return nil
}

// Traits: the heal's restarts reinstall other faults.
func (RemoveMember) Traits() Traits { return Traits{RestartsNodes: true} }

// memberState is a removal in force: the victims it holds down, and which
// of them it removed.
type memberState struct {
	held    Injected // as a kill's: restartHeld heals it
	removed []Process
}

// Start stops the victims, then removes each from the cluster, trying
// until ctx ends.
func (RemoveMember) Start(ctx context.Context, w *World, e Entry[struct{}], rng *rand.Rand) (Injected, error) {
	held, err := holdAll(ctx, w, pickVictims(ctx, w, e.Schedule, rng), w.kill)
	if err != nil || held.State == nil {
		return Injected{Targets: held.Targets, State: memberState{held: held}}, err
	}
	m := w.Target.(Membered) // Check refused a target without
	st := memberState{held: held}
	var targets []string
	for _, v := range held.State.(*holding).held {
		note, err := retry(ctx, func(ctx context.Context) (string, error) {
			n, err := w.server(v)
			if err != nil {
				return "", err
			}
			return m.RemoveMember(ctx, w.servers(true), n)
		})
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
		w.awaitRejoin(v, rejoin{w, w.Target.(Membered), v})
	}
	return restartHeld(ctx, w, st.held)
}

// rejoin brings a removed node back through its target.
type rejoin struct {
	w *World
	m Membered
	p Process
}

func (r rejoin) Add(ctx context.Context) error {
	_, err := retry(ctx, func(ctx context.Context) (string, error) {
		n, err := r.w.server(r.p)
		if err != nil {
			return "", err
		}
		return r.m.AddMember(ctx, r.w.run(), r.w.servers(true), n)
	})
	if err != nil {
		return fmt.Errorf("add %s back to the cluster: %w", r.p.Name, err)
	}
	return nil
}

// Joined waits until the node, restarted after Add, has joined. A node
// that exits before it has joined (containers.ErrNotRunning) is started
// again, until ctx ends: an etcd member that asked a peer which had not
// yet applied its MemberAdd learns a membership without itself and stops.
func (r rejoin) Joined(ctx context.Context) error {
	for {
		n, err := r.w.server(r.p)
		if err != nil {
			return err
		}
		err = r.m.Joined(ctx, r.w.run(), r.w.servers(true), n)
		if !errors.Is(err, containers.ErrNotRunning) || ctx.Err() != nil {
			return err
		}
		if err := r.w.Restart(ctx, r.p); err != nil {
			return err
		}
	}
}

// FinalMembers is the history's record of the members a cluster ended
// with, once its membership changes were healed; its error says the
// cluster ended short, which makes the run unfinished (runner.Analyze
// reads it from the history, whatever run.json says).
const FinalMembers = "final-members"

// Finish asks the cluster which members it has and records them in the
// history (FinalMembers): each heal must have brought back the members
// the cluster started with, and a run whose cluster ended with others did
// not finish cleanly. A cluster that just took a member back may not list
// it everywhere yet: it is asked again for up to 30 s.
func (RemoveMember) Finish(ctx context.Context, w *World, h *history.Appender) error {
	if _, err := h.Invoke(FinalMembers, nil); err != nil {
		return err
	}
	var want []string
	for _, n := range w.servers(false) {
		want = append(want, n.Name())
	}
	slices.Sort(want)
	m := w.Target.(Membered)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var got []string
	var err error
	for {
		if got, err = m.Members(ctx, w.servers(true)); err == nil && !slices.Equal(got, want) {
			err = fmt.Errorf("the cluster ended with members %v, not its original %v", got, want)
		}
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(time.Second)
	}
	if _, herr := h.Complete(history.Info, FinalMembers, got, err); herr != nil {
		return herr
	}
	return err
}

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
