// Package etcd starts an etcd cluster, one member per node, with etcd built
// from the Go module proxy at the release a plan asks (see Image), or
// Debian's etcd-server (source: debian) for the releases before v3.5.
package etcd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
)

// Ports every member listens on.
const (
	ClientPort = 2379
	PeerPort   = 2380
)

// dataDir is each member's data directory (containers.Spec.DataDir).
const dataDir = "/var/lib/etcd"

// readyLimit bounds Start's wait for a leader; an election normally takes
// a few seconds.
const readyLimit = 30 * time.Second

func init() { targets.Register("etcd", Kind{}) }

// Kind is etcd, the kind of cluster: 3 or 5 members.
type Kind struct{}

// DefaultNodes is the smallest cluster that survives losing a member.
func (Kind) DefaultNodes() int { return 3 }

// Params are the target's fields in a plan.
type Params struct {
	// Source is where etcd comes from: module (built from the Go module
	// proxy: v3.4.13 and any release from v3.5 on; the default) or debian
	// (Debian's etcd-server, which has v3.3 and v3.4 too).
	Source string `yaml:"source" json:"source"`
}

// Cluster is an etcd cluster as a plan asks for it.
type Cluster struct {
	nodes int
	// version is the release to build (module) or the plan's, "" for
	// the default (debian); source is module or debian.
	version, source string
	// flags are the etcd flags the members run with beyond those that
	// make the cluster (Settings).
	flags map[string]string
}

// The capabilities of an etcd cluster that runs and faults find by
// interface, stated here so that a method renamed on one side alone
// breaks the build rather than going unused.
var (
	_ targets.Configured   = Cluster{}
	_ targets.Versioner    = Cluster{}
	_ nemesis.Leaderer     = Cluster{}
	_ nemesis.Administered = Cluster{}
	_ nemesis.Membered     = Cluster{}
	_ nemesis.Disked       = Cluster{}
)

// Bind accepts 3 or 5 members of a version the source has, and the flags
// a plan may set.
func (Kind) Bind(s *targets.Spec[Params]) (targets.Target, error) {
	if s.Nodes != 3 && s.Nodes != 5 {
		return nil, plans.Fieldf("nodes", "%d: an etcd cluster here has 3 or 5 members", s.Nodes)
	}
	s.Params.Source = cmp.Or(s.Params.Source, "module")
	c := Cluster{nodes: s.Nodes, version: s.Version, source: s.Params.Source}
	var err error
	switch c.source {
	case "module":
		c.version, err = normVersion(s.Version)
	case "debian":
		_, err = Debian.Suite(debianVersion(s.Version))
	default:
		return nil, plans.Fieldf("source", "%q: expected module or debian", c.source)
	}
	if err != nil {
		return nil, plans.Fieldf("version", "%v", err)
	}
	c.flags, err = targets.Settings(nil, s.Config, flags, []string{"name", "data-dir", "listen-client-urls",
		"advertise-client-urls", "listen-peer-urls", "initial-advertise-peer-urls",
		"initial-cluster", "initial-cluster-state", "initial-cluster-token"})
	return c, err
}

// flags are the etcd flags a plan may set (without the leading "--"):
// Raft's timing, snapshots and compaction, limits, and the experimental
// switches that robustness tests turn.
var flags = []string{
	"snapshot-count", "heartbeat-interval", "election-timeout", "pre-vote", "strict-reconfig-check",
	"quota-backend-bytes", "max-request-bytes", "max-txn-ops", "max-snapshots", "max-wals",
	"auto-compaction-mode", "auto-compaction-retention", "unsafe-no-fsync",
	"backend-batch-interval", "backend-batch-limit", "snapshot-catchup-entries",
	"initial-election-tick-advance", "grpc-keepalive-min-time", "grpc-keepalive-interval",
	"grpc-keepalive-timeout", "log-level", "enable-v2", "experimental-*",
}

// Settings are the flags the members run with beyond those that make the
// cluster: the plan's alone (etcd's defaults otherwise).
func (c Cluster) Settings() map[string]string { return c.flags }

