package linear

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/internal/simhistory"
)

// findingOps lists each finding's operations by index, sorted, for
// comparing findings whatever order they were found in.
func findingOps(r analysis.Result) [][]int {
	var out [][]int
	for _, f := range r.Findings {
		var ix []int
		for _, op := range f.Ops {
			ix = append(ix, op.Index)
		}
		out = append(out, ix)
	}
	slices.SortFunc(out, slices.Compare)
	return out
}

// TestRunStreamSameAsRun: a register history judged in batches of whole
// keys gets the result it gets whole: verdict, findings (with their
// operations) and figures, for a linearizable history and one with stale
// reads, whether the keys rotate (as the workloads' do) or come back, and
// at any batch size.
func TestRunStreamSameAsRun(t *testing.T) {
	checkers := []analysis.Checker{CASRegister, analysis.StatsChecker{}}
	if !analysis.Streamable(checkers) {
		t.Fatal("cas-register and stats are not streamable")
	}
	for _, c := range []struct {
		name        string
		keys, stale int
		want        analysis.Verdict
	}{
		{"valid, rotating keys", 20, 0, analysis.Valid},
		{"stale reads, rotating keys", 20, 40, analysis.Invalid},
		{"stale reads, keys come back", 4, 40, analysis.Invalid},
	} {
		var ops []history.Op
		simhistory.Register(10_000, c.keys, 10, c.stale, func(op history.Op) { ops = append(ops, op) })
		// The nemesis's faults, for the fault windows of the findings.
		ops = append(ops, history.Op{Index: len(ops), Time: ops[len(ops)-1].Time, Type: history.Info, Process: history.Nemesis, F: "pause-start", Value: []byte(`{"process":1}`)})
		whole := analysis.Run(context.Background(), checkers, analysis.Input{History: ops})
		if whole.Verdict != c.want {
			t.Fatalf("%s: whole: %s, want %s", c.name, whole.Verdict, c.want)
		}
		for _, size := range []int{1, 500, 1 << 30} {
			got, err := analysis.RunStream(context.Background(), checkers, analysis.Input{}, analysistest.Source(ops), size)
			if err != nil {
				t.Fatal(err)
			}
			if got.Verdict != whole.Verdict || got.Ops != whole.Ops || len(got.Results) != len(whole.Results) {
				t.Fatalf("%s, batches of %d: %s on %d entries, want %s on %d", c.name, size, got.Verdict, got.Ops, whole.Verdict, whole.Ops)
			}
			for i, w := range whole.Results {
				g := got.Results[i]
				delete(g.Stats, "check_s")
				delete(w.Stats, "check_s")
				if g.Checker != w.Checker || g.Verdict != w.Verdict || g.FindingsTotal != w.FindingsTotal || !slices.Equal(g.Notes, w.Notes) {
					t.Errorf("%s, batches of %d: %s %s %d findings %q; whole: %s %s %d findings %q",
						c.name, size, g.Checker, g.Verdict, g.FindingsTotal, g.Notes, w.Checker, w.Verdict, w.FindingsTotal, w.Notes)
				}
				if !reflect.DeepEqual(g.Stats, w.Stats) {
					t.Errorf("%s, batches of %d, %s: stats %v; whole: %v", c.name, size, g.Checker, g.Stats, w.Stats)
				}
				if !slices.EqualFunc(findingOps(g), findingOps(w), slices.Equal) {
					t.Errorf("%s, batches of %d: findings on %v; whole: %v", c.name, size, findingOps(g), findingOps(w))
				}
			}
		}
	}
}
