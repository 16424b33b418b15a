package runner

import (
	"cmp"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/workloads"
)

// Validate checks the names a plan uses against the registries, has each
// plug-in decode and check its own fields (filling their defaults and the
// target's size), and checks the faults against what the workload needs,
// before anything is started.
func Validate(p *plans.Plan) error {
	if p.Compare != nil {
		return p.Errorf("compare", "this is a comparison plan: run it with chaos compare")
	}
	t, ok := targets.Targets.Lookup(p.Target.Kind)
	if !ok {
		return p.Errorf("target.kind", "unknown target %q; expected one of %s", p.Target.Kind, strings.Join(targets.Targets.Names(), ", "))
	}
	if p.Target.Nodes == 0 {
		p.Target.Nodes = t.DefaultNodes()
	}
	spec, err := p.DecodeParams("target", p.Target.Params, p.Target, t)
	if err != nil {
		return err
	}
	p.Target.Spec = spec
	if err := checkTarget(p, t); err != nil {
		return err
	}
	w, ok := workloads.Workloads.Lookup(p.Workload.Kind)
	if !ok {
		return p.Errorf("workload.kind", "unknown workload %q; expected one of %s", p.Workload.Kind, strings.Join(workloads.Workloads.Names(), ", "))
	}
	if w.Target() != p.Target.Kind {
		return p.Errorf("workload.kind", "workload %q runs against target %q, not %q", p.Workload.Kind, w.Target(), p.Target.Kind)
	}
	for _, c := range checkers(w) {
		if _, ok := analysis.Checkers.Lookup(c); !ok {
			return p.Errorf("workload.kind", "workload %q is judged by checker %q, which this chaos lacks", p.Workload.Kind, c)
		}
	}
	if p.Workload.Spec, err = p.DecodeParams("workload", p.Workload.Params, p.Workload, w); err != nil {
		return err
	}
	if err := p.CheckWorkload(); err != nil {
		return err
	}
	if c, ok := w.(workloads.PlanChecker); ok {
		if err := c.CheckPlan(p); err != nil {
			return err
		}
	}
	needs := w.Needs(p.Workload)
	for i, f := range p.Nemesis {
		n, ok := nemesis.Nemeses.Lookup(f.Kind)
		if !ok {
			return p.Errorf(plans.FaultField(i, "kind"), "unknown fault %q; expected one of %s", f.Kind, strings.Join(nemesis.Nemeses.Names(), ", "))
		}
		if p.Nemesis[i].Spec, err = p.DecodeParams(plans.FaultPath(i), f.Params, f, n); err != nil {
			return err
		}
		if err := p.CheckFault(i); err != nil {
			return err
		}
		f := p.Nemesis[i] // with its defaults
		if f.Target == "holder" && !needs.Holders {
			return p.Errorf(plans.FaultField(i, "target"), "holder: the clients of workload %s hold nothing", p.Workload.Kind)
		}
		if (f.Target == "nodes") && f.Count > p.Target.Nodes {
			return p.Errorf(plans.FaultField(i, "count"), "%d: the target has only %d nodes", f.Count, p.Target.Nodes)
		}
		if err := checkFaultNodes(p, i); err != nil {
			return err
		}
		if c, ok := n.(nemesis.FaultChecker); ok {
			if err := c.CheckFault(p, i); err != nil {
				return err
			}
		}
		if err := checkTargetAction(p, i, n); err != nil {
			return err
		}
		if err := checkDisk(p, i, n); err != nil {
			return err
		}
		if err := checkMembership(p, i, n); err != nil {
			return err
		}
	}
	return nil
}

// checkMembership refuses a fault that changes members on a target that
// cannot.
func checkMembership(p *plans.Plan, i int, n nemesis.Nemesis) error {
	if _, ok := n.(interface{ Membership() }); !ok {
		return nil
	}
	t, _ := targets.Targets.Lookup(p.Target.Kind)
	m, ok := t.(targets.Membered)
	if !ok {
		return p.Errorf(plans.FaultField(i, "kind"), "%s: target %s cannot change its members here", p.Nemesis[i].Kind, p.Target.Kind)
	}
	if err := m.ChangesMembers(targetSpec(p, "")); err != nil {
		if e, ok := errors.AsType[*targets.SpecError](err); ok {
			return p.Errorf("target."+e.Field, "%s (fault %s)", e.Err, p.Nemesis[i].Kind)
		}
		return p.Errorf(plans.FaultField(i, "kind"), "%v", err)
	}
	if d, ok := t.(targets.RejoinDelayed); ok && p.Nemesis[i].Duration.Duration < d.RejoinAfter() {
		return p.Errorf(plans.FaultField(i, "duration"), "%s: a removed %s member can rejoin only %s after its removal", p.Nemesis[i].Duration, p.Target.Kind, d.RejoinAfter())
	}
	return nil
}

// checkDisk refuses a disk fault on a target without a data directory, or
// of a class of files the target does not have.
func checkDisk(p *plans.Plan, i int, n nemesis.Nemesis) error {
	df, ok := n.(nemesis.DiskFault)
	if !ok {
		return nil
	}
	t, _ := targets.Targets.Lookup(p.Target.Kind)
	d, ok := t.(targets.Disked)
	if !ok {
		return p.Errorf(plans.FaultField(i, "kind"), "%s: target %s keeps no data directory that a disk fault could act on", p.Nemesis[i].Kind, p.Target.Kind)
	}
	class := df.FileClass(p.Nemesis[i])
	if classes := d.FileClasses(); class != "" && classes[class] == nil {
		return p.Errorf(plans.FaultField(i, "class"), "%q: target %s has no such class of files (it has: %s)", class, p.Target.Kind, strings.Join(slices.Sorted(maps.Keys(classes)), ", "))
	}
	return nil
}