// Start runs one member per node, etcd itself as PID 1 (so a signal to the
// container is a signal to etcd), and returns once every member answers and
// all agree on a leader.
func (c Cluster) Start(ctx context.Context, run *containers.Run, image string) ([]cluster.Node, error) {
	// Started together: each member waits for the others anyway, and one
	// container start takes a good fraction of a second.
	nodes, errs := make([]cluster.Node, c.nodes), make([]error, c.nodes)
	var wg sync.WaitGroup
	for i := range nodes {
		name := fmt.Sprintf("n%d", i+1)
		wg.Go(func() {
			ct, err := run.Start(ctx, containers.Spec{
				Name: name, Role: "node", Image: image,
				Cmd:     command(name, c.nodes, "chaos-"+run.ID(), c.flags),
				DataDir: dataDir,
			})
			nodes[i], errs[i] = cluster.Node{Container: ct, Addr: net.JoinHostPort(name, strconv.Itoa(ClientPort))}, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := targets.WaitReady(ctx, "etcd cluster", readyLimit, func(ctx context.Context) error {
		return ready(ctx, nodes)
	}); err != nil {
		return nil, err
	}
	return nodes, nil
}

// command is member name's etcd command line in a cluster of n. Members
// are addressed by host name, which the run's network resolves and which,
// unlike the IP, survives a restart. The same command restarts a killed
// member: with a data directory present, etcd ignores the --initial-* flags.
// A shell in front of etcd reads the harness's note (rejoinNote): while it
// is there, the member wipes its data and joins the running cluster as a
// new member (a member replaced, see AddMember), at every start until it
// has joined (Joined removes the note), with the cluster's members as the
// note lists them (a joining member must name them all, and no other);
// then it execs etcd, which is the container's main process from then
// on, as signals need.
//
// Debian's etcd is /usr/bin/etcd and the module build /usr/local/bin/etcd:
// the image has one of the two, on the PATH.
func command(name string, n int, token string, cfg map[string]string) []string {
	peers := make([]string, n)
	for i := range peers {
		peers[i] = fmt.Sprintf("n%d=%s", i+1, peerURL(fmt.Sprintf("n%d", i+1)))
	}
	var set []string
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		set = append(set, "--"+k+"="+cfg[k])
	}
	rejoin := fmt.Sprintf(`if [ -e %[1]s ]; then rm -rf %[2]s/member && exec "$@" --initial-cluster-state existing --initial-cluster "$(cat %[1]s)"; fi; exec "$@" --initial-cluster-state new`, rejoinNote, dataDir)
	return append([]string{"sh", "-c", rejoin, "sh", "etcd",
		"--name", name,
		"--data-dir", dataDir,
		"--listen-client-urls", fmt.Sprintf("http://0.0.0.0:%d", ClientPort),
		"--advertise-client-urls", fmt.Sprintf("http://%s:%d", name, ClientPort),
		"--listen-peer-urls", fmt.Sprintf("http://0.0.0.0:%d", PeerPort),
		"--initial-advertise-peer-urls", peerURL(name),
		"--initial-cluster", strings.Join(peers, ","),
		"--initial-cluster-token", token,
	}, set...)
}

func peerURL(name string) string { return fmt.Sprintf("http://%s:%d", name, PeerPort) }

// rejoinNote is the file the harness puts in a removed member's container
// before it starts it again as a new member (command).
const rejoinNote = "/chaos-rejoin"

// ready checks that every member answers, knows the same leader, and
// serves a linearizable read (which goes through that leader).
func ready(ctx context.Context, nodes []cluster.Node) error {
	sts, errs := ask(ctx, nodes, func(ctx context.Context, cli *clientv3.Client) (*clientv3.StatusResponse, error) {
		st, err := status(ctx, cli)
		if err != nil {
			return nil, err
		}
		if _, err := cli.Get(ctx, "chaos-ready"); err != nil {
			return nil, err
		}
		return st, nil
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, st := range sts {
		switch {
		case st.Leader == 0:
			return fmt.Errorf("%s has no leader", nodes[i].Container.Name)
		case st.Leader != sts[0].Leader:
			return fmt.Errorf("%s and %s see different leaders", nodes[0].Container.Name, nodes[i].Container.Name)
		}
	}
	return nil
}

// Leader is the member the freshest view (highest Raft term) names leader:
// a deposed leader cut off from the others may still report an older term.
func (Cluster) Leader(ctx context.Context, nodes []cluster.Node) (cluster.Node, error) {
	sts, errs := ask(ctx, nodes, status)
	best := -1
	for i, st := range sts {
		if st != nil && st.Leader != 0 && (best < 0 || st.RaftTerm > sts[best].RaftTerm) {
			best = i
		}
	}
	if best < 0 {
		return cluster.Node{}, fmt.Errorf("etcd: no member knows a leader: %w", errors.Join(errs...))
	}
	id := sts[best].Leader
	for i, st := range sts {
		if st != nil && st.Header.MemberId == id {
			return nodes[i], nil
		}
	}
	// The leader did not answer us itself (paused, say): its name, which is
	// its node's name, is in the member list.
	ml, errs := ask(ctx, nodes[best:best+1], func(ctx context.Context, cli *clientv3.Client) (*clientv3.MemberListResponse, error) {
		return cli.MemberList(ctx, clientv3.WithSerializable())
	})
	if errs[0] != nil {
		return cluster.Node{}, fmt.Errorf("etcd: leader %x: %w", id, errs[0])
	}
	for _, m := range ml[0].Members {
		for _, n := range nodes {
			if m.ID == id && m.Name == n.Container.Name {
				return n, nil
			}
		}
	}
	return cluster.Node{}, fmt.Errorf("etcd: leader %x is none of the nodes", id)
}

// ServerVersion is the server version the member reports (Status).
func (Cluster) ServerVersion(ctx context.Context, n cluster.Node) (string, error) {
	sts, errs := ask(ctx, []cluster.Node{n}, status)
	if errs[0] != nil {
		return "", errs[0]
	}
	return sts[0].Version, nil
}

// status is the member's own view: its ID, the leader's, the Raft term.
func status(ctx context.Context, cli *clientv3.Client) (*clientv3.StatusResponse, error) {
	return cli.Status(ctx, cli.Endpoints()[0])
}

// ask runs f against every node at once, each through a client of its own
// bound to that node alone and with a short deadline, so that one paused
// member delays the answer by no more than that.
func ask[T any](ctx context.Context, nodes []cluster.Node, f func(context.Context, *clientv3.Client) (T, error)) ([]T, []error) {
	res, errs := make([]T, len(nodes)), make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			// A new client each time: a fresh connection is tried at once,
			// where a kept one would sit out gRPC's reconnect backoff.
			cli, err := clientv3.New(clientv3.Config{
				Endpoints:   []string{net.JoinHostPort(n.Container.IP, strconv.Itoa(ClientPort))},
				DialTimeout: time.Second,
				Logger:      zap.NewNop(),
			})
			if err == nil {
				res[i], err = f(ctx, cli)
				cli.Close()
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", n.Container.Name, err)
			}
		})
	}
	wg.Wait()
	return res, errs
}

// FileClasses are a member's files: its write-ahead log's segments, its
// raft snapshots and its bbolt database, which holds the keys.
func (Cluster) FileClasses() map[string][]string {
	return map[string][]string{
		"wal":      {"member/wal/*.wal"},
		"snapshot": {"member/snap/*.snap"},
		"db":       {"member/snap/db"},
	}
}

// Actions are etcd's maintenance actions a fault may run.
func (Cluster) Actions() []string { return []string{"compact", "defrag"} }

// Act compacts the key-value history up to the member's current revision
// (cluster-wide: the compaction goes through Raft), or defragments the
// member's database, which blocks its reads and writes meanwhile.
func (Cluster) Act(ctx context.Context, n cluster.Node, action string) (string, error) {
	res, errs := ask(ctx, []cluster.Node{n}, func(ctx context.Context, cli *clientv3.Client) (string, error) {
		switch action {
		case "compact":
			st, err := status(ctx, cli)
			if err != nil {
				return "", err
			}
			if _, err := cli.Compact(ctx, st.Header.Revision); err != nil {
				return "", err
			}
			return fmt.Sprintf("compacted to revision %d", st.Header.Revision), nil
		case "defrag":
			if _, err := cli.Defragment(ctx, cli.Endpoints()[0]); err != nil {
				return "", err
			}
			return "defragmented", nil
		}
		return "", fmt.Errorf("etcd has no action %q", action)
	})
	return res[0], errs[0]
}
