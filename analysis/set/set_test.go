package set

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/setop"
)

// hist builds set histories.
type hist struct{ analysistest.History }

// finalRead adds an ok final read of es by proc from node.
func (h *hist) finalRead(proc int, inv, done float64, node string, es ...int64) (int, int) {
	return h.Entry(inv, proc, history.Invoke, setop.FRead, setop.Value{}),
		h.Entry(done, proc, history.Ok, setop.FRead, setop.Value{Read: es, Node: node})
}

func checkSet(t *testing.T, h *hist) analysis.Result {
	t.Helper()
	r := Checker{}.Check(context.Background(), analysis.Input{History: h.Ops})
	for _, f := range r.Findings[:min(len(r.Findings), 3)] {
		t.Logf("%s: %s", f.Kind, f.Explanation)
	}
	return r
}

func TestSetNothingLost(t *testing.T) {
	h := &hist{}
	h.SetAdd(0, 1, 1.1, history.Ok, 1, "n1")
	h.SetAdd(1, 1, 1.2, history.Info, 2, "n1") // unknown, present: recovered
	h.SetAdd(0, 2, 2.1, history.Info, 3, "n1") // unknown, absent: fine
	h.SetAdd(1, 2, 2.2, history.Fail, 4, "n2") // refused, absent: fine
	// Acknowledged after the read began: concurrent with it.
	five := int64(5)
	h.Entry(3, 0, history.Invoke, setop.FAdd, setop.Value{Element: &five})
	h.Entry(5, 2, history.Invoke, setop.FRead, setop.Value{})
	h.Entry(5.5, 0, history.Ok, setop.FAdd, setop.Value{Element: &five, Node: "n3"})
	h.Entry(6, 2, history.Ok, setop.FRead, setop.Value{Read: []int64{1, 2}, Node: "n3"})
	r := checkSet(t, h)
	if r.Verdict != analysis.Valid || r.FindingsTotal != 0 {
		t.Fatalf("verdict %s, %d findings; want valid", r.Verdict, r.FindingsTotal)
	}
	if r.Stats["acknowledged"] != 2 || r.Stats["recovered"] != 1 || r.Stats["lost"] != 0 || r.Stats["refused"] != 1 {
		t.Errorf("stats %v", r.Stats)
	}
}

func TestSetLostAdd(t *testing.T) {
	h := &hist{}
	h.SetAdd(0, 1, 1.1, history.Ok, 1, "n3")
	inv, ok := h.SetAdd(1, 2, 2.1, history.Ok, 2, "n1")
	h.SetAdd(1, 3, 3.1, history.Ok, 3, "n1")
	rinv, _ := h.finalRead(0, 10, 11, "n3", 1)
	h.finalRead(1, 10, 11, "n3", 1) // a second read misses the same adds: counted once
	r := checkSet(t, h)
	if r.Verdict != analysis.Invalid || r.Stats["lost"] != 2 || r.FindingsTotal != 2 {
		t.Fatalf("verdict %s, stats %v, %d findings; want 2 lost adds", r.Verdict, r.Stats, r.FindingsTotal)
	}
	f := r.Findings[0]
	if f.Kind != "lost-add" || !slices.Equal(analysistest.Indices(f.Ops), []int{inv, ok, rinv}) || !strings.Contains(f.Explanation, "acknowledged by n1") {
		t.Errorf("finding %s %v: %s", f.Kind, analysistest.Indices(f.Ops), f.Explanation)
	}
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "n1 ×2") {
		t.Errorf("notes %q", r.Notes)
	}
}

