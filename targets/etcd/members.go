package etcd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
)

// ChangesMembers accepts every etcd cluster.
func (Cluster) ChangesMembers() error { return nil }

// RemoveMember takes member n out of the cluster, asking the other
// members in turn (etcd's MemberRemove, as Jepsen's shrink and the first
// half of etcd's MemberReplace do). A member no longer listed is removed
// already: an earlier try may have gone through unanswered. The removed
// member stops by itself once it learns of it.
func (Cluster) RemoveMember(ctx context.Context, nodes []cluster.Node, n cluster.Node) (string, error) {
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
// Jepsen's grow): it adds n's peer address to the cluster (MemberAdd),
// then leaves the note that has n's next start wipe its data and join
// the running cluster, naming its members as they are now, n among them.
// The caller then starts n. A member listed with n's address already was
// added by an earlier try.
func (Cluster) AddMember(ctx context.Context, run *containers.Run, nodes []cluster.Node, n cluster.Node) (string, error) {
	var cluster string
	note, err := viaOthers(ctx, nodes, n, func(ctx context.Context, cli *clientv3.Client) (string, error) {
		m, err := member(ctx, cli, n)
		if err != nil {
			return "", err
		}
		note := fmt.Sprintf("member %x (added already)", m.GetID())
		if m == nil {
			r, err := cli.MemberAdd(ctx, []string{peerURL(n.Container.Name)})
			if err != nil {
				return "", err
			}
			note = fmt.Sprintf("added as member %x", r.Member.ID)
		}
		ml, err := cli.MemberList(ctx)
		if err != nil {
			return "", err
		}
		cluster = initialCluster(ml.Members)
		return note, nil
	})
	if err != nil {
		return "", err
	}
	return note, run.WriteFile(ctx, n.Container, rejoinNote, []byte(cluster))
}

// initialCluster is the --initial-cluster of a member joining members:
// each by its name and peer address. A member added and not yet started
// has no name: its name is its peer address's host (command).
func initialCluster(members []*etcdserverpb.Member) string {
	var out []string
	for _, m := range members {
		for _, u := range m.PeerURLs {
			name := m.Name
			if name == "" {
				if pu, err := url.Parse(u); err == nil {
					name = pu.Hostname()
				}
			}
			out = append(out, name+"="+u)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// Joined waits until n answers as a started member of the cluster (one
// that published its name) and serves a linearizable read, then removes
// the note, so that a later restart keeps the data n has now: a member
// that joined and then lost its data would rejoin with the same identity
// and an empty log, which Raft does not allow for. If n stops first, it
// says so (containers.ErrNotRunning), for the caller to start it again.
func (Cluster) Joined(ctx context.Context, run *containers.Run, _ []cluster.Node, n cluster.Node) error {
	for {
		_, errs := ask(ctx, []cluster.Node{n}, func(ctx context.Context, cli *clientv3.Client) (bool, error) {
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
		if !run.Running(ctx, n.Container) {
			return fmt.Errorf("%s stopped before it joined (see its log): %w", n.Container.Name, containers.ErrNotRunning)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not join: %w", n.Container.Name, errs[0])
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// viaOthers runs f through each member but n in turn, until one answers.
func viaOthers(ctx context.Context, nodes []cluster.Node, n cluster.Node, f func(context.Context, *clientv3.Client) (string, error)) (string, error) {
	var errs []error
	for _, o := range nodes {
		if o.Container.Name == n.Container.Name || o.Kind != "" {
			continue
		}
		res, err := ask(ctx, []cluster.Node{o}, f)
		if err[0] == nil {
			return res[0], nil
		}
		errs = append(errs, err[0])
	}
	return "", errors.Join(errs...)
}

// member is n's entry in the cluster's member list, by its peer address;
// nil if it has none. The list is read through the leader.
func member(ctx context.Context, cli *clientv3.Client, n cluster.Node) (*etcdserverpb.Member, error) {
	ml, err := cli.MemberList(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range ml.Members {
		if slices.Contains(m.PeerURLs, peerURL(n.Container.Name)) {
			return m, nil
		}
	}
	return nil, nil
}

// Members are the members the cluster lists (MemberList), named by the
// host of their peer address, asking each node in turn until one answers
// (viaOthers, with no node left out).
func (Cluster) Members(ctx context.Context, nodes []cluster.Node) ([]string, error) {
	list, err := viaOthers(ctx, nodes, cluster.Node{}, func(ctx context.Context, cli *clientv3.Client) (string, error) {
		ml, err := cli.MemberList(ctx)
		if err != nil {
			return "", err
		}
		var names []string
		for _, m := range ml.Members {
			for _, u := range m.PeerURLs {
				if pu, err := url.Parse(u); err == nil {
					names = append(names, pu.Hostname())
				}
			}
		}
		slices.Sort(names)
		return strings.Join(names, ","), nil
	})
	if err != nil {
		return nil, err
	}
	return strings.Split(list, ","), nil
}
