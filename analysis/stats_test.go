package analysis

import (
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/registerop"
)

func TestStatsKindThatNeverSucceeded(t *testing.T) {
	h := new(lh).write(0, 0, 1, history.Ok, "x", "1").
		add(2, 1, history.Invoke, registerop.FRead, reg("x", "")).add(3, 1, history.Fail, registerop.FRead, reg("x", "")).
		add(4, 2, history.Invoke, registerop.FRead, reg("x", "")) // never completed
	r := runChecker(t, "stats", Input{History: h.ops})
	if r.Verdict != Unknown || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "read: none of 2 succeeded (1 failed, 1 unknown)") {
		t.Fatalf("got %s %q; want unknown, naming the reads that never succeeded", r.Verdict, r.Notes)
	}
}

func TestStatsEveryKindSucceeded(t *testing.T) {
	h := new(lh).write(0, 0, 1, history.Ok, "x", "1").write(2, 1, 3, history.Fail, "x", "2").read(4, 0, 5, "x", "1")
	r := runChecker(t, "stats", Input{History: h.ops})
	if r.Verdict != Valid || len(r.Notes) != 0 {
		t.Fatalf("got %s %q; want valid", r.Verdict, r.Notes)
	}
	if w := r.Stats[registerop.FWrite].(map[string]int); w["ok"] != 1 || w["fail"] != 1 {
		t.Errorf("write counts %v, want ok 1, fail 1", w)
	}
}

func TestStatsNoOperation(t *testing.T) {
	r := runChecker(t, "stats", Input{History: new(lh).add(0, history.Nemesis, history.Invoke, "pause-start", nil).ops})
	if r.Verdict != Unknown {
		t.Fatalf("got %s; a run whose clients did nothing tested nothing", r.Verdict)
	}
}

// TestStatsNoChange: a run whose reads succeeded but which attempted none
// of the workload's changes (faults kept the clients from the cluster all
// run long) tested nothing; one change, even failed, is enough.
func TestStatsNoChange(t *testing.T) {
	reads := new(lh).read(0, 0, 1, "x", "")
	r := runChecker(t, "stats", Input{History: reads.ops, Changes: []string{registerop.FWrite, registerop.FCas}})
	if r.Verdict != Unknown || !strings.Contains(r.Notes[0], "attempted no write or cas") {
		t.Fatalf("got %s %q; want unknown, naming the changes never attempted", r.Verdict, r.Notes)
	}
	if r := runChecker(t, "stats", Input{History: reads.ops}); r.Verdict != Valid {
		t.Fatalf("without the workload's changes known: got %s; want valid", r.Verdict)
	}
	changed := new(lh).read(0, 0, 1, "x", "").write(2, 1, 3, history.Ok, "x", "1")
	if r := runChecker(t, "stats", Input{History: changed.ops, Changes: []string{registerop.FWrite, registerop.FCas}}); r.Verdict != Valid {
		t.Fatalf("with a write: got %s %q; want valid", r.Verdict, r.Notes)
	}
}