// TestSetLostAddInAHole: a read whose server left holes in what it
// counted says so in the lost add's finding.
func TestSetLostAddInAHole(t *testing.T) {
	h := &hist{}
	h.SetAdd(0, 1, 1.1, history.Ok, 1, "n1")
	h.SetAdd(0, 2, 2.1, history.Ok, 2, "n1")
	h.Entry(10, 1, history.Invoke, setop.FRead, setop.Value{})
	h.Entry(11, 1, history.Ok, setop.FRead, setop.Value{Read: []int64{1}, Node: "n4", Holes: "stream sequences 2 not served"})
	r := checkSet(t, h)
	if r.Verdict != analysis.Invalid || r.Stats["lost"] != 1 || !strings.Contains(r.Findings[0].Explanation, "left holes: stream sequences 2 not served") {
		t.Fatalf("verdict %s, stats %v, findings %v; want the lost add of 2, in a hole", r.Verdict, r.Stats, r.Findings)
	}
}

func TestSetUnexpectedElements(t *testing.T) {
	h := &hist{}
	finv, fdone := h.SetAdd(0, 1, 1.1, history.Fail, 1, "n2")
	rinv, _ := h.finalRead(0, 10, 11, "n1", 1, 99)
	r := checkSet(t, h)
	if r.Verdict != analysis.Invalid || r.Stats["unexpected"] != 2 {
		t.Fatalf("verdict %s, stats %v; want 2 unexpected", r.Verdict, r.Stats)
	}
	if got := analysistest.Indices(r.Findings[0].Ops); !slices.Equal(got, []int{finv, fdone, rinv}) {
		t.Errorf("refused add present: ops %v", got)
	}
	if !strings.Contains(r.Findings[1].Explanation, "no client ever added it") {
		t.Errorf("never added: %s", r.Findings[1].Explanation)
	}
}

func TestSetWithoutFinalRead(t *testing.T) {
	h := &hist{}
	h.SetAdd(0, 1, 1.1, history.Ok, 1, "n1")
	h.Entry(10, 0, history.Invoke, setop.FRead, setop.Value{})
	h.Entry(11, 0, history.Fail, setop.FRead, setop.Value{})
	if r := checkSet(t, h); r.Verdict != analysis.Unknown {
		t.Errorf("verdict %s with no successful final read; want unknown", r.Verdict)
	}
}

// setFindingKinds counts r's listed findings by kind.
func setFindingKinds(r analysis.Result) map[string]int {
	n := map[string]int{}
	for _, f := range r.Findings {
		n[f.Kind]++
	}
	return n
}

// An acknowledged add that a later add of the same element cannot undo:
// whatever the later add did, the element is lost when the read misses it.
func TestSetDuplicateAddLost(t *testing.T) {
	for _, later := range []history.Type{history.Fail, history.Info, ""} {
		t.Run(analysis.CmpOr(string(later), "never-completed"), func(t *testing.T) {
			h := &hist{}
			h.SetAdd(0, 1, 1.1, history.Ok, 1, "n1")
			one := int64(1)
			h.Entry(2, 1, history.Invoke, setop.FAdd, setop.Value{Element: &one})
			if later != "" {
				h.Entry(2.1, 1, later, setop.FAdd, setop.Value{Element: &one, Node: "n2"})
			}
			h.finalRead(0, 10, 11, "n3")
			r := checkSet(t, h)
			if r.Verdict != analysis.Invalid || r.Stats["lost"] != 1 || setFindingKinds(r)["lost-add"] != 1 {
				t.Fatalf("verdict %s, stats %v; want the acknowledged add of 1 lost", r.Verdict, r.Stats)
			}
			if r.Stats["adds"] != 2 || r.Stats["elements"] != 1 || r.Stats["acknowledged"] != 1 || r.Stats["lost_elements"] != "1" {
				t.Errorf("stats %v; want 2 adds of 1 element, 1 acknowledged", r.Stats)
			}
		})
	}
}

// An element read back is not unexpected when any of its adds may have
// taken effect, whatever the other adds of it did.
func TestSetDuplicateAddNotUnexpected(t *testing.T) {
	for _, first := range []history.Type{history.Ok, history.Info} {
		t.Run(string(first), func(t *testing.T) {
			h := &hist{}
			h.SetAdd(0, 1, 1.1, first, 1, "n1")
			h.SetAdd(1, 2, 2.1, history.Fail, 1, "n2")
			h.finalRead(0, 10, 11, "n3", 1)
			r := checkSet(t, h)
			if r.Verdict != analysis.Valid || r.FindingsTotal != 0 {
				t.Fatalf("verdict %s, %d findings, stats %v; want valid", r.Verdict, r.FindingsTotal, r.Stats)
			}
			if r.Stats["adds"] != 2 || r.Stats["refused"] != 1 || r.Stats["recovered"] != analysis.BoolInt(first == history.Info) {
				t.Errorf("stats %v", r.Stats)
			}
		})
	}
}

