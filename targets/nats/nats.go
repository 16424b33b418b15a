// Package nats starts a NATS JetStream cluster, its servers built from the
// Go module proxy at the version a plan asks, one server per node, the
// server itself as each container's PID 1.
package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/images"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
)

// Ports every server listens on.
const (
	ClientPort  = 4222
	ClusterPort = 6222 // routes between the servers
	MonitorPort = 8222 // the HTTP monitoring endpoint: /healthz, /jsz, /varz
)

// storeDir is each server's JetStream store (containers.Spec.DataDir).
const storeDir = "/srv/nats"

// readyLimit bounds Start's wait for a cluster whose JetStream has a meta
// leader known to every server.
const readyLimit = 60 * time.Second

// recipeVersion is hashed into image tags (images.GoProgram.Recipe).
const recipeVersion = 1

func init() { targets.Register("nats", Kind{}) }

// Kind is NATS JetStream, the kind of cluster: 3 or 5 servers.
type Kind struct{}

// DefaultNodes is the smallest cluster whose R3 streams survive losing a
// server.
func (Kind) DefaultNodes() int { return 3 }

// Cluster is a NATS JetStream cluster as a plan asks for it.
type Cluster struct {
	nodes   int
	version string // normalized: v2.MINOR.PATCH
	// settings are the server settings the servers run with (Settings).
	settings map[string]string
}

// The capabilities of a NATS cluster that runs and faults find by
// interface, stated here so that a method renamed on one side alone
// breaks the build rather than going unused.
var (
	_ targets.Configured    = Cluster{}
	_ targets.Versioner     = Cluster{}
	_ targets.Released      = Cluster{}
	_ nemesis.Leaderer      = Cluster{}
	_ nemesis.Membered      = Cluster{}
	_ nemesis.RejoinDelayed = Cluster{}
	_ nemesis.Disked        = Cluster{}
)

// Bind accepts 3 or 5 servers of a v2 version, and the settings a plan
// may set.
func (Kind) Bind(s *targets.Spec[struct{}]) (targets.Target, error) {
	if s.Nodes != 3 && s.Nodes != 5 {
		return nil, plans.Fieldf("nodes", "%d: a JetStream cluster here has 3 or 5 servers", s.Nodes)
	}
	v, err := normVersion(s.Version)
	if err != nil {
		return nil, plans.Fieldf("version", "%v", err)
	}
	cfg, err := targets.Settings(nil, s.Config, slices.Sorted(maps.Keys(settings)),
		[]string{"server_name", "listen", "http", "store_dir", "cluster", "routes", "jetstream", "accounts", "system_account"})
	return Cluster{nodes: s.Nodes, version: v, settings: cfg}, err
}

// FileClasses are a server's JetStream files: the message blocks of its
// streams, and the log blocks and snapshots of its Raft groups (the
// meta group's and each replicated stream's).
func (Cluster) FileClasses() map[string][]string {
	return map[string][]string{
		"blocks":    {"jetstream/*/streams/*/msgs/*.blk"},
		"raft":      {"jetstream/$SYS/_js_/*/msgs/*.blk"},
		"snapshots": {"jetstream/$SYS/_js_/*/snapshots/*"},
	}
}

// program is nats-server version, built from its module's main package.
func program(version string) images.GoProgram {
	const module = "github.com/nats-io/nats-server/v2"
	return images.GoProgram{Name: "nats-server", Version: version, Recipe: recipeVersion, Module: module + "@" + version, Package: module}
}

// Image is chaos's node image with nats-server version.
func (c Cluster) Image(ctx context.Context, cli *client.Client, progress io.Writer) (string, error) {
	return program(c.version).Image(ctx, cli, progress)
}

// settings are the server settings a plan may set, each with the block of
// the configuration it goes in ("" for the top level). A key not listed
// would be refused by the server only at start, if at all.
var settings = map[string]string{
	"sync_interval": "jetstream", "max_memory_store": "jetstream", "max_file_store": "jetstream",
	"max_outstanding_catchup": "jetstream",
	"write_deadline":          "", "ping_interval": "", "ping_max": "", "max_payload": "", "max_pending": "",
	"lame_duck_duration": "",
}

// Settings are the settings the servers run with: the plan's, over none
// of the target's own (NATS's defaults).
func (c Cluster) Settings() map[string]string { return c.settings }

