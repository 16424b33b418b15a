package history

import (
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
