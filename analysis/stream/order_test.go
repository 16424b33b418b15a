package stream

import (
	"maps"
	"slices"
	"testing"

	"github.com/chaos-testing/chaos/analysis"
	"github.com/chaos-testing/chaos/analysis/analysistest"
	"github.com/chaos-testing/chaos/history"
	"github.com/chaos-testing/chaos/ops/setop"
)

// rd is an ok read over [inv, done] of vs, at seqs (nil: not recorded).
type rd struct {
	inv, done float64
	vs        []int64
	seqs      []uint64
}

// at is a read over [10, 11], concurrent with every other such read.
func at(vs []int64, seqs ...uint64) rd { return rd{10, 11, vs, seqs} }

func vs(v ...int64) []int64 { return v }

func TestStreamOrder(t *testing.T) {
	for name, c := range map[string]struct {
		reads []rd
		kinds map[string]int // nil: valid
		dups  int
	}{
		// Reads without sequences: positions stand for them.
		"one log":                           {reads: []rd{at(vs(1, 2, 3)), at(vs(1, 2, 3))}},
		"a concurrent read may be shorter":  {reads: []rd{at(vs(1, 2, 3)), at(vs(1, 2))}},
		"duplicates, the same in all reads": {reads: []rd{at(vs(1, 2, 2, 3)), at(vs(1, 2, 2, 3, 3))}, dups: 3},
		"a duplicate does not make a swap":  {reads: []rd{at(vs(1, 2, 3)), at(vs(1, 2, 3, 1))}, dups: 1},
		"two elements swapped":              {reads: []rd{at(vs(1, 2, 3)), at(vs(1, 3, 2))}, kinds: map[string]int{"stream-fork": 1}},
		"the third reader disagrees":        {reads: []rd{at(vs(1, 2)), at(vs(1, 2)), at(vs(2, 1))}, kinds: map[string]int{"stream-fork": 2}},
		// Values alone cannot tell a skipped sequence from a fork.
		"a middle message missing, without sequences": {reads: []rd{at(vs(1, 2, 3)), at(vs(1, 3))}, kinds: map[string]int{"stream-fork": 1}},
		"duplicates at different places":              {reads: []rd{at(vs(1, 2, 2, 3)), at(vs(1, 2, 3, 3))}, kinds: map[string]int{"stream-fork": 1}, dups: 2},
		"disjoint reads fork at the first message":    {reads: []rd{at(vs(1, 2)), at(vs(3, 4))}, kinds: map[string]int{"stream-fork": 1}},

		// Real time: a read invoked after another completed holds at
		// least as much.
		"a later read is shorter":         {reads: []rd{{10, 11, vs(1, 2, 3), nil}, {12, 13, vs(1, 2), nil}}, kinds: map[string]int{"stream-lost-message": 1}},
		"a later read finds nothing":      {reads: []rd{{10, 11, vs(1, 2, 3), nil}, {12, 13, vs(), nil}}, kinds: map[string]int{"stream-lost-message": 1}},
		"a later read is longer":          {reads: []rd{{10, 11, vs(1, 2), nil}, {12, 13, vs(1, 2, 3), nil}}},
		"overlapping reads":               {reads: []rd{{10, 12, vs(1, 2, 3), nil}, {11, 13, vs(1, 2), nil}}},
		"one answered as the other began": {reads: []rd{{10, 11, vs(1, 2, 3), nil}, {11, 12, vs(1, 2), nil}}},

		// Reads with sequences.
		"consecutive sequences":                 {reads: []rd{at(vs(1, 2, 3), 1, 2, 3), at(vs(1, 2), 1, 2)}},
		"a message stored twice, in both reads": {reads: []rd{at(vs(1, 2, 1), 1, 2, 3), at(vs(1, 2, 1), 1, 2, 3)}, dups: 2},
		"a skipped sequence another read holds": {reads: []rd{at(vs(1, 2, 3), 1, 2, 3), at(vs(1, 3), 1, 3)}, kinds: map[string]int{"stream-skipped-sequence": 1}},
		"a skipped sequence, one read":          {reads: []rd{at(vs(1, 3), 1, 3)}, kinds: map[string]int{"stream-skipped-sequence": 1}},
		"a read that starts past 1":             {reads: []rd{at(vs(3, 4), 3, 4)}, kinds: map[string]int{"stream-skipped-sequence": 1}},
		"a fork at one sequence":                {reads: []rd{at(vs(1, 2), 1, 2), at(vs(1, 5), 1, 2)}, kinds: map[string]int{"stream-fork": 1}},
		"a message moved past a skip": {reads: []rd{at(vs(1, 2, 3), 1, 2, 3), at(vs(1, 2, 3), 1, 2, 4)},
			kinds: map[string]int{"stream-skipped-sequence": 1, "stream-moved-message": 1}},
		"a message moved over another": {reads: []rd{at(vs(1, 2, 3), 1, 2, 3), at(vs(1, 2, 4, 3), 1, 2, 3, 4)},
			kinds: map[string]int{"stream-fork": 1, "stream-moved-message": 1}},
		"a duplicate the shorter read does not reach": {reads: []rd{at(vs(1, 2, 1), 1, 2, 3), at(vs(1, 2), 1, 2)}, dups: 1},
		"sequences that do not ascend":                {reads: []rd{at(vs(1, 2), 2, 1)}, kinds: map[string]int{"stream-unordered-read": 1}},
		"a later read is shorter, by sequence": {reads: []rd{{10, 11, vs(1, 2, 3), []uint64{1, 2, 3}}, {12, 13, vs(1, 2), []uint64{1, 2}}},
			kinds: map[string]int{"stream-lost-message": 1}},
	} {
		t.Run(name, func(t *testing.T) {
			h := &analysistest.History{}
			for i, r := range c.reads {
				h.Add(r.inv, i, history.Invoke, setop.FRead, setop.Value{})
				h.Add(r.done, i, history.Ok, setop.FRead, setop.Value{Read: r.vs, Seqs: r.seqs})
			}
			r := analysistest.RunChecker(t, "stream-order", analysis.Input{History: h.Ops})
			want := analysis.Valid
			if c.kinds != nil {
				want = analysis.Invalid
			}
			if r.Verdict != want || !maps.Equal(r.Kinds, c.kinds) || r.Stats["duplicates"] != c.dups {
				t.Fatalf("verdict %s, kinds %v, duplicates %v; want %s, %v, %d; findings %+v", r.Verdict, r.Kinds, r.Stats["duplicates"], want, c.kinds, c.dups, r.Findings)
			}
			for _, f := range r.Findings {
				t.Logf("%s: %s", f.Kind, f.Explanation)
			}
		})
	}
}

