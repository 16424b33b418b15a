// Package redis starts Redis (or Valkey) servers, of the version a plan
// asks, from the Debian suite that carries it: independent masters, as
// Redlock prescribes (redis), or a primary with replicas and Sentinel
// (redis-sentinel).
package redis

import (
	"context"
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
	"github.com/chaos-testing/chaos/targets"
)

// Port Redis listens on in each node.
const Port = 6379

func init() { targets.Register("redis", Kind{}) }

// Kind is Redis as Redlock has it: N independent masters.
type Kind struct{}

// DefaultNodes is Redlock's usual five masters.
func (Kind) DefaultNodes() int { return 5 }

// Masters are N independent Redis (or Valkey) masters, as a plan asks for
// them.
type Masters struct{ servers }

// The capabilities of independent masters that runs and faults find by
// interface, stated here so that a method renamed on one side alone
// breaks the build rather than going unused.
var (
	_ targets.Configured = Masters{}
	_ targets.Versioner  = Masters{}
)

// Bind accepts a server and version a Debian suite carries, and the
// redis.conf directives a plan may set.
func (Kind) Bind(s *targets.Spec[Params]) (targets.Target, error) {
	srv, err := bind(s, nil)
	return Masters{srv}, err
}

// Start runs the server as PID 1 of each node, with its settings on the
// command line. Without persistence by default: Redlock's safety argument
// assumes a restarted master comes back empty (and waits a lease before
// serving), so no data directory is kept.
func (m Masters) Start(ctx context.Context, run *containers.Run, image string) ([]cluster.Node, error) {
	cmd := []string{m.program(false), "--port", strconv.Itoa(Port), "--bind", "0.0.0.0", "--protected-mode", "no"}
	for _, k := range slices.Sorted(maps.Keys(m.settings)) {
		cmd = append(cmd, "--"+k, m.settings[k])
	}
	var nodes []cluster.Node
	for i := 1; i <= m.nodes; i++ {
		c, err := run.Start(ctx, containers.Spec{
			Name:  fmt.Sprintf("n%d", i),
			Role:  "node",
			Image: image,
			Cmd:   cmd,
		})
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, cluster.Node{Container: c, Addr: net.JoinHostPort(c.Name, strconv.Itoa(Port))})
	}
	for _, n := range nodes {
		addr := net.JoinHostPort(n.Container.IP, strconv.Itoa(Port))
		if err := targets.WaitReady(ctx, n.Container.Name, 30*time.Second, ping(addr)); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// ServerVersion is the server version the node reports (INFO server).
func (Masters) ServerVersion(ctx context.Context, n cluster.Node) (string, error) {
	return version(ctx, n, Port)
}

// version asks the server at n's port its version: Valkey's valkey_version
// ("valkey 8.1.1": its redis_version is the Redis it is compatible with),
// or redis_version.
func version(ctx context.Context, n cluster.Node, port int) (string, error) {
	c := goredis.NewClient(&goredis.Options{Addr: net.JoinHostPort(n.Container.IP, strconv.Itoa(port)), MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	redis := ""
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "valkey_version:"); ok {
			return "valkey " + v, nil
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "redis_version:"); ok {
			redis = v
		}
	}
	if redis != "" {
		return redis, nil
	}
	return "", fmt.Errorf("no redis_version in INFO server: %q", info)
}

func ping(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
		defer c.Close()
		return c.Ping(ctx).Err()
	}
}
