package txn

import (
	"strings"
	"testing"
)

// The examples of the Elle paper (Kingsbury & Alvaro, VLDB 2020), with the
// paper's verdicts. Elle now names a cycle with one item anti-dependency
// G-single-item (the paper's G-single), and one with two in a row G2-item.
// Others are tests of their anomaly: TiDB's read skew is
// TestListAppendGSingle, FaunaDB's internal inconsistency
// TestListAppendInternal, Dgraph's read skew TestRWRegisterGSingle, its
// internal inconsistency TestRWRegisterInternal, and its real-time
// anomaly on key 540 TestRWRegisterRealtime.

// TestPaperFigure2 is the G-single of Figure 2 (histories/paper-example.edn
// in Elle's repository), each entry's time its line number, as a Jepsen
// history file orders them.
func TestPaperFigure2(t *testing.T) {
	h := &hist{}
	h.tx(0, 0, 1, ok, appendTo(253, 1), appendTo(253, 3), appendTo(253, 4), appendTo(255, 2), appendTo(255, 3),
		appendTo(255, 4), appendTo(255, 5), appendTo(256, 1), appendTo(256, 2))
	t2 := h.tx(0, 2, 3, ok, appendTo(255, 8), readList(253, 1, 3, 4))
	t3 := h.tx(0, 4, 5, ok, appendTo(256, 4), readList(255, 2, 3, 4, 5, 8), readList(256, 1, 2, 4), readList(253, 1, 3, 4))
	t1 := h.tx(0, 6, 7, ok, appendTo(250, 10), readList(253, 1, 3, 4), readList(255, 2, 3, 4, 5), appendTo(256, 3))
	r := run(t, "list-append", h)
	expectKinds(t, r, "G-single-item")
	f := finding(t, r, "G-single-item")
	expectOps(t, f, both(t1, t2, t3)...)
	// The paper's three steps, in its words' order.
	for _, want := range []string{
		`read key 255 = [2 3 4 5], and T`, `'s append of 8 came next (rw)`,
		`read key 255 = [2 3 4 5 8], which ends with T`,
		`appended 3 after T`, `appended 4 to key 256 (ww)`,
	} {
		if !strings.Contains(f.Explanation, want) {
			t.Errorf("explanation %q lacks %q", f.Explanation, want)
		}
	}
}

// TestPaperSection2: "Are they serializable?" Without a version order for
// blind register writes nobody can tell, so Elle finds nothing.
func TestPaperSection2(t *testing.T) {
	h := &hist{}
	h.tx(0, 0, 10, ok, write("z", 1), write("x", 1), write("y", 1))
	h.tx(1, 0, 10, ok, readReg("x", 1), write("y", 2))
	h.tx(2, 0, 10, ok, write("x", 3), readReg("y", 2), write("z", 3))
	expectKinds(t, run(t, "rw-register", h))
}

// TestPaperYugaByte: two transactions that fail to observe each other's
// appends, a G2-item ("every cycle we found involved multiple
// anti-dependencies").
func TestPaperYugaByte(t *testing.T) {
	h := &hist{}
	h.tx(0, 0, 1, ok, appendTo(3, 831), appendTo(3, 833), appendTo(3, 836), appendTo(4, 874), appendTo(4, 877), appendTo(4, 883))
	t1 := h.tx(1, 2, 3, ok, appendTo(3, 837), readList(4, 874, 877, 883))
	t2 := h.tx(2, 2, 3, ok, appendTo(4, 885), readList(3, 831, 833, 836))
	r := run(t, "list-append", h)
	expectKinds(t, r, "G2-item")
	expectOps(t, finding(t, r, "G2-item"), both(t1, t2)...)
}