// Each finding names the entries of the reads that prove it: both reads'
// invocations and completions, and for a skip the read that holds a
// skipped sequence, if one does.
func TestStreamOrderProofs(t *testing.T) {
	h := &analysistest.History{}
	read := func(proc int, t1, t2 float64, vs []int64, seqs ...uint64) []int {
		return []int{h.Entry(t1, proc, history.Invoke, setop.FRead, setop.Value{}),
			h.Entry(t2, proc, history.Ok, setop.FRead, setop.Value{Read: vs, Seqs: seqs, Node: "n1"})}
	}
	// gap skips sequence 2, which long holds; so does gap2, a read
	// before long that holds a later sequence, and no witness.
	gap2 := read(3, 1, 2, vs(1, 4), 1, 4)
	long := read(0, 1, 2, vs(1, 2, 3), 1, 2, 3)
	gap := read(1, 1, 2, vs(1, 3), 1, 3)
	short := read(2, 5, 6, vs(1), 1)
	r := analysistest.RunChecker(t, "stream-order", analysis.Input{History: h.Ops})
	want := map[string][][]int{
		"stream-skipped-sequence": {slices.Concat(gap2, long), slices.Concat(gap, long)},
		"stream-lost-message":     {slices.Concat(gap2, short), slices.Concat(long, short), slices.Concat(gap, short)},
	}
	for kind, proofs := range want {
		var got [][]int
		for _, f := range analysistest.FindingsOf(r, kind) {
			got = append(got, analysistest.Indices(f.Ops))
		}
		if !slices.EqualFunc(got, proofs, slices.Equal) {
			t.Errorf("%s: findings proven by %v, want %v", kind, got, proofs)
		}
	}
}

