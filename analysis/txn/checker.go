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
//
// The zero value holds a history to Elle's defaults; WithOptions makes one
// told other options. Options are held by pointer so that checker values
// stay comparable, as the workloads compare their models.
type ListAppend struct{ opts *Options }

func (ListAppend) Name() string { return "list-append" }

func (c ListAppend) Check(ctx context.Context, in analysis.Input) analysis.Result {
	return check(ctx, in, c.opts.orDefault(), workload{writeF: "append", lists: true, infer: func(ctx context.Context, o *observation, found *findings, es *edges) (dataExplainer, error) {
		lo := o.inferListOrders(found)
		o.linkListAppend(lo, es)
		return func(a, b int32, r rel, an, bn string) string { return o.explainListAppend(lo, a, b, r, an, bn) }, nil
	}})
}

// RWRegister is Elle's rw-register checker: keys are registers,
// transactions write unique values and read them back, so a read names
// its writer, and only part of each version order can be proven.
//
// As ListAppend, the zero value holds a history to Elle's defaults.
type RWRegister struct{ opts *Options }

func (RWRegister) Name() string { return "rw-register" }

func (c RWRegister) Check(ctx context.Context, in analysis.Input) analysis.Result {
	return check(ctx, in, c.opts.orDefault(), workload{writeF: "w", infer: func(ctx context.Context, o *observation, found *findings, es *edges) (dataExplainer, error) {
		return o.explainRWRegister, o.linkRWRegister(ctx, c.opts.orDefault(), found, es)
	}})
}

// WithOptions is the checker of the named model (list-append or
// rw-register) told o, or nil for another name.
func WithOptions(name string, o Options) analysis.Checker {
	switch name {
	case ListAppend{}.Name():
		return ListAppend{opts: &o}
	case RWRegister{}.Name():
		return RWRegister{opts: &o}
	}
	return nil
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
func check(ctx context.Context, in analysis.Input, opts Options, w workload) analysis.Result {
	if err := opts.Validate(); err != nil {
		return unknown(err.Error())
	}
	prohibited := opts.prohibited()
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
	// As Elle, the process and real-time orders only when an anomaly
	// they reveal is prohibited, and real time alone when both are: a
	// process's order is real-time order, but for the transactions
	// without an invocation, which then follow nothing.
	switch {
	case needs(prohibited, "-realtime"):
		o.linkRealtime(es)
	case needs(prohibited, "-process"):
		o.linkProcesses(es)
	}
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
	return result(found, prohibited, opts.chosen(), stats, notes, bad.n > 0, g.edgeCount() == 0)
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

// result turns the findings into a verdict, as Elle's result-map: invalid
// with any prohibited anomaly; else unknown if part of the history could
// not be read, or if no dependency at all was inferred (Elle's
// empty-transaction-graph); else valid. The findings are the prohibited
// anomalies, and a garbage read beside them when models were chosen; the
// others are counted in a note. What the anomalies found, all of them,
// rule out, and the strongest models they leave, are said either way.
func result(found *findings, prohibited map[string]bool, chosen bool, stats map[string]any, notes []string, unreadable, emptyGraph bool) analysis.Result {
	all := found.counts
	stats["anomalies"] = all
	shown := newFindings()
	others := map[string]int{}
	for kind, n := range all {
		if prohibited[kind] || kind == garbageRead {
			shown.counts[kind], shown.listed[kind] = n, found.listed[kind]
		} else {
			others[kind] = n
		}
	}
	r := analysis.Result{Verdict: analysis.Valid, Stats: stats, Findings: shown.list(), FindingsTotal: shown.total(), Kinds: shown.counts}
	if emptyGraph {
		notes = append(notes, "No dependency between transactions could be inferred (Elle's empty-transaction-graph): the history shows nothing to judge isolation by.")
	}
	kinds := slices.Sorted(maps.Keys(all))
	if chosen {
		kinds = slices.DeleteFunc(kinds, func(k string) bool { return k == garbageRead })
	}
	impossible := impossibleModels(kinds)
	strongest := strongestPossible(impossible)
	stats["strongest"] = strongest
	var head []string
	if len(kinds) > 0 {
		not, alsoNot := boundary(impossible)
		stats["not"], stats["also_not"] = not, alsoNot
		also := ""
		if len(alsoNot) > 0 {
			also = ", and so also " + joinAnd(alsoNot)
		}
		head = append(head, fmt.Sprintf("Anomalies %s rule out %s%s.", describeCounts(all), joinAnd(not), also))
	}
	head = append(head, fmt.Sprintf("The strongest models its anomalies do not rule out: %s.", joinAnd(strongest)))
	if len(others) > 0 {
		head = append(head, fmt.Sprintf("Anomalies %s are not prohibited by the models and anomalies checked, so they do not count against the history.", describeCounts(others)))
	}
	if chosen && all[garbageRead] > 0 {
		head = append(head, fmt.Sprintf("%d garbage reads (a value nobody wrote; chaos's own check, not Elle's) are listed beside Elle's verdict, which does not count them.", all[garbageRead]))
	}
	bad := 0
	for kind, n := range all {
		if prohibited[kind] {
			bad += n
		}
	}
	switch {
	case bad > 0:
		r.Verdict = analysis.Invalid
	case unreadable || emptyGraph:
		r.Verdict = analysis.Unknown
	}
	r.Notes = append(head, notes...)
	return r
}

func unknown(why string) analysis.Result {
	return analysis.Result{Verdict: analysis.Unknown, Notes: []string{why}}
}
