package plans

import (
	"fmt"
	"slices"
)

// Comparison, in a comparison plan, names the backends that chaos compare
// runs the plan's workload and fault schedule on, and the seeds: every
// backend runs with every seed.
type Comparison struct {
	Seeds    []int64   `yaml:"seeds"`
	Variants []Variant `yaml:"variants"`
}

// Variant is one backend of a comparison: it replaces the plan's target
// kind and size, workload kind and resource mode.
type Variant struct {
	Target   string `yaml:"target"`
	Nodes    int    `yaml:"nodes"`
	Workload string `yaml:"workload"`
	Resource string `yaml:"resource"`
}

func (p *Plan) checkComparison() error {
	c := p.Compare
	if c == nil {
		return nil
	}
	if len(c.Seeds) == 0 {
		return p.Errorf("compare.seeds", "missing; expected the seeds every backend runs with, such as [1, 2, 3]")
	}
	if len(c.Variants) < 2 {
		return p.Errorf("compare.variants", "expected at least two backends to compare")
	}
	for i, v := range c.Variants {
		at := fmt.Sprintf("compare.variants[%d]", i)
		if v.Target == "" || v.Workload == "" {
			return p.Errorf(at, "expected target and workload")
		}
		if !slices.Contains([]string{"", "fenced", "unfenced"}, v.Resource) {
			return p.Errorf(at+".resource", "%q: expected fenced or unfenced", v.Resource)
		}
	}
	return nil
}

// Variants are the plans a comparison runs: for each variant and seed, a
// copy of p with the variant's target, workload and resource, named
// <plan>--<workload>-<resource> so that its runs have a folder of their own.
func (p *Plan) Variants() []*Plan {
	var out []*Plan
	for _, v := range p.Compare.Variants {
		for _, seed := range p.Compare.Seeds {
			q := *p
			q.Compare = nil
			q.Seed = seed
			q.Target = Target{Kind: v.Target, Nodes: v.Nodes}
			q.Workload.Kind = v.Workload
			if v.Resource != "" {
				q.Workload.Resource = v.Resource
			}
			q.Name = fmt.Sprintf("%s--%s-%s", p.Name, v.Workload, q.Workload.Resource)
			q.Nemesis = slices.Clone(p.Nemesis)
			out = append(out, &q)
		}
	}
	return out
}
