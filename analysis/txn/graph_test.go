package txn

import (
	"testing"
)

// graphOf builds a graph from (from, to, rel) triples.
func graphOf(n int, es ...edge) *graph { return newGraph(&edges{list: es, txns: int32(n)}) }

// relBetween is the set of relations on the edge a → b, 0 if none.
func (g *graph) relBetween(a, b int32) rel {
	for _, e := range g.out(a) {
		if target(e) == b {
			return rels(e)
		}
	}
	return 0
}

func TestNewGraphMergesParallelEdges(t *testing.T) {
	g := graphOf(3, edge{0, 1, ww}, edge{0, 2, rw}, edge{0, 1, realtime}, edge{2, 0, wr})
	if g.edgeCount() != 3 || g.relBetween(0, 1) != ww|realtime || g.relBetween(1, 0) != 0 || g.relBetween(2, 0) != wr {
		t.Fatalf("edges %d, 0→1 %v, 2→0 %v", g.edgeCount(), g.relBetween(0, 1), g.relBetween(2, 0))
	}
}
