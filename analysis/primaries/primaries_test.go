package primaries

import (
	"context"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/roleop"
)

// hist builds histories of role polls and adds.
type hist struct{ analysistest.History }

// poll adds a role poll of node and its answer; typ Info is a timeout.
func (h *hist) poll(inv, done float64, typ history.Type, node, role string, accepts bool) {
	h.Entry(inv, history.Observer, history.Invoke, roleop.FRole, roleop.Value{Node: node})
	h.Entry(done, history.Observer, typ, roleop.FRole, roleop.Value{Node: node, Role: role, Accepts: accepts})
}

// failover polls n1 and n2 each second from 0 to 9 s: n1 is primary until
// demoted at demoted s, n2 replica until promoted at promoted s.
func failover(promoted, demoted float64) *hist {
	h := &hist{}
	for s := 0.0; s < 10; s++ {
		if s < demoted {
			h.poll(s, s+0.1, history.Ok, "n1", "master", true)
		} else {
			h.poll(s, s+0.1, history.Ok, "n1", "slave", false)
		}
		if s >= promoted {
			h.poll(s+0.2, s+0.3, history.Ok, "n2", "master", true)
		} else {
			h.poll(s+0.2, s+0.3, history.Ok, "n2", "slave", false)
		}
	}
	return h
}

func checkPrimaries(t *testing.T, h *hist) analysis.Result {
	t.Helper()
	r := Checker{}.Check(context.Background(), analysis.Input{History: h.Ops})
	for _, f := range r.Findings {
		t.Logf("%s: %s", f.Kind, f.Explanation)
	}
	return r
}

func TestPrimariesCleanFailover(t *testing.T) {
	// n1 demoted at 5 s, n2 promoted at 5 s: never two at once.
	if r := checkPrimaries(t, failover(5, 5)); r.Verdict != analysis.Valid {
		t.Errorf("verdict %s; want valid", r.Verdict)
	}
}

func TestPrimariesOnePollIsNoSpan(t *testing.T) {
	// n2 promoted at 4 s, n1 demoted at 5: n1's last accepted poll is at 4 s
	// and n2's first answer at 4.3 s, after it. One poll of n2 overlapping
	// n1's acting proves nothing about n1 at the same time.
	if r := checkPrimaries(t, failover(4, 5)); r.Verdict != analysis.Valid {
		t.Errorf("verdict %s; want valid", r.Verdict)
	}
}

func TestPrimariesSplitBrain(t *testing.T) {
	// n2 promoted at 3 s while n1 stays primary until 7 s.
	h := failover(3, 7)
	h.SetAdd(0, 4.4, 4.5, history.Ok, 1, "n1")
	h.SetAdd(1, 4.4, 4.6, history.Ok, 2, "n2")
	h.SetAdd(1, 8.4, 8.6, history.Ok, 3, "n2") // after the overlap
	r := checkPrimaries(t, h)
	if r.Verdict != analysis.Invalid || r.FindingsTotal != 1 {
		t.Fatalf("verdict %s, %d findings; want one split brain", r.Verdict, r.FindingsTotal)
	}
	f := r.Findings[0]
	// n1's span: 0.1 s (first answer) to 6 s (last accepted invocation);
	// n2's: 3.3 s to 9.2 s; both from 3.3 s to 6 s.
	if f.Kind != "two-primaries" || !strings.Contains(f.Explanation, "from 3.300s to 6.000s") || !strings.Contains(f.Explanation, "n1 ×1, n2 ×1") {
		t.Errorf("finding: %s", f.Explanation)
	}
	if len(f.Ops) != 8 {
		t.Errorf("%d ops; want each span's first and last poll", len(f.Ops))
	}
}

func TestPrimariesTimeoutEndsSpan(t *testing.T) {
	// n1 paused: its polls time out from 3 s; n2 is primary from 3 s on.
	h := &hist{}
	for s := 0.0; s < 10; s++ {
		if s < 3 {
			h.poll(s, s+0.1, history.Ok, "n1", "master", true)
			h.poll(s+0.2, s+0.3, history.Ok, "n2", "slave", false)
		} else {
			h.poll(s, s+0.5, history.Info, "n1", "", false)
			h.poll(s+0.6, s+0.7, history.Ok, "n2", "master", true)
		}
	}
	if r := checkPrimaries(t, h); r.Verdict != analysis.Valid {
		t.Errorf("verdict %s; want valid", r.Verdict)
	}
	if r := checkPrimaries(t, &hist{}); r.Verdict != analysis.Unknown {
		t.Errorf("no polls: verdict %s; want unknown", r.Verdict)
	}
}