func TestStreamOrderUnreadable(t *testing.T) {
	if r := analysistest.RunChecker(t, "stream-order", analysis.Input{}); r.Verdict != analysis.Unknown {
		t.Errorf("no read: %s, want unknown", r.Verdict)
	}
	h := &analysistest.History{}
	h.Add(1, 0, history.Invoke, setop.FRead, setop.Value{})
	h.Add(2, 0, history.Ok, setop.FRead, setop.Value{Read: vs(1, 2), Seqs: []uint64{1}})
	if r := analysistest.RunChecker(t, "stream-order", analysis.Input{History: h.Ops}); r.Verdict != analysis.Unknown {
		t.Errorf("two messages, one sequence: %s, want unknown", r.Verdict)
	}
}

// pub is a publish of v over [inv, done], acknowledged at seq (0: the
// acknowledgment said none, as before they were recorded).
type pub struct {
	inv, done float64
	v         int64
	seq       uint64
}

func TestStreamOrderAcks(t *testing.T) {
	for name, c := range map[string]struct {
		pubs  []pub
		reads []rd
		kinds map[string]int // nil: valid
	}{
		"reads hold the acknowledged messages":             {pubs: []pub{{1, 2, 7, 1}, {1, 2, 8, 2}}, reads: []rd{{3, 4, vs(7, 8), []uint64{1, 2}}}},
		"a read during the publish may not reach it":       {pubs: []pub{{1, 5, 7, 1}}, reads: []rd{{2, 3, vs(), nil}}},
		"acknowledgments without sequences":                {pubs: []pub{{1, 2, 7, 0}}, reads: []rd{{3, 4, vs(8), []uint64{1}}}},
		"publishes overlapping, sequences in either order": {pubs: []pub{{1, 3, 7, 2}, {2, 4, 8, 1}}, reads: []rd{{5, 6, vs(8, 7), []uint64{1, 2}}}},
		"a read holds another message at an acknowledged sequence": {pubs: []pub{{1, 2, 7, 1}}, reads: []rd{{3, 4, vs(8), []uint64{1}}},
			kinds: map[string]int{"stream-ack-mismatch": 1}},
		"one sequence acknowledged for two messages": {pubs: []pub{{1, 2, 7, 1}, {1, 2, 8, 1}}, reads: []rd{{3, 4, vs(), nil}},
			kinds: map[string]int{"stream-ack-mismatch": 1, "stream-ack-lost": 1}},
		"a read after the acknowledgment ends before it": {pubs: []pub{{1, 2, 7, 2}}, reads: []rd{{3, 4, vs(6), []uint64{1}}},
			kinds: map[string]int{"stream-ack-lost": 1}},
		"a read before the publish reaches its sequence": {pubs: []pub{{3, 4, 7, 2}}, reads: []rd{{1, 2, vs(6, 7), []uint64{1, 2}}},
			kinds: map[string]int{"stream-ack-future": 1}},
		"a later publish at an earlier sequence": {pubs: []pub{{1, 2, 7, 2}, {3, 4, 8, 1}}, reads: []rd{{5, 6, vs(8, 7), []uint64{1, 2}}},
			kinds: map[string]int{"stream-ack-order": 1}},
	} {
		t.Run(name, func(t *testing.T) {
			h := &analysistest.History{}
			proc := 0
			for _, p := range c.pubs {
				_, done := h.SetAdd(proc, p.inv, p.done, history.Ok, p.v, "n1")
				h.Ops[done].Value = history.MustValue(setop.Value{Element: &p.v, Node: "n1", Seq: p.seq})
				proc++
			}
			for _, r := range c.reads {
				h.Add(r.inv, proc, history.Invoke, setop.FRead, setop.Value{})
				h.Add(r.done, proc, history.Ok, setop.FRead, setop.Value{Read: r.vs, Seqs: r.seqs})
				proc++
			}
			r := analysistest.RunChecker(t, "stream-order", analysis.Input{History: h.Ops})
			want := analysis.Valid
			if c.kinds != nil {
				want = analysis.Invalid
			}
			if r.Verdict != want || !maps.Equal(r.Kinds, c.kinds) {
				t.Fatalf("verdict %s, kinds %v; want %s, %v; findings %+v", r.Verdict, r.Kinds, want, c.kinds, r.Findings)
			}
			for _, f := range r.Findings {
				if len(f.Ops) != 4 {
					t.Errorf("%s proven by %d entries, want the publish's and the other's", f.Kind, len(f.Ops))
				}
				t.Logf("%s: %s", f.Kind, f.Explanation)
			}
		})
	}
}
