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

func (StatsChecker) Check(_ context.Context, in Input) Result {
	counts := map[string]map[history.Type]int{}
	for _, p := range history.Pairs(in.History, func(op *history.Op) bool { return op.Process >= 0 }) {
		c := counts[p.Inv.F]
		if c == nil {
			c = map[history.Type]int{}
			counts[p.Inv.F] = c
		}
		outcome := history.Info // never completed: unknown
		if p.Done != nil {
			outcome = p.Done.Type
		}
		c[outcome]++
	}
	if len(counts) == 0 {
		return unknownResult("the clients did no operation: nothing was tested")
	}
	if len(in.Changes) > 0 && !slices.ContainsFunc(in.Changes, func(f string) bool { return counts[f] != nil }) {
		return unknownResult(fmt.Sprintf("the clients attempted no %s: nothing changed, so nothing was tested", strings.Join(in.Changes, " or ")))
	}
	res := Result{Verdict: Valid, Stats: map[string]any{}}
	var never []string
	for _, f := range sortedKeys(counts) {
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
