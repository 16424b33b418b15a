package stream

import (
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/setop"
)

func TestStreamOrder(t *testing.T) {
	read := func(h *analysistest.History, proc int, t1, t2 float64, vs ...int64) {
		h.Add(t1, proc, history.Invoke, setop.FRead, setop.Value{})
		h.Add(t2, proc, history.Ok, setop.FRead, setop.Value{Read: vs})
	}
	for name, c := range map[string]struct {
		reads [][]int64
		want  analysis.Verdict
		dups  int
	}{
		"one order":                          {[][]int64{{1, 2, 3}, {1, 2, 3}}, analysis.Valid, 0},
		"a shorter read, the same order":     {[][]int64{{1, 2, 3}, {1, 3}}, analysis.Valid, 0},
		"duplicates, the same order":         {[][]int64{{1, 2, 2, 3}, {1, 2, 3, 3}}, analysis.Valid, 2},
		"two elements swapped":               {[][]int64{{1, 2, 3}, {1, 3, 2}}, analysis.Invalid, 0},
		"a duplicate does not make a swap":   {[][]int64{{1, 2, 3}, {1, 2, 3, 1}}, analysis.Valid, 1},
		"the third reader disagrees":         {[][]int64{{1, 2}, {1, 2}, {2, 1}}, analysis.Invalid, 0},
		"disjoint reads have nothing shared": {[][]int64{{1, 2}, {3, 4}}, analysis.Valid, 0},
	} {
		t.Run(name, func(t *testing.T) {
			h := &analysistest.History{}
			for i, vs := range c.reads {
				read(h, i, 10, 11, vs...)
			}
			r := analysistest.RunChecker(t, "stream-order", analysis.Input{History: h.Ops})
			if r.Verdict != c.want || r.Stats["duplicates"] != c.dups {
				t.Fatalf("verdict %s, duplicates %v, findings %+v; want %s, %d", r.Verdict, r.Stats["duplicates"], r.Findings, c.want, c.dups)
			}
			if c.want == analysis.Invalid && len(r.Findings[0].Ops) != 4 {
				t.Errorf("a divergence proven by %d entries, want both reads", len(r.Findings[0].Ops))
			}
		})
	}
	if r := analysistest.RunChecker(t, "stream-order", analysis.Input{}); r.Verdict != analysis.Unknown {
		t.Errorf("no read: %s, want unknown", r.Verdict)
	}
}
