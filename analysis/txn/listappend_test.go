package txn

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/history"
)

const ok, fail, info = history.Ok, history.Fail, history.Info

// Each anomaly case is a small history that shows the anomaly, and a close
// variant that does not. Transactions of one process run one after
// another; overlapping times make transactions concurrent.

func TestListAppendG0(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		t1 := h.tx(0, 0, 10, ok, appendTo("x", 1), appendTo("y", 1))
		t2 := h.tx(1, 0, 10, ok, appendTo("x", 2), appendTo("y", 2))
		h.tx(2, 0, 10, ok, readList("x", 1, 2))
		if anomalous {
			h.tx(3, 0, 10, ok, readList("y", 2, 1))
		} else {
			h.tx(3, 0, 10, ok, readList("y", 1, 2))
		}
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G0")
		f := finding(t, r, "G0")
		expectOps(t, f, both(t1, t2)...)
		if !strings.Contains(f.Explanation, "appended 2 after") || !strings.Contains(f.Explanation, "(ww)") {
			t.Errorf("explanation %q", f.Explanation)
		}
		// The cycle, as the report draws it: each transaction, what it
		// did, and the edge to the next.
		want := []analysis.CycleStep{
			{Name: "T1", Op: t1[0], Process: 0, Type: ok, Txn: `append "x" 1, append "y" 1`, Next: "ww"},
			{Name: "T2", Op: t2[0], Process: 1, Type: ok, Txn: `append "x" 2, append "y" 2`, Next: "ww"},
		}
		if !slices.Equal(f.Cycle, want) && !slices.Equal(f.Cycle, []analysis.CycleStep{want[1], want[0]}) {
			t.Errorf("cycle %+v; want %+v", f.Cycle, want)
		}
	}
}

// TestListAppendG1c is the README's example: T2 read T1's y, and T3's read
// of x puts T2's append after T1's.
func TestListAppendG1c(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		t1 := h.tx(0, 0, 10, ok, appendTo("x", 1), readList("y", 1))
		t2 := h.tx(1, 0, 10, ok, appendTo("x", 2), appendTo("y", 1))
		if anomalous {
			h.tx(2, 0, 10, ok, readList("x", 1, 2))
		} else {
			h.tx(2, 0, 10, ok, readList("x", 2, 1))
		}
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G1c")
		f := finding(t, r, "G1c")
		expectOps(t, f, both(t1, t2)...)
		for _, want := range []string{"(wr)", "(ww)", "a contradiction!"} {
			if !strings.Contains(f.Explanation, want) {
				t.Errorf("explanation %q lacks %q", f.Explanation, want)
			}
		}
		if r.Stats["not"] == nil || !strings.Contains(strings.Join(r.Stats["not"].([]string), " "), "read-committed") {
			t.Errorf("not %v, want read-committed", r.Stats["not"])
		}
	}
}

// TestListAppendGSingle is the paper's TiDB read skew: T1 read [2 1] and
// missed T2's 5, which a later read puts before T1's own 4.
func TestListAppendGSingle(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		t1 := h.tx(0, 0, 10, ok, readList("x", 2, 1), appendTo("y", 5), appendTo("x", 4))
		t2 := h.tx(1, 0, 10, ok, appendTo("x", 5))
		h.tx(2, 0, 10, ok, appendTo("x", 2), appendTo("x", 1))
		if anomalous {
			h.tx(3, 0, 10, ok, readList("x", 2, 1, 5, 4))
		} else {
			h.tx(3, 0, 10, ok, readList("x", 2, 1, 4, 5))
		}
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G-single-item")
		f := finding(t, r, "G-single-item")
		expectOps(t, f, both(t1, t2)...)
		if !strings.Contains(f.Explanation, `read key "x" = [2 1], and T2's append of 5 came next (rw)`) {
			t.Errorf("explanation %q", f.Explanation)
		}
		if got := r.Stats["not"]; !equalStrings(got, []string{"consistent-view", "repeatable-read"}) {
			t.Errorf("not %v, want Elle's [consistent-view repeatable-read]", got)
		}
	}
}

