package analysis_test

import (
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
)

func TestStatsKindThatNeverSucceeded(t *testing.T) {
	h := new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").
		Add(2, 1, history.Invoke, registerop.FRead, analysistest.Reg("x", "")).Add(3, 1, history.Fail, registerop.FRead, analysistest.Reg("x", "")).
		Add(4, 2, history.Invoke, registerop.FRead, analysistest.Reg("x", "")) // never completed
	r := analysistest.RunChecker(t, "stats", analysis.Input{History: h.Ops})
	if r.Verdict != analysis.Unknown || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "read: none of 2 succeeded (1 failed, 1 unknown)") {
		t.Fatalf("got %s %q; want unknown, naming the reads that never succeeded", r.Verdict, r.Notes)
	}
}

func TestStatsEveryKindSucceeded(t *testing.T) {
	h := new(analysistest.History).Write(0, 0, 1, history.Ok, "x", "1").Write(2, 1, 3, history.Fail, "x", "2").Read(4, 0, 5, "x", "1")
	r := analysistest.RunChecker(t, "stats", analysis.Input{History: h.Ops})
	if r.Verdict != analysis.Valid || len(r.Notes) != 0 {
		t.Fatalf("got %s %q; want valid", r.Verdict, r.Notes)
	}
	if w := r.Stats[registerop.FWrite].(map[string]int); w["ok"] != 1 || w["fail"] != 1 {
		t.Errorf("write counts %v, want ok 1, fail 1", w)
	}
}

func TestStatsNoOperation(t *testing.T) {
	r := analysistest.RunChecker(t, "stats", analysis.Input{History: new(analysistest.History).Add(0, history.Nemesis, history.Invoke, "pause-start", nil).Ops})
	if r.Verdict != analysis.Unknown {
		t.Fatalf("got %s; a run whose clients did nothing tested nothing", r.Verdict)
	}
}

// TestStatsNoChange: a run whose reads succeeded but which attempted none
// of the workload's changes (faults kept the clients from the cluster all
// run long) tested nothing; one change, even failed, is enough.
func TestStatsNoChange(t *testing.T) {
	reads := new(analysistest.History).Read(0, 0, 1, "x", "")
	r := analysistest.RunChecker(t, "stats", analysis.Input{History: reads.Ops, Changes: []string{registerop.FWrite, registerop.FCas}})
	if r.Verdict != analysis.Unknown || !strings.Contains(r.Notes[0], "attempted no write or cas") {
		t.Fatalf("got %s %q; want unknown, naming the changes never attempted", r.Verdict, r.Notes)
	}
	if r := analysistest.RunChecker(t, "stats", analysis.Input{History: reads.Ops}); r.Verdict != analysis.Valid {
		t.Fatalf("without the workload's changes known: got %s; want valid", r.Verdict)
	}
	changed := new(analysistest.History).Read(0, 0, 1, "x", "").Write(2, 1, 3, history.Ok, "x", "1")
	if r := analysistest.RunChecker(t, "stats", analysis.Input{History: changed.Ops, Changes: []string{registerop.FWrite, registerop.FCas}}); r.Verdict != analysis.Valid {
		t.Fatalf("with a write: got %s %q; want valid", r.Verdict, r.Notes)
	}
}
