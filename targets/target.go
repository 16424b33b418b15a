// Package targets starts the clusters under test, each kind of cluster a
// plug-in registered by name (redis, ...), in containers of a run.
package targets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
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
	// the node at Container.IP. It is empty for a server that clients find
	// through another (Redis servers behind Sentinel).
	Addr string
	// Kind tells apart the servers of a target that runs two kinds
	// ("sentinel"); "" is the servers that hold the data.
	Kind string
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

// SizeChecker is a target that runs only some cluster sizes; the plan is
// refused before anything starts, and Start asks again.
type SizeChecker interface {
	CheckNodes(n int) error
}

// RoleReporter is a target whose data servers can each be asked which
// role they claim (primary or replica) and whether they take a write:
// the observer polls it to see two primaries at once.
type RoleReporter interface {
	Role(ctx context.Context, n Node) (role string, acceptsWrites bool, err error)
}

// Targets is the registry of cluster kinds.
var Targets = registry.New[Target]("target")

// Each runs f(0) to f(n-1) at once and joins their errors: containers
// started one by one took Docker 1.5 s each on a busy machine.
func Each(n int, f func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

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
