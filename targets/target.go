// Package targets starts the clusters under test, each kind of cluster a
// plug-in registered by name (redis, ...), in containers of a run.
package targets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/registry"
)

// Spec is what a plan asks of a cluster.
type Spec struct {
	Nodes int
	// Version of the server; "" for the target's default.
	Version string
	Image   string // the node image to run, from Image
	// Config is the plan's server settings (target.config).
	Config map[string]string
	// Params are the target's own plan fields, as it decoded them (nil
	// for a target without any).
	Params any
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
	// Image returns the node image for spec's version, building it on
	// first use.
	Image(ctx context.Context, cli *client.Client, spec Spec, progress io.Writer) (string, error)
	// Start starts the servers and returns once every one of them answers.
	Start(ctx context.Context, run *containers.Run, spec Spec) ([]Node, error)
}

// Leaderer is a target that can tell which node leads right now, for
// faults that target the leader.
type Leaderer interface {
	Leader(ctx context.Context, nodes []Node) (Node, error)
}

// Administered is a target with maintenance actions that a fault runs on
// a node as operators run them (etcd's compact and defrag).
type Administered interface {
	// Actions are the actions by name.
	Actions() []string
	// Act runs action on n and says in a few words what it did.
	Act(ctx context.Context, n Node, action string) (string, error)
}

// Membered is a target whose cluster can lose a member and take it back
// while it serves, as operators replace a machine.
type Membered interface {
	// ChangesMembers says whether a cluster of spec can change its
	// members (a *SpecError if not).
	ChangesMembers(s Spec) error
	// RemoveMember takes n, which is down, out of the cluster, asking the
	// other nodes, and says in a few words what it did.
	RemoveMember(ctx context.Context, nodes []Node, n Node) (string, error)
	// AddMember readies n, removed and down, to come back as a member
	// (etcd: a new one, with no data), and says what it did; the caller
	// then starts n.
	AddMember(ctx context.Context, run *containers.Run, nodes []Node, n Node) (string, error)
	// Joined waits until n, started after AddMember, serves as a member
	// (ZooKeeper: adds it, asking the other nodes, now that it runs), and
	// from then on has its restarts keep its data.
	Joined(ctx context.Context, run *containers.Run, nodes []Node, n Node) error
	// Members are the nodes, by container name, that the cluster counts
	// as its members now.
	Members(ctx context.Context, nodes []Node) ([]string, error)
}

// RejoinDelayed is a Membered target whose removed member can come back
// only some time after its removal (a NATS meta leader refuses a removed
// server for 5 minutes): a removal must last at least that long.
type RejoinDelayed interface {
	RejoinAfter() time.Duration
}

// Disked is a target whose data servers keep their data in a directory of
// their own (containers.Spec.DataDir), which disk faults act on.
type Disked interface {
	// FileClasses are the kinds of file in a data server's directory, by
	// name, each with the patterns (as filepath.Glob takes them, relative
	// to the directory) that match its files.
	FileClasses() map[string][]string
}

// SpecChecker is a target that runs only some specs (sizes, versions):
// the plan is refused before anything starts. A *SpecError names the
// plan field at fault.
type SpecChecker interface {
	CheckSpec(s Spec) error
}

// Configurable is a target whose servers take settings from the plan.
type Configurable interface {
	// Config is the settings the servers run with: the target's own, with
	// the plan's over them, which a run records. A key the target does not
	// know, or one it sets itself, is a *SpecError.
	Config(s Spec) (map[string]string, error)
}

// SpecError is a spec refused, with the plan field at fault under target
// ("version", "config.tickTime").
type SpecError struct {
	Field string
	Err   error
}

func (e *SpecError) Error() string { return e.Field + ": " + e.Err.Error() }

// Settings checks a plan's server settings against the keys a target
// lets plans set (allowed; one ending in "*" allows every key with that
// prefix) and those it sets itself (reserved), and returns own with the
// plan's settings over it.
func Settings(own, plan map[string]string, allowed, reserved []string) (map[string]string, error) {
	out := maps.Clone(own)
	if out == nil {
		out = map[string]string{}
	}
	for _, k := range slices.Sorted(maps.Keys(plan)) {
		switch {
		case known(reserved, k):
			return nil, &SpecError{"config." + k, errors.New("chaos sets this itself, for every run")}
		case !known(allowed, k):
			return nil, &SpecError{"config." + k, fmt.Errorf("unknown setting; known: %s", strings.Join(slices.Sorted(slices.Values(allowed)), ", "))}
		}
		out[k] = plan[k]
	}
	return out, nil
}

func known(allowed []string, k string) bool {
	for _, a := range allowed {
		if a == k {
			return true
		}
		if p, ok := strings.CutSuffix(a, "*"); ok && strings.HasPrefix(k, p) && len(k) > len(p) {
			return true
		}
	}
	return false
}

// RoleReporter is a target whose data servers can each be asked which
// role they claim (primary or replica) and whether they take a write:
// the observer polls it to see two primaries at once.
type RoleReporter interface {
	Role(ctx context.Context, n Node) (role string, acceptsWrites bool, err error)
}

// Versioner is a target whose servers say which version they run, which
// a run records: the version built or installed may not be the one asked.
type Versioner interface {
	Version(ctx context.Context, n Node) (string, error)
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
