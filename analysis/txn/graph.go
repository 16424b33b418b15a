package txn

import "slices"

// rel is a set of dependency relations between two transactions. The bit
// order is Elle's order of explanation: an edge that carries several is
// explained (and classified) by its lowest, data dependencies first.
type rel uint8

const (
	ww       rel = 1 << iota // b overwrote (appended after) a's write
	wr                       // b read a's write
	rw                       // a read a version b's write replaced
	process                  // the same process ran a, then b
	realtime                 // a completed before b was invoked
	allRels  = ww | wr | rw | process | realtime
)

// primary is the relation that explains an edge.
func (r rel) primary() rel { return r & -r }

func (r rel) String() string {
	switch r {
	case ww:
		return "ww"
	case wr:
		return "wr"
	case rw:
		return "rw"
	case process:
		return "process"
	case realtime:
		return "realtime"
	}
	return "?"
}

// edge is one dependency, before the graph merges parallel ones.
type edge struct {
	from, to int32
	rel      rel
}

// edges collects dependencies; a transaction never depends on itself.
// Vertices from txns on are hubs (see fan).
type edges struct {
	list []edge
	txns int32 // transactions: vertices 0 to txns-1
	hubs int32
}

func newEdges(txns int) *edges { return &edges{txns: int32(txns)} }

func (es *edges) link(a, b int32, r rel) {
	if a != b {
		es.list = append(es.list, edge{a, b, r})
	}
}

// fan links every source to every other target by r. Elle links them
// pairwise; when that would take many more edges than there are ends (many
// reads of a state that many writes followed, as when a database loses
// writes), it links them through a hub vertex instead, which keeps the
// graph linear in the history. The cycle search steps through hubs as if
// the pairs were linked directly, but for a transaction both source and
// target, which must not depend on itself: the path through the hub
// back to it is no cycle, and a component that holds no other is none.
func (es *edges) fan(sources, targets []int32, r rel) {
	if len(sources)*len(targets) <= len(sources)+len(targets)+16 {
		for _, a := range sources {
			for _, b := range targets {
				es.link(a, b, r)
			}
		}
		return
	}
	hub := es.txns + es.hubs
	es.hubs++
	for _, a := range sources {
		es.link(a, hub, r)
	}
	for _, b := range targets {
		es.link(hub, b, r)
	}
}

// unlinkShadowed removes the edges of relation r between transactions that
// relation by also links: an edge explained by by alone.
func (es *edges) unlinkShadowed(r, by rel) {
	type pair struct{ from, to int32 }
	linked := map[pair]bool{}
	for _, e := range es.list {
		if e.rel == by {
			linked[pair{e.from, e.to}] = true
		}
	}
	es.list = slices.DeleteFunc(es.list, func(e edge) bool { return e.rel == r && linked[pair{e.from, e.to}] })
}

// graph is a dependency graph in compressed sparse rows: vertex v's
// out-edges are adj[start[v]:start[v+1]], each packed as target<<8 | rels,
// one per target. Packing keeps a million-transaction graph in one
// allocation and makes sorting and merging the edges a sort of integers.
type graph struct {
	start []int32
	adj   []uint64
	txns  int32 // vertices from txns on are hubs
}

func newGraph(es *edges) *graph {
	n := int(es.txns + es.hubs)
	g := &graph{start: make([]int32, n+1), txns: es.txns}
	for _, e := range es.list {
		g.start[e.from+1]++
	}
	for v := range n {
		g.start[v+1] += g.start[v]
	}
	fill := slices.Clone(g.start[:n])
	g.adj = make([]uint64, len(es.list))
	for _, e := range es.list {
		g.adj[fill[e.from]] = uint64(e.to)<<8 | uint64(e.rel)
		fill[e.from]++
	}
	// Sort each vertex's edges by target and merge those to one target.
	out := 0
	for v := range n {
		from, to := g.start[v], g.start[v+1]
		g.start[v] = int32(out)
		row := g.adj[from:to]
		slices.Sort(row)
		for i, a := range row {
			if i > 0 && a>>8 == g.adj[out-1]>>8 {
				g.adj[out-1] |= a & 0xff
				continue
			}
			g.adj[out] = a
			out++
		}
	}
	g.start[n] = int32(out)
	g.adj = slices.Clip(g.adj[:out])
	return g
}

func (g *graph) vertices() int  { return len(g.start) - 1 }
func (g *graph) edgeCount() int { return len(g.adj) }

// isHub says whether v is a hub rather than a transaction.
func (g *graph) isHub(v int32) bool { return v >= g.txns }

// out are v's out-edges, packed.
func (g *graph) out(v int32) []uint64 { return g.adj[g.start[v]:g.start[v+1]] }

func target(a uint64) int32 { return int32(a >> 8) }
func rels(a uint64) rel     { return rel(a & 0xff) }
