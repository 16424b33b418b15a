package plans

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Expectations are the values of a plan's expect field ("" for none).
var Expectations = []string{"", "valid", "invalid", "varies"}

// check fills defaults and refuses what cannot run on any target. The
// workload and the faults are checked by the runner (CheckWorkload,
// CheckFault) once their plug-ins have decoded their own fields: a
// misspelt shared field is then refused as unknown, rather than reported
// missing.
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
			return p.Errorf(FaultField(i, "kind"), "missing")
		}
	}
	return nil
}

// CheckWorkload checks the fields every workload shares and fills their
// defaults.
func (p *Plan) CheckWorkload() error {
	w := &p.Workload
	if w.Clients == 0 {
		w.Clients = 3
	}
	if w.Clients < 1 {
		return p.Errorf("workload.clients", "%d: expected at least 1", w.Clients)
	}
	return nil
}

// CheckFault checks the fields every fault shares, of the plan's i-th
// fault, and fills their defaults.
func (p *Plan) CheckFault(i int) error {
	f := &p.Nemesis[i]
	at := func(field string) string { return FaultField(i, field) }
	if f.Count == 0 {
		f.Count = 1
	}
	if f.Count < 1 {
		return p.Errorf(at("count"), "%d: expected at least 1", f.Count)
	}
	if f.Target == "clients" && f.Count > p.Workload.Clients {
		return p.Errorf(at("count"), "%d: the workload has only %d clients", f.Count, p.Workload.Clients)
	}
	if f.Duration.Duration <= 0 {
		return p.Errorf(at("duration"), "missing or not positive; expected a duration such as 5s")
	}
	if f.Times < 0 {
		return p.Errorf(at("times"), "%d: expected 0 (until the run ends) or more", f.Times)
	}
	if f.Interval.Duration == 0 {
		f.Interval = f.Duration
	}
	if f.Interval.Duration < f.Duration.Duration {
		return p.Errorf(at("interval"), "%s: shorter than the fault's duration (%s); faults of one kind do not overlap", f.Interval, f.Duration)
	}
	if f.FirstAfter.Duration < 0 || f.FirstAfter.Duration > p.TimeLimit.Duration-f.Duration.Duration {
		return p.Errorf(at("first_after"), "%s: the first fault (lasting %s) must end within the time limit (%s)", f.FirstAfter, f.Duration, p.TimeLimit)
	}
	return nil
}

// WithTimeLimit overrides the plan's time limit (from the command line).
// Faults that would no longer fit are refused.
func (p *Plan) WithTimeLimit(d time.Duration) error {
	p.TimeLimit.Duration = d
	if err := p.check(); err != nil {
		return err
	}
	for i := range p.Nemesis {
		if err := p.CheckFault(i); err != nil {
			return err
		}
	}
	return nil
}

// FaultPath is the path of the plan's i-th fault, for Errorf.
func FaultPath(i int) string { return "nemesis[" + strconv.Itoa(i) + "]" }

// FaultField is the path of a field of the plan's i-th fault, for Errorf.
func FaultField(i int, field string) string { return FaultPath(i) + "." + field }
