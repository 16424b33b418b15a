// Package redis starts Redis (or Valkey) servers, of the version a plan
// asks, from the Debian suite that carries it: independent masters, as
// Redlock prescribes (redis), or a primary with replicas and Sentinel
// (redis-sentinel).
package redis

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/client"
	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/targets"
)

// Port Redis listens on in each node.
const Port = 6379

// ClientModule is the Redis client library's module, which the harness and
// the Redis workloads use.
const ClientModule = "github.com/redis/go-redis/v9"

func init() { targets.Targets.Register("redis", Target{}) }

// Target is N independent Redis masters.
type Target struct{}

// DefaultNodes is Redlock's usual five masters.
func (Target) DefaultNodes() int { return 5 }

// NewParams are the target's plan fields: the server (redis or valkey).
func (Target) NewParams() any { return &Params{} }

// Image is the node image: Debian's redis-server (or valkey-server) of the
// version asked.
func (Target) Image(ctx context.Context, cli *client.Client, spec targets.Spec, progress io.Writer) (string, error) {
	return image(ctx, cli, spec, progress)
}

// CheckSpec accepts a server and version a Debian suite carries.
func (Target) CheckSpec(s targets.Spec) error { return checkSpec(s) }

// Config is the redis.conf directives every master runs with.
func (Target) Config(s targets.Spec) (map[string]string, error) { return config(s, nil) }

// Start runs the server as PID 1 of each node, with its settings on the
// command line. Without persistence by default: Redlock's safety argument
// assumes a restarted master comes back empty (and waits a lease before
// serving), so no data directory is kept.
func (Target) Start(ctx context.Context, run *containers.Run, spec targets.Spec) ([]targets.Node, error) {
	cfg, err := config(spec, nil)
	if err != nil {
		return nil, err
	}
	cmd := []string{program(spec, false), "--port", strconv.Itoa(Port), "--bind", "0.0.0.0", "--protected-mode", "no"}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		cmd = append(cmd, "--"+k, cfg[k])
	}
	var nodes []targets.Node
	for i := 1; i <= spec.Nodes; i++ {
		c, err := run.Start(ctx, containers.Spec{
			Name:  fmt.Sprintf("n%d", i),
			Role:  "node",
			Image: spec.Image,
			Cmd:   cmd,
		})
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, targets.Node{Container: c, Addr: net.JoinHostPort(c.Name, strconv.Itoa(Port))})
	}
	for _, n := range nodes {
		addr := net.JoinHostPort(n.Container.IP, strconv.Itoa(Port))
		if err := targets.WaitReady(ctx, n.Container.Name, 30*time.Second, ping(addr)); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// Version is the server version the node reports (INFO server).
func (Target) Version(ctx context.Context, n targets.Node) (string, error) {
	return version(ctx, n, Port)
}

// version asks the server at n's port its version: Valkey's valkey_version
// ("valkey 8.1.1": its redis_version is the Redis it is compatible with),
// or redis_version.
func version(ctx context.Context, n targets.Node, port int) (string, error) {
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
