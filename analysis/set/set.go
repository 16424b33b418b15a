// Package set is the set checker: Jepsen's set check of adds and final
// reads, judged by the operations' recorded times.
package set

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/setop"
)

func init() { analysis.Register(Checker{}) }

// Checker is Jepsen's set check, judged by the recorded times of the
// operations (never by their order in the file). Every ok read counts as a
// final read; an element may be added more than once. With "before" meaning
// strictly earlier in recorded time (an operation overlapping another is
// concurrent with it, and may or may not be seen by it):
//
//   - an element is lost if some ok read misses it although an add of it
//     was acknowledged (ok) before that read was invoked;
//   - an element is unexpected if some ok read holds it although no add of
//     it may have taken effect: none was attempted, or every one failed
//     (in chaos's histories a fail means it did not take effect);
//   - an element is read from the future if some ok read holds it and
//     completed before every add of it that may have taken effect (ok,
//     info, or never completed) was invoked. Jepsen's set-full flags the
//     same anomaly; an element with no such add is unexpected instead.
//   - an element is recovered (not an anomaly) if some ok read holds it
//     and none of its adds was acknowledged, but one's outcome is unknown.
//
// The verdict is invalid if any element is lost, unexpected or read from
// the future, unknown if no read succeeded, and valid otherwise.
type Checker struct{}

func (Checker) Name() string { return "set" }

// setElement is what the history says of the adds of one element.
type setElement struct {
	// firstAck is the add acknowledged earliest, nil if none was.
	firstAck *history.Pair
	// firstTry is the add invoked earliest of those that may have taken
	// effect (not failed), nil if every add failed; tries counts those.
	firstTry *history.Pair
	tries    int
	// refused are the failed adds, in history order.
	refused []history.Pair
}

// note records one add of the element.
func (e *setElement) note(p history.Pair) {
	switch {
	case p.Done != nil && p.Done.Type == history.Fail:
		e.refused = append(e.refused, p)
		return
	case p.Done != nil && p.Done.Type == history.Ok && (e.firstAck == nil || p.Done.Time < e.firstAck.Done.Time):
		e.firstAck = &p
	}
	e.tries++
	if e.firstTry == nil || p.Inv.Time < e.firstTry.Inv.Time {
		e.firstTry = &p
	}
}

// setOutcomes counts add operations by outcome; an add never completed
// counts as unknown.
type setOutcomes struct{ acknowledged, refused, unknown int }

func (o *setOutcomes) note(p history.Pair) {
	switch {
	case p.Done == nil || p.Done.Type == history.Info:
		o.unknown++
	case p.Done.Type == history.Ok:
		o.acknowledged++
	case p.Done.Type == history.Fail:
		o.refused++
	}
}

func (Checker) Check(_ context.Context, in analysis.Input) analysis.Result {
	var (
		elements = map[int64]*setElement{}
		outcomes setOutcomes
		reads    []history.Pair
		bad      analysis.ErrCount
	)
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool {
		return op.Process >= 0 && (op.F == setop.FAdd || op.F == setop.FRead)
	}) {
		if p.Inv.F == setop.FRead {
			if p.Done != nil && p.Done.Type == history.Ok {
				reads = append(reads, p)
			}
			continue
		}
		var v setop.Value
		if err := p.Inv.Decode(&v); err != nil {
			bad.Add(err)
			continue
		}
		if v.Element == nil {
			bad.Add(fmt.Errorf("op #%d add has no element", p.Inv.Index))
			continue
		}
		e := elements[*v.Element]
		if e == nil {
			e = &setElement{}
			elements[*v.Element] = e
		}
		e.note(p)
		outcomes.note(p)
	}
	adds := outcomes.acknowledged + outcomes.refused + outcomes.unknown
	if len(reads) == 0 {
		r := analysis.UnknownResult("no final read succeeded, so no add can be judged")
		r.Stats = map[string]any{"adds": adds, "elements": len(elements)}
		return r
	}
	stats := map[string]any{"adds": adds, "elements": len(elements), "final_reads": len(reads),
		"acknowledged": outcomes.acknowledged, "refused": outcomes.refused, "unknown": outcomes.unknown}

	// Findings name the earliest read that shows each anomaly.
	slices.SortStableFunc(reads, func(a, b history.Pair) int { return cmp.Compare(a.Inv.Time, b.Inv.Time) })
	var (
		findings                            analysis.FindingList
		lost, unexpected, future, recovered = map[int64]bool{}, map[int64]bool{}, map[int64]bool{}, map[int64]bool{}
		lostBy                              = map[string]int{}
		sorted                              = slices.Sorted(maps.Keys(elements))
	)
	for _, r := range reads {
		var rv setop.Value
		if err := r.Done.Decode(&rv); err != nil {
			bad.Add(err)
			continue
		}
		seen := map[int64]bool{}
		for _, e := range rv.Read {
			seen[e] = true
		}
		for _, e := range sorted {
			a := elements[e].firstAck
			if lost[e] || seen[e] || a == nil || a.Done.Time >= r.Inv.Time {
				continue
			}
			lost[e] = true
			var av setop.Value
			a.Done.Decode(&av)
			lostBy[analysis.CmpOr(av.Node, "an unknown server")]++
			findings.Add(func() analysis.Finding { return lostAdd(e, *a, av, r, rv) })
		}
		for _, e := range rv.Read {
			el := elements[e]
			switch {
			case el == nil || el.firstTry == nil:
				if !unexpected[e] {
					unexpected[e] = true
					findings.Add(func() analysis.Finding { return unexpectedElement(e, el, r) })
				}
			case r.Done.Time < el.firstTry.Inv.Time:
				if !future[e] {
					future[e] = true
					findings.Add(func() analysis.Finding { return futureRead(e, el, r) })
				}
			}
			if el != nil && el.firstAck == nil && el.firstTry != nil {
				recovered[e] = true
			}
		}
	}
	for name, set := range map[string]map[int64]bool{"lost": lost, "unexpected": unexpected, "future": future} {
		stats[name] = len(set)
		if len(set) > 0 {
			stats[name+"_elements"] = intervals(slices.Sorted(maps.Keys(set)))
		}
	}
	stats["recovered"] = len(recovered)
	res := analysis.Result{Verdict: analysis.Valid, Stats: stats}
	findings.Put(&res)
	if findings.Total > 0 {
		res.Verdict = analysis.Invalid
	}
	if len(lost) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d acknowledged adds lost; acknowledged by %s.", len(lost), analysis.DescribeCounts(lostBy)))
	}
	if bad.N > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d entries unreadable, skipped; the first: %v", bad.N, bad.First))
		res.Verdict = analysis.Worst(res.Verdict, analysis.Unknown)
	}
	return res
}

