package redis

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
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
)

// Sentinel names and ports.
const (
	SentinelPort = 26379
	// MasterName is the name the sentinels monitor the primary under.
	MasterName = "chaos"
	// sentinels is how many sentinels watch the servers: a majority of
	// them must agree before a failover.
	sentinels = 3
	// probeKey is the key the observer writes to learn whether a server
	// that claims to be primary takes writes.
	probeKey = "chaos:probe"
)

func init() { targets.Register("redis-sentinel", SentinelKind{}) }

// SentinelKind is Redis with asynchronous replication and automatic
// failover: a primary (n1 at start), replicas (n2, ...) and three
// sentinels (s1-s3), each in its own container. Clients find the primary
// through the sentinels, so only the sentinels have a client address.
type SentinelKind struct{}

// DefaultNodes is one primary and two replicas.
func (SentinelKind) DefaultNodes() int { return 3 }

// Sentinel is a primary, its replicas and their sentinels, as a plan asks
// for them.
type Sentinel struct{ servers }

// The capabilities of a primary, its replicas and their sentinels that
// runs and faults find by interface, stated here so that a method
// renamed on one side alone breaks the build rather than going unused.
var (
	_ targets.Configured   = Sentinel{}
	_ targets.Versioner    = Sentinel{}
	_ targets.Discovered   = Sentinel{}
	_ targets.RoleReporter = Sentinel{}
	_ nemesis.Leaderer     = Sentinel{}
	_ nemesis.Disked       = Sentinel{}
)

// Bind accepts a primary and at least one replica, of a server and
// version a Debian suite carries, and the directives a plan may set: the
// data servers', and the sentinels' own, as "sentinel.NAME". A primary
// unheard for 2 s is down, so a failover takes seconds.
// min-replicas-to-write is 0, Redis's default: nothing stops a primary
// cut off from its replicas from taking writes, which is what the
// Sentinel plans put to the test.
func (SentinelKind) Bind(s *targets.Spec[Params]) (targets.Target, error) {
	if s.Nodes < 2 {
		return nil, plans.Fieldf("nodes", "%d: a primary needs at least one replica", s.Nodes)
	}
	srv, err := bind(s, map[string]string{
		"sentinel.down-after-milliseconds": "2000",
		"sentinel.failover-timeout":        "10000",
		"sentinel.parallel-syncs":          "1",
	})
	if err != nil {
		return nil, err
	}
	if v := cmp.Or(s.Version, distributions[srv.server].releases.Default); srv.server == "redis" && before62(v) {
		return nil, plans.Fieldf("version", "redis %s: the sentinels here find the servers by name, which Sentinel does from Redis 6.2 on (resolve-hostnames); %s runs as the redis target", v, v)
	}
	return Sentinel{srv}, nil
}

// Service is the name the sentinels know the primary by, which clients
// ask them for (targets.Discovered).
func (Sentinel) Service() string { return MasterName }

// before62 says whether Redis version v ("6.0.16") is older than 6.2.
func before62(v string) bool {
	var major, minor int
	fmt.Sscanf(v, "%d.%d", &major, &minor)
	return major < 6 || major == 6 && minor < 2
}

// dataDir is a data server's working directory, where it keeps its
// append-only file and snapshot (containers.Spec.DataDir).
const dataDir = "/var/lib/redis"

// FileClasses are a data server's append-only files (one, or Redis 7's
// directory of them) and its RDB snapshot.
func (Sentinel) FileClasses() map[string][]string {
	return map[string][]string{
		"aof": {"appendonly.aof*", "appendonlydir/*"},
		"rdb": {"dump.rdb"},
	}
}

// Start runs the servers, then the sentinels (a sentinel refuses to start
// when the primary's name does not resolve yet), and returns once every
// replica is in sync and every sentinel sees the others and every replica.
func (s Sentinel) Start(ctx context.Context, run *containers.Run, image string) ([]cluster.Node, error) {
	servers := make([]cluster.Node, s.nodes)
	err := targets.Each(s.nodes, func(i int) error {
		name := fmt.Sprintf("n%d", i+1)
		c, err := run.Start(ctx, containers.Spec{Name: name, Role: "node", Image: image,
			Cmd: configured(s.program(false), "server.conf"), DataDir: dataDir, Env: []string{"CHAOS_CONF=" + serverConfig(name, i == 0, s.settings)}})
		servers[i] = cluster.Node{Container: c}
		return err
	})
	if err != nil {
		return nil, err
	}
	watchers := make([]cluster.Node, sentinels)
	err = targets.Each(sentinels, func(i int) error {
		name := fmt.Sprintf("s%d", i+1)
		c, err := run.Start(ctx, containers.Spec{Name: name, Role: "node", Image: image,
			Cmd: configured(s.program(true), "sentinel.conf"), Env: []string{"CHAOS_CONF=" + sentinelConfig(name, s.settings)}})
		watchers[i] = cluster.Node{Container: c, Addr: net.JoinHostPort(name, strconv.Itoa(SentinelPort)), Kind: "sentinel"}
		return err
	})
	nodes := append(servers, watchers...)
	if err != nil {
		return nil, err
	}
	return nodes, targets.WaitReady(ctx, "redis-sentinel", 60*time.Second, func(ctx context.Context) error {
		return settled(ctx, servers, watchers)
	})
}