// TestListAppendGNonadjacent: T1 -rw-> T2 -wr-> T3 -rw-> T4 -wr-> T1.
func TestListAppendGNonadjacent(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		w := []int{1}
		if !anomalous {
			w = nil
		}
		t1 := h.tx(0, 0, 10, ok, readList("x"), readList("w", w...))
		t2 := h.tx(1, 0, 10, ok, appendTo("x", 1), appendTo("y", 1))
		t3 := h.tx(2, 0, 10, ok, readList("y", 1), readList("z"))
		t4 := h.tx(3, 0, 10, ok, appendTo("z", 1), appendTo("w", 1))
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G-nonadjacent-item")
		expectOps(t, finding(t, r, "G-nonadjacent-item"), both(t1, t2, t3, t4)...)
		if got := r.Stats["not"]; !equalStrings(got, []string{"repeatable-read", "snapshot-isolation"}) {
			t.Errorf("not %v, want Elle's [repeatable-read snapshot-isolation]", got)
		}
	}
}

// TestListAppendG2Item is Elle's pure anti-dependency cycle.
func TestListAppendG2Item(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		t1 := h.tx(0, 0, 10, ok, appendTo("x", 1), readList("y"))
		var t2 [2]int
		if anomalous {
			t2 = h.tx(1, 0, 10, ok, appendTo("y", 1), readList("x"))
		} else {
			t2 = h.tx(1, 0, 10, ok, appendTo("y", 1), readList("x", 1))
		}
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "G2-item")
		expectOps(t, finding(t, r, "G2-item"), both(t1, t2)...)
		if got := r.Stats["not"]; !equalStrings(got, []string{"repeatable-read"}) {
			t.Errorf("not %v, want [repeatable-read]", got)
		}
	}
}

func equalStrings(got any, want []string) bool {
	s, _ := got.([]string)
	return strings.Join(s, ",") == strings.Join(want, ",")
}

