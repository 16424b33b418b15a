// Package shrink reduces a plan that shows a finding to a smaller one that
// still does, by delta debugging (Zeller's ddmin, greedily): it drops
// faults, shortens them, cuts the time limit and takes clients and nodes
// away, keeping each change only if the finding still shows, as an oracle
// (replays of the candidate) says. Smaller plans are quicker to run, and
// what is left is what the finding needs.
package shrink

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chaos-testing/chaos/plans"
)

// Oracle says whether plan p, valid, still shows the finding.
type Oracle func(ctx context.Context, p *plans.Plan) (bool, error)

// Validator checks a candidate plan as a run does (bind.Bind): a change
// that makes the plan illegal is not tried.
type Validator func(p *plans.Plan) error

// Step is a change the shrinker kept.
type Step struct {
	What string
	// Runs is how many runs the shrinker had made when it kept it.
	Runs int
}

// minDuration is the shortest a fault is shortened to: shorter faults
// barely happen.
const minDuration = 100 * time.Millisecond

// Shrink reduces p, a plan with every default written out (a replay's,
// bind.Plan.Resolved), until no change keeps the finding, trying changes
// biggest first: halves of the faults, then each fault, each fault on
// clients aimed at the lock's holder instead, each fault half as long, the time limit cut to the end of the last fault, half the
// clients or one fewer, two nodes fewer. It returns the smallest plan found and the
// changes kept, in order; tried, if given, hears of every change tried
// and whether it kept the finding.
func Shrink(ctx context.Context, p *plans.Plan, valid Validator, oracle Oracle, tried func(what string, kept bool)) (*plans.Plan, []Step, error) {
	var steps []Step
	runs := 0
	for changed := true; changed; {
		changed = false
		for _, c := range candidates(p) {
			q := c.apply(clone(p))
			if q == nil || valid(q) != nil {
				continue
			}
			runs++
			ok, err := oracle(ctx, q)
			if err != nil {
				return p, steps, fmt.Errorf("%s: %w", c.what, err)
			}
			if tried != nil {
				tried(c.what, ok)
			}
			if ok {
				p, changed = q, true
				steps = append(steps, Step{What: c.what, Runs: runs})
				break // candidates of the smaller plan next
			}
		}
	}
	return p, steps, nil
}

// change is one reduction of a plan; apply returns nil when it does not
// apply (a fault left without victims).
type change struct {
	what  string
	apply func(p *plans.Plan) *plans.Plan
}

// candidates are the reductions of p to try, biggest first.
func candidates(p *plans.Plan) []change {
	var out []change
	n := len(p.Nemesis)
	// Down to no fault at all: a finding that shows without one (a stale
	// serializable read from a follower that lags) needs none.
	for size := max(n/2, min(n, 1)); size >= 1; size /= 2 {
		for from := 0; from < n; from += size {
			to := min(from+size, n)
			out = append(out, change{fmt.Sprintf("drop faults %s", span(p, from, to)), func(p *plans.Plan) *plans.Plan {
				p.Nemesis = slices.Delete(p.Nemesis, from, to)
				return p
			}})
		}
	}
	for i, f := range p.Nemesis {
		// A replay names the clients a fault hit, but the client that held
		// the lock then need not hold it at that moment of a replay: the
		// role, when the workload has one, is what the finding needed.
		if f.Target == "clients" {
			out = append(out, change{fmt.Sprintf("fault %d (%s at %s) hits the holder, not %s", i, f.Kind, f.FirstAfter, strings.Join(f.Nodes, ", ")), func(p *plans.Plan) *plans.Plan {
				p.Nemesis[i].Target, p.Nemesis[i].Nodes, p.Nemesis[i].Count = "holder", nil, len(f.Nodes)
				return p
			}})
		}
	}
	for i, f := range p.Nemesis {
		if d := (f.Duration.Duration / 2).Round(time.Millisecond); d >= minDuration {
			out = append(out, change{fmt.Sprintf("fault %d (%s at %s) lasts %s, not %s", i, f.Kind, f.FirstAfter, d, f.Duration), func(p *plans.Plan) *plans.Plan {
				p.Nemesis[i].Duration.Duration = d
				p.Nemesis[i].Interval.Duration = max(d, p.Nemesis[i].Interval.Duration)
				return p
			}})
		}
	}
	if end := lastEnd(p); end < p.TimeLimit.Duration {
		out = append(out, change{fmt.Sprintf("time limit %s, not %s", end, p.TimeLimit), func(p *plans.Plan) *plans.Plan {
			p.TimeLimit.Duration = end
			return p
		}})
	}
	for _, fewer := range slices.Compact([]int{p.Workload.Clients / 2, p.Workload.Clients - 1}) {
		if c := p.Workload.Clients; fewer >= 1 {
			out = append(out, change{fmt.Sprintf("%d clients, not %d", fewer, c), func(p *plans.Plan) *plans.Plan {
				p.Workload.Clients = fewer
				return keepVictims(p, "c", 0, fewer-1)
			}})
		}
	}
	if n := p.Target.Nodes; n > 1 {
		out = append(out, change{fmt.Sprintf("%d nodes, not %d", max(n-2, 1), n), func(p *plans.Plan) *plans.Plan {
			p.Target.Nodes = max(n-2, 1)
			return keepVictims(p, "n", 1, p.Target.Nodes)
		}})
	}
	return out
}

// settle is how long a run goes on after its last fault for the finding
// to show: a paused holder writes once it resumes, a healed leader
// answers as it comes back. (A Redlock pause cut to a second and a half
// after its end lost its finding.)
const settle = 5 * time.Second

// lastEnd is when the plan's last fault ends, with time to settle, rounded
// up to a second.
func lastEnd(p *plans.Plan) time.Duration {
	var end time.Duration
	for _, f := range p.Nemesis {
		if f.Times != 1 {
			return p.TimeLimit.Duration // repeated until the run ends
		}
		end = max(end, f.FirstAfter.Duration+f.Duration.Duration)
	}
	return (end + settle + time.Second - 1).Truncate(time.Second)
}

// keepVictims takes out of the faults' named victims ("nodes") those of
// prefix outside first..last; nil if a fault is left with none.
func keepVictims(p *plans.Plan, prefix string, first, last int) *plans.Plan {
	for i, f := range p.Nemesis {
		if len(f.Nodes) == 0 {
			continue
		}
		kept := slices.DeleteFunc(slices.Clone(f.Nodes), func(n string) bool {
			var k int
			_, err := fmt.Sscanf(n, prefix+"%d", &k)
			return err == nil && strings.HasPrefix(n, prefix) && (k < first || k > last)
		})
		if len(kept) == 0 {
			return nil
		}
		p.Nemesis[i].Nodes, p.Nemesis[i].Count = kept, min(f.Count, len(kept))
	}
	return p
}

// span names faults from..to-1 of p: "2 (pause at 13s)" or "0 to 3".
func span(p *plans.Plan, from, to int) string {
	if to-from == 1 {
		return fmt.Sprintf("%d (%s at %s)", from, p.Nemesis[from].Kind, p.Nemesis[from].FirstAfter)
	}
	return fmt.Sprintf("%d to %d", from, to-1)
}

// clone copies what changes make to p.
func clone(p *plans.Plan) *plans.Plan {
	q := *p
	q.Nemesis = slices.Clone(p.Nemesis)
	return &q
}