// configured is a command that makes the data directory and writes the
// configuration in $CHAOS_CONF to file (in /etc/chaos, since Redis's and
// Valkey's packages have their own /etc directories) on the container's
// first start only: Sentinel rewrites
// both its own file and the servers' (on failover), and a restarted node
// must come back with what Sentinel made of it. exec makes the server PID
// 1, so a signal to the container hits it.
func configured(program, file string) []string {
	return []string{"sh", "-c", fmt.Sprintf(`mkdir -p /etc/chaos `+dataDir+`; [ -e /etc/chaos/%[1]s ] || printf '%%s' "$CHAOS_CONF" > /etc/chaos/%[1]s; exec %[2]s /etc/chaos/%[1]s`, file, program)}
}

// serverConfig is a data server's configuration: cfg's directives
// (sentinel.* aside), and the name it announces, which survives a restart.
func serverConfig(name string, primary bool, cfg map[string]string) string {
	lines := []string{"port " + strconv.Itoa(Port), "bind 0.0.0.0", "protected-mode no", "replica-announce-ip " + name, "dir " + dataDir}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if !strings.HasPrefix(k, "sentinel.") {
			lines = append(lines, line(k, cfg[k]))
		}
	}
	if !primary {
		lines = append(lines, fmt.Sprintf("replicaof n1 %d", Port))
	}
	return strings.Join(lines, "\n") + "\n"
}

// sentinelConfig makes a sentinel watch n1 under MasterName, with a
// quorum of two of the three, announce names rather than addresses, and
// take cfg's sentinel.* settings.
func sentinelConfig(name string, cfg map[string]string) string {
	lines := []string{
		"port " + strconv.Itoa(SentinelPort), "bind 0.0.0.0", "protected-mode no",
		"sentinel resolve-hostnames yes",
		"sentinel announce-hostnames yes",
		"sentinel announce-ip " + name,
		fmt.Sprintf("sentinel monitor %s n1 %d 2", MasterName, Port),
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if s, ok := strings.CutPrefix(k, "sentinel."); ok {
			lines = append(lines, fmt.Sprintf("sentinel %s %s %s", s, MasterName, cfg[k]))
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// settled checks that every replica's link to the primary is up and that
// every sentinel knows every replica and the other sentinels: before that,
// a failover could not happen the way the plan expects.
func settled(ctx context.Context, servers, watchers []cluster.Node) error {
	for _, n := range servers[1:] {
		c := dial(n)
		info, err := c.Info(ctx, "replication").Result()
		c.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", n.Container.Name, err)
		}
		if !strings.Contains(info, "master_link_status:up") {
			return fmt.Errorf("%s: not in sync with the primary yet", n.Container.Name)
		}
	}
	for _, w := range watchers {
		s := dialSentinel(w)
		m, err := s.Master(ctx, MasterName).Result()
		s.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", w.Container.Name, err)
		}
		if m["num-slaves"] != strconv.Itoa(len(servers)-1) || m["num-other-sentinels"] != strconv.Itoa(len(watchers)-1) {
			return fmt.Errorf("%s sees %s replicas and %s other sentinels", w.Container.Name, m["num-slaves"], m["num-other-sentinels"])
		}
	}
	return nil
}

// Leader is the server that a majority of the sentinels name as primary.
func (Sentinel) Leader(ctx context.Context, nodes []cluster.Node) (cluster.Node, error) {
	votes := map[string]int{}
	var errs []error
	for _, w := range nodes {
		if w.Kind != "sentinel" {
			continue
		}
		s := dialSentinel(w)
		addr, err := s.GetMasterAddrByName(ctx, MasterName).Result()
		s.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", w.Container.Name, err))
			continue
		}
		votes[addr[0]]++
	}
	for _, n := range nodes {
		if n.Kind == "" && votes[n.Container.Name] >= sentinels/2+1 {
			return n, nil
		}
	}
	return cluster.Node{}, fmt.Errorf("redis-sentinel: no primary named by a majority of sentinels (%v): %w", votes, errors.Join(errs...))
}

// Role asks a data server which role it claims (ROLE) and, if it claims to
// be the primary, whether it takes a write to probeKey.
func (Sentinel) Role(ctx context.Context, n cluster.Node) (string, bool, error) {
	c := dial(n)
	defer c.Close()
	r, err := c.Do(ctx, "ROLE").Slice()
	if err != nil {
		return "", false, err
	}
	if len(r) == 0 {
		return "", false, errors.New("empty ROLE reply")
	}
	role := fmt.Sprint(r[0])
	if role != "master" {
		return role, false, nil
	}
	return role, c.Set(ctx, probeKey, time.Now().UnixNano(), 0).Err() == nil, nil
}

// ServerVersion is the version a data server or a sentinel reports (INFO
// server).
func (Sentinel) ServerVersion(ctx context.Context, n cluster.Node) (string, error) {
	if n.Kind == "sentinel" {
		return version(ctx, n, SentinelPort)
	}
	return version(ctx, n, Port)
}

// dial reaches a server from the harness, at its current address; one
// attempt, so that a silent server costs one timeout.
func dial(n cluster.Node) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: net.JoinHostPort(n.Container.IP, strconv.Itoa(Port)),
		MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
}

func dialSentinel(n cluster.Node) *goredis.SentinelClient {
	return goredis.NewSentinelClient(&goredis.Options{Addr: net.JoinHostPort(n.Container.IP, strconv.Itoa(SentinelPort)),
		MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
}
