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

	"github.com/chaos-testing/chaos/cluster"
	"github.com/chaos-testing/chaos/containers"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/registry"
)

// Spec is what a plan asks of a cluster of one kind, whose own fields in
// a plan are P (struct{} for a kind without any).
type Spec[P any] struct {
	Nodes int
	// Version of the server; "" for the kind's default.
	Version string
	// Config is the plan's server settings (target.config).
	Config map[string]string
	Params P
}

// Kind is a kind of cluster (etcd, zookeeper, ...), which plans name.
type Kind[P any] interface {
	// DefaultNodes is the cluster size when a plan gives none.
	DefaultNodes() int
	// Bind checks what a plan asks of the cluster (its size, version,
	// settings and the kind's own fields), fills the defaults of its own
	// fields in s, and returns the cluster as it will run. A
	// *plans.FieldError names the target's field at fault ("version",
	// "config.tickTime"); a kind that takes no settings refuses any.
	Bind(s *Spec[P]) (Target, error)
}

// Target is a cluster of one kind as a plan asks for it: its size,
// version and settings are its own. What else it can do (tell its
// leader, change its members, ...) it says by the interfaces it
// implements, those below and those the faults that need them state
// (package nemesis).
type Target interface {
	// Image returns the node image, building it on first use.
	Image(ctx context.Context, cli *client.Client, progress io.Writer) (string, error)
	// Start starts the servers in run from image and returns once every
	// one of them answers.
	Start(ctx context.Context, run *containers.Run, image string) ([]cluster.Node, error)
}

// Registered is a kind of cluster as the registry keeps it, the type of
// its own fields set aside: NewParams makes what a plan's fields decode
// into, and Bind hands it back to the kind, typed, and fills its
// defaults there.
type Registered interface {
	DefaultNodes() int
	NewParams() any
	Bind(s Spec[any]) (Target, error)
}

// Register makes kind k available to plans as name.
func Register[P any](name string, k Kind[P]) { Targets.Register(name, registered[P]{name: name, k: k}) }

// registered is the registry's view of a Kind[P].
type registered[P any] struct {
	plans.Own[P]
	name string
	k    Kind[P]
}

func (r registered[P]) DefaultNodes() int { return r.k.DefaultNodes() }

// Bind binds the kind, and refuses settings for a target that takes none.
func (r registered[P]) Bind(s Spec[any]) (Target, error) {
	params := r.Of(s.Params)
	sp := &Spec[P]{Nodes: s.Nodes, Version: s.Version, Config: s.Config, Params: *params}
	t, err := r.k.Bind(sp)
	*params = sp.Params
	if _, ok := t.(Configured); err == nil && !ok && len(s.Config) > 0 {
		return nil, plans.Fieldf("config", "target %s takes no server settings", r.name)
	}
	return t, err
}

// Configured is a target whose servers run with settings, the kind's own
// and the plan's over them, which a run records.
type Configured interface {
	Settings() map[string]string
}

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
			return nil, plans.Fieldf("config."+k, "chaos sets this itself, for every run")
		case !known(allowed, k):
			return nil, plans.Fieldf("config."+k, "unknown setting; known: %s", strings.Join(slices.Sorted(slices.Values(allowed)), ", "))
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

// Released is a target whose versions are releases in order, so that a
// workload can refuse one older than the first release with a feature it
// needs.
type Released interface {
	// Release is the version the servers run, as the kind names it
	// ("v2.12.1").
	Release() string
	// Since reports whether that release is v or a later one.
	Since(v string) bool
}

// Discovered is a target whose clients find the servers through others
// (Redis Sentinel), asking them for a service by name.
type Discovered interface {
	Service() string
}

// RoleReporter is a target whose data servers can each be asked which
// role they claim (primary or replica) and whether they take a write:
// the observer polls it to see two primaries at once.
type RoleReporter interface {
	Role(ctx context.Context, n cluster.Node) (role string, acceptsWrites bool, err error)
}

// Versioner is a target whose servers say which version they run, which
// a run records: the version built or installed may not be the one asked.
type Versioner interface {
	ServerVersion(ctx context.Context, n cluster.Node) (string, error)
}

// Targets is the registry of cluster kinds.
var Targets = registry.New[Registered]("target")

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
