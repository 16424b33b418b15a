package redis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/client"
	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/images"
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

func init() { targets.Targets.Register("redis-sentinel", Sentinel{}) }

// Sentinel is Redis with asynchronous replication and automatic failover:
// a primary (n1 at start), replicas (n2, ...) and three sentinels (s1-s3),
// each in its own container. Clients find the primary through the
// sentinels, so only the sentinels have a client address.
type Sentinel struct{}

// DefaultNodes is one primary and two replicas.
func (Sentinel) DefaultNodes() int { return 3 }

// Image is the node image, which has redis-server and redis-sentinel.
func (Sentinel) Image(ctx context.Context, cli *client.Client, _ string, progress io.Writer) (string, error) {
	return images.Ensure(ctx, cli, images.Node, progress)
}

// CheckNodes accepts a primary and at least one replica.
func (Sentinel) CheckNodes(n int) error {
	if n < 2 {
		return fmt.Errorf("redis-sentinel: %d nodes asked for; a primary needs at least one replica", n)
	}
	return nil
}

// Start runs the servers, then the sentinels (a sentinel refuses to start
// when the primary's name does not resolve yet), and returns once every
// replica is in sync and every sentinel sees the others and every replica.
func (Sentinel) Start(ctx context.Context, run *containers.Run, spec targets.Spec) ([]targets.Node, error) {
	if err := (Sentinel{}).CheckNodes(spec.Nodes); err != nil {
		return nil, err
	}
	servers := make([]targets.Node, spec.Nodes)
	err := targets.Each(spec.Nodes, func(i int) error {
		name := fmt.Sprintf("n%d", i+1)
		c, err := run.Start(ctx, containers.Spec{Name: name, Role: "node", Image: spec.Image,
			Cmd: configured("redis-server", "/etc/redis/chaos.conf"), Env: []string{"CHAOS_CONF=" + serverConfig(name, i == 0)}})
		servers[i] = targets.Node{Container: c}
		return err
	})
	if err != nil {
		return nil, err
	}
	watchers := make([]targets.Node, sentinels)
	err = targets.Each(sentinels, func(i int) error {
		name := fmt.Sprintf("s%d", i+1)
		c, err := run.Start(ctx, containers.Spec{Name: name, Role: "node", Image: spec.Image,
			Cmd: configured("redis-sentinel", "/etc/redis/chaos-sentinel.conf"), Env: []string{"CHAOS_CONF=" + sentinelConfig(name)}})
		watchers[i] = targets.Node{Container: c, Addr: net.JoinHostPort(name, strconv.Itoa(SentinelPort)), Kind: "sentinel"}
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

// configured is a command that writes the configuration in $CHAOS_CONF to
// path on the container's first start only: Sentinel rewrites both its own
// file and the servers' (on failover), and a restarted node must come back
// with what Sentinel made of it. exec makes the server PID 1, so a signal
// to the container hits it.
func configured(program, path string) []string {
	return []string{"sh", "-c", fmt.Sprintf(`[ -e %[1]s ] || printf '%%s' "$CHAOS_CONF" > %[1]s; exec %[2]s %[1]s`, path, program)}
}

// serverConfig is a data server's configuration. Servers announce their
// names, which survive a restart, and keep no data on disk, as the other
// Redis target. Replication is asynchronous and nothing stops a primary
// cut off from its replicas from taking writes (min-replicas-to-write is
// 0, Redis's default): that is what the Sentinel plans put to the test.
func serverConfig(name string, primary bool) string {
	lines := []string{
		"port " + strconv.Itoa(Port), "bind 0.0.0.0", "protected-mode no",
		`save ""`, "appendonly no",
		"replica-announce-ip " + name,
	}
	if !primary {
		lines = append(lines, fmt.Sprintf("replicaof n1 %d", Port))
	}
	return strings.Join(lines, "\n") + "\n"
}

// sentinelConfig makes a sentinel watch n1 under MasterName, with a
// quorum of two of the three, and announce names rather than addresses.
// A primary unheard for 2 s is down, so a failover takes seconds.
func sentinelConfig(name string) string {
	return strings.Join([]string{
		"port " + strconv.Itoa(SentinelPort), "bind 0.0.0.0", "protected-mode no",
		"sentinel resolve-hostnames yes",
		"sentinel announce-hostnames yes",
		"sentinel announce-ip " + name,
		fmt.Sprintf("sentinel monitor %s n1 %d 2", MasterName, Port),
		fmt.Sprintf("sentinel down-after-milliseconds %s 2000", MasterName),
		fmt.Sprintf("sentinel failover-timeout %s 10000", MasterName),
		fmt.Sprintf("sentinel parallel-syncs %s 1", MasterName),
	}, "\n") + "\n"
}

// settled checks that every replica's link to the primary is up and that
// every sentinel knows every replica and the other sentinels: before that,
// a failover could not happen the way the plan expects.
func settled(ctx context.Context, servers, watchers []targets.Node) error {
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
func (Sentinel) Leader(ctx context.Context, nodes []targets.Node) (targets.Node, error) {
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
	return targets.Node{}, fmt.Errorf("redis-sentinel: no primary named by a majority of sentinels (%v): %w", votes, errors.Join(errs...))
}

// Role asks a data server which role it claims (ROLE) and, if it claims to
// be the primary, whether it takes a write to probeKey.
func (Sentinel) Role(ctx context.Context, n targets.Node) (string, bool, error) {
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

// dial reaches a server from the harness, at its current address; one
// attempt, so that a silent server costs one timeout.
func dial(n targets.Node) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: net.JoinHostPort(n.Container.IP, strconv.Itoa(Port)),
		MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
}

func dialSentinel(n targets.Node) *goredis.SentinelClient {
	return goredis.NewSentinelClient(&goredis.Options{Addr: net.JoinHostPort(n.Container.IP, strconv.Itoa(SentinelPort)),
		MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
}
