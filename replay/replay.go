// Package replay makes the plan that runs a run again: the plan it ran,
// with its seed, each fault it injected at the same time and on the same
// victims by name; and says whether a replay found what the run found.
// The clients' interleavings cannot be replayed, nor the servers' timing:
// how often a replay finds it again measures how reproducible a finding is.
package replay

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/bind"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/nemesis"
	"github.com/chaos-testing/chaos/plans"
)

// Plan is the plan of a replay of a run of b whose history is h: the
// plan as it ran (bind.Plan.Resolved), in which each fault the run
// recorded of an entry whose kind can be pinned (nemesis.Pinner) becomes
// an entry of its own, injected once (times 1), as long after the
// schedule's start as it was, and pinned to what it hit. An entry of
// another kind (a combined one, which draws its kinds) is kept as it was,
// at its index, so that its seeded draws repeat. Notes say what was not
// pinned.
func Plan(b *bind.Plan, h []history.Op) (*plans.Plan, []string, error) {
	p, err := b.Resolved()
	if err != nil {
		return nil, nil, err
	}
	windows := history.FaultWindows(h)
	start := scheduleStart(p, windows)
	q := *p
	q.Name = p.Name + "-replay"
	q.Nemesis = slices.Clone(p.Nemesis)
	var extra []plans.Fault
	var notes []string
	used := map[int]bool{} // windows pinned already, by From
	for i, f := range p.Nemesis {
		if !b.Faults[i].Pinnable() {
			notes = append(notes, fmt.Sprintf("nemesis[%d] (%s) runs as planned: its faults cannot be pinned to their victims", i, f.Kind))
			continue
		}
		var pinned []plans.Fault
		late := max(scheduleSlack, f.Interval.Duration/2)
		for _, w := range occurrences(f, windows, start, p.TimeLimit.Duration, late, used) {
			g, err := pin(b.Faults[i], w.Victims)
			if errors.Is(err, nemesis.ErrNobodyHit) {
				notes = append(notes, fmt.Sprintf("nemesis[%d] (%s) at %.3fs hit nobody: left out", i, f.Kind, w.Start.Seconds()))
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("nemesis[%d] (%s) at %.3fs: %w", i, f.Kind, w.Start.Seconds(), err)
			}
			if g, ok := once(g, w.Start-start, p.TimeLimit.Duration); ok {
				pinned = append(pinned, g)
			}
		}
		if len(pinned) == 0 {
			continue // it never fired: as planned, it will not fire again
		}
		q.Nemesis[i] = pinned[0]
		extra = append(extra, pinned[1:]...)
	}
	q.Nemesis = append(q.Nemesis, extra...)
	return &q, notes, nil
}

// pin is fault f pinned to victims, as a plan's fault.
func pin(f *nemesis.Fault, victims []string) (plans.Fault, error) {
	g, err := f.Pin(victims)
	if err != nil {
		return plans.Fault{}, err
	}
	return g.Plan()
}

// once is pinned fault g injected once, at offset from the schedule's
// start, cut to the time limit as the run cut it; false if none is left.
func once(g plans.Fault, offset, limit time.Duration) (plans.Fault, bool) {
	offset = max(offset, 0).Round(time.Millisecond)
	g.FirstAfter.Duration = offset
	g.Duration.Duration = min(g.Duration.Duration, limit-offset)
	g.Interval, g.Times = g.Duration, 1
	return g, g.Duration.Duration > 0
}

// How far from its due time a fault's recorded start may be. The
// schedule writes a start's invocation at once, so the time it was due
// (estimated from another fault: scheduleStart) is met within a
// millisecond, either way, or late by scheduleSlack on a loaded machine;
// or later still when the heal of the fault before it overran that time
// (a restart after a kill that took seconds): the next starts then at
// once, which a fault's occurrences allow for, up to half its interval.
const (
	earlySlack    = 50 * time.Millisecond
	scheduleSlack = 500 * time.Millisecond
)

// due are the offsets from the schedule's start at which entry f starts
// its faults, within the time limit.
func due(f plans.Fault, limit time.Duration) []time.Duration {
	var out []time.Duration
	for t, k := f.FirstAfter.Duration, 0; t < limit && (f.Times == 0 || k < f.Times); t, k = t+f.Interval.Duration, k+1 {
		out = append(out, t)
		if f.Interval.Duration <= 0 {
			break
		}
	}
	return out
}

// occurrences are the recorded faults of entry f: of its kind, each
// from earlySlack before a time it was due to late after it, and not in
// used (which it adds them to, if given: two entries of one kind share no
// fault).
func occurrences(f plans.Fault, windows []history.FaultWindow, start, limit, late time.Duration, used map[int]bool) []history.FaultWindow {
	var out []history.FaultWindow
	for _, d := range due(f, limit) {
		for _, w := range windows {
			if w.Kind == f.Kind && !used[w.From] && w.Start >= start+d-earlySlack && w.Start <= start+d+late {
				out = append(out, w)
				if used != nil {
					used[w.From] = true
				}
				break
			}
		}
	}
	return out
}

// scheduleStart is when, in the history's time, the run's fault schedule
// began, which the history does not record: the offset at which the
// most recorded faults start close to a time they were due (the
// earliest such, on a tie).
func scheduleStart(p *plans.Plan, windows []history.FaultWindow) time.Duration {
	best, bestN := time.Duration(0), 0
	for _, f := range p.Nemesis {
		for _, w := range windows {
			if w.Kind != f.Kind || w.Start < f.FirstAfter.Duration {
				continue
			}
			start := w.Start - f.FirstAfter.Duration
			n := 0
			for _, g := range p.Nemesis {
				n += len(occurrences(g, windows, start, p.TimeLimit.Duration, scheduleSlack, nil))
			}
			if n > bestN || n == bestN && start < best {
				best, bestN = start, n
			}
		}
	}
	return best
}

// Same are the kinds of finding, by checker ("lock: stale-write"), that
// the original run found and a replay found again.
func Same(original, replayed analysis.Report) []string {
	var out []string
	for _, kind := range Kinds(original) {
		if slices.Contains(Kinds(replayed), kind) {
			out = append(out, kind)
		}
	}
	return out
}

// Kinds are the kinds of finding of a report, by checker, each once.
func Kinds(r analysis.Report) []string {
	var out []string
	for _, res := range r.Results {
		for _, f := range res.Findings {
			if k := res.Checker + ": " + f.Kind; !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}
