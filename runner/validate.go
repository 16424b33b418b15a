package runner

import (
	"strconv"
	"strings"

	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
	"github.com/chaos-testing/chaos/targets"
	"github.com/chaos-testing/chaos/workloads"
)

// Validate checks the names a plan uses against the registries and fills
// the target's default size, before anything is started.
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
	if c, ok := t.(targets.SizeChecker); ok {
		if err := c.CheckNodes(p.Target.Nodes); err != nil {
			return p.Errorf("target.nodes", "%v", err)
		}
	}
	w, ok := workloads.Workloads.Lookup(p.Workload.Kind)
	if !ok {
		return p.Errorf("workload.kind", "unknown workload %q; expected one of %s", p.Workload.Kind, strings.Join(workloads.Workloads.Names(), ", "))
	}
	if w.Target() != p.Target.Kind {
		return p.Errorf("workload.kind", "workload %q runs against target %q, not %q", p.Workload.Kind, w.Target(), p.Target.Kind)
	}
	if c, ok := w.(workloads.PlanChecker); ok {
		if err := c.CheckPlan(p); err != nil {
			return err
		}
	}
	for i, f := range p.Nemesis {
		n, ok := nemesis.Nemeses.Lookup(f.Kind)
		if !ok {
			return p.Errorf(plans.FaultField(i, "kind"), "unknown fault %q; expected one of %s", f.Kind, strings.Join(nemesis.Nemeses.Names(), ", "))
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
	}
	return nil
}

// checkFaultNodes checks that a fault's nodes are nodes the target has,
// enough for its count, on a fault whose victims are nodes.
func checkFaultNodes(p *plans.Plan, i int) error {
	f := p.Nemesis[i]
	if len(f.Nodes) == 0 {
		return nil
	}
	at := plans.FaultField(i, "nodes")
	if f.Target != "nodes" {
		return p.Errorf(at, "only a fault with target nodes picks among given nodes (target is %q)", f.Target)
	}
	for _, n := range f.Nodes {
		k, err := strconv.Atoi(strings.TrimPrefix(n, "n"))
		if !strings.HasPrefix(n, "n") || err != nil || k < 1 || k > p.Target.Nodes {
			return p.Errorf(at, "%q: expected node names n1 to n%d", n, p.Target.Nodes)
		}
	}
	if f.Count > len(f.Nodes) {
		return p.Errorf(plans.FaultField(i, "count"), "%d: more than the %d nodes given", f.Count, len(f.Nodes))
	}
	return nil
}
