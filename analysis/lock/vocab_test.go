package lock

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/lockop"
)

// An election judged by the split-brain checker: p0 leads, is paused past
// its lease, p1 is elected and acts, p0 wakes and acts: two leaders, and a
// stale leader's write accepted. The same history with the lock's words
// means nothing to the lock checker.
func TestSplitBrain(t *testing.T) {
	h := &hist{}
	campaign := func(proc int, inv, ok float64, term int64) int {
		h.Entry(inv, proc, history.Invoke, lockop.FCampaign, lockop.Value{Lock: "l"})
		return h.Entry(ok, proc, history.Ok, lockop.FCampaign, lockop.Value{Lock: "l", Session: 1, Token: tok(term)})
	}
	resign := func(proc int, inv, done float64, typ history.Type) int {
		i := h.Entry(inv, proc, history.Invoke, lockop.FResign, lockop.Value{Lock: "l", Session: 1})
		h.Entry(done, proc, typ, lockop.FResign, lockop.Value{Lock: "l", Session: 1})
		return i
	}
	a := campaign(0, 0, 0.1, 1)
	b := campaign(1, 0.2, 3.0, 2)
	h.write(1, 3.1, 3.2, history.Ok, "p1-s1", 1, tok(2))
	resign(1, 3.5, 3.6, history.Ok)
	h.write(0, 6.0, 6.1, history.Ok, "p0-s1", 1, tok(1))
	resign(0, 6.2, 6.3, history.Fail)
	res := []history.ResourceEntry{accepted(1, 1, 1, "p1-s1", true), accepted(2, 0, 1, "p0-s1", true)}

	split, _ := analysis.Checkers.Lookup("split-brain")
	r := split.Check(context.Background(), analysis.Input{History: h.Ops, Resource: res, ResourceMode: "unfenced"})
	if r.Verdict != analysis.Invalid || len(analysistest.FindingsOf(r, "two-leaders")) != 1 || len(analysistest.FindingsOf(r, "stale-leader-write")) != 1 {
		t.Fatalf("split-brain: verdict %s, findings %+v", r.Verdict, r.Findings)
	}
	two := analysistest.FindingsOf(r, "two-leaders")[0]
	if !strings.Contains(two.Explanation, "acted as leader") || analysistest.Indices(two.Ops)[0] != a || !slices.Contains(analysistest.Indices(two.Ops), b) {
		t.Errorf("two-leaders finding %q names %v; want both elections #%d and #%d", two.Explanation, analysistest.Indices(two.Ops), a, b)
	}
	if r.Stats["two_leaders_violations"] != 1 || r.Stats["campaigns_ok"] != 2 {
		t.Errorf("stats %v", r.Stats)
	}
	if lock := (Checker{}).Check(context.Background(), analysis.Input{History: h.Ops}); lock.Verdict != analysis.Unknown {
		t.Errorf("the lock checker judged an election: %s", lock.Verdict)
	}
}