// TestListAppendOrderVariants covers the process and real-time variants.
// A process edge without a real-time one needs a transaction invoked at
// the very time its process's previous one completed.
func TestListAppendOrderVariants(t *testing.T) {
	cases := []struct {
		name  string
		build func(h *hist, anomalous bool) [][2]int
	}{
		{"G0-process", func(h *hist, anomalous bool) [][2]int {
			t1 := h.tx(0, 0, 1, ok, appendTo("x", 1))
			p := 0
			if !anomalous {
				p = 2
			}
			t2 := h.tx(p, 1, 2, ok, appendTo("x", 2))
			h.tx(1, 0, 3, ok, readList("x", 2, 1))
			return [][2]int{t1, t2}
		}},
		{"G0-realtime", func(h *hist, anomalous bool) [][2]int {
			t1 := h.tx(0, 0, 1, ok, appendTo("x", 1))
			start := 2.0
			if !anomalous {
				start = 0.5
			}
			t2 := h.tx(1, start, 3, ok, appendTo("x", 2))
			h.tx(2, 0, 4, ok, readList("x", 2, 1))
			return [][2]int{t1, t2}
		}},
		{"G1c-process", func(h *hist, anomalous bool) [][2]int {
			t2 := h.tx(0, 0, 1, ok, readList("x", 1))
			p := 0
			if !anomalous {
				p = 1
			}
			t1 := h.tx(p, 1, 2, ok, appendTo("x", 1))
			return [][2]int{t1, t2}
		}},
		{"G1c-realtime", func(h *hist, anomalous bool) [][2]int {
			t2 := h.tx(0, 0, 1, ok, readList("x", 1))
			start := 2.0
			if !anomalous {
				start = 0.5
			}
			t1 := h.tx(1, start, 3, ok, appendTo("x", 1))
			return [][2]int{t1, t2}
		}},
		// Elle's strong session SI violation.
		{"G-single-item-process", func(h *hist, anomalous bool) [][2]int {
			h.tx(0, 0, 1, ok, appendTo("x", 1))
			t1 := h.tx(1, 2, 3, ok, appendTo("x", 2))
			p := 1
			if !anomalous {
				p = 3
			}
			t2 := h.tx(p, 3, 4, ok, readList("x", 1))
			h.tx(2, 5, 6, ok, readList("x", 1, 2))
			return [][2]int{t1, t2}
		}},
		// Elle's strong SI violation.
		{"G-single-item-realtime", func(h *hist, anomalous bool) [][2]int {
			h.tx(0, 0, 1, ok, appendTo("x", 1))
			t1 := h.tx(1, 2, 3, ok, appendTo("x", 2))
			start := 4.0
			if !anomalous {
				start = 2.5
			}
			t2 := h.tx(2, start, 5, ok, readList("x", 1))
			h.tx(3, 6, 7, ok, readList("x", 1, 2))
			return [][2]int{t1, t2}
		}},
		// T1 -rw-> T2 -process-> T3 -rw-> T4 -process-> T1.
		{"G-nonadjacent-item-process", func(h *hist, anomalous bool) [][2]int {
			t2 := h.tx(0, 0, 1, ok, appendTo("x", 1))
			p := 0
			if !anomalous {
				p = 2
			}
			t3 := h.tx(p, 1, 2, ok, readList("y"))
			t4 := h.tx(1, 0, 1, ok, appendTo("y", 1))
			t1 := h.tx(1, 1, 2, ok, readList("x"))
			return [][2]int{t1, t2, t3, t4}
		}},
		// T1 -rw-> T2 -ww-> T3 -realtime-> T4 -rw-> T5 -wr-> T1.
		{"G-nonadjacent-item-realtime", func(h *hist, anomalous bool) [][2]int {
			t1 := h.tx(0, 0, 10, ok, readList("x"), readList("w", 1))
			t2 := h.tx(1, 0, 10, ok, appendTo("x", 1), appendTo("y", 1))
			t3 := h.tx(2, 0, 1, ok, appendTo("y", 2))
			start := 2.0
			if !anomalous {
				start = 0.5
			}
			t4 := h.tx(3, start, 10, ok, readList("z"))
			t5 := h.tx(4, 0, 10, ok, appendTo("z", 1), appendTo("w", 1))
			h.tx(5, 0, 10, ok, readList("y", 1, 2))
			return [][2]int{t1, t2, t3, t4, t5}
		}},
		// T1 -rw-> T2 -rw-> T3 -process-> T1.
		{"G2-item-process", func(h *hist, anomalous bool) [][2]int {
			t3 := h.tx(0, 0, 1, ok, appendTo("y", 1))
			p := 0
			if !anomalous {
				p = 2
			}
			t1 := h.tx(p, 1, 2, ok, readList("x"))
			t2 := h.tx(1, 0, 2, ok, appendTo("x", 1), readList("y"))
			return [][2]int{t1, t2, t3}
		}},
		// T1 -rw-> T2 -rw-> T3 -realtime-> T1.
		{"G2-item-realtime", func(h *hist, anomalous bool) [][2]int {
			t3 := h.tx(0, 0, 1, ok, appendTo("y", 1))
			start := 2.0
			if !anomalous {
				start = 0.5
			}
			t1 := h.tx(1, start, 3, ok, readList("x"))
			t2 := h.tx(2, 0, 3, ok, appendTo("x", 1), readList("y"))
			return [][2]int{t1, t2, t3}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, anomalous := range []bool{true, false} {
				h := &hist{}
				txns := c.build(h, anomalous)
				r := run(t, "list-append", h)
				if strings.HasSuffix(c.name, "-process") {
					// Elle builds the process order only when no real-time
					// anomaly is prohibited, as under strong session
					// serializability; under strict serializability, by
					// default, a process's order is real time's, and these
					// cycles are named -realtime.
					r = checkWith(t, WithOptions("list-append", Options{ConsistencyModels: []string{"strong-session-serializable"}}), h)
				}
				if !anomalous {
					expectKinds(t, r)
					continue
				}
				expectKinds(t, r, c.name)
				expectOps(t, finding(t, r, c.name), both(txns...)...)
			}
		})
	}
}

// TestListAppendNonadjacentRealtimeIsSingle: real-time order is an
// interval order, so a cycle whose rw edges only two real-time edges
// separate always has a shortcut with one rw edge; Elle reports that
// G-single, and the G-nonadjacent it implies is not listed.
func TestListAppendNonadjacentRealtimeIsSingle(t *testing.T) {
	h := &hist{}
	h.tx(0, 0, 10, ok, readList("x"))     // T1 -rw-> T2
	h.tx(1, 0, 1, ok, appendTo("x", 1))   // T2 -rt-> T3
	h.tx(2, 2, 10, ok, readList("y"))     // T3 -rw-> T4
	h.tx(3, 0, 0.5, ok, appendTo("y", 1)) // T4 -rt-> T3 too
	expectKinds(t, run(t, "list-append", h), "G-single-item-realtime")
}

