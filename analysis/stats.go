package analysis

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/chaos-testing/chaos/history"
)

func init() { Register(StatsChecker{}) }

// StatsChecker is Jepsen's stats checker: it counts the clients'
// operations of each kind (f) by outcome, and a kind that never succeeded
// means the run tested nothing about it. The other checkers follow their
// references, by which a history where nothing happened is valid; this one
// keeps such a run from passing. Jepsen calls it invalid; chaos says
// unknown, since it is no anomaly of the system under test.
type StatsChecker struct{}

func (StatsChecker) Name() string { return "stats" }

func (c StatsChecker) Check(ctx context.Context, in Input) Result {
	sc := c.Begin(ctx, in)
	sc.Add(in.History)
	return sc.Result()
}

// Parts implements BatchChecker: every operation is counted on its own.
func (StatsChecker) Parts() history.PartOf { return func(*history.Op) string { return "" } }

// Begin implements BatchChecker.
func (StatsChecker) Begin(_ context.Context, in Input) Batches {
	return &statsCheck{changes: in.Changes, counts: map[string]map[history.Type]int{}}
}

// statsCheck counts the clients' operations by kind and outcome.
type statsCheck struct {
	changes []string
	counts  map[string]map[history.Type]int
}

func (sc *statsCheck) Add(batch []history.Op) {
	for _, p := range history.Pairs(batch, func(op *history.Op) bool { return op.Process >= 0 }) {
		c := sc.counts[p.Inv.F]
		if c == nil {
			c = map[history.Type]int{}
			sc.counts[p.Inv.F] = c
		}
		outcome := history.Info // never completed: unknown
		if p.Done != nil {
			outcome = p.Done.Type
		}
		c[outcome]++
	}
}

func (sc *statsCheck) Result() Result {
	counts := sc.counts
	if len(counts) == 0 {
		return UnknownResult("the clients did no operation: nothing was tested")
	}
	if len(sc.changes) > 0 && !slices.ContainsFunc(sc.changes, func(f string) bool { return counts[f] != nil }) {
		return UnknownResult(fmt.Sprintf("the clients attempted no %s: nothing changed, so nothing was tested", strings.Join(sc.changes, " or ")))
	}
	res := Result{Verdict: Valid, Stats: map[string]any{}}
	var never []string
	for _, f := range SortedKeys(counts) {
		c := counts[f]
		res.Stats[f] = map[string]int{"ok": c[history.Ok], "fail": c[history.Fail], "info": c[history.Info]}
		if c[history.Ok] == 0 {
			never = append(never, fmt.Sprintf("%s: none of %d succeeded (%d failed, %d unknown)", f, c[history.Fail]+c[history.Info], c[history.Fail], c[history.Info]))
		}
	}
	if len(never) > 0 {
		res.Verdict = Unknown
		res.Notes = append(res.Notes, strings.Join(never, "; ")+"; the run tested nothing about those operations")
	}
	return res
}
