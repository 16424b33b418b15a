// Package primaries is the primaries checker: split brain in a
// primary-replica system, from the observer's polls of each node's role.
package primaries

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/roleop"
	"github.com/chaos-testing/chaos/ops/setop"
)

func init() { analysis.Register(Checker{}) }

// Checker finds split brain in a primary-replica system from the
// observer's role polls: two servers that each claimed to be primary and
// took writes, over an interval they share.
//
// A server's span as primary runs from the answer of the first of a run of
// consecutive polls in which it claimed primary and took the probe write,
// to the invocation of the last of them: it took a write at or before the
// span's start and at or after its end, and no poll in between saw it
// refuse one. Two servers whose spans overlap both acted as primary over
// the overlap. Clients' adds acknowledged by either in it are counted as
// further evidence.
type Checker struct{}

func (Checker) Name() string { return "primaries" }

// primarySpan is a run of a server's polls that found it acting as primary.
type primarySpan struct {
	node        string
	first, last history.Pair
}

func (s primarySpan) from() time.Duration { return s.first.Done.Time }
func (s primarySpan) to() time.Duration   { return s.last.Inv.Time }

func (Checker) Check(_ context.Context, in analysis.Input) analysis.Result {
	var bad analysis.ErrCount
	polls := 0
	open := map[string]*primarySpan{}
	var spans []primarySpan
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool { return op.Process == history.Observer && op.F == roleop.FRole }) {
		var v roleop.Value
		if p.Done == nil {
			continue
		}
		if err := p.Done.Decode(&v); err != nil {
			bad.Add(err)
			continue
		}
		polls++
		acting := p.Done.Type == history.Ok && isPrimary(v.Role) && v.Accepts
		s := open[v.Node]
		switch {
		case acting && s == nil:
			open[v.Node] = &primarySpan{node: v.Node, first: p, last: p}
		case acting:
			s.last = p
		case s != nil:
			// A poll that timed out is no evidence either way, but it ends
			// what the polls can vouch for.
			spans = append(spans, *s)
			delete(open, v.Node)
		}
	}
	for _, n := range analysis.SortedKeys(open) {
		spans = append(spans, *open[n])
	}
	if polls == 0 {
		return analysis.UnknownResult("no role observations: the target's servers were never polled")
	}
	acks := acknowledgedBy(in.History)
	var findings analysis.FindingList
	var overlap time.Duration
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			from, to := max(a.from(), b.from()), min(a.to(), b.to())
			if a.node == b.node || from >= to {
				continue
			}
			overlap += to - from
			findings.Add(func() analysis.Finding {
				return analysis.Finding{Kind: "two-primaries", Explanation: fmt.Sprintf(
					"%s and %s both acted as primary from %s to %s: each took writes before and after, with no refusal seen (%s polls #%d..#%d, %s polls #%d..#%d); clients' adds acknowledged in that time: %s.",
					a.node, b.node, analysis.Secs(from), analysis.Secs(to), a.node, a.first.Done.Index, a.last.Inv.Index, b.node, b.first.Done.Index, b.last.Inv.Index,
					describeAcks(acks, from, to, a.node, b.node)),
					Ops: []history.Op{*a.first.Inv, *a.first.Done, *a.last.Inv, *a.last.Done, *b.first.Inv, *b.first.Done, *b.last.Inv, *b.last.Done}}
			})
		}
	}
	res := analysis.Result{Verdict: analysis.Valid, Stats: map[string]any{"role_polls": polls, "primary_spans": len(spans), "two_primaries_s": overlap.Seconds()}}
	findings.Put(&res)
	if findings.Total > 0 {
		res.Verdict = analysis.Invalid
	}
	if bad.N > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d entries unreadable, skipped; the first: %v", bad.N, bad.First))
		res.Verdict = analysis.Worst(res.Verdict, analysis.Unknown)
	}
	return res
}

func isPrimary(role string) bool {
	return slices.Contains([]string{"master", "primary", "leader"}, role)
}

// ack is a client's add that a server acknowledged, and when.
type ack struct {
	node string
	at   time.Duration
}

// acknowledgedBy lists the clients' acknowledged adds whose server is known.
func acknowledgedBy(h []history.Op) []ack {
	var acks []ack
	for i := range h {
		op := &h[i]
		var v setop.Value
		if op.Process >= 0 && op.F == setop.FAdd && op.Type == history.Ok && op.Decode(&v) == nil && v.Node != "" {
			acks = append(acks, ack{v.Node, op.Time})
		}
	}
	return acks
}

// describeAcks counts the adds each node acknowledged in [from, to].
func describeAcks(acks []ack, from, to time.Duration, nodes ...string) string {
	m := map[string]int{}
	for _, n := range nodes {
		m[n] = 0
	}
	for _, a := range acks {
		if _, ok := m[a.node]; ok && a.at >= from && a.at <= to {
			m[a.node]++
		}
	}
	return analysis.DescribeCounts(m)
}
