package analysis

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/chaos-testing/chaos/history"
)

func init() { Register(SetChecker{}) }

// SetChecker is Jepsen's set check: every add that was acknowledged before
// a final read began must be in that read (else it was lost), and a read
// may hold only elements whose add was attempted and not refused (else
// they are unexpected). Adds with unknown outcome may go either way.
type SetChecker struct{}

func (SetChecker) Name() string { return "set" }

func (SetChecker) Check(_ context.Context, in Input) Result {
	var (
		adds  = map[int64]history.Pair{}
		reads []history.Pair
		bad   errCount
	)
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool {
		return op.Process >= 0 && (op.F == history.FAdd || op.F == history.FRead)
	}) {
		var v history.SetValue
		if err := p.Inv.Decode(&v); err != nil {
			bad.add(err)
			continue
		}
		switch {
		case p.Inv.F == history.FRead:
			if p.Done != nil && p.Done.Type == history.Ok {
				reads = append(reads, p)
			}
		case v.Element == nil:
			bad.add(fmt.Errorf("op #%d add has no element", p.Inv.Index))
		default:
			adds[*v.Element] = p
		}
	}
	if len(reads) == 0 {
		r := unknownResult("no final read succeeded, so no add can be judged")
		r.Stats = map[string]any{"adds": len(adds)}
		return r
	}
	stats := map[string]any{"adds": len(adds), "final_reads": len(reads)}
	count := func(typ history.Type) int {
		n := 0
		for _, a := range adds {
			if a.Done != nil && a.Done.Type == typ || a.Done == nil && typ == history.Info {
				n++
			}
		}
		return n
	}
	stats["acknowledged"], stats["refused"], stats["unknown"] = count(history.Ok), count(history.Fail), count(history.Info)

	var findings findingList
	lost := map[int64]bool{}
	lostBy := map[string]int{}
	unexpected, recovered := map[int64]bool{}, map[int64]bool{}
	elements := slices.Sorted(maps.Keys(adds))
	for _, r := range reads {
		var rv history.SetValue
		if err := r.Done.Decode(&rv); err != nil {
			bad.add(err)
			continue
		}
		seen := map[int64]bool{}
		for _, e := range rv.Read {
			seen[e] = true
		}
		for _, e := range elements {
			a := adds[e]
			if lost[e] || a.Done == nil || a.Done.Type != history.Ok || a.Done.Index > r.Inv.Index || seen[e] {
				continue
			}
			lost[e] = true
			var av history.SetValue
			a.Done.Decode(&av)
			lostBy[cmpOr(av.Node, "an unknown server")]++
			findings.add(func() Finding {
				return Finding{Kind: "lost-add", Explanation: fmt.Sprintf(
					"%s's add of %d was acknowledged by %s at %s (#%d), and is missing from %s's final read from %s, invoked at %s (#%d) and answered at #%d.",
					history.ProcessName(a.Inv.Process), e, cmpOr(av.Node, "an unknown server"), secs(a.Done.Time), a.Done.Index,
					history.ProcessName(r.Inv.Process), cmpOr(rv.Node, "an unknown server"), secs(r.Inv.Time), r.Inv.Index, r.Done.Index),
					// The read's completion holds the whole set: its index is
					// in the explanation, its invocation among the ops.
					Ops: []history.Op{*a.Inv, *a.Done, *r.Inv}}
			})
		}
		for _, e := range rv.Read {
			a, attempted := adds[e]
			switch {
			case !attempted || a.Done != nil && a.Done.Type == history.Fail:
				if unexpected[e] {
					continue
				}
				unexpected[e] = true
				findings.add(func() Finding {
					why, ops := "no client ever added it", []history.Op{*r.Inv}
					if attempted {
						why, ops = fmt.Sprintf("its add was refused (#%d %s)", a.Done.Index, a.Done.Error), []history.Op{*a.Inv, *a.Done, *r.Inv}
					}
					return Finding{Kind: "unexpected-element", Explanation: fmt.Sprintf(
						"%s's final read (#%d) holds %d, but %s.", history.ProcessName(r.Inv.Process), r.Done.Index, e, why), Ops: ops}
				})
			case a.Done == nil || a.Done.Type == history.Info:
				recovered[e] = true
			}
		}
	}
	stats["lost"], stats["unexpected"], stats["recovered"] = len(lost), len(unexpected), len(recovered)
	res := Result{Verdict: Valid, Stats: stats, Findings: findings.list, FindingsTotal: findings.total}
	if findings.total > 0 {
		res.Verdict = Invalid
	}
	if len(lost) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d acknowledged adds lost; acknowledged by %s.", len(lost), describeCounts(lostBy)))
	}
	if bad.n > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d entries unreadable, skipped; the first: %v", bad.n, bad.first))
		res.Verdict = Worst(res.Verdict, Unknown)
	}
	return res
}