func lostAdd(e int64, a history.Pair, av setop.Value, r history.Pair, rv setop.Value) analysis.Finding {
	holes := ""
	if rv.Holes != "" {
		holes = " The read's server left holes: " + rv.Holes + "."
	}
	return analysis.Finding{Kind: "lost-add", Explanation: fmt.Sprintf(
		"%s's add of %d was acknowledged by %s at %s (#%d), and is missing from %s's final read from %s, invoked at %s (#%d) and answered at #%d.%s",
		history.ProcessName(a.Inv.Process), e, analysis.CmpOr(av.Node, "an unknown server"), analysis.Secs(a.Done.Time), a.Done.Index,
		history.ProcessName(r.Inv.Process), analysis.CmpOr(rv.Node, "an unknown server"), analysis.Secs(r.Inv.Time), r.Inv.Index, r.Done.Index, holes),
		// The read's completion holds the whole set: its index is in the
		// explanation, its invocation among the ops.
		Ops: []history.Op{*a.Inv, *a.Done, *r.Inv}}
}

// unexpectedElement is the finding for e, held by read r, of which no add
// (el, nil if none) may have taken effect.
func unexpectedElement(e int64, el *setElement, r history.Pair) analysis.Finding {
	why, ops := "no client ever added it", []history.Op{}
	if el != nil {
		var refusals []string
		for _, a := range el.refused {
			refusals = append(refusals, strings.TrimSuffix(fmt.Sprintf("#%d %s", a.Done.Index, a.Done.Error), " "))
			ops = append(ops, *a.Inv, *a.Done)
		}
		why = fmt.Sprintf("every add of it was refused (%s)", strings.Join(refusals, ", "))
	}
	return analysis.Finding{Kind: "unexpected-element", Explanation: fmt.Sprintf(
		"%s's final read (#%d) holds %d, but %s.", history.ProcessName(r.Inv.Process), r.Done.Index, e, why),
		Ops: append(ops, *r.Inv)}
}

// futureRead is the finding for e, held by read r, which completed before
// any add of e that may have taken effect was invoked.
func futureRead(e int64, el *setElement, r history.Pair) analysis.Finding {
	a := el.firstTry
	later := ""
	if el.tries > 1 {
		later = fmt.Sprintf(" (and %d later ones)", el.tries-1)
	}
	return analysis.Finding{Kind: "future-read", Explanation: fmt.Sprintf(
		"%s's read (#%d) holds %d, answered at %s, before any add of it was invoked: the first that may have taken effect is %s's at %s (#%d)%s.",
		history.ProcessName(r.Inv.Process), r.Done.Index, e, analysis.Secs(r.Done.Time),
		history.ProcessName(a.Inv.Process), analysis.Secs(a.Inv.Time), a.Inv.Index, later),
		Ops: []history.Op{*r.Inv, *a.Inv}}
}

// intervals writes sorted, distinct elements as runs, as Jepsen's set
// checker does: "1..3 5".
func intervals(es []int64) string {
	var b strings.Builder
	for i := 0; i < len(es); {
		j := i
		for j+1 < len(es) && es[j+1] == es[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprint(&b, es[i])
		if j > i {
			fmt.Fprintf(&b, "..%d", es[j])
		}
		i = j + 1
	}
	return b.String()
}
