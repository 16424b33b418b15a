package txn

import (
	"cmp"
	"context"
	"slices"
)

// searchBudget bounds the states one class's search may visit in one
// strongly connected component, as Elle's cycle-search-timeout bounds its
// time, and totalBudget those of all searches of a check: a search that
// runs out reports the shortest cycle found so far, or none, and says so.
const (
	searchBudget = 1 << 21
	totalBudget  = 1 << 26
)

// cycle is a dependency cycle: rels[i] explains the edge from txns[i] to
// txns[i+1], the last edge closing back to txns[0].
type cycle struct {
	class string
	txns  []int32
	rels  []rel
}

// walkStep is one entry of a breadth-first search over (vertex, state).
type walkStep struct {
	v      int32
	state  uint8
	via    rel   // the relation of the edge that reached v
	parent int32 // queue position of the step before, -1 at the start
	depth  int32
}

// cycleSearch finds, in each strongly connected component, the shortest
// cycle of each class, as Elle's cycle-cases-in-scc: classes in order of
// severity, skipping those a cycle already found implies.
type cycleSearch struct {
	ctx context.Context
	g   *graph
	tj  *tarjan
	// local is each vertex's position in the component searched, -1 outside.
	local []int32
	// inSub marks (by local position) the vertices of the subcomponent
	// searched; visited marks (local position × states) the states seen.
	inSub, visited []int32
	serial, run    int32
	queue          []walkStep
	// dense numbers the states the class searched tracks, states of them.
	dense  [stateSpace]int32
	states int
	// budget is what the search under way may still visit; total what
	// every later one may; perClass what each may at most.
	budget, total, perClass int
	// gaveUp names the classes whose search ran out of budget.
	gaveUp []string
}

func newCycleSearch(ctx context.Context, g *graph) *cycleSearch {
	s := &cycleSearch{ctx: ctx, g: g, tj: newTarjan(g), local: make([]int32, g.vertices()), total: totalBudget, perClass: searchBudget}
	for i := range s.local {
		s.local[i] = -1
	}
	return s
}

// component returns the cycles found in one strongly connected component.
func (s *cycleSearch) component(comp []int32) ([]cycle, error) {
	for i, v := range comp {
		s.local[v] = int32(i)
	}
	defer func() {
		for _, v := range comp {
			s.local[v] = -1
		}
	}()
	s.inSub = grow(s.inSub, len(comp))
	var found []cycle
	redundant := map[string]bool{}
	for _, c := range cycleClasses {
		if redundant[c.name] {
			continue
		}
		cyc, err := s.shortest(comp, c)
		if err != nil {
			return nil, err
		}
		if cyc != nil {
			found = append(found, *cyc)
			for a := range reach(impliedAnomalies, []string{c.name}) {
				redundant[a] = true
			}
		}
	}
	if len(found) > 0 {
		return found, nil
	}
	// Every search ran out: any cycle at all, named by its edges.
	anyCycle := cycleClass{allowed: allRels}
	s.markSub(comp)
	s.budget = len(comp) + 1 // one state a vertex
	start := comp[slices.IndexFunc(comp, func(v int32) bool { return !s.g.isHub(v) })]
	cyc, err := s.bfs(start, anyCycle, len(comp), func(string) bool { return true })
	if cyc == nil || err != nil {
		return nil, err
	}
	return []cycle{*cyc}, nil
}

// shortest finds the shortest cycle of class c in the component, nil if
// there is none (or the budget ran out first).
func (s *cycleSearch) shortest(comp []int32, c cycleClass) (*cycle, error) {
	inComp := func(v int32) bool { return s.local[v] >= 0 }
	subs, err := s.tj.components(s.ctx, comp, c.allowed, inComp)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(subs, func(a, b []int32) int { return cmp.Compare(len(a), len(b)) })
	s.budget = min(s.perClass, s.total)
	defer func(budget int) { s.total -= budget - max(s.budget, 0) }(s.budget)
	var best *cycle
	want := func(name string) bool { return name == c.name }
	for _, sub := range subs {
		s.markSub(sub)
		for _, start := range s.starts(sub, c) {
			if best != nil && len(best.txns) == c.minLength() {
				return best, nil
			}
			maxLen := len(sub)
			if best != nil {
				maxLen = len(best.txns) - 1
			}
			cyc, err := s.bfs(start, c, maxLen, want)
			if err != nil {
				return nil, err
			}
			if cyc != nil && (best == nil || len(cyc.txns) < len(best.txns)) {
				best = cyc
			}
			if s.budget <= 0 {
				s.gaveUp = append(s.gaveUp, c.name)
				return best, nil
			}
		}
	}
	return best, nil
}

func (s *cycleSearch) markSub(sub []int32) {
	s.serial++
	for _, v := range sub {
		s.inSub[s.local[v]] = s.serial
	}
}

func (s *cycleSearch) inSubcomponent(v int32) bool {
	l := s.local[v]
	return l >= 0 && s.inSub[l] == s.serial
}