// usesDisks says whether the plan has a disk fault: only then do its
// nodes get disks (package disks), which cost a little speed.
func usesDisks(p *plans.Plan) bool {
	return hasFault(p, func(n nemesis.Nemesis) bool { _, ok := n.(nemesis.DiskFault); return ok })
}

// changesMembers says whether the plan has a fault that changes the
// cluster's members: only then is its membership checked at the end.
func changesMembers(p *plans.Plan) bool {
	return hasFault(p, func(n nemesis.Nemesis) bool { _, ok := n.(interface{ Membership() }); return ok })
}

// hasFault says whether one of the plan's faults is of a kind that is accepts.
func hasFault(p *plans.Plan, is func(nemesis.Nemesis) bool) bool {
	for _, f := range p.Nemesis {
		if n, ok := nemesis.Nemeses.Lookup(f.Kind); ok && is(n) {
			return true
		}
	}
	return false
}

// checkTargetAction refuses a fault that runs a maintenance action the
// target does not have.
func checkTargetAction(p *plans.Plan, i int, n nemesis.Nemesis) error {
	a, ok := n.(interface{ TargetAction() string })
	if !ok {
		return nil
	}
	var actions []string
	if t, ok := targets.Targets.Lookup(p.Target.Kind); ok {
		if adm, ok := t.(targets.Administered); ok {
			actions = adm.Actions()
		}
	}
	if !slices.Contains(actions, a.TargetAction()) {
		return p.Errorf(plans.FaultField(i, "kind"), "%s: target %s has no such maintenance action (it has: %s)", a.TargetAction(), p.Target.Kind, cmp.Or(strings.Join(actions, ", "), "none"))
	}
	return nil
}

// checkTarget has the target check the plan's size, version and server
// settings, with the line of the field at fault.
func checkTarget(p *plans.Plan, t targets.Target) error {
	spec := targetSpec(p, "")
	fail := func(err error) error {
		if e, ok := errors.AsType[*targets.SpecError](err); ok {
			return p.Errorf("target."+e.Field, "%v", e.Err)
		}
		return p.Errorf("target", "%v", err)
	}
	if c, ok := t.(targets.SpecChecker); ok {
		if err := c.CheckSpec(spec); err != nil {
			return fail(err)
		}
	}
	if c, ok := t.(targets.Configurable); ok {
		if _, err := c.Config(spec); err != nil {
			return fail(err)
		}
	} else if len(p.Target.Config) > 0 {
		return p.Errorf("target.config", "target %s takes no server settings", p.Target.Kind)
	}
	return nil
}

// targetSpec is what p asks of its target, to run in image.
func targetSpec(p *plans.Plan, image string) targets.Spec {
	t := p.Target
	return targets.Spec{Nodes: t.Nodes, Version: t.Version, Image: image, Config: t.Config, Params: t.Spec}
}

// checkFaultNodes checks that a fault's nodes are nodes the target has,
// enough for its count, on a fault whose victims are nodes or the leader
// (which it hits only while the leader is one of them), or clients the
// workload has (c0, c1, ...) on a fault whose victims are clients.
func checkFaultNodes(p *plans.Plan, i int) error {
	f := p.Nemesis[i]
	if len(f.Nodes) == 0 {
		return nil
	}
	at := plans.FaultField(i, "nodes")
	prefix, first, last := "n", 1, p.Target.Nodes
	switch f.Target {
	case "nodes", "leader":
	case "clients":
		prefix, first, last = "c", 0, p.Workload.Clients-1
	default:
		return p.Errorf(at, "only a fault with target nodes, leader or clients picks among given names (target is %q)", f.Target)
	}
	for _, n := range f.Nodes {
		k, err := strconv.Atoi(strings.TrimPrefix(n, prefix))
		if !strings.HasPrefix(n, prefix) || err != nil || k < first || k > last {
			return p.Errorf(at, "%q: expected names %s%d to %s%d", n, prefix, first, prefix, last)
		}
	}
	if f.Count > len(f.Nodes) {
		return p.Errorf(plans.FaultField(i, "count"), "%d: more than the %d given", f.Count, len(f.Nodes))
	}
	return nil
}

// checkers are the names of the checkers that judge a run of w: its own,
// and stats, which keeps a run in which some kind of operation never
// succeeded from passing (the checkers judge such a history valid).
func checkers(w workloads.Workload) []string { return append(w.Checkers(), "stats") }

// workloadOf is the workload plug-in of p, which Validate found.
func workloadOf(p *plans.Plan) workloads.Workload {
	w, _ := workloads.Workloads.Lookup(p.Workload.Kind)
	return w
}

// Variants are the plans comparison plan p runs (plans.Plan.Variants),
// each field a variant gives going to its target when the target has it.
func Variants(p *plans.Plan) []*plans.Plan {
	return p.Variants(func(target, field string) bool {
		t, ok := targets.Targets.Lookup(target)
		pp, hasOwn := t.(plans.Parameterized)
		return ok && hasOwn && slices.Contains(plans.FieldNames(pp.NewParams()), field)
	})
}
