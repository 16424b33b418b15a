package analysis

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/history"
)

// addOp adds an add of e by proc and its completion, answered by node.
func (h *hist) addOp(proc int, inv, done float64, typ history.Type, e int64, node string) (int, int) {
	return h.add(inv, proc, history.Invoke, history.FAdd, history.SetValue{Element: &e}),
		h.add(done, proc, typ, history.FAdd, history.SetValue{Element: &e, Node: node})
}

// finalRead adds an ok final read of es by proc from node.
func (h *hist) finalRead(proc int, inv, done float64, node string, es ...int64) (int, int) {
	return h.add(inv, proc, history.Invoke, history.FRead, history.SetValue{}),
		h.add(done, proc, history.Ok, history.FRead, history.SetValue{Read: es, Node: node})
}

func checkSet(t *testing.T, h *hist) Result {
	t.Helper()
	r := SetChecker{}.Check(context.Background(), Input{History: h.ops})
	for _, f := range r.Findings[:min(len(r.Findings), 3)] {
		t.Logf("%s: %s", f.Kind, f.Explanation)
	}
	return r
}

func TestSetNothingLost(t *testing.T) {
	h := &hist{}
	h.addOp(0, 1, 1.1, history.Ok, 1, "n1")
	h.addOp(1, 1, 1.2, history.Info, 2, "n1") // unknown, present: recovered
	h.addOp(0, 2, 2.1, history.Info, 3, "n1") // unknown, absent: fine
	h.addOp(1, 2, 2.2, history.Fail, 4, "n2") // refused, absent: fine
	// Acknowledged after the read began: concurrent with it.
	five := int64(5)
	h.add(3, 0, history.Invoke, history.FAdd, history.SetValue{Element: &five})
	h.add(5, 2, history.Invoke, history.FRead, history.SetValue{})
	h.add(5.5, 0, history.Ok, history.FAdd, history.SetValue{Element: &five, Node: "n3"})
	h.add(6, 2, history.Ok, history.FRead, history.SetValue{Read: []int64{1, 2}, Node: "n3"})
	r := checkSet(t, h)
	if r.Verdict != Valid || r.FindingsTotal != 0 {
		t.Fatalf("verdict %s, %d findings; want valid", r.Verdict, r.FindingsTotal)
	}
	if r.Stats["acknowledged"] != 2 || r.Stats["recovered"] != 1 || r.Stats["lost"] != 0 || r.Stats["refused"] != 1 {
		t.Errorf("stats %v", r.Stats)
	}
}

func TestSetLostAdd(t *testing.T) {
	h := &hist{}
	h.addOp(0, 1, 1.1, history.Ok, 1, "n3")
	inv, ok := h.addOp(1, 2, 2.1, history.Ok, 2, "n1")
	h.addOp(1, 3, 3.1, history.Ok, 3, "n1")
	rinv, _ := h.finalRead(0, 10, 11, "n3", 1)
	h.finalRead(1, 10, 11, "n3", 1) // a second read misses the same adds: counted once
	r := checkSet(t, h)
	if r.Verdict != Invalid || r.Stats["lost"] != 2 || r.FindingsTotal != 2 {
		t.Fatalf("verdict %s, stats %v, %d findings; want 2 lost adds", r.Verdict, r.Stats, r.FindingsTotal)
	}
	f := r.Findings[0]
	if f.Kind != "lost-add" || !slices.Equal(opIndices(f.Ops), []int{inv, ok, rinv}) || !strings.Contains(f.Explanation, "acknowledged by n1") {
		t.Errorf("finding %s %v: %s", f.Kind, opIndices(f.Ops), f.Explanation)
	}
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "n1 ×2") {
		t.Errorf("notes %q", r.Notes)
	}
}

func TestSetUnexpectedElements(t *testing.T) {
	h := &hist{}
	finv, fdone := h.addOp(0, 1, 1.1, history.Fail, 1, "n2")
	rinv, _ := h.finalRead(0, 10, 11, "n1", 1, 99)
	r := checkSet(t, h)
	if r.Verdict != Invalid || r.Stats["unexpected"] != 2 {
		t.Fatalf("verdict %s, stats %v; want 2 unexpected", r.Verdict, r.Stats)
	}
	if got := opIndices(r.Findings[0].Ops); !slices.Equal(got, []int{finv, fdone, rinv}) {
		t.Errorf("refused add present: ops %v", got)
	}
	if !strings.Contains(r.Findings[1].Explanation, "no client ever added it") {
		t.Errorf("never added: %s", r.Findings[1].Explanation)
	}
}

func TestSetWithoutFinalRead(t *testing.T) {
	h := &hist{}
	h.addOp(0, 1, 1.1, history.Ok, 1, "n1")
	h.add(10, 0, history.Invoke, history.FRead, history.SetValue{})
	h.add(11, 0, history.Fail, history.FRead, history.SetValue{})
	if r := checkSet(t, h); r.Verdict != Unknown {
		t.Errorf("verdict %s with no successful final read; want unknown", r.Verdict)
	}
}
