package workloads

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/registry"
)

// Registered is a workload kind as the registry keeps it, the type of its
// own fields set aside: NewParams makes what a plan's fields decode into,
// and Bind checks them, typed.
type Registered interface {
	NewParams() any
	Target() string
	Checkers() []analysis.Checker
	Libraries() []string
	// Changes are the kinds of operation by which the workload changes
	// the system's state (Changer); nil if it does not say.
	Changes() []string
	// Bind checks a plan's workload of this kind, with clients client
	// processes and its own fields in params (from NewParams), against s.
	Bind(clients int, params any, s Setting) (*Workload, error)
	run(ctx context.Context, cfg Config, h *history.Appender) error
}

// Workloads is the registry of workload kinds, by the name plans use.
var Workloads = registry.New[Registered]("workload")

// Register makes kind k available to plans as name.
func Register[P any](name string, k Kind[P]) {
	Workloads.Register(name, registered[P]{name: name, k: k})
}

// Workload is a plan's workload bound to its kind: its clients and its
// kind's own fields, checked and with their defaults.
type Workload struct {
	Kind    string
	Clients int
	// Needs is what the run needs beside the cluster and the clients.
	Needs Needs
	Registered
	params any // the kind's *P
}

// Fields are the workload's own fields as JSON, as its clients get them
// (Config.Fields).
func (w *Workload) Fields() (json.RawMessage, error) { return json.Marshal(w.params) }

// Params are the workload's own fields as a plan's, defaults included,
// which a run keeps.
func (w *Workload) Params() (plans.Params, error) { return plans.EncodeParams(w.params) }

// registered is the registry's view of a Kind[P], and the one place that
// turns a workload's parameters back into P.
type registered[P any] struct {
	plans.Own[P]
	name string
	k    Kind[P]
}

func (r registered[P]) Target() string               { return r.k.Target() }
func (r registered[P]) Checkers() []analysis.Checker { return r.k.Checkers() }
func (r registered[P]) Libraries() []string          { return r.k.Libraries() }

func (r registered[P]) Changes() []string {
	if c, ok := r.k.(Changer); ok {
		return c.Changes()
	}
	return nil
}

func (r registered[P]) Bind(clients int, params any, s Setting) (*Workload, error) {
	p := r.Of(params)
	if err := r.k.Check(p, s); err != nil {
		return nil, err
	}
	return &Workload{Kind: r.name, Clients: clients, Needs: r.k.Needs(*p), Registered: r, params: p}, nil
}

// run decodes the fields the runner bound and runs one client process.
func (r registered[P]) run(ctx context.Context, cfg Config, h *history.Appender) error {
	var p P
	if err := json.Unmarshal(cfg.Fields, &p); err != nil {
		return fmt.Errorf("workload %s: its fields: %w", r.name, err)
	}
	return r.k.Run(ctx, Client[P]{Config: cfg, Params: p}, h)
}
