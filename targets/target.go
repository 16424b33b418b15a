// Package targets starts the clusters under test, each kind of cluster a
// plug-in registered by name (redis, ...), in containers of a run.
package targets

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/registry"
)

// Spec is what a plan asks of a cluster.
type Spec struct {
	Nodes int
	// Version of the server, for targets that build it (etcd); "" for the default.
	Version string
	Image   string // the node image to run, from Image
}

// Node is one server of a started cluster.
type Node struct {
	Container containers.Container
	// Addr is host:port for clients on the run's network. It uses the
	// node's name, which survives a restart; the harness itself reaches
	// the node at Container.IP.
	Addr string
}

// Target is a kind of cluster.
type Target interface {
	// DefaultNodes is the cluster size when a plan gives none.
	DefaultNodes() int
	// Image returns the node image for spec.Version, building it on first use.
	Image(ctx context.Context, cli *client.Client, version string, progress io.Writer) (string, error)
	// Start starts the servers and returns once every one of them answers.
	Start(ctx context.Context, run *containers.Run, spec Spec) ([]Node, error)
}

// Leaderer is a target that can tell which node leads right now, for
// faults that target the leader.
type Leaderer interface {
	Leader(ctx context.Context, nodes []Node) (Node, error)
}

// Targets is the registry of cluster kinds.
var Targets = registry.New[Target]("target")

// WaitReady polls ready until it succeeds, ctx ends, or limit passes.
func WaitReady(ctx context.Context, what string, limit time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s: %w", what, limit, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
