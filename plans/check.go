package plans

import (
	"strconv"
	"strings"
	"time"
)

// check fills defaults and refuses what cannot run on any target. Names of
// targets, workloads and nemeses, and the fields only some of them use, are
// checked by the runner against the plug-ins, which know them.
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
	if p.TimeLimit.Duration <= 0 {
		return p.Errorf("time_limit", "missing or not positive; expected a duration such as 60s")
	}
	if p.Target.Kind == "" {
		return p.Errorf("target.kind", "missing")
	}
	if p.Target.Nodes < 0 {
		return p.Errorf("target.nodes", "%d: expected a positive number", p.Target.Nodes)
	}
	if err := p.checkWorkload(); err != nil {
		return err
	}
	for i := range p.Nemesis {
		if err := p.checkFault(i); err != nil {
			return err
		}
	}
	return nil
}

func (p *Plan) checkWorkload() error {
	w := &p.Workload
	if w.Kind == "" {
		return p.Errorf("workload.kind", "missing")
	}
	if w.Clients == 0 {
		w.Clients = 3
	}
	if w.Clients < 1 {
		return p.Errorf("workload.clients", "%d: expected at least 1", w.Clients)
	}
	return nil
}

func (p *Plan) checkFault(i int) error {
	f := &p.Nemesis[i]
	at := func(field string) string { return FaultField(i, field) }
	if f.Kind == "" {
		return p.Errorf(at("kind"), "missing")
	}
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
	return p.check()
}

// FaultField is the path of a field of the plan's i-th fault, for Errorf.
func FaultField(i int, field string) string { return "nemesis[" + strconv.Itoa(i) + "]." + field }
