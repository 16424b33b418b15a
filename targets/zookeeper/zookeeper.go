// Package zookeeper starts a ZooKeeper ensemble from Debian's zookeeper
// package (the version a plan asks, from the suite that carries it), one
// server per node, the JVM itself as each container's PID 1.
package zookeeper

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
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
	ClientPort   = 2181
	QuorumPort   = 2888 // followers to the leader
	ElectionPort = 3888
)

// dataDir holds each server's snapshots and transaction log (dataLogDir is
// not set apart), and its myid (containers.Spec.DataDir).
const dataDir = "/srv/zookeeper"

// readyLimit bounds Start's wait for an ensemble with a leader: 2 to 4 s
// usually, but up to 19 s was seen with the machine's two cores loaded.
const readyLimit = 60 * time.Second

func init() { targets.Register("zookeeper", Kind{}) }

// Kind is ZooKeeper, the kind of cluster: an ensemble of 3 or 5 servers.
type Kind struct{}

// DefaultNodes is the smallest ensemble that survives losing a server.
func (Kind) DefaultNodes() int { return 3 }

// Ensemble is a ZooKeeper ensemble as a plan asks for it.
type Ensemble struct {
	nodes   int
	version string // the plan's, "" for the default
	// settings are the zoo.cfg settings the servers run with.
	settings map[string]string
}

// The capabilities of an ensemble that runs and faults find by
// interface, stated here so that a method renamed on one side alone
// breaks the build rather than going unused.
var (
	_ targets.Configured = Ensemble{}
	_ targets.Versioner  = Ensemble{}
	_ nemesis.Leaderer   = Ensemble{}
	_ nemesis.Membered   = Ensemble{}
	_ nemesis.Disked     = Ensemble{}
)

// Bind accepts 3 or 5 servers of a version a suite carries, and the
// zoo.cfg settings a plan may set.
func (Kind) Bind(s *targets.Spec[struct{}]) (targets.Target, error) {
	if s.Nodes != 3 && s.Nodes != 5 {
		return nil, plans.Fieldf("nodes", "%d: an ensemble here has 3 or 5 servers", s.Nodes)
	}
	if _, err := Releases.Suite(s.Version); err != nil {
		return nil, plans.Fieldf("version", "%v", err)
	}
	if s.Config["reconfigEnabled"] == "true" && strings.HasPrefix(s.Version, "3.4.") {
		return nil, plans.Fieldf("config.reconfigEnabled", "ZooKeeper %s has no dynamic reconfiguration (3.5 and later)", s.Version)
	}
	// Short ticks make elections and failure detection take seconds: a
	// follower unheard for syncLimit ticks (2.5 s) is dropped.
	cfg, err := targets.Settings(map[string]string{"tickTime": "500", "initLimit": "10", "syncLimit": "5"},
		s.Config, settings, []string{"dataDir", "dataLogDir", "clientPort", "server.*", "4lw.commands.whitelist", "admin.enableServer", "quorumListenOnAllIPs"})
	return Ensemble{nodes: s.Nodes, version: s.Version, settings: cfg}, err
}

// FileClasses are a server's transaction logs and snapshots.
func (Ensemble) FileClasses() map[string][]string {
	return map[string][]string{
		"txnlog":   {"version-2/log.*"},
		"snapshot": {"version-2/snapshot.*"},
	}
}

// Releases are the ZooKeeper versions Debian suites carry. bookworm's
// brings OpenJDK 17 (default-jre, the full runtime: most of the image's
// size), bullseye's OpenJDK 11, trixie's OpenJDK 21.
var Releases = images.Releases{Server: "zookeeper", Default: "3.8.0", Suites: map[string]string{
	"3.4.13": "bullseye", "3.8.0": "bookworm", "3.9.3": "trixie",
}}

// Image is Debian's zookeeper of the version asked.
func (e Ensemble) Image(ctx context.Context, cli *client.Client, progress io.Writer) (string, error) {
	r, err := Releases.Recipe("zookeeper", e.version, "zookeeper")
	if err != nil {
		return "", err
	}
	return images.Ensure(ctx, cli, r, progress)
}

// ChangesMembers refuses a membership change unless the servers run with
// dynamic reconfiguration, which a plan turns on.
func (e Ensemble) ChangesMembers() error {
	if e.settings["reconfigEnabled"] != "true" {
		return plans.PlanFieldf("target.config.reconfigEnabled", `membership changes need "true": ZooKeeper's dynamic reconfiguration`)
	}
	return nil
}

