// Package redis starts independent Redis masters, as Redlock prescribes:
// no replication between them, each a separate failure domain.
package redis

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/docker/docker/client"
	goredis "github.com/redis/go-redis/v9"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/images"
	"github.com/chaos-testing/chaos/targets"
)

// Port Redis listens on in each node.
const Port = 6379

func init() { targets.Targets.Register("redis", Target{}) }

// Target is N independent Redis masters.
type Target struct{}

// DefaultNodes is Redlock's usual five masters.
func (Target) DefaultNodes() int { return 5 }

// Image is the node image: Debian's redis-server.
func (Target) Image(ctx context.Context, cli *client.Client, _ string, progress io.Writer) (string, error) {
	return images.Ensure(ctx, cli, images.Node, progress)
}

// Start runs redis-server as PID 1 of each node, without persistence:
// Redlock's safety argument assumes a restarted master comes back empty
// (and waits a lease before serving), so no data directory is kept.
func (Target) Start(ctx context.Context, run *containers.Run, spec targets.Spec) ([]targets.Node, error) {
	var nodes []targets.Node
	for i := 1; i <= spec.Nodes; i++ {
		c, err := run.Start(ctx, containers.Spec{
			Name:  fmt.Sprintf("n%d", i),
			Role:  "node",
			Image: spec.Image,
			Cmd: []string{"redis-server", "--port", strconv.Itoa(Port), "--bind", "0.0.0.0",
				"--protected-mode", "no", "--save", "", "--appendonly", "no"},
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

func ping(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
		defer c.Close()
		return c.Ping(ctx).Err()
	}
}
