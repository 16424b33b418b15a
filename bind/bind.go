// Package bind turns a plan as written (package plans) into the plan a run
// is made of: each plug-in looked up in its registry, its own fields
// decoded into its typed parameters and checked by the plug-in, with
// their defaults, and each of the fields every section shares checked
// once, by plans; an error names the field's file and line. The plan as
// written is left as it is. The runner, a replay and a shrink run bound
// plans; nothing below binds one.
package bind

import (
	"errors"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/workloads"
)

// Plan is a plan bound to its plug-ins.
type Plan struct {
	// Written is the plan as its file has it: its name, seed, file and
	// lines.
	Written   *plans.Plan
	Name      string
	Seed      int64
	TimeLimit time.Duration
	// Recovery is how long the clients go on once the time limit is up
	// and every fault is healed (Jepsen's recovery phase); 0: none.
	Recovery time.Duration
	Target   Target
	Workload *workloads.Workload
	Faults   []*nemesis.Fault
}

// Target is the plan's cluster: its kind's, as the kind bound it, and
// what the run needs to know of it besides.
type Target struct {
	targets.Target
	Kind  string
	Nodes int
	// Pull names an image to pull instead of building the kind's own
	// (for machines that reach a registry).
	Pull string
	// params are the kind's own fields, with their defaults.
	params any
}

// ErrComparison is Bind's answer for a comparison plan, which runs as its
// variants (Variants), not as itself.
var ErrComparison = errors.New("this is a comparison plan: run it with chaos compare")

// Bind binds plan p to the plug-ins it names, and checks it, before
// anything starts.
func Bind(p *plans.Plan) (*Plan, error) {
	if p.Compare != nil {
		return nil, p.Errorf("compare", "%v", ErrComparison)
	}
	b := &Plan{Written: p, Name: p.Name, Seed: p.Seed, TimeLimit: p.TimeLimit.Duration, Recovery: p.Recovery.Duration}
	if err := b.bindTarget(p); err != nil {
		return nil, err
	}
	if err := b.bindWorkload(p); err != nil {
		return nil, err
	}
	for i := range p.Nemesis {
		if err := b.bindFault(p, i); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (b *Plan) bindTarget(p *plans.Plan) error {
	t, ok := targets.Targets.Lookup(p.Target.Kind)
	if !ok {
		return p.Errorf("target.kind", "unknown target %q; expected one of %s", p.Target.Kind, strings.Join(targets.Targets.Names(), ", "))
	}
	b.Target = Target{Kind: p.Target.Kind, Nodes: p.Target.Nodes, Pull: p.Target.Image, params: t.NewParams()}
	if b.Target.Nodes == 0 {
		b.Target.Nodes = t.DefaultNodes()
	}
	if err := p.DecodeParams("target", p.Target.Params, p.Target, b.Target.params); err != nil {
		return err
	}
	var err error
	b.Target.Target, err = t.Bind(targets.Spec[any]{Nodes: b.Target.Nodes, Version: p.Target.Version, Config: p.Target.Config, Params: b.Target.params})
	return p.Place("target", err)
}

func (b *Plan) bindWorkload(p *plans.Plan) error {
	w, ok := workloads.Workloads.Lookup(p.Workload.Kind)
	if !ok {
		return p.Errorf("workload.kind", "unknown workload %q; expected one of %s", p.Workload.Kind, strings.Join(workloads.Workloads.Names(), ", "))
	}
	if w.Target() != p.Target.Kind {
		return p.Errorf("workload.kind", "workload %q runs against target %q, not %q", p.Workload.Kind, w.Target(), p.Target.Kind)
	}
	params := w.NewParams()
	if err := p.DecodeParams("workload", p.Workload.Params, p.Workload, params); err != nil {
		return err
	}
	clients, err := p.Workload.ClientCount()
	if err != nil {
		return p.Place("workload", err)
	}
	b.Workload, err = w.Bind(clients, params, workloads.Setting{Workload: p.Workload.Kind, Clients: clients,
		Target: b.Target.Target, TargetKind: b.Target.Kind, Nodes: b.Target.Nodes})
	return p.Place("workload", err)
}

func (b *Plan) bindFault(p *plans.Plan, i int) error {
	f, path := p.Nemesis[i], plans.FaultPath(i)
	n, ok := nemesis.Nemeses.Lookup(f.Kind)
	if !ok {
		return p.Errorf(path+".kind", "unknown fault %q; expected one of %s", f.Kind, strings.Join(nemesis.Nemeses.Names(), ", "))
	}
	params := n.NewParams()
	if err := p.DecodeParams(path, f.Params, f, params); err != nil {
		return err
	}
	s, err := f.Schedule.Resolve(plans.Limits{TimeLimit: b.TimeLimit, Nodes: b.Target.Nodes, Clients: b.Workload.Clients,
		Workload: b.Workload.Kind, Holders: b.Workload.Needs.Holders})
	if err != nil {
		return p.Place(path, err)
	}
	bf, err := n.Bind(s, params, nemesis.Setting{Target: b.Target.Target, TargetKind: b.Target.Kind, Nodes: b.Target.Nodes, Clients: b.Workload.Clients})
	if err != nil {
		return p.Place(path, err)
	}
	b.Faults = append(b.Faults, bf)
	return nil
}

// Checkers are the checkers that judge a run of a workload of kind w:
// its own, and stats, which keeps a run in which some kind of operation
// never succeeded from passing (the checkers judge such a history valid).
func Checkers(w workloads.Registered) []analysis.Checker {
	return append(w.Checkers(), analysis.StatsChecker{})
}

// Disks says whether a fault of the plan acts on nodes' disks: only then
// do its nodes get disks (package disks), which cost a little speed.
func (b *Plan) Disks() bool {
	for _, f := range b.Faults {
		if f.Traits().Disks {
			return true
		}
	}
	return false
}

// Resolved is the plan as it runs, as a plan: the written one with every
// plug-in's fields as it bound them, defaults included, which a run keeps
// beside its results.
func (b *Plan) Resolved() (*plans.Plan, error) {
	q := *b.Written
	q.Target.Nodes = b.Target.Nodes
	var err error
	if q.Target.Params, err = plans.EncodeParams(b.Target.params); err != nil {
		return nil, err
	}
	q.Workload.Clients = b.Workload.Clients
	if q.Workload.Params, err = b.Workload.Params(); err != nil {
		return nil, err
	}
	q.Nemesis = make([]plans.Fault, len(b.Faults))
	for i, f := range b.Faults {
		if q.Nemesis[i], err = f.Plan(); err != nil {
			return nil, err
		}
	}
	return &q, nil
}

// YAML is the plan as it runs (Resolved), as a plan file.
func (b *Plan) YAML() ([]byte, error) {
	q, err := b.Resolved()
	if err != nil {
		return nil, err
	}
	return q.YAML()
}
