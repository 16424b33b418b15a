// Package targets starts the clusters under test, each kind of cluster a
// plug-in registered by name (redis, ...), in containers of a run.
package targets

import (
	"context"
	"fmt"
	"time"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/registry"
)

// Spec is what a plan asks of a cluster.
type Spec struct {
	Nodes int
	Image string // the node image to run
}

// Node is one server of a started cluster.
type Node struct {
	Container containers.Container
	Addr      string // host:port clients connect to
}

// Target is a kind of cluster.
type Target interface {
	// DefaultNodes is the cluster size when a plan gives none.
	DefaultNodes() int
	// Start starts the servers and returns once every one of them answers.
	Start(ctx context.Context, run *containers.Run, spec Spec) ([]Node, error)
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
