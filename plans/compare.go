package plans

import (
	"fmt"
	"maps"
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
// kind and size and workload kind, sets the target's version and server
// settings, and sets the target's own fields and the workload's that it
// gives (server: valkey, resource: fenced), which those plug-ins check.
type Variant struct {
	Target   string            `yaml:"target"`
	Nodes    int               `yaml:"nodes"`
	Version  string            `yaml:"version"`
	Config   map[string]string `yaml:"config"`
	Workload string            `yaml:"workload"`
	Params   Params            `yaml:",inline"`
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
	}
	return nil
}

// Variants are the plans a comparison runs: for each variant and seed, a
// copy of p with the variant's target and workload, named
// <plan>--<workload>-<version>-<value>...-<setting>=<value>... (the values
// of the fields the variant sets, by field name, then its settings) so
// that its runs have a folder of their own. targetField says whether a
// field a variant gives is its target's (the rest are the workload's).
// The target starts from the plan's when the kinds match; the variant's
// settings go over the plan's.
//
// The fields a variant sets keep the line they have in it, for the errors
// that validating its plan may give.
func (p *Plan) Variants(targetField func(target, field string) bool) []*Plan {
	var out []*Plan
	for i, v := range p.Compare.Variants {
		at := fmt.Sprintf("compare.variants[%d]", i)
		for _, seed := range p.Compare.Seeds {
			q := *p
			q.Compare = nil
			q.Seed = seed
			q.lines = maps.Clone(p.lines)
			q.Target = Target{Kind: v.Target, Nodes: v.Nodes, Params: Params{}, Config: map[string]string{}}
			if v.Target == p.Target.Kind {
				q.Target.Version, q.Target.Image = p.Target.Version, p.Target.Image
				maps.Copy(q.Target.Params, p.Target.Params)
				maps.Copy(q.Target.Config, p.Target.Config)
			}
			q.Workload.Kind = v.Workload
			q.Workload.Params = Params{}
			maps.Copy(q.Workload.Params, p.Workload.Params)
			q.Name = p.Name + "--" + v.Workload
			q.set(at, "version", "target.version")
			if v.Version != "" {
				q.Target.Version = v.Version
				q.Name += "-" + v.Version
			}
			for _, k := range slices.Sorted(maps.Keys(v.Params)) {
				section := "workload"
				if targetField(v.Target, k) {
					section = "target"
					q.Target.Params[k] = v.Params[k]
				} else {
					q.Workload.Params[k] = v.Params[k]
				}
				q.set(at, k, section+"."+k)
				q.Name += "-" + v.Params[k].Value
			}
			for _, k := range slices.Sorted(maps.Keys(v.Config)) {
				q.Target.Config[k] = v.Config[k]
				q.set(at, "config."+k, "target.config."+k)
				q.Name += "-" + k + "=" + v.Config[k]
			}
			if len(q.Target.Config) == 0 {
				q.Target.Config = nil
			}
			q.set(at, "target", "target.kind")
			q.set(at, "nodes", "target.nodes")
			q.set(at, "workload", "workload.kind")
			q.Nemesis = slices.Clone(p.Nemesis)
			out = append(out, &q)
		}
	}
	return out
}

// set gives field path the line of the variant's field, if it has one.
func (p *Plan) set(variant, field, path string) {
	if l, ok := p.lines[joinPath(variant, field)]; ok {
		p.lines[path] = l
	}
}
