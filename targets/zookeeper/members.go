package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
)

// RemoveMember takes server n out of the ensemble by dynamic
// reconfiguration (ZooKeeper 3.5 and later, `reconfigEnabled`), asking
// the other servers in turn: an incremental reconfig that leaves n. A
// server the configuration no longer lists is removed already.
func (Ensemble) RemoveMember(ctx context.Context, nodes []cluster.Node, n cluster.Node) (string, error) {
	id := serverID(n)
	return viaOthers(ctx, nodes, n, func(c *zk.Conn) (string, error) {
		if listed, err := inConfig(c, id); err != nil || !listed {
			return "not in the configuration (removed already)", err
		}
		if _, err := c.IncrementalReconfig(nil, []string{strconv.Itoa(id)}, -1); err != nil {
			return "", err
		}
		return fmt.Sprintf("removed server.%d", id), nil
	})
}

// AddMember has nothing to do before n starts: ZooKeeper adds a server
// that runs, which a reconfig proposing it brings into the ensemble
// (Joined). Proposed while it is down, the new configuration would need
// a quorum of its own that counts n, and wait for it.
func (Ensemble) AddMember(context.Context, *containers.Run, []cluster.Node, cluster.Node) (string, error) {
	return "to be added once it runs", nil
}

// Joined adds server n, which runs again, back to the ensemble by an
// incremental reconfig that joins it as a participant, asking the other
// servers in turn, and waits until it serves as leader or follower. Its
// data is kept: the leader brings it up to date.
func (Ensemble) Joined(ctx context.Context, _ *containers.Run, nodes []cluster.Node, n cluster.Node) error {
	id := serverID(n)
	for {
		_, err := viaOthers(ctx, nodes, n, func(c *zk.Conn) (string, error) {
			if listed, err := inConfig(c, id); err != nil || listed {
				return "", err
			}
			_, err := c.IncrementalReconfig([]string{serverLine(id) + ";" + strconv.Itoa(ClientPort)}, nil, -1)
			return "", err
		})
		if err == nil {
			var sts []status
			var errs []error
			if sts, errs = ask(ctx, []cluster.Node{n}); errs[0] == nil && (sts[0].mode == "leader" || sts[0].mode == "follower") {
				return nil
			}
			err = errs[0]
			if err == nil {
				err = fmt.Errorf("in mode %s", sts[0].mode)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not join: %w", n.Container.Name, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// serverID is the server's id in the configuration: n3 is server.3.
func serverID(n cluster.Node) int {
	id, _ := strconv.Atoi(strings.TrimPrefix(n.Container.Name, "n"))
	return id
}

// serverLine is server id's entry in the configuration.
func serverLine(id int) string {
	return fmt.Sprintf("server.%d=n%d:%d:%d:participant", id, id, QuorumPort, ElectionPort)
}

// inConfig says whether the ensemble's configuration, as the server c is
// connected to has it, lists server id.
func inConfig(c *zk.Conn, id int) (bool, error) {
	names, err := configServers(c)
	return slices.Contains(names, "n"+strconv.Itoa(id)), err
}

// configServers are the servers the ensemble's configuration lists, as of
// its leader, by node name (server.3 is n3), sorted.
func configServers(c *zk.Conn) ([]string, error) {
	if _, err := c.Sync("/zookeeper/config"); err != nil { // the read below is then as of the leader's
		return nil, err
	}
	cfg, _, err := c.Get("/zookeeper/config")
	if err != nil {
		return nil, err
	}
	var names []string
	for line := range strings.Lines(string(cfg)) {
		if id, _, ok := strings.Cut(strings.TrimPrefix(line, "server."), "="); ok && strings.HasPrefix(line, "server.") {
			names = append(names, "n"+id)
		}
	}
	slices.Sort(names)
	return names, nil
}

// viaOthers runs f with a session on each server but n in turn, until one
// answers, each within a few seconds.
func viaOthers(ctx context.Context, nodes []cluster.Node, n cluster.Node, f func(*zk.Conn) (string, error)) (string, error) {
	var errs []error
	for _, o := range nodes {
		if o.Container.Name == n.Container.Name {
			continue
		}
		res, err := withSession(ctx, o, f)
		if err == nil {
			return res, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", o.Container.Name, err))
	}
	return "", errors.Join(errs...)
}

// withSession runs f with a session on node o, giving up after 3 s.
func withSession(ctx context.Context, o cluster.Node, f func(*zk.Conn) (string, error)) (string, error) {
	c, _, err := zk.Connect([]string{net.JoinHostPort(o.Container.IP, strconv.Itoa(ClientPort))}, 4*time.Second,
		zk.WithLogger(log.New(io.Discard, "", 0)))
	if err != nil {
		return "", err
	}
	defer c.Close()
	type result struct {
		s   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := f(c)
		done <- result{s, err}
	}()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	select {
	case r := <-done:
		return r.s, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Members are the servers the ensemble's configuration lists, as of its
// leader, asking each server in turn until one answers (viaOthers, with
// no server left out).
func (Ensemble) Members(ctx context.Context, nodes []cluster.Node) ([]string, error) {
	list, err := viaOthers(ctx, nodes, cluster.Node{}, func(c *zk.Conn) (string, error) {
		names, err := configServers(c)
		return strings.Join(names, ","), err
	})
	if err != nil {
		return nil, err
	}
	return strings.Split(list, ","), nil
}