// settings are the zoo.cfg lines a plan may set; ZooKeeper takes any
// other key as a system property, so a misspelt one would pass unseen.
var settings = []string{
	"tickTime", "initLimit", "syncLimit", "forceSync", "globalOutstandingLimit",
	"maxClientCnxns", "snapCount", "preAllocSize", "minSessionTimeout", "maxSessionTimeout",
	"autopurge.snapRetainCount", "autopurge.purgeInterval", "leaderServes", "cnxTimeout",
	"syncEnabled", "fsync.warningthresholdms", "snapSizeLimitInKb", "txnLogSizeLimitInKb",
	"commitLogCount", "connectToLearnerMasterLimit", "localSessionsEnabled",
	"localSessionsUpgradingEnabled", "maxCnxns", "electionPortBindRetry", "snapshot.trust.empty",
	"reconfigEnabled",
}

// Settings are the zoo.cfg settings the servers run with.
func (e Ensemble) Settings() map[string]string { return e.settings }

// Start runs one server per node and returns once every one of them is
// serving as leader or follower.
func (e Ensemble) Start(ctx context.Context, run *containers.Run, image string) ([]cluster.Node, error) {
	// Containers are started at once: one by one, Docker took 1.5 s each
	// on a busy machine.
	nodes := make([]cluster.Node, e.nodes)
	err := targets.Each(len(nodes), func(i int) error {
		name := fmt.Sprintf("n%d", i+1)
		c, err := run.Start(ctx, containers.Spec{
			Name: name, Role: "node", Image: image,
			Cmd: command, DataDir: dataDir,
			Env: []string{"ZK_MYID=" + strconv.Itoa(i+1), "ZK_CFG=" + config(e.nodes, e.settings), "ZK_JVMFLAGS=" + jvmFlags(e.settings)},
		})
		nodes[i] = cluster.Node{Container: c, Addr: net.JoinHostPort(name, strconv.Itoa(ClientPort))}
		return err
	})
	if err != nil {
		return nil, err
	}
	// Only now does every server's name resolve: let the JVMs go.
	err = targets.Each(len(nodes), func(i int) error {
		_, err := run.Exec(ctx, nodes[i].Container, "touch", startedMark)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := targets.WaitReady(ctx, "zookeeper ensemble", readyLimit, func(ctx context.Context) error {
		return ready(ctx, nodes)
	}); err != nil {
		return nil, err
	}
	return nodes, nil
}

// config is the configuration of every server of an ensemble of n, with
// settings. Servers are addressed by host name, which the run's network
// resolves and which, unlike the IP, survives a restart.
func config(n int, settings map[string]string) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		lines = append(lines, k+"="+settings[k])
	}
	lines = append(lines,
		"dataDir="+dataDir,
		"clientPort="+strconv.Itoa(ClientPort),
		// Readiness and Leader ask srvr; other commands stay refused.
		"4lw.commands.whitelist=srvr,mntr,ruok,stat",
		// Its Jetty would only take memory and a port.
		"admin.enableServer=false",
		// Bind the quorum ports on every address, not just the one the own
		// host name resolved to at start.
		"quorumListenOnAllIPs=true",
	)
	for i := 1; i <= n; i++ {
		lines = append(lines, fmt.Sprintf("server.%d=n%d:%d:%d", i, i, QuorumPort, ElectionPort))
	}
	return strings.Join(lines, "\n") + "\n"
}

// startedMark is created in every node once all have started. ZooKeeper
// resolves every server's name as it reads its configuration, and the
// run's DNS takes 20 s to give up on the name of a container not started
// yet, which made a 5-server ensemble take up to 26 s to come up.
const startedMark = "/etc/zookeeper/peers-started"

// command writes myid and the configuration, waits for startedMark, then
// execs the JVM so that it is PID 1 and a signal sent to the container hits
// ZooKeeper itself. It is idempotent: the kill fault restarts the same
// container with it, and the mark and the data directory are still there.
// The class path is explicit because /usr/share/java holds five SLF4J
// bindings; this one logs through Debian's log4j.properties to the
// console, that is, the container log. slf4j-api is named because 3.4's
// jar, unlike later ones, does not list it in its manifest.
var command = []string{"sh", "-c", `set -e
mkdir -p ` + dataDir + `
echo "$ZK_MYID" > ` + dataDir + `/myid
printf '%s' "$ZK_CFG" > /etc/zookeeper/chaos.cfg
while [ ! -e ` + startedMark + ` ]; do sleep 0.1; done
exec java $ZK_JVMFLAGS -Xms64m -Xmx256m -XX:+UseSerialGC \
	-Dzookeeper.root.logger=INFO,CONSOLE \
	-cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar \
	org.apache.zookeeper.server.quorum.QuorumPeerMain /etc/zookeeper/chaos.cfg`}