func TestListAppendG1a(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		typ := fail
		if !anomalous {
			typ = info // may have committed: reading it is fine
		}
		w := h.tx(0, 0, 1, typ, appendTo("x", 1))
		rd := h.tx(1, 2, 3, ok, readList("x", 1))
		r := run(t, "list-append", h)
		if !anomalous {
			if r.FindingsTotal != 0 {
				t.Fatalf("findings %v", kinds(r))
			}
			continue
		}
		if r.Verdict != analysis.Invalid || count(r, "G1a") != 1 {
			t.Fatalf("verdict %s, anomalies %v", r.Verdict, kinds(r))
		}
		expectOps(t, finding(t, r, "G1a"), both(w, rd)...)
	}
}

func TestListAppendG1b(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		w := h.tx(0, 0, 1, ok, appendTo("x", 1), appendTo("x", 2))
		seen := []int{1}
		if !anomalous {
			seen = []int{1, 2}
		}
		rd := h.tx(1, 2, 3, ok, readList("x", seen...))
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		// Reading 1 without 2 is also a G-single (Elle's own test says so).
		expectKinds(t, r, "G1b", "G-single-item")
		expectOps(t, finding(t, r, "G1b"), both(w, rd)...)
	}
}

func TestListAppendInternal(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		h.tx(0, 0, 1, ok, appendTo("x", 1))
		var tx [2]int
		if anomalous { // FaunaDB, in the paper: a txn missing its own append
			tx = h.tx(1, 2, 3, ok, appendTo("x", 6), readList("x"))
		} else {
			tx = h.tx(1, 2, 3, ok, appendTo("x", 6), readList("x", 1, 6))
		}
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		if r.Verdict != analysis.Invalid || count(r, "internal") != 1 {
			t.Fatalf("verdict %s, anomalies %v", r.Verdict, kinds(r))
		}
		f := finding(t, r, "internal")
		expectOps(t, f, both(tx)...)
		if !strings.Contains(f.Explanation, "[… 6]") {
			t.Errorf("explanation %q", f.Explanation)
		}
	}
}

func TestListAppendFutureRead(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		var tx [2]int
		if anomalous {
			tx = h.tx(0, 0, 1, ok, readList("x", 1), appendTo("x", 1))
		} else {
			tx = h.tx(0, 0, 1, ok, appendTo("x", 1), readList("x", 1))
		}
		r := run(t, "list-append", h)
		if !anomalous {
			if r.FindingsTotal != 0 {
				t.Fatalf("findings %v", kinds(r))
			}
			continue
		}
		if count(r, "future-read") != 1 {
			t.Fatalf("anomalies %v", kinds(r))
		}
		expectOps(t, finding(t, r, "future-read"), both(tx)...)
	}
}

func TestListAppendDuplicateElements(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		h.tx(0, 0, 1, ok, appendTo("x", 1))
		h.tx(0, 1.5, 2, ok, appendTo("x", 2))
		seen := []int{1, 2, 1}
		if !anomalous {
			seen = []int{1, 2}
		}
		rd := h.tx(1, 0, 4, ok, readList("x", seen...))
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "duplicate-elements")
		expectOps(t, finding(t, r, "duplicate-elements"), both(rd)...)
	}
}

func TestListAppendIncompatibleOrder(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		h.tx(0, 0, 1, ok, appendTo("x", 1))
		h.tx(1, 0, 1, ok, appendTo("x", 2))
		h.tx(2, 0, 1, ok, appendTo("x", 3))
		a := h.tx(3, 0, 3, ok, readList("x", 1, 2))
		second := []int{1, 3, 2}
		if !anomalous {
			second = []int{1, 2, 3}
		}
		b := h.tx(4, 0, 3, ok, readList("x", second...))
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "incompatible-order")
		expectOps(t, finding(t, r, "incompatible-order"), both(a, b)...)
	}
}

func TestListAppendGarbageRead(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		h.tx(0, 0, 1, ok, appendTo("x", 1))
		if !anomalous {
			h.tx(1, 0, 1, "", appendTo("x", 9)) // never completed: may have
		}
		rd := h.tx(2, 2, 3, ok, readList("x", 1, 9))
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "garbage-read")
		f := finding(t, r, "garbage-read")
		expectOps(t, f, both(rd)...)
		if !strings.Contains(f.Explanation, "no transaction wrote 9") {
			t.Errorf("explanation %q", f.Explanation)
		}
	}
}

