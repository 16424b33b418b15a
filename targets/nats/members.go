package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/plans"
)

// The harness's own user, in the system account ($SYS): JetStream's server
// removal is asked there. Defining it leaves the workload's clients, who
// connect with no user, in the global account, as without it.
const sysUser, sysPassword = "chaos", "chaos"

// ChangesMembers accepts the releases in which a server taken out of the
// cluster comes back by itself when it starts again (nats-server #6815,
// in v2.10.28 and v2.11.2); before them it came back only once every
// other server had restarted.
func (c Cluster) ChangesMembers() error {
	_, minor, patch, _ := parseVersion(c.version)
	if minor < 10 || minor == 10 && patch < 28 || minor == 11 && patch < 2 {
		return plans.PlanFieldf("target.version", "%s: a removed server rejoins by itself only from v2.10.28 and v2.11.2 on (nats-server #6815)", c.version)
	}
	return nil
}

// RejoinAfter is how long a removed server stays refused: a meta leader
// that applied the removal adds the server back only once 5 minutes have
// passed (peerRemoveTimeout in the server's raft.go, v2.10.28 and v2.11.2
// on); a leader elected since, that restarted after the removal, may
// take it back sooner.
func (Cluster) RejoinAfter() time.Duration { return 5 * time.Minute }

// RemoveMember takes server n, which is down, out of JetStream's meta
// group ($JS.API.SERVER.REMOVE, `nats server raft peer-remove`), asking
// the other servers in turn. Its streams' replicas on n are dropped with
// it. A server the meta leader no longer lists is removed already: an
// earlier try may have gone through unanswered.
func (Cluster) RemoveMember(ctx context.Context, nodes []cluster.Node, n cluster.Node) (string, error) {
	rest := others(nodes, n)
	group, err := metaGroup(ctx, rest)
	if err != nil {
		return "", err
	}
	if _, listed := group[n.Container.Name]; !listed {
		return "not in the meta group (removed already)", nil
	}
	var errs []error
	for _, o := range rest {
		if err := removeVia(ctx, o, n.Container.Name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.Container.Name, err))
			continue
		}
		return "removed from the meta group", nil
	}
	return "", errors.Join(errs...)
}

// AddMember has nothing to do: a removed server that starts again is
// added back to the meta group by the leader, with the data it kept,
// once RejoinAfter has passed.
func (Cluster) AddMember(context.Context, *containers.Run, []cluster.Node, cluster.Node) (string, error) {
	return "rejoins by itself when it starts", nil
}

// Joined waits until the meta leader lists n again as a current member,
// or n is the leader; or until n stops (containers.ErrNotRunning).
func (Cluster) Joined(ctx context.Context, run *containers.Run, nodes []cluster.Node, n cluster.Node) error {
	for {
		group, err := metaGroup(ctx, nodes)
		if err == nil && group[n.Container.Name] {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("the meta leader sees %v (name: current)", group)
		}
		if !run.Running(ctx, n.Container) {
			return fmt.Errorf("%s stopped before it joined (see its log): %w", n.Container.Name, containers.ErrNotRunning)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not join: %w", n.Container.Name, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// metaGroup is JetStream's meta group as the meta leader, found among
// nodes, sees it: each member's name, and whether it is current (the
// leader is).
func metaGroup(ctx context.Context, nodes []cluster.Node) (map[string]bool, error) {
	var errs []error
	for _, o := range nodes {
		var j jsz
		if err := get(ctx, o, "/jsz", &j); err != nil {
			errs = append(errs, err)
			continue
		}
		if j.Meta == nil || j.Meta.Leader != o.Container.Name {
			continue
		}
		group := map[string]bool{o.Container.Name: true}
		for _, r := range j.Meta.Replicas {
			group[r.Name] = r.Current
		}
		return group, nil
	}
	return nil, fmt.Errorf("no meta leader among %d servers asked: %w", len(nodes), errors.Join(errs...))
}

// removeVia asks server o, as the harness's system user, to remove peer.
func removeVia(ctx context.Context, o cluster.Node, peer string) error {
	nc, err := nats.Connect("nats://"+net.JoinHostPort(o.Container.IP, strconv.Itoa(ClientPort)),
		nats.UserInfo(sysUser, sysPassword), nats.Timeout(2*time.Second), nats.NoReconnect())
	if err != nil {
		return err
	}
	defer nc.Close()
	req, _ := json.Marshal(map[string]string{"peer": peer})
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	msg, err := nc.RequestWithContext(ctx, "$JS.API.SERVER.REMOVE", req)
	if err != nil {
		return err
	}
	var resp struct {
		Success bool `json:"success"`
		Error   *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("server remove: %q: %w", msg.Data, err)
	}
	if !resp.Success {
		if resp.Error != nil {
			return fmt.Errorf("server remove: %s", resp.Error.Description)
		}
		return fmt.Errorf("server remove: %s", msg.Data)
	}
	return nil
}

// others are nodes but n.
func others(nodes []cluster.Node, n cluster.Node) []cluster.Node {
	return slices.DeleteFunc(slices.Clone(nodes), func(o cluster.Node) bool { return o.Container.Name == n.Container.Name })
}

// Members are the servers in JetStream's meta group, as its leader sees
// them, current or not.
func (Cluster) Members(ctx context.Context, nodes []cluster.Node) ([]string, error) {
	group, err := metaGroup(ctx, nodes)
	return slices.Sorted(maps.Keys(group)), err
}
