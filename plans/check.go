package plans

import (
	"slices"
	"strings"
)

// Expectations are the values of a plan's expect field ("" for none).
var Expectations = []string{"", "valid", "invalid", "varies"}

// check refuses what cannot run on any target. The sections' fields are
// checked when the plan is bound to its plug-ins (package bind), once
// each plug-in has decoded its own: a misspelt shared field is then
// refused as unknown, rather than reported missing.
func (p *Plan) check() error {
	if err := p.checkComparison(); err != nil {
		return err
	}
	if p.Name == "" {
		return p.Errorf("name", "missing; every plan needs a name (it names the results folder)")
	}
	if strings.ContainsAny(p.Name, `/\ `) {
		return p.Errorf("name", "%q: use letters, digits and dashes", p.Name)
	}
	if !slices.Contains(Expectations, p.Expect) {
		return p.Errorf("expect", "%q: expected one of valid, invalid, varies", p.Expect)
	}
	if p.TimeLimit.Duration <= 0 {
		return p.Errorf("time_limit", "missing or not positive; expected a duration such as 60s")
	}
	if p.Recovery.Duration < 0 {
		return p.Errorf("recovery", "%s: expected a duration of 0 or more", p.Recovery)
	}
	if p.Target.Kind == "" {
		return p.Errorf("target.kind", "missing")
	}
	if p.Target.Nodes < 0 {
		return p.Errorf("target.nodes", "%d: expected a positive number", p.Target.Nodes)
	}
	if p.Workload.Kind == "" {
		return p.Errorf("workload.kind", "missing")
	}
	for i, f := range p.Nemesis {
		if f.Kind == "" {
			return p.Errorf(FaultPath(i)+".kind", "missing")
		}
	}
	return nil
}