// An add acknowledged before the read began, whose ok line was written
// after the read's invocation line (its process was descheduled between
// stamping the time and writing): still lost.
func TestSetLostAddWrittenLate(t *testing.T) {
	h := &hist{}
	one := int64(1)
	h.Entry(1, 0, history.Invoke, setop.FAdd, setop.Value{Element: &one})
	h.Entry(6, 1, history.Invoke, setop.FRead, setop.Value{})
	h.Entry(5, 0, history.Ok, setop.FAdd, setop.Value{Element: &one, Node: "n1"})
	h.Entry(7, 1, history.Ok, setop.FRead, setop.Value{Node: "n1"})
	r := checkSet(t, h)
	if r.Verdict != analysis.Invalid || r.Stats["lost"] != 1 {
		t.Fatalf("verdict %s, stats %v; want the add of 1, acknowledged at 5s, lost from the read begun at 6s", r.Verdict, r.Stats)
	}
}

// An add acknowledged after the read began, whose ok line was written
// before the read's invocation line: concurrent with the read, not lost.
// Nor is one acknowledged at the very instant the read began.
func TestSetConcurrentAddWrittenEarly(t *testing.T) {
	h := &hist{}
	one, two := int64(1), int64(2)
	h.Entry(1, 0, history.Invoke, setop.FAdd, setop.Value{Element: &one})
	h.Entry(7, 0, history.Ok, setop.FAdd, setop.Value{Element: &one, Node: "n1"})
	h.Entry(1, 2, history.Invoke, setop.FAdd, setop.Value{Element: &two})
	h.Entry(6, 2, history.Ok, setop.FAdd, setop.Value{Element: &two, Node: "n1"})
	h.Entry(6, 1, history.Invoke, setop.FRead, setop.Value{})
	h.Entry(8, 1, history.Ok, setop.FRead, setop.Value{Node: "n1"})
	if r := checkSet(t, h); r.Verdict != analysis.Valid || r.FindingsTotal != 0 {
		t.Fatalf("verdict %s, stats %v; adds acknowledged at or after the read's start (6s) are concurrent with it", r.Verdict, r.Stats)
	}
}

// A read that completed before any add of an element that may have taken
// effect was invoked, yet holds it, read from the future; a refused add
// invoked earlier does not explain it.
func TestSetReadFromFuture(t *testing.T) {
	h := &hist{}
	h.SetAdd(0, 1, 1.1, history.Fail, 5, "n1")
	rinv, _ := h.finalRead(1, 2, 3, "n2", 5, 6)
	inv, _ := h.SetAdd(0, 4, 4.1, history.Ok, 5, "n1")
	h.SetAdd(0, 3, 3.5, history.Info, 6, "n1") // invoked as the read completed: concurrent
	h.finalRead(1, 10, 11, "n2", 5, 6)
	r := checkSet(t, h)
	if r.Verdict != analysis.Invalid || r.Stats["future"] != 1 || r.Stats["future_elements"] != "5" || r.FindingsTotal != 1 {
		t.Fatalf("verdict %s, stats %v, %d findings; want 5 read from the future", r.Verdict, r.Stats, r.FindingsTotal)
	}
	f := r.Findings[0]
	if f.Kind != "future-read" || !slices.Equal(analysistest.Indices(f.Ops), []int{rinv, inv}) || !strings.Contains(f.Explanation, "p0's at 4.000s") {
		t.Errorf("finding %s %v: %s", f.Kind, analysistest.Indices(f.Ops), f.Explanation)
	}
}
