package analysis

import (
	"testing"

	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/setop"
)

func TestStreamOrder(t *testing.T) {
	read := func(h *lh, proc int, t1, t2 float64, vs ...int64) {
		h.add(t1, proc, history.Invoke, setop.FRead, setop.Value{})
		h.add(t2, proc, history.Ok, setop.FRead, setop.Value{Read: vs})
	}
	for name, c := range map[string]struct {
		reads [][]int64
		want  Verdict
		dups  int
	}{
		"one order":                          {[][]int64{{1, 2, 3}, {1, 2, 3}}, Valid, 0},
		"a shorter read, the same order":     {[][]int64{{1, 2, 3}, {1, 3}}, Valid, 0},
		"duplicates, the same order":         {[][]int64{{1, 2, 2, 3}, {1, 2, 3, 3}}, Valid, 2},
		"two elements swapped":               {[][]int64{{1, 2, 3}, {1, 3, 2}}, Invalid, 0},
		"a duplicate does not make a swap":   {[][]int64{{1, 2, 3}, {1, 2, 3, 1}}, Valid, 1},
		"the third reader disagrees":         {[][]int64{{1, 2}, {1, 2}, {2, 1}}, Invalid, 0},
		"disjoint reads have nothing shared": {[][]int64{{1, 2}, {3, 4}}, Valid, 0},
	} {
		t.Run(name, func(t *testing.T) {
			h := &lh{}
			for i, vs := range c.reads {
				read(h, i, 10, 11, vs...)
			}
			r := runChecker(t, "stream-order", Input{History: h.ops})
			if r.Verdict != c.want || r.Stats["duplicates"] != c.dups {
				t.Fatalf("verdict %s, duplicates %v, findings %+v; want %s, %d", r.Verdict, r.Stats["duplicates"], r.Findings, c.want, c.dups)
			}
			if c.want == Invalid && len(r.Findings[0].Ops) != 4 {
				t.Errorf("a divergence proven by %d entries, want both reads", len(r.Findings[0].Ops))
			}
		})
	}
	if r := runChecker(t, "stream-order", Input{}); r.Verdict != Unknown {
		t.Errorf("no read: %s, want unknown", r.Verdict)
	}
}
