package history

import (
	"slices"
	"strings"
	"testing"
)

func TestFindReversals(t *testing.T) {
	ops := []Op{
		{Index: 0, Time: 10, Process: 0},
		{Index: 1, Time: 5, Process: 1}, // another client: no reversal
		{Index: 2, Time: 3, Process: Nemesis},
		{Index: 3, Time: 1, Process: Nemesis}, // the nemesis's faults run side by side
		{Index: 4, Time: 9, Process: 0},       // p0 goes back: the first
		{Index: 5, Time: 9, Process: 0},       // equal is not back
		{Index: 6, Time: 4, Process: 1},       // p1 goes back
	}
	r := FindReversals(ops)
	if r.Count != 2 || r.First.Index != 4 || r.Before.Index != 0 {
		t.Fatalf("%+v: expected 2, the first at entry 4 after entry 0", r)
	}
	if n := r.Note(); !strings.HasPrefix(n, "2 entries are stamped earlier than the entry before them of the same process (first: line 5, p0 at 0.000000s, after line 1 at 0.000000s)") {
		t.Errorf("note %q", n)
	}
	if n := FindReversals(ops[:4]).Note(); n != "" {
		t.Errorf("no reversal, yet the note %q", n)
	}
}

// A reversal matters when another client's entry is stamped between its
// two entries: a real-time order is wrong whichever stamp is (issue 35,
// item 13).
func TestReversalsCrossed(t *testing.T) {
	ops := []Op{
		{Index: 0, Time: 10, Process: 0},
		{Index: 1, Time: 7, Process: 1},       // between p0's 10 and 5
		{Index: 2, Time: 8, Process: Nemesis}, // the nemesis crosses nothing
		{Index: 3, Time: 5, Process: 0},       // p0 goes back across p1's 7
		{Index: 4, Time: 20, Process: 2},
		{Index: 5, Time: 19, Process: 2}, // p2 goes back across nobody's
	}
	r := FindReversals(ops)
	if r.Count != 2 || r.Crossed != 1 || !r.Matter() || !slices.Equal(r.Doubtful(), []int{0}) {
		t.Fatalf("%+v: expected 2 reversals, p0's crossed", r)
	}
	if n := r.Note(); !strings.Contains(n, "a valid verdict is unknown, and findings involving p0 say so") {
		t.Errorf("note %q", n)
	}
	if r := FindReversals(slices.Concat(ops[:1], ops[3:])); r.Count != 2 || r.Matter() {
		t.Fatalf("%+v: expected 2 reversals, neither crossed", r)
	}
	// Read as a stream without the second pass, every reversal matters.
	var s ReversalScan
	for _, op := range ops[4:] {
		s.See(op)
	}
	if !s.Matter() {
		t.Error("a reversal not tested for crossing does not matter")
	}
}
