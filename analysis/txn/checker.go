package txn

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/analysis"
)

func init() {
	analysis.Register(ListAppend{})
	analysis.Register(RWRegister{})
}

// ListAppend is Elle's list-append checker: keys are lists, transactions
// append unique values and read whole lists, so every read reveals the
// order of the appends before it.
type ListAppend struct{}

func (ListAppend) Name() string { return "list-append" }

func (c ListAppend) Check(ctx context.Context, in analysis.Input) analysis.Result {
	return check(ctx, in, workload{writeF: "append", lists: true, infer: func(ctx context.Context, o *observation, found *findings, es *edges) (dataExplainer, error) {
		lo := o.inferListOrders(found)
		o.linkListAppend(lo, es)
		return func(a, b int32, r rel, an, bn string) string { return o.explainListAppend(lo, a, b, r, an, bn) }, nil
	}})
}

// RWRegister is Elle's rw-register checker: keys are registers,
// transactions write unique values and read them back, so a read names
// its writer, and only part of each version order can be proven.
type RWRegister struct{}

func (RWRegister) Name() string { return "rw-register" }

func (c RWRegister) Check(ctx context.Context, in analysis.Input) analysis.Result {
	return check(ctx, in, workload{writeF: "w", infer: func(ctx context.Context, o *observation, found *findings, es *edges) (dataExplainer, error) {
		return o.explainRWRegister, o.linkRWRegister(ctx, found, es)
	}})
}

// workload is what sets the two checkers apart.
type workload struct {
	writeF string // the write micro-op: "append" or "w"
	lists  bool   // reads return lists
	// infer derives the version orders, reports what they show, adds the
	// data dependencies, and returns how to explain them.
	infer func(context.Context, *observation, *findings, *edges) (dataExplainer, error)
}

// check runs the analysis both checkers share: parse, per-read and
// per-transaction anomalies, dependency graph, cycles, verdict.
func check(ctx context.Context, in analysis.Input, w workload) analysis.Result {
	o, bad, err := observe(ctx, in.History, w.writeF, w.lists)
	if err != nil {
		return unknown(fmt.Sprintf("history not checked: %v", err))
	}
	stats := map[string]any{"txns": len(o.txns), "committed": o.committed, "keys": len(o.keys)}
	var notes []string
	if bad.n > 0 {
		notes = append(notes, fmt.Sprintf("%d transactions unreadable, checked as if they had no micro-ops; the first: %v", bad.n, bad.first))
	}
	if o.committed == 0 {
		r := unknown("no transaction committed, so there is nothing to judge")
		r.Notes, r.Stats = append(notes, r.Notes...), stats
		return r
	}
	found := newFindings()
	o.checkReads(found)
	o.checkInternal(found)
	o.checkLostUpdates(found)
	es := newEdges(len(o.txns))
	explain, err := w.infer(ctx, o, found, es)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return unknown(fmt.Sprintf("check stopped: %v", err))
	}
	o.linkProcesses(es)
	o.linkRealtime(es)
	g := newGraph(es)
	es = nil
	stats["edges"] = g.edgeCount()
	cycles, gaveUp, err := findCycles(ctx, g, stats)
	if err != nil {
		return unknown(fmt.Sprintf("check stopped: %v", err))
	}
	for _, c := range cycles {
		found.add(c.class, func() analysis.Finding { return o.explainCycle(c, explain) })
	}
	if len(gaveUp) > 0 {
		notes = append(notes, fmt.Sprintf("The cycle search ran out of budget for %s: shorter or more severe cycles than those listed may exist.", strings.Join(gaveUp, ", ")))
	}
	return result(found, stats, notes, bad.n > 0, g.edgeCount() == 0)
}

// findCycles searches each strongly connected component of g for cycles.
// A component needs two transactions: one with a hub is only the path
// from a transaction through the hub back to itself, which is no cycle.
func findCycles(ctx context.Context, g *graph, stats map[string]any) ([]cycle, []string, error) {
	all := make([]int32, g.vertices())
	for i := range all {
		all[i] = int32(i)
	}
	comps, err := newTarjan(g).components(ctx, all, allRels, nil)
	if err != nil {
		return nil, nil, err
	}
	comps = slices.DeleteFunc(comps, func(comp []int32) bool {
		return len(comp)-countIf(comp, g.isHub) < 2
	})
	stats["sccs"] = len(comps)
	search := newCycleSearch(ctx, g)
	var cycles []cycle
	for _, comp := range comps {
		cs, err := search.component(comp)
		if err != nil {
			return nil, nil, err
		}
		cycles = append(cycles, cs...)
	}
	slices.Sort(search.gaveUp)
	return cycles, slices.Compact(search.gaveUp), nil
}

// countIf is how many of vs pred holds for.
func countIf(vs []int32, pred func(int32) bool) int {
	n := 0
	for _, v := range vs {
		if pred(v) {
			n++
		}
	}
	return n
}

// result turns the findings into a verdict: invalid with any anomaly
// (every one of them rules out strict serializability); else unknown if
// part of the history could not be read, or if no dependency at all was
// inferred (Elle's empty-transaction-graph); else valid.
func result(found *findings, stats map[string]any, notes []string, unreadable, emptyGraph bool) analysis.Result {
	r := analysis.Result{Verdict: analysis.Valid, Stats: stats, Findings: found.list(), FindingsTotal: found.total(), Kinds: found.counts}
	stats["anomalies"] = found.counts
	if emptyGraph {
		notes = append(notes, "No dependency between transactions could be inferred (Elle's empty-transaction-graph): the history shows nothing to judge isolation by.")
	}
	switch {
	case r.FindingsTotal > 0:
		r.Verdict = analysis.Invalid
		kinds := slices.Sorted(maps.Keys(found.counts))
		not, alsoNot := boundary(kinds)
		stats["not"], stats["also_not"] = not, alsoNot
		also := ""
		if len(alsoNot) > 0 {
			also = ", and so also " + joinAnd(alsoNot)
		}
		notes = append([]string{fmt.Sprintf("Anomalies %s rule out %s%s.", describeCounts(found.counts), joinAnd(not), also)}, notes...)
	case unreadable || emptyGraph:
		r.Verdict = analysis.Unknown
	}
	r.Notes = notes
	return r
}

func unknown(why string) analysis.Result {
	return analysis.Result{Verdict: analysis.Unknown, Notes: []string{why}}
}
