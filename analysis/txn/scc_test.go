package txn

import (
	"context"
	"testing"
)

// TestTarjanDeepChain: a million-vertex cycle needs no deep stack.
func TestTarjanDeepChain(t *testing.T) {
	const n = 1_000_000
	es := make([]edge, n)
	for i := range es {
		es[i] = edge{int32(i), int32((i + 1) % n), ww}
	}
	g := graphOf(n, es...)
	comps, err := newTarjan(g).components(context.Background(), []int32{0}, allRels, nil)
	if err != nil || len(comps) != 1 || len(comps[0]) != n {
		t.Fatalf("%d components, %v", len(comps), err)
	}
}
