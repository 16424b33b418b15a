package txn

import (
	"context"
	"math/rand/v2"
	"testing"
)

// TestRealtimeReduction: the real-time edges linked keep exactly the
// order "completed before invoked" (by reachability), with far fewer
// edges than all pairs.
func TestRealtimeReduction(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	h := &hist{}
	for i := range 300 {
		inv := rng.Float64() * 100
		typ := ok
		if i%7 == 0 {
			typ = info
		}
		h.tx(i, inv, inv+rng.Float64()*5, typ, readList("x"))
	}
	o, _, err := observe(context.Background(), h.ops, "append", true)
	if err != nil {
		t.Fatal(err)
	}
	es := newEdges(len(o.txns))
	o.linkRealtime(es)
	g := newGraph(es)
	n := len(o.txns)
	pairs := 0
	for a := range n {
		reached := make([]bool, n)
		queue := []int32{int32(a)}
		for len(queue) > 0 {
			v := queue[0]
			queue = queue[1:]
			for _, e := range g.out(v) {
				if w := target(e); !reached[w] {
					reached[w] = true
					queue = append(queue, w)
				}
			}
		}
		for b := range n {
			pa, pb := o.pairs[a], o.pairs[b]
			want := o.txns[a].status == committed && pa.Done.Time < pb.Inv.Time
			if want {
				pairs++
			}
			if reached[b] != want {
				t.Fatalf("%d reaches %d: %v, want %v", a, b, reached[b], want)
			}
		}
	}
	if g.edgeCount()*5 > pairs {
		t.Errorf("%d edges for %d ordered pairs: no reduction", g.edgeCount(), pairs)
	}
	t.Logf("%d edges for %d ordered pairs", g.edgeCount(), pairs)
}
