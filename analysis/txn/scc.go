package txn

import "context"

// tarjan finds strongly connected components, iteratively: a history of a
// million transactions can chain them a million deep, past any stack.
// Its arrays span the whole graph and are reset after each search, so that
// searching many small subgraphs costs only their own size.
type tarjan struct {
	g       *graph
	index   []int32 // visit order + 1; 0 = not visited
	low     []int32
	onStack []bool
	stack   []int32
	frames  []frame
	visited []int32
}

// frame is a vertex whose out-edges the search is walking.
type frame struct {
	v    int32
	next int32 // position in g.adj of the next edge to follow
}

func newTarjan(g *graph) *tarjan {
	n := g.vertices()
	return &tarjan{g: g, index: make([]int32, n), low: make([]int32, n), onStack: make([]bool, n)}
}

// components returns the components of more than one vertex of the
// subgraph on roots and the vertices reachable from them through edges
// whose primary relation is in allowed and whose target keep accepts
// (nil: every vertex).
func (tj *tarjan) components(ctx context.Context, roots []int32, allowed rel, keep func(int32) bool) ([][]int32, error) {
	defer tj.reset()
	var comps [][]int32
	counter := int32(0)
	for n, root := range roots {
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if tj.index[root] != 0 {
			continue
		}
		tj.open(root, &counter)
		for len(tj.frames) > 0 {
			f := &tj.frames[len(tj.frames)-1]
			v := f.v
			if f.next < tj.g.start[v+1] {
				a := tj.g.adj[f.next]
				f.next++
				w := target(a)
				if rels(a).primary()&allowed == 0 || keep != nil && !keep(w) {
					continue
				}
				switch {
				case tj.index[w] == 0:
					tj.open(w, &counter)
				case tj.onStack[w]:
					tj.low[v] = min(tj.low[v], tj.index[w])
				}
				continue
			}
			tj.frames = tj.frames[:len(tj.frames)-1]
			if len(tj.frames) > 0 {
				u := tj.frames[len(tj.frames)-1].v
				tj.low[u] = min(tj.low[u], tj.low[v])
			}
			if tj.low[v] != tj.index[v] {
				continue
			}
			i := len(tj.stack) - 1
			for tj.stack[i] != v {
				i--
			}
			comp := tj.stack[i:]
			for _, w := range comp {
				tj.onStack[w] = false
			}
			if len(comp) > 1 { // no self-edges: one vertex is no cycle
				comps = append(comps, append([]int32(nil), comp...))
			}
			tj.stack = tj.stack[:i]
		}
	}
	return comps, nil
}

func (tj *tarjan) open(v int32, counter *int32) {
	*counter++
	tj.index[v], tj.low[v] = *counter, *counter
	tj.onStack[v] = true
	tj.stack = append(tj.stack, v)
	tj.frames = append(tj.frames, frame{v: v, next: tj.g.start[v]})
	tj.visited = append(tj.visited, v)
}

func (tj *tarjan) reset() {
	for _, v := range tj.visited {
		tj.index[v], tj.low[v], tj.onStack[v] = 0, 0, false
	}
	tj.visited, tj.stack, tj.frames = tj.visited[:0], tj.stack[:0], tj.frames[:0]
}