// jvmFlags are the JVM's flags beyond the fixed ones: with dynamic
// reconfiguration, ACLs are not checked, so that the harness's session
// may reconfigure the ensemble without a superuser (the workloads set no
// ACLs).
func jvmFlags(cfg map[string]string) string {
	if cfg["reconfigEnabled"] == "true" {
		return "-Dzookeeper.skipACL=yes"
	}
	return ""
}

// ready checks that every server serves, as leader or follower (not
// standalone), and that exactly one of them leads.
func ready(ctx context.Context, nodes []cluster.Node) error {
	sts, errs := ask(ctx, nodes)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	leaders := 0
	for i, st := range sts {
		switch st.mode {
		case "leader":
			leaders++
		case "follower":
		default:
			return fmt.Errorf("%s is in mode %s", nodes[i].Container.Name, st.mode)
		}
	}
	if leaders != 1 {
		return fmt.Errorf("%d servers report leading", leaders)
	}
	return nil
}

// Leader is the server that reports leading (srvr's "Mode: leader"). A
// leader cut off from the others keeps saying so until it notices (after
// syncLimit ticks): of two, the current one has applied the higher zxid,
// whose top 32 bits are the epoch. Before the new leader has applied any
// transaction of its epoch the two tie, and which leads is unknown.
func (Ensemble) Leader(ctx context.Context, nodes []cluster.Node) (cluster.Node, error) {
	sts, errs := ask(ctx, nodes)
	best, tie := -1, false
	for i, st := range sts {
		switch {
		case errs[i] != nil || st.mode != "leader":
		case best < 0 || st.zxid > sts[best].zxid:
			best, tie = i, false
		case st.zxid == sts[best].zxid:
			tie = true
		}
	}
	if best < 0 {
		return cluster.Node{}, fmt.Errorf("zookeeper: no server reports leading: %w", errors.Join(errs...))
	}
	if tie {
		return cluster.Node{}, fmt.Errorf("zookeeper: several servers report leading at zxid %#x", sts[best].zxid)
	}
	return nodes[best], nil
}

// status is what srvr reports of one server.
type status struct {
	mode    string // leader, follower, standalone, ...
	zxid    uint64 // last transaction seen: epoch<<32 | counter
	version string // the server's own, with its build
}

// ServerVersion is the server version the node reports (srvr).
func (Ensemble) ServerVersion(ctx context.Context, n cluster.Node) (string, error) {
	sts, errs := ask(ctx, []cluster.Node{n})
	return sts[0].version, errs[0]
}

// ask runs srvr on every node at once, each with a short deadline, so that a
// paused server delays the answer by no more than that.
func ask(ctx context.Context, nodes []cluster.Node) ([]status, []error) {
	sts, errs := make([]status, len(nodes)), make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			var err error
			sts[i], err = srvr(ctx, net.JoinHostPort(n.Container.IP, strconv.Itoa(ClientPort)))
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", n.Container.Name, err)
			}
		})
	}
	wg.Wait()
	return sts, errs
}

// srvr sends the four-letter command srvr to addr and parses its answer,
// "Key: value" lines; the server closes the connection after answering.
func srvr(ctx context.Context, addr string) (status, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return status{}, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if _, err := io.WriteString(conn, "srvr"); err != nil {
		return status{}, fmt.Errorf("srvr: %w", err)
	}
	out, err := io.ReadAll(conn)
	if err != nil {
		return status{}, fmt.Errorf("srvr: %w", err)
	}
	var st status
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ": ")
		switch k {
		case "Mode":
			st.mode = v
		case "Zxid":
			st.zxid, _ = strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
		case "Zookeeper version":
			// "3.9.3-${mvngit.commit.id}, built on 2026-03-08 16:19 UTC":
			// the build's date and Debian's unexpanded placeholder say
			// nothing of the version.
			v, _, _ = strings.Cut(v, ", built on")
			st.version = strings.TrimSuffix(v, "-${mvngit.commit.id}")
		}
	}
	if st.mode == "" {
		// Not serving (no quorum yet), or srvr not whitelisted: say what it said.
		return status{}, fmt.Errorf("srvr: %q", strings.TrimSpace(string(out)))
	}
	return st, nil
}