// TestListAppendDirtyUpdate: a committed append built on a failed one.
func TestListAppendDirtyUpdate(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		h.tx(0, 0, 1, ok, appendTo("x", 1))
		typ := fail
		if !anomalous {
			typ = info
		}
		bad := h.tx(1, 2, 3, typ, appendTo("x", 2))
		good := h.tx(2, 4, 5, ok, appendTo("x", 3))
		h.tx(3, 6, 7, ok, readList("x", 1, 2, 3))
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		expectKinds(t, r, "dirty-update", "G1a")
		expectOps(t, finding(t, r, "dirty-update"), both(bad, good)...)
	}
}

func TestListAppendLostUpdate(t *testing.T) {
	for _, anomalous := range []bool{true, false} {
		h := &hist{}
		h.tx(0, 0, 1, ok, appendTo("x", 1))
		a := h.tx(1, 2, 3, ok, readList("x", 1), appendTo("x", 2))
		var b [2]int
		if anomalous {
			b = h.tx(2, 2, 3, ok, readList("x", 1), appendTo("x", 3))
		} else {
			b = h.tx(2, 4, 5, ok, readList("x", 1, 2), appendTo("x", 3))
		}
		h.tx(3, 6, 7, ok, readList("x", 1, 2, 3))
		r := run(t, "list-append", h)
		if !anomalous {
			expectKinds(t, r)
			continue
		}
		// b's read missed a's append before it: also a G-single.
		expectKinds(t, r, "lost-update", "G-single-item")
		expectOps(t, finding(t, r, "lost-update"), both(a, b)...)
	}
}

// TestListAppendUnobservedAppend is Elle's unobserved-write test: an
// append no read holds came after every element read.
func TestListAppendUnobservedAppend(t *testing.T) {
	h := &hist{}
	w1 := h.tx(0, 0, 10, ok, appendTo("x", 1), appendTo("y", 1))
	w2 := h.tx(1, 0, 10, ok, appendTo("x", 2), appendTo("y", 2))
	h.tx(2, 0, 10, ok, appendTo("x", 3), appendTo("y", 3))
	h.tx(3, 0, 10, ok, readList("x", 1, 2))
	ry := h.tx(4, 0, 10, ok, readList("y", 2))
	r := run(t, "list-append", h)
	expectKinds(t, r, "G-single-item", "G0")
	expectOps(t, finding(t, r, "G-single-item"), both(w1, w2, ry)...)
}

// TestInfoTransactions: an info transaction's append may be read, its
// reads are unknown, and it precedes nothing in real time.
func TestInfoTransactions(t *testing.T) {
	h := &hist{}
	h.tx(0, 0, 1, info, appendTo("x", 1), readList("y", 7)) // the 7 is ignored
	h.tx(1, 0, 0, "", appendTo("y", 1))                     // never completed
	h.tx(2, 5, 6, ok, readList("x", 1), readList("y"))
	expectKinds(t, run(t, "list-append", h))
}

func TestNothingCommitted(t *testing.T) {
	h := &hist{}
	h.tx(0, 0, 1, fail, appendTo("x", 1))
	h.tx(1, 0, 1, info, appendTo("x", 2))
	r := run(t, "list-append", h)
	if r.Verdict != analysis.Unknown || len(r.Notes) == 0 {
		t.Fatalf("verdict %s, notes %q; want unknown", r.Verdict, r.Notes)
	}
}

func TestMalformedValue(t *testing.T) {
	for _, value := range []string{`[["append","x"]]`, `[["r","x",[1,null]]]`, `{"f":"r"}`, `[["cas","x",1]]`, `[["append","x",[1]]]`, `[["r","x",[1,2]`} {
		h := &hist{}
		h.tx(0, 0, 1, ok, appendTo("x", 1))
		h.add(1, 2, history.Invoke, []byte(`[["r","x",null]]`))
		h.add(1, 3, history.Ok, []byte(value))
		r := run(t, "list-append", h)
		if r.Verdict != analysis.Unknown || !strings.Contains(strings.Join(r.Notes, " "), "unreadable") {
			t.Errorf("%s: verdict %s, notes %q; want unknown, unreadable", value, r.Verdict, r.Notes)
		}
	}
}

func TestDuplicateAppendIsUnknown(t *testing.T) {
	h := &hist{}
	h.tx(0, 0, 1, ok, appendTo("x", 1))
	h.tx(1, 0, 1, fail, appendTo("x", 1))
	r := run(t, "list-append", h)
	if r.Verdict != analysis.Unknown || !strings.Contains(r.Notes[0], "more than once") {
		t.Fatalf("verdict %s, notes %q", r.Verdict, r.Notes)
	}
}

