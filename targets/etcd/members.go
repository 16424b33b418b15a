package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/targets"
)

// RemoveMember takes member n out of the cluster, asking the other
// members in turn (etcd's MemberRemove, as Jepsen's shrink and the first
// half of etcd's MemberReplace do). A member no longer listed is removed
// already: an earlier try may have gone through unanswered. The removed
// member stops by itself once it learns of it.
func (Target) RemoveMember(ctx context.Context, nodes []targets.Node, n targets.Node) (string, error) {
	return viaOthers(ctx, nodes, n, func(ctx context.Context, cli *clientv3.Client) (string, error) {
		m, err := member(ctx, cli, n)
		if err != nil || m == nil {
			return "not a member (removed already)", err
		}
		if _, err := cli.MemberRemove(ctx, m.ID); err != nil {
			return "", err
		}
		return fmt.Sprintf("removed member %x", m.ID), nil
	})
}

// AddMember readies n, a removed member, to come back as a new member
// with an empty data directory (the second half of MemberReplace, or
// Jepsen's grow): it leaves the note that has n's next start wipe its
// data and join the running cluster, and adds n's peer address to the
// cluster (MemberAdd). The caller then starts n. A member listed with n's
// address already was added by an earlier try.
func (Target) AddMember(ctx context.Context, run *containers.Run, nodes []targets.Node, n targets.Node) (string, error) {
	if err := run.WriteFile(ctx, n.Container, rejoinNote, nil); err != nil {
		return "", err
	}
	return viaOthers(ctx, nodes, n, func(ctx context.Context, cli *clientv3.Client) (string, error) {
		m, err := member(ctx, cli, n)
		if err != nil {
			return "", err
		}
		if m != nil {
			return fmt.Sprintf("member %x (added already)", m.ID), nil
		}
		r, err := cli.MemberAdd(ctx, []string{peerURL(n.Container.Name)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("added as member %x", r.Member.ID), nil
	})
}

// member is n's entry in the cluster's member list, by its peer address;
// nil if it has none. The list is read through the leader.
func member(ctx context.Context, cli *clientv3.Client, n targets.Node) (*clientv3.Member, error) {
	ml, err := cli.MemberList(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range ml.Members {
		if slices.Contains(m.PeerURLs, peerURL(n.Container.Name)) {
			return (*clientv3.Member)(m), nil
		}
	}
	return nil, nil
}

// Joined waits until n answers as a started member of the cluster (one
// that published its name) and serves a linearizable read, then removes
// the note, so that a later restart keeps the data n has now: a member
// that joined and then lost its data would rejoin with the same identity
// and an empty log, which Raft does not allow for.
func (Target) Joined(ctx context.Context, run *containers.Run, n targets.Node) error {
	for {
		_, errs := ask(ctx, []targets.Node{n}, func(ctx context.Context, cli *clientv3.Client) (bool, error) {
			m, err := member(ctx, cli, n)
			switch {
			case err != nil:
				return false, err
			case m == nil || m.Name == "":
				return false, fmt.Errorf("not started as a member yet")
			}
			_, err = cli.Get(ctx, "chaos-ready")
			return err == nil, err
		})
		if errs[0] == nil {
			_, err := run.Exec(ctx, n.Container, "rm", "-f", rejoinNote)
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not join: %w", n.Container.Name, errs[0])
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// viaOthers runs f through each member but n in turn, until one answers.
func viaOthers(ctx context.Context, nodes []targets.Node, n targets.Node, f func(context.Context, *clientv3.Client) (string, error)) (string, error) {
	var errs []error
	for _, o := range nodes {
		if o.Container.Name == n.Container.Name || o.Kind != "" {
			continue
		}
		res, err := ask(ctx, []targets.Node{o}, f)
		if err[0] == nil {
			return res[0], nil
		}
		errs = append(errs, err[0])
	}
	return "", errors.Join(errs...)
}