// Start runs one server per node and returns once every one of them has
// JetStream ready and knows the meta leader.
func (c Cluster) Start(ctx context.Context, run *containers.Run, image string) ([]cluster.Node, error) {
	nodes := make([]cluster.Node, c.nodes)
	err := targets.Each(len(nodes), func(i int) error {
		name := fmt.Sprintf("n%d", i+1)
		ct, err := run.Start(ctx, containers.Spec{
			Name: name, Role: "node", Image: image, Cmd: command, DataDir: storeDir,
			Env: []string{"NATS_CFG=" + config(name, c.nodes, c.settings)},
		})
		nodes[i] = cluster.Node{Container: ct, Addr: net.JoinHostPort(name, strconv.Itoa(ClientPort))}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := targets.WaitReady(ctx, "nats cluster", readyLimit, func(ctx context.Context) error {
		return ready(ctx, nodes)
	}); err != nil {
		return nil, err
	}
	return nodes, nil
}

// config is server name's configuration in a cluster of n, with the
// settings in cfg, each in its block. Routes name the servers by host
// name, which the run's network resolves and which, unlike the IP,
// survives a restart; a server retries a route to a peer not started yet.
func config(name string, n int, cfg map[string]string) string {
	blocks := map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		blocks[settings[k]] = append(blocks[settings[k]], fmt.Sprintf("%s: %s", k, cfg[k]))
	}
	var routes []string
	for i := 1; i <= n; i++ {
		routes = append(routes, fmt.Sprintf("nats-route://n%d:%d", i, ClusterPort))
	}
	lines := append([]string{
		"server_name: " + name,
		fmt.Sprintf("listen: 0.0.0.0:%d", ClientPort),
		fmt.Sprintf("http: 0.0.0.0:%d", MonitorPort),
		fmt.Sprintf("accounts { $SYS { users: [{user: %s, password: %s}] } }", sysUser, sysPassword),
	}, blocks[""]...)
	lines = append(lines, "jetstream {", "  store_dir: "+storeDir)
	for _, l := range blocks["jetstream"] {
		lines = append(lines, "  "+l)
	}
	lines = append(lines, "}",
		"cluster {",
		"  name: chaos",
		fmt.Sprintf("  listen: 0.0.0.0:%d", ClusterPort),
		"  routes: ["+strings.Join(routes, ", ")+"]",
		"}")
	return strings.Join(lines, "\n") + "\n"
}

// command writes the configuration and execs the server so that it is PID
// 1 and a signal sent to the container hits it. It is idempotent: the kill
// fault restarts the same container with it, and the store is still there.
var command = []string{"sh", "-c", `set -e
mkdir -p ` + storeDir + `
printf '%s' "$NATS_CFG" > /etc/nats.conf
exec nats-server -c /etc/nats.conf`}

// jsz is what /jsz says of JetStream on one server: its meta group, and
// with streams asked, each stream's group.
type jsz struct {
	Meta *struct {
		Leader   string `json:"leader"`
		Replicas []struct {
			Name    string `json:"name"`
			Current bool   `json:"current"`
		} `json:"replicas"` // the leader's view of the others
	} `json:"meta_cluster"`
	Accounts []struct {
		Streams []struct {
			Name    string `json:"name"`
			Cluster *struct {
				Leader string `json:"leader"`
			} `json:"cluster"`
		} `json:"stream_detail"`
	} `json:"account_details"`
}

// ready checks that every server is healthy with JetStream and that all
// name one meta leader.
func ready(ctx context.Context, nodes []cluster.Node) error {
	var errs []error
	leaders := map[string]bool{}
	for _, n := range nodes {
		var health struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		}
		if err := get(ctx, n, "/healthz", &health); err != nil {
			errs = append(errs, err)
			continue
		}
		if health.Status != "ok" {
			errs = append(errs, fmt.Errorf("%s: healthz %s: %s", n.Container.Name, health.Status, health.Error))
			continue
		}
		var j jsz
		if err := get(ctx, n, "/jsz", &j); err != nil {
			errs = append(errs, err)
			continue
		}
		if j.Meta == nil || j.Meta.Leader == "" {
			errs = append(errs, fmt.Errorf("%s knows no JetStream meta leader", n.Container.Name))
			continue
		}
		leaders[j.Meta.Leader] = true
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(leaders) != 1 {
		return fmt.Errorf("the servers name several meta leaders: %v", slices.Sorted(maps.Keys(leaders)))
	}
	return nil
}

// Leader is the leader of the workload's stream (a KV bucket is one), the
// only stream the cluster holds, as a majority of the servers name it;
// before there is one, JetStream's meta leader. A server cut off from the
// others may still name the old leader, and a paused one does not answer:
// without a majority for one name, the leader is not known.
func (Cluster) Leader(ctx context.Context, nodes []cluster.Node) (cluster.Node, error) {
	answers := make([]jsz, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			errs[i] = get(ctx, n, "/jsz?accounts=true&streams=true", &answers[i])
		})
	}
	wg.Wait()
	// Votes for the stream's leader, and for the meta leader.
	stream, meta := map[string]int{}, map[string]int{}
	for i, j := range answers {
		if errs[i] != nil {
			continue
		}
		if name := j.streamLeader(); name != "" {
			stream[name]++
		}
		if j.Meta != nil && j.Meta.Leader != "" {
			meta[j.Meta.Leader]++
		}
	}
	votes := stream
	if len(stream) == 0 {
		votes = meta
	}
	best, most := "", 0
	for _, name := range slices.Sorted(maps.Keys(votes)) {
		if votes[name] > most {
			best, most = name, votes[name]
		}
	}
	if 2*most <= len(nodes) {
		return cluster.Node{}, fmt.Errorf("nats: no leader named by a majority of the servers: %v (%v)", votes, errors.Join(errs...))
	}
	for _, n := range nodes {
		if n.Container.Name == best {
			return n, nil
		}
	}
	return cluster.Node{}, fmt.Errorf("nats: the servers name %q as leader, not one of those asked", best)
}

// streamLeader is the leader of the one replicated stream j lists, "" if
// it lists none or several.
func (j jsz) streamLeader() string {
	leader, streams := "", 0
	for _, a := range j.Accounts {
		for _, s := range a.Streams {
			streams++
			if s.Cluster != nil {
				leader = s.Cluster.Leader
			}
		}
	}
	if streams != 1 {
		return ""
	}
	return leader
}

// ServerVersion is the server version the node reports (/varz).
func (Cluster) ServerVersion(ctx context.Context, n cluster.Node) (string, error) {
	var v struct {
		Version string `json:"version"`
	}
	err := get(ctx, n, "/varz", &v)
	return v.Version, err
}

// get asks n's monitoring endpoint for path and decodes the JSON answer
// into v, within a second: a paused server delays it by no more.
func get(ctx context.Context, n cluster.Node, path string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	url := "http://" + net.JoinHostPort(n.Container.IP, strconv.Itoa(MonitorPort)) + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Container.Name, err)
	}
	defer resp.Body.Close()
	// /healthz answers 503 with its JSON while JetStream is not ready.
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("%s: %s: %s: %w", n.Container.Name, path, resp.Status, err)
	}
	return nil
}