// TestObjectSteps: micro-ops written as txnop.Step objects, as the
// list-append workload and the Jepsen reader write them, read the same.
func TestObjectSteps(t *testing.T) {
	h := &hist{}
	h.add(0, 0, history.Invoke, []byte(`[{"f":"append","key":"x","value":1},{"f":"r","key":"y"}]`))
	h.add(0, 1, history.Ok, []byte(`[{"f":"append","key":"x","value":1},{"f":"r","key":"y","value":[]}]`))
	h.add(1, 0, history.Invoke, []byte(`[{"f":"append","key":"y","value":1},{"f":"r","key":"x"}]`))
	h.add(1, 1, history.Ok, []byte(`[{"value":null,"f":"r","key":"x"},{"f":"append","key":"y","value":1}]`))
	expectKinds(t, run(t, "list-append", h), "G2-item")
}

// TestValuesAsCanonicalText: values and keys may be strings, compared as
// JSON text (escapes decoded), and a string key is not a number key.
func TestValuesAsCanonicalText(t *testing.T) {
	h := &hist{}
	h.add(0, 0, history.Invoke, []byte(`[["append","x","a"],["append",1,"b"]]`))
	h.add(0, 1, history.Ok, []byte(`[["append","x","a"],["append",1,"b"]]`))
	h.add(1, 2, history.Invoke, []byte(`[["r","x",null],["r",1,null],["r","1",null]]`))
	h.add(1, 3, history.Ok, []byte(`[["r","x",["\u0061"]],["r",1,["b"]],["r","1",[]]]`))
	expectKinds(t, run(t, "list-append", h))
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h := &hist{}
	h.tx(0, 0, 1, ok, appendTo("x", 1))
	h.tx(1, 2, 3, ok, readList("x", 1))
	r := ListAppend{}.Check(ctx, analysis.Input{History: h.ops})
	if r.Verdict != analysis.Unknown || !strings.Contains(r.Notes[0], "canceled") {
		t.Fatalf("verdict %s, notes %q", r.Verdict, r.Notes)
	}
}

// TestLostWritesHub: many reads of a state that many unread writes
// followed are linked through one hub, not pairwise, and the cycle search
// still sees each reader anti-depend on each writer.
func TestLostWritesHub(t *testing.T) {
	for _, c := range []struct {
		checker     string
		write       func(k any, v int) step
		readInitial step
		why         string
	}{
		{"list-append", appendTo, readList("x"), `read key "x" = [], and T2's append of 1 came later: no read saw it (rw)`},
		{"rw-register", write, readNil("x"), `read key "x" = nil, its initial value, and T2 set it to 1, which must come after (rw)`},
	} {
		t.Run(c.checker, func(t *testing.T) {
			h := &hist{}
			for i := range 8 {
				h.tx(i, 0, 1, ok, c.write("x", i+1)) // acknowledged, never read
			}
			var late [2]int
			for i := range 8 {
				start := 0.5 // concurrent with the writes
				if i == 5 {
					start = 2 // after every write completed
				}
				if rd := h.tx(10+i, start, 3, ok, c.readInitial); i == 5 {
					late = rd
				}
			}
			r := run(t, c.checker, h)
			expectKinds(t, r, "G-single-item-realtime")
			f := finding(t, r, "G-single-item-realtime")
			if len(f.Ops) != 4 || !slices.Contains(opIndices(f.Ops), late[0]) {
				t.Fatalf("ops %v, want the late read %v and one write", opIndices(f.Ops), late)
			}
			if !strings.Contains(f.Explanation, c.why) {
				t.Errorf("explanation %q", f.Explanation)
			}
			if edges := r.Stats["edges"].(int); edges >= 64+16 {
				t.Errorf("%d edges: the 64 reader-writer pairs were linked one by one", edges)
			}
		})
	}
}

// TestHubSelfPath: a transaction that read the state many unread appends
// followed, and made one of them, reaches itself through the hub; that is
// no cycle.
func TestHubSelfPath(t *testing.T) {
	h := &hist{}
	h.tx(0, 0, 1, ok, readList("x"), appendTo("x", 100))
	for i := range 7 {
		h.tx(1+i, 0, 1, ok, readList("x"))
		h.tx(10+i, 0, 1, ok, appendTo("x", i+1))
	}
	r := run(t, "list-append", h)
	expectKinds(t, r)
	if r.Stats["sccs"] != 0 {
		t.Errorf("%v strongly connected components", r.Stats["sccs"])
	}
}
