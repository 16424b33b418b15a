package txn

import (
	"context"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		steps []rel
		want  string
	}{
		{[]rel{ww, ww}, "G0"},
		{[]rel{ww, wr}, "G1c"},
		{[]rel{wr, realtime}, "G1c-realtime"},
		{[]rel{rw, ww, wr}, "G-single-item"},
		{[]rel{rw, process}, "G-single-item-process"},
		{[]rel{rw, process, realtime}, "G-single-item-realtime"},
		{[]rel{rw, rw}, "G2-item"},
		{[]rel{rw, wr, rw, ww}, "G-nonadjacent-item"},
		// The last edge and the first are adjacent too.
		{[]rel{rw, wr, ww, rw}, "G2-item"},
		{[]rel{process, realtime}, ""},
	} {
		if got := classify(c.steps); got != c.want {
			t.Errorf("classify(%v) = %q, want %q", c.steps, got, c.want)
		}
	}
}

// TestClassOrder: Elle searches the worst anomalies first, and nothing
// before what it implies.
func TestClassOrder(t *testing.T) {
	pos := map[string]int{}
	for i, c := range cycleClasses {
		pos[c.name] = i
	}
	if len(pos) != 15 {
		t.Fatalf("classes %v", pos)
	}
	for a, implied := range impliedAnomalies {
		for _, b := range implied {
			if pa, ok := pos[a]; ok {
				if pb, ok := pos[b]; ok && pb < pa {
					t.Errorf("%s, implied by %s, is searched first", b, a)
				}
			}
		}
	}
}

// TestShortestCycle: the search prefers the shortest cycle of a class,
// here the two-edge G-single over the four-edge one through vertex 0.
func TestShortestCycle(t *testing.T) {
	g := graphOf(6,
		edge{0, 1, rw}, edge{1, 2, ww}, edge{2, 3, wr}, edge{3, 0, ww},
		edge{4, 5, rw}, edge{5, 4, wr}, edge{3, 4, ww}, edge{4, 0, ww})
	s := newCycleSearch(context.Background(), g)
	cycles, err := s.component([]int32{0, 1, 2, 3, 4, 5})
	if err != nil || len(cycles) != 1 {
		t.Fatalf("cycles %v, %v", cycles, err)
	}
	if c := cycles[0]; c.class != "G-single-item" || len(c.txns) != 2 {
		t.Fatalf("cycle %+v", c)
	}
}

// TestNonadjacentNeedsSimpleCycle: walks that revisit a vertex are split;
// the cycle reported is simple.
func TestNonadjacentNeedsSimpleCycle(t *testing.T) {
	// 0 -rw-> 1 -wr-> 2 -rw-> 3 -wr-> 0, plus a shortcut 1 -rw-> 0
	// that would make adjacent rw edges.
	g := graphOf(4, edge{0, 1, rw}, edge{1, 2, wr}, edge{2, 3, rw}, edge{3, 0, wr})
	s := newCycleSearch(context.Background(), g)
	cycles, _ := s.component([]int32{0, 1, 2, 3})
	if len(cycles) != 1 || cycles[0].class != "G-nonadjacent-item" || len(cycles[0].txns) != 4 {
		t.Fatalf("cycles %+v", cycles)
	}
}

// TestSearchBudget: searches that run out still report a cycle, named by
// its edges, and say they gave up.
func TestSearchBudget(t *testing.T) {
	g := graphOf(3, edge{0, 1, rw}, edge{1, 2, ww}, edge{2, 0, wr})
	s := newCycleSearch(context.Background(), g)
	s.perClass = 0
	cycles, err := s.component([]int32{0, 1, 2})
	if err != nil || len(cycles) != 1 || cycles[0].class != "G-single-item" || len(s.gaveUp) == 0 {
		t.Fatalf("cycles %+v, gave up on %v, %v", cycles, s.gaveUp, err)
	}
}