// starts are the vertices of sub a cycle of class c must pass through: the
// sources of its key relation's edges (for a variant that also needs rw
// edges, whichever of the two sets is smaller).
func (s *cycleSearch) starts(sub []int32, c cycleClass) []int32 {
	sources := func(r rel) []int32 {
		var out []int32
		for _, v := range sub {
			if !s.g.isHub(v) && slices.ContainsFunc(s.g.out(v), func(a uint64) bool { return rels(a).primary() == r && s.inSubcomponent(target(a)) }) {
				out = append(out, v)
			}
		}
		return out
	}
	starts := sources(c.key())
	if c.need != 0 && c.key() != c.need {
		if alt := sources(c.need); len(alt) < len(starts) {
			starts = alt
		}
	}
	return starts
}

// bfs searches breadth first from start for the shortest closed walk of
// at most maxLen edges that class c accepts and that holds a simple cycle
// whose name want accepts.
func (s *cycleSearch) bfs(start int32, c cycleClass, maxLen int, want func(string) bool) (*cycle, error) {
	s.states = 0
	for st := range stateSpace {
		if uint8(st)&^c.stateBits() == 0 {
			s.dense[st] = int32(s.states)
			s.states++
		}
	}
	s.visited = grow(s.visited, len(s.inSub)*s.states)
	s.run++
	s.queue = append(s.queue[:0], walkStep{v: start, parent: -1})
	for head := 0; head < len(s.queue); head++ {
		if head%4096 == 0 && s.ctx.Err() != nil {
			return nil, s.ctx.Err()
		}
		if s.budget--; s.budget < 0 {
			return nil, nil
		}
		w := s.queue[head]
		if int(w.depth)+1 > maxLen {
			break // breadth first: every later step is as deep
		}
		for _, a := range s.g.out(w.v) {
			if t := target(a); s.g.isHub(t) && s.inSubcomponent(t) {
				// A hub stands for edges from w.v to each of its targets
				// but w.v itself.
				for _, b := range s.g.out(t) {
					if target(b) == w.v {
						continue
					}
					if cyc := s.follow(head, w, start, target(b), rels(a).primary(), c, want); cyc != nil {
						return cyc, nil
					}
				}
			} else if cyc := s.follow(head, w, start, t, rels(a).primary(), c, want); cyc != nil {
				return cyc, nil
			}
		}
	}
	return nil, nil
}

// follow takes the edge explained by r from queue entry w (at head) to t:
// it returns the cycle it closes, or queues t in its new state.
func (s *cycleSearch) follow(head int, w walkStep, start, t int32, r rel, c cycleClass, want func(string) bool) *cycle {
	if !s.inSubcomponent(t) {
		return nil
	}
	next := c.step(w.state, r, w.depth == 0)
	if next == invalidState {
		return nil
	}
	if t == start {
		if c.accepts(next) {
			return s.closedWalk(int32(head), r).simple(want)
		}
		return nil
	}
	seen := int(s.local[t])*s.states + int(s.dense[next])
	if s.visited[seen] == s.run {
		return nil
	}
	s.visited[seen] = s.run
	s.queue = append(s.queue, walkStep{v: t, state: next, via: r, parent: int32(head), depth: w.depth + 1})
	return nil
}

// closedWalk is the walk from the start to queue entry head, closed by an
// edge explained by closing.
func (s *cycleSearch) closedWalk(head int32, closing rel) cycle {
	var c cycle
	for i := head; i >= 0; i = s.queue[i].parent {
		c.txns = append(c.txns, s.queue[i].v)
		c.rels = append(c.rels, s.queue[i].via)
	}
	slices.Reverse(c.txns)
	slices.Reverse(c.rels)
	// rels[i] reached txns[i]; shift so that rels[i] leaves it.
	c.rels = append(c.rels[1:], closing)
	return c
}

// simple returns a simple cycle within the closed walk that want accepts,
// the shorter first, or nil. Breadth-first search over states may revisit
// a vertex in another state; such a walk splits at the repeat into two
// closed walks.
func (c cycle) simple(want func(string) bool) *cycle {
	if len(c.txns) < 2 {
		return nil
	}
	for i := range c.txns {
		for j := i + 1; j < len(c.txns); j++ {
			if c.txns[i] != c.txns[j] {
				continue
			}
			inner := cycle{txns: c.txns[i:j], rels: c.rels[i:j]}
			outer := cycle{txns: concat(c.txns[:i], c.txns[j:]), rels: concat(c.rels[:i], c.rels[j:])}
			parts := []cycle{inner, outer}
			if len(outer.txns) < len(inner.txns) {
				parts[0], parts[1] = outer, inner
			}
			for _, p := range parts {
				if found := p.simple(want); found != nil {
					return found
				}
			}
			return nil
		}
	}
	name := classify(c.rels)
	if name == "" || !want(name) {
		return nil
	}
	return &cycle{class: name, txns: slices.Clone(c.txns), rels: slices.Clone(c.rels)}
}

func concat[T any](a, b []T) []T { return append(slices.Clip(a), b...) }

// grow returns s with at least n elements, reusing it when it is big enough.
func grow(s []int32, n int) []int32 {
	if len(s) >= n {
		return s
	}
	return make([]int32, n)
}
